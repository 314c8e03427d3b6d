/**
 * `TaskClient`: wraps a connected SDK `Client` and hands out {@link TaskHandle}s. Its parts (the
 * engine and the rooms of the facade: call/, connection/, handle/, input/, events/) are built once
 * into one record (parts.ts); each method hands the work to the room it concerns, and the
 * client-wide operations to theirs (list: listing.ts, resume: handle/resume.ts, close: closing.ts).
 */
import type {
  CallInstrument,
  CallToolAsTaskOptions,
  CloseOptions,
  ReceiverHandle,
  ResumeOptions,
  TaskClientConnectOptions,
  TaskClientEvents,
  TaskClientOptions,
  TaskHandle,
  TaskReceiver,
  TaskReference,
  ToolTaskSupport,
  WireKind,
} from '../api/index.js';
import { closeParts } from './closing.js';
import { connectWrapped } from './connection/connect.js';
import { TaskClosedError, TaskOptionError } from '../errors.js';
import { attachInstrumentation, instrumentCall } from './events/instrumentation.js';
import { checkInputCapabilities } from './input/capabilities.js';
import { Launch } from './call/launch.js';
import { listAll, listPage } from './listing.js';
import {
  checkToolCall,
  resolveCallOptions,
  resolveClientOptions,
  resolveCloseOptions,
  type ResolvedCallOptions,
} from './options.js';
import { buildParts, type ClientParts } from './parts.js';
import { resumeTask } from './handle/resume.js';
import { configureReceiver } from './input/receiver-seam.js';
import { assertServable } from './input/serving.js';
import { listedTools } from './call/tool-catalog.js';
import type { McpClient, McpTransport, Task, TaskPage } from '../types.js';
import { openPort, unusable } from '../port/open.js';
import { resolveWire } from '../wire/resolve.js';

/** The options of a call made without any: one object, so that its resolved settings can be kept. */
const NO_OPTIONS: CallToolAsTaskOptions = Object.freeze({});

/**
 * Runs MCP tool calls as tasks over a connected SDK `Client` (`@modelcontextprotocol/sdk` 1.x or
 * `@modelcontextprotocol/client` 2.x), on whichever task wire the connection offers (MCP
 * 2025-11-25 tasks, or the 2026 `io.modelcontextprotocol/tasks` extension), and tracks them all
 * with one shared scheduler.
 *
 * The library's own requests go straight onto the client's transport, and it sees incoming
 * messages before the SDK does, passing on everything that is not its own (status notifications,
 * progress, tool-list changes, input requests nobody here answers): a handler you set on the
 * SDK client before or after creating the TaskClient keeps receiving what it received before
 * (see docs/concepts.md, "Sharing the SDK client").
 *
 * @typeParam C - the SDK `Client` it wraps, so {@link TaskClient.client} keeps that type (its own
 *   requests, such as `listPrompts()`, need no cast). Inferred from the constructor's argument;
 *   `McpClient` (the structural shape the library needs) unless named to {@link TaskClient.connect}.
 */
export class TaskClient<C extends McpClient = McpClient> {
  /** Every part of this client, built once (parts.ts). */
  private readonly parts: ClientParts;
  /** The settings of a call made without options (the client's own; the same for every such call). */
  private defaultCall: ResolvedCallOptions | undefined = undefined;

  /**
   * Builds an SDK `Client` with the capabilities the given callbacks need, connects it over
   * `transport` and wraps it. {@link TaskClient.close} then also closes that client. The SDK is
   * `options.sdk`, or the one installed (SDK v2 when both are); SDK v2 negotiates the protocol era
   * automatically, so a server offering the 2026 tasks extension is reached on it.
   *
   * Name the SDK's `Client` class as the type argument to type {@link TaskClient.client} as it
   * (`TaskClient.connect<Client>(transport, { sdk: 'v2' })` with SDK v2's `Client`); the library
   * cannot check that it names the SDK it picked, so name the one `options.sdk` (or the only one
   * installed) selects. Without one, `tasks.client` is the structural `McpClient`.
   * @typeParam T - the SDK `Client` type of the result.
   * @throws TaskOptionError (`option: 'transport'`) when `transport` is not an MCP transport (an
   *   SDK `Client` included: wrap that with `new TaskClient(client)`), or for an invalid option,
   *   before anything is opened; whatever `client.connect` throws (e.g. the server is unreachable);
   *   an `Error` when no SDK is installed.
   */
  static connect<T extends McpClient = McpClient>(
    transport: McpTransport,
    options: TaskClientConnectOptions<T> = {},
  ): Promise<TaskClient<T>> {
    // The client connectWrapped made is of the SDK the caller named T for (see above).
    return connectWrapped(transport, options, (client) => new TaskClient(client as T, options));
  }

  /**
   * @param client - a connected SDK `Client`, from `@modelcontextprotocol/sdk` 1.x or
   *   `@modelcontextprotocol/client` 2.x.
   * @throws TaskOptionError when `client` is not a connected SDK client or an option is invalid.
   * @throws TaskNotSupportedError when `onElicitation`/`onSampling` is given but the SDK client did
   *   not declare that capability on a 2025-11-25 connection (it would never receive such
   *   requests).
   */
  constructor(client: C, options: TaskClientOptions<C> = {}) {
    const problem = unusable(client);
    if (problem !== undefined) throw new TaskOptionError(problem, { option: 'client' });
    const config = resolveClientOptions(options);
    const serving = options.serve === undefined ? undefined : configureReceiver(options.serve, config.callbacks);
    const port = openPort(client);
    const wire = resolveWire(port);
    checkInputCapabilities(wire, config.callbacks);
    assertServable(port, serving);
    const parts = (this.parts = buildParts(client, config, port, wire));
    if (serving !== undefined) parts.serving.start(serving);
    parts.instrument = attachInstrumentation(config.instrumentation, this, (error) => parts.report(error));
  }

  /**
   * The SDK client in use (the latest one after a {@link TaskClient.reconnect}), typed as the one
   * given: use it for other requests (`tasks.client.listPrompts()`).
   */
  get client(): C {
    // Every client the connection holds came in as a C: the constructor's, reconnect()'s, or the
    // reconnect factory's.
    return this.parts.connection.current as C;
  }

  /**
   * The task wire of the current connection: `2025-11-25` on a legacy-era session,
   * `io.modelcontextprotocol/tasks` on a 2026-07-28-era one. It names the protocol form tasks
   * take on this connection, even when the server offers none on it (no `capabilities.tasks`, or
   * no tasks extension): calls are then plain, and {@link TaskClient.tools} says so.
   */
  get wire(): WireKind {
    return this.parts.engine.wire.kind;
  }

  /** Number of tasks being tracked (created and not yet settled). */
  get active(): number {
    return this.parts.live.size;
  }

  /** Number of calls waiting for a slot (`maxConcurrentTasks`). */
  get pending(): number {
    return this.parts.limiter.pending;
  }

  /** The handles of every task being tracked, oldest first (for a UI list). */
  handles(): TaskHandle[] {
    return this.parts.live.handles();
  }

  /**
   * Listens to a lifecycle event; see {@link TaskClientEvents}. A listener that throws is reported
   * on `error` and never breaks tracking. Each call adds one registration, even of a function
   * already added.
   * @returns a function that removes this registration only.
   */
  on<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): () => void {
    return this.parts.emitter.on(event, listener);
  }

  /**
   * Like {@link TaskClient.on}, for one event only: each registration runs at most once.
   * @returns a function that removes this registration only.
   */
  once<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): () => void {
    return this.parts.emitter.once(event, listener);
  }

  /**
   * Removes every registration of `listener` on `event`, whether added with {@link TaskClient.on}
   * or {@link TaskClient.once}.
   */
  off<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): void {
    this.parts.emitter.off(event, listener);
  }

  /**
   * Calls a tool as a task and resolves once the server answered the `tools/call`.
   *
   * On 2025-11-25, task mode is used only when the server declared `tasks.requests.tools.call`
   * and the tool's `execution.taskSupport` is `optional` or `required`; on the tasks extension
   * the server decides per call. Otherwise (or when the server answers with a plain result) the
   * handle is `immediate` and `result()` resolves with that result, unless `requireTask` is set.
   * @throws TaskNotSupportedError with `requireTask` when task mode is not possible, or when input
   *   callbacks are given for a capability the SDK client did not declare on a 2025-11-25
   *   connection.
   * @throws TaskTimeoutError / TaskAbortError when the deadline or signal stop the call first.
   * @throws TaskQueueFullError with `whenFull: 'reject'` when `maxConcurrentTasks` is reached.
   * @throws TaskRpcError when the server rejects the call.
   * @throws TaskOptionError for invalid arguments or options.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  callToolAsTask(
    name: string,
    args: Record<string, unknown> = {},
    options: CallToolAsTaskOptions = NO_OPTIONS,
  ): Promise<TaskHandle> {
    const { parts } = this;
    let call: ResolvedCallOptions;
    let instrument: CallInstrument | undefined;
    try {
      if (parts.closing !== undefined) throw new TaskClosedError('This TaskClient is closed', { toolName: name });
      checkToolCall(name, args);
      // A call without options takes the client's settings, resolved once.
      call =
        options === NO_OPTIONS
          ? (this.defaultCall ??= resolveCallOptions(parts.config, options))
          : resolveCallOptions(parts.config, options);
      if (call.callbacks !== undefined) {
        checkInputCapabilities(parts.engine.wire, call.callbacks, name);
        call = { ...call, input: parts.router.answersFor(call.callbacks) };
      }
      // Before anything is awaited: the caller's context (an active span) is still current.
      instrument = instrumentCall(parts.instrument, parts.port, parts.engine.wire.kind, name, args);
      // The usual call (no progress route, no instrumentation): its promise is the launch's own
      // (a call that runs into close() rejects with TaskClosedError there).
      if (call.onProgress === undefined && instrument === undefined) return Launch.of(parts, name, args, call).run();
    } catch (error) {
      return Promise.reject(error);
    }
    if (instrument !== undefined) call = { ...call, instrument };
    return this.callAttended(name, args, call, instrument);
  }

  /** {@link TaskClient.callToolAsTask} with a progress route or instrumentation to look after. */
  private async callAttended(
    name: string,
    args: Record<string, unknown>,
    call: ResolvedCallOptions,
    instrument: CallInstrument | undefined,
  ): Promise<TaskHandle> {
    const { parts } = this;
    const token = call.onProgress === undefined ? undefined : parts.live.openProgress(call.onProgress, name);
    if (token !== undefined) call = { ...call, progressToken: token };
    try {
      const handle = await Launch.of(parts, name, args, call).run();
      // [R35]: on 2025-11-25 the token lives as long as the task; on the extension tasks get no
      // progress ([E10]), so the route ends with the tools/call.
      if (handle.kind === 'immediate' || !parts.engine.features.progress) parts.live.closeProgress(token);
      return handle;
    } catch (error) {
      parts.live.closeProgress(token);
      instrument?.failed?.(error);
      throw error;
    }
  }

  /**
   * The server's tools with their task support: `execution.taskSupport` on 2025-11-25, or
   * `server-decides` on the tasks extension (`forbidden` for every tool when a server of the
   * 2026-07-28 era does not offer the extension: every call is then a plain call). Every page of
   * `tools/list` is read; the list is cached until the server says it changed.
   * @throws TaskRpcError when `tools/list` fails.
   * @throws TaskClosedError after {@link TaskClient.close}, and when `close()` runs while the
   *   list is being read (the `tools/list` request is then cancelled).
   */
  async tools(): Promise<ToolTaskSupport[]> {
    // async: even a call without its `this` rejects rather than throws, as before the move.
    return listedTools(this.parts);
  }

  /**
   * A handle for a task that already exists: one this process created earlier (from
   * `handle.detach()` or `handle.toJSON()`), or one known only by id. Nothing is sent until the
   * handle is observed (`result()`, iteration, `on(...)`) or given a deadline or signal. A task
   * this client already tracks returns its existing handle, with this resume's `timeoutMs` and
   * `signal` armed on it too (the earliest deadline bounds it; its input callbacks stay those it
   * was tracked with). A task the server dropped (its ttl
   * elapsed) ends with `TaskExpiredError` once the handle is observed.
   * A reference made on another version of the same server (its `name@version` with the same
   * name: a server redeployed in a rolling upgrade) is resumed: a server that lost the task says so
   * (`TaskNotFoundError`).
   * @throws TaskOptionError for a malformed reference, or one made on a server of another name.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  resume(target: string | TaskReference, options: ResumeOptions = {}): TaskHandle {
    this.assertOpen();
    return resumeTask(this.parts, target, options);
  }

  /**
   * Every task the server reports (`tasks/list`), following `nextCursor` page by page. Includes
   * tasks this client does not track. Lenient with real servers' paging shapes.
   * @throws TaskNotSupportedError (from the iterator) when the server did not declare `tasks.list`.
   * @throws TaskRpcError when a page cannot be read after retries.
   * @throws TaskClosedError after {@link TaskClient.close}, also for a page asked for after it.
   */
  list(): AsyncGenerator<Task, void, undefined> {
    this.assertOpen();
    return listAll(this.parts);
  }

  /**
   * One page of `tasks/list`. Pass back `nextCursor` unchanged for the next page.
   * @throws TaskNotSupportedError when the server did not declare `tasks.list`.
   * @throws TaskRpcError when the request fails after retries.
   * @throws TaskClosedError (rejects) after {@link TaskClient.close}.
   */
  listPage(cursor?: string): Promise<TaskPage> {
    return listPage(this.parts, cursor);
  }

  /** @throws TaskClosedError after {@link TaskClient.close}. */
  private assertOpen(): void {
    if (this.parts.closing !== undefined) throw new TaskClosedError('This TaskClient is closed');
  }

  /**
   * Serves `receiver` (made by `taskReceiver()` of `mcp-task-client/receiver`): the server's
   * task-augmented `elicitation/create` and `sampling/createMessage` requests (the receiver role of
   * MCP 2025-11-25 tasks) are each answered at once with a task while its callback runs in the
   * background, and the server polls it with `tasks/get`, `tasks/result`, `tasks/list` and
   * `tasks/cancel`. The callbacks get `delivery: 'receiver-task'` and the task's id in
   * `receiverTaskId`; a plain request still reaches them (after any call or client callback).
   * Served on the current connection, and on the next one after a reconnect. See docs/receiver.md.
   * @throws TaskNotSupportedError when the SDK Client did not declare a capability this needs
   *   (e.g. `tasks.requests.elicitation.create`); `TaskClient.connect(transport, { serve })`
   *   declares them.
   * @throws TaskOptionError when `receiver` is not one `taskReceiver()` made, when no callback
   *   would serve anything, or when receiver tasks are already served on this connection.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  serve(receiver: TaskReceiver): ReceiverHandle {
    this.assertOpen();
    return this.parts.serving.serve(receiver);
  }

  /** The receiver started by {@link TaskClient.serve} or the `serve` option, while it serves. */
  get receiver(): ReceiverHandle | undefined {
    return this.parts.serving.receiver;
  }

  /**
   * Hands the TaskClient a new connected SDK `Client` (after the old connection closed, or to move
   * to a new one): every unsettled handle resumes observation over it, and results are not lost.
   * The server must still know the tasks: SDK servers scope tasks to the session, so over
   * Streamable HTTP a new session sees none of them (they end with `TaskNotFoundError`).
   * `client` stays yours: `close()` leaves it open. A client the library made that it replaces
   * (`TaskClient.connect`'s, or one from the `reconnect` factory) is closed: at once when its
   * connection was lost, else at `close()`.
   * @throws TaskOptionError when `client` is not connected.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  reconnect(client: C): void {
    this.assertOpen();
    this.parts.connection.replace(client);
  }

  /**
   * Settles every handle with {@link TaskClosedError}, stops every timer and releases the SDK
   * client's handlers (and closes the SDK clients the library made: the one {@link TaskClient.connect}
   * made and those the `reconnect` factory returned; never one you handed in). Calls
   * still under way, queued, or waiting for a reconnection reject at once with
   * `TaskClosedError`; a task whose `CreateTaskResult` arrives after `close()` began is cancelled
   * once. Without `cancelRunning` it resolves at once, except that a client made by
   * {@link TaskClient.connect} is closed only after those cancels of late creations were
   * answered or `closeTimeoutMs` passed. With `cancelRunning`, every running task is read once
   * and, unless that shows it ended, gets one `tasks/cancel`, all at once; a task found ended (or
   * already seen ended) settles with its real outcome when its payload arrives in time. `close()`
   * resolves when all that is done or after `closeTimeoutMs` (default `requestTimeoutMs`),
   * whichever comes first. Idempotent.
   * @throws TaskOptionError (as a rejection, before anything is closed) when `options` is not an
   *   object or `cancelRunning` is not a boolean: the client is left as it was, and a later valid
   *   `close()` closes it.
   */
  close(options: CloseOptions = {}): Promise<void> {
    let cancelRunning: boolean;
    try {
      cancelRunning = resolveCloseOptions(options);
    } catch (error) {
      return Promise.reject(error);
    }
    this.parts.closing ??= closeParts(this.parts, cancelRunning);
    return this.parts.closing;
  }
}
