/**
 * `TaskClient`: wraps a connected SDK `Client` and hands out {@link TaskHandle}s. It composes
 * the wire adapter, the engine, the tool catalog and the input router, keeps the live handles,
 * and turns engine happenings into typed events.
 */
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/sdk/types.js';
import { TaskEngine, type SnapshotSource } from './engine/engine.js';
import type { TaskRecord } from './engine/record.js';
import { vanished } from './engine/outcome.js';
import { backoffDelay } from './engine/timing.js';
import { sleep } from './engine/retry.js';
import { cancelTask, giveUp } from './engine/stop.js';
import { armStops } from './deadline.js';
import {
  TaskClosedError,
  TaskDetachedError,
  TaskError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskQueueFullError,
  describeRemoteCancel,
} from './errors.js';
import {
  SafeEmitter,
  emitSettled,
  metricsOf,
  type TaskClientEvents,
  type TaskHandleEvents,
  type TaskProgress,
} from './events.js';
import { TaskHandle, checkReference, type HandleBackend, type ResumeOptions, type TaskReference } from './handle.js';
import { InputRouter, type InputCallbacks } from './input.js';
import { Launch } from './launch.js';
import { Limiter } from './limiter.js';
import { listAll, listPage } from './listing.js';
import { attachLogger } from './logger.js';
import {
  resolveCallOptions,
  resolveClientOptions,
  type CallToolAsTaskOptions,
  type ProgressCallback,
  type ResolvedClientOptions,
  type TaskClientOptions,
} from './options.js';
import { ToolCatalog } from './tool-catalog.js';
import type { Task } from './types.js';
import { Wire2025 } from './wire/v2025.js';
import { PROGRESS_TOKEN_PREFIX, type InputKind, type TaskWire } from './wire/wire.js';

/** Options of {@link TaskClient.close}. */
export interface CloseOptions {
  /**
   * Cancel every still-running remote task with `tasks/cancel` before closing.
   * @default false
   */
  readonly cancelRunning?: boolean;
}

/** Options of {@link TaskClient.connect}: the SDK client's identity and options, plus the TaskClient's. */
export interface TaskClientConnectOptions extends TaskClientOptions {
  /**
   * The client's name and version, sent at initialization.
   * @default { name: 'mcp-task-client', version: '0.1.0' }
   */
  readonly clientInfo?: Implementation;
  /**
   * Capabilities to declare, merged with what the callbacks need: `elicitation` when
   * `onElicitation` is given, `sampling` when `onSampling` is. Declare them here too if only
   * per-call callbacks will answer.
   */
  readonly capabilities?: ClientCapabilities;
  /** Other SDK `Client` options. */
  readonly clientOptions?: Omit<ClientOptions, 'capabilities'>;
}

/** A tracked task's per-call state. */
interface Live {
  readonly record: TaskRecord;
  readonly handle: TaskHandle;
  readonly callbacks: InputCallbacks | undefined;
  progressToken: string | undefined;
  /** Aborted when the task settles (input callbacks' `signal`); created on first use. */
  abort: AbortController | undefined;
}

/** Where a progress token's notifications go. */
interface ProgressRoute {
  readonly callback: ProgressCallback;
  readonly toolName: string;
  live: Live | undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Runs MCP tool calls as tasks (MCP 2025-11-25) over a connected `@modelcontextprotocol/sdk`
 * `Client`, and tracks them all with one shared scheduler.
 *
 * The SDK client keeps one handler per method. TaskClient chains onto `notifications/tasks/status`,
 * `notifications/progress`, `elicitation/create` and `sampling/createMessage` without replacing
 * anything: a handler you set on the SDK client before or after creating the TaskClient keeps
 * receiving what it received before (see docs/concepts.md, "Sharing the SDK client").
 */
export class TaskClient {
  private readonly config: ResolvedClientOptions;
  private readonly engine: TaskEngine;
  private readonly catalog: ToolCatalog;
  private readonly emitter: SafeEmitter<TaskClientEvents>;
  private readonly live = new Map<string, Live>();
  private readonly progress = new Map<string, ProgressRoute>();
  private progressCounter = 0;
  private detachWire: () => void;
  private readonly router: InputRouter;
  private sdkClient: Client;
  private reconnecting = false;
  private closing: Promise<void> | undefined;
  private readonly backend: HandleBackend;
  private readonly ownsClient: boolean;
  private readonly limiter: Limiter;

  /**
   * Builds an SDK `Client` with the capabilities the given callbacks need, connects it over
   * `transport` and wraps it. {@link TaskClient.close} then also closes that client.
   * @throws whatever `client.connect` throws (e.g. the server is unreachable).
   */
  static async connect(transport: Transport, options: TaskClientConnectOptions = {}): Promise<TaskClient> {
    const capabilities: ClientCapabilities = { ...options.capabilities };
    if (options.onElicitation !== undefined) capabilities.elicitation ??= {};
    if (options.onSampling !== undefined) capabilities.sampling ??= {};
    const client = new Client(options.clientInfo ?? { name: 'mcp-task-client', version: '0.1.0' }, {
      ...options.clientOptions,
      capabilities,
    });
    await client.connect(transport);
    return new TaskClient(client, options, true);
  }

  /**
   * @param client a connected SDK `Client`.
   * @throws TaskOptionError when `client` is not connected or an option is invalid.
   * @throws TaskNotSupportedError when `onElicitation`/`onSampling` is given but the SDK client did
   *   not declare that capability (it would never receive such requests).
   */
  constructor(client: Client, options: TaskClientOptions = {}, ownsClient = false) {
    if (client === null || typeof client !== 'object' || typeof client.request !== 'function') {
      throw new TaskOptionError('TaskClient needs an @modelcontextprotocol/sdk Client', { option: 'client' });
    }
    if (client.transport === undefined) {
      throw new TaskOptionError('The SDK Client is not connected: call client.connect(transport) first', {
        option: 'client',
      });
    }
    this.ownsClient = ownsClient;
    this.sdkClient = client;
    this.config = resolveClientOptions(options);
    const wire: TaskWire = new Wire2025(client);
    checkInputCapabilities(wire, this.config.callbacks);
    this.emitter = new SafeEmitter<TaskClientEvents>((error) => this.emitter.emit('error', error, undefined));
    this.engine = new TaskEngine(wire, this.config, {
      status: (record, source, previous) => this.onStatus(record, source, previous),
      settled: (record) => this.onSettled(record),
      problem: (error, record) =>
        this.emitter.emit('error', error, record === undefined ? undefined : metricsOf(record, this.now())),
      expiring: (record, expiresAt) => this.onExpiring(record, expiresAt),
    });
    this.limiter = new Limiter(this.config.maxConcurrentTasks, this.engine.scheduler);
    if (this.config.logger !== undefined) attachLogger(this.emitter, this.config.logger, this.config.logTaskIds);
    this.catalog = new ToolCatalog(
      () => this.engine.wire,
      () => this.config.requestTimeoutMs,
    );
    this.router = new InputRouter(
      this.config.callbacks,
      (taskId) => this.inputOwner(taskId),
      (error) => this.emitter.emit('error', error, undefined),
    );
    this.detachWire = this.attachWire(wire);
    this.backend = {
      activate: (record) => this.engine.activate(record),
      cancel: (record) => cancelTask(this.engine, record),
      detach: (record) => this.detach(record),
      dispose: (record) => this.dispose(record),
      reference: (record) => this.reference(record),
      report: (error) => this.emitter.emit('error', error, undefined),
    };
  }

  private now(): number {
    return this.config.clock.now();
  }

  /** The SDK client in use (the latest one after a {@link TaskClient.reconnect}). */
  get client(): Client {
    return this.sdkClient;
  }

  /** Subscribes to a wire's events and serves its input requests; returns the undo. */
  private attachWire(wire: TaskWire): () => void {
    const offs = [
      wire.subscribe({
        status: (task) => this.engine.push(task),
        malformed: (error) => this.engine.report(error, undefined),
        toolsChanged: () => this.catalog.invalidate(),
        closed: () => this.onConnectionLost(wire),
        progress: (token, progress) => this.onProgress(token, progress),
      }),
      wire.serveInput((request) => this.router.route(request)),
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  private onConnectionLost(wire: TaskWire): void {
    if (this.closing !== undefined || wire !== this.engine.wire) return;
    this.engine.pause();
    this.emitter.emit('connectionLost');
    void this.autoReconnect();
  }

  /** With a `reconnect` factory: make a new client until one connects (while tasks are tracked). */
  private async autoReconnect(): Promise<void> {
    const factory = this.config.reconnect;
    if (factory === undefined || this.reconnecting) return;
    this.reconnecting = true;
    try {
      for (let attempt = 1; this.closing === undefined && this.engine.paused && this.engine.size > 0; attempt += 1) {
        try {
          const client = await factory();
          if (this.closing !== undefined) return;
          this.reconnect(client);
          return;
        } catch (error) {
          this.emitter.emit('error', new TaskError(`Reconnecting failed (attempt ${attempt})`, { cause: error }), undefined);
          await sleep(this.engine.scheduler, backoffDelay(attempt, this.config.retry, this.config.random)).catch(() => {});
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  /**
   * Hands the TaskClient a new connected SDK `Client` (after the old connection closed, or to move
   * to a new one): every unsettled handle resumes observation over it, and results are not lost.
   * The server must still know the tasks: SDK servers scope tasks to the session, so over
   * Streamable HTTP a new session sees none of them (they end with `TaskNotFoundError`).
   * @throws TaskOptionError when `client` is not connected.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  reconnect(client: Client): void {
    if (this.closing !== undefined) throw new TaskClosedError('This TaskClient is closed');
    if (client.transport === undefined) {
      throw new TaskOptionError('The new SDK Client is not connected: call client.connect(transport) first', {
        option: 'client',
      });
    }
    const wire: TaskWire = new Wire2025(client);
    this.detachWire();
    this.sdkClient = client;
    this.detachWire = this.attachWire(wire);
    this.catalog.invalidate();
    const wasPaused = this.engine.paused;
    if (!wasPaused) this.engine.pause();
    this.engine.resume(wire);
    this.emitter.emit('connectionRestored');
  }

  /**
   * A handle for a task that already exists: one this process created earlier (from
   * `handle.detach()` or `handle.toJSON()`), or one known only by id. Nothing is sent until the
   * handle is observed (`result()`, iteration, `on(...)`) or given a deadline or signal. A task
   * this client already tracks returns its existing handle.
   * @throws TaskOptionError for a malformed reference, or one made on a different server.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  resume(target: string | TaskReference, options: ResumeOptions = {}): TaskHandle {
    if (this.closing !== undefined) throw new TaskClosedError('This TaskClient is closed');
    const reference = checkReference(target, this.engine.wire.serverIdentity(), this.engine.wire.revision);
    const existing = this.live.get(reference.taskId);
    if (existing !== undefined) return existing.handle;
    const call = resolveCallOptions(this.config, options);
    if (call.callbacks !== undefined) checkInputCapabilities(this.engine.wire, call.callbacks, reference.toolName);
    const placeholder: Task = {
      taskId: reference.taskId,
      status: 'working',
      createdAt: reference.createdAt ?? '',
      lastUpdatedAt: '',
      ttl: reference.ttl ?? null,
    };
    const toolName = reference.toolName ?? options.toolName ?? 'unknown';
    const record = this.engine.track(placeholder, toolName, { provisional: true, requestTimeoutMs: call.requestTimeoutMs });
    const handle = this.adopt(record, call.callbacks, undefined, undefined);
    const created = Date.parse(placeholder.createdAt);
    if (placeholder.ttl !== null && Number.isFinite(created) && this.now() >= created + placeholder.ttl) {
      // Known to be past its ttl: say so without asking the server ([V11]).
      vanished(this.engine, record, undefined);
      return handle;
    }
    armStops({ engine: this.engine, call, toolName, startedAt: this.now() }, record);
    if (call.timeoutMs !== undefined || call.signal !== undefined) this.engine.activate(record);
    return handle;
  }

  /** Number of tasks being tracked (created and not yet settled). */
  get active(): number {
    return this.live.size;
  }

  /** Number of calls waiting for a slot (`maxConcurrentTasks`). */
  get pending(): number {
    return this.limiter.pending;
  }

  /**
   * Every task the server reports (`tasks/list`), following `nextCursor` page by page. Includes
   * tasks this client does not track. Lenient with real servers' shapes (D13).
   * @throws TaskNotSupportedError (from the iterator) when the server did not declare `tasks.list`.
   * @throws TaskRpcError when a page cannot be read after retries.
   */
  list(): AsyncGenerator<Task, void, undefined> {
    return listAll(this.engine, this.config.requestTimeoutMs);
  }

  /**
   * One page of `tasks/list`. Pass back `nextCursor` unchanged for the next page ([R23]).
   * @throws TaskNotSupportedError when the server did not declare `tasks.list`.
   * @throws TaskRpcError when the request fails after retries.
   */
  listPage(cursor?: string): Promise<{ readonly tasks: readonly Task[]; readonly nextCursor?: string | undefined }> {
    return listPage(this.engine, cursor, this.config.requestTimeoutMs);
  }

  /** The handles of every task being tracked, oldest first (for a UI list). */
  handles(): TaskHandle[] {
    return [...this.live.values()].map((live) => live.handle);
  }

  /**
   * Listens to a lifecycle event; see {@link TaskClientEvents}. A listener that throws is reported
   * on `error` and never breaks tracking.
   * @returns a function that removes the listener.
   */
  on<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): () => void {
    return this.emitter.on(event, listener);
  }

  /** Like {@link TaskClient.on}, for one event only. */
  once<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): () => void {
    return this.emitter.once(event, listener);
  }

  /** Removes a listener added with {@link TaskClient.on}. */
  off<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): void {
    this.emitter.off(event, listener);
  }

  /**
   * Calls a tool as a task and resolves once the server answered the `tools/call`.
   *
   * Task mode is used only when the server declared `tasks.requests.tools.call` ([R6]) and the
   * tool's `execution.taskSupport` is `optional` or `required` ([R7]-[R9]); otherwise (or when the
   * server answers with a plain result, [V1]) the handle is `immediate` and `result()` resolves
   * with that result, unless `requireTask` is set.
   * @throws TaskNotSupportedError with `requireTask` when task mode is not possible, or when input
   *   callbacks are given for a capability the SDK client did not declare.
   * @throws TaskTimeoutError / TaskAbortError when the deadline or signal stop the call first.
   * @throws TaskRpcError when the server rejects the call.
   * @throws TaskOptionError for invalid arguments or options.
   * @throws TaskClosedError after {@link TaskClient.close}.
   */
  async callToolAsTask(
    name: string,
    args: Record<string, unknown> = {},
    options: CallToolAsTaskOptions = {},
  ): Promise<TaskHandle> {
    if (this.closing !== undefined) throw new TaskClosedError('This TaskClient is closed', { toolName: name });
    if (typeof name !== 'string' || name === '') {
      throw new TaskOptionError('Tool name must be a non-empty string', { option: 'name' });
    }
    if (!isPlainObject(args)) throw new TaskOptionError('Tool arguments must be a plain object', { option: 'args' });
    let call = resolveCallOptions(this.config, options);
    if (call.callbacks !== undefined) checkInputCapabilities(this.engine.wire, call.callbacks, name);
    let token: string | undefined;
    if (call.onProgress !== undefined) {
      this.progressCounter += 1;
      token = `${PROGRESS_TOKEN_PREFIX}${this.progressCounter}`;
      this.progress.set(token, { callback: call.onProgress, toolName: name, live: undefined });
      call = { ...call, progressToken: token };
    }
    const launch = new Launch(
      {
        engine: this.engine,
        catalog: this.catalog,
        adopt: (record, resolved, hint) => this.adopt(record, resolved.callbacks, token, hint),
        immediate: (tool, outcome) => new TaskHandle(tool, { kind: 'immediate', result: outcome.result }),
        slot: (signal, deadlineAt) => this.slot(name, signal, deadlineAt),
      },
      name,
      args,
      call,
    );
    try {
      const handle = await launch.run();
      if (token !== undefined && handle.kind === 'immediate') this.progress.delete(token);
      return handle;
    } catch (error) {
      if (token !== undefined) this.progress.delete(token);
      throw error;
    }
  }

  private slot(name: string, signal: AbortSignal | undefined, deadlineAt: number | undefined): Promise<() => void> {
    if (this.config.whenFull === 'reject' && !this.limiter.available) {
      return Promise.reject(
        new TaskQueueFullError(`maxConcurrentTasks (${this.limiter.max}) reached; the call to "${name}" was rejected`, {
          toolName: name,
        }),
      );
    }
    return this.limiter.acquire(signal, deadlineAt);
  }

  /** Wraps a newly tracked record in a handle and registers it. */
  private adopt(
    record: TaskRecord,
    callbacks: InputCallbacks | undefined,
    progressToken: string | undefined,
    immediateResponse: string | undefined,
  ): TaskHandle {
    const handle = new TaskHandle(record.toolName, { kind: 'task', record, backend: this.backend }, immediateResponse);
    const live: Live = { record, handle, callbacks, progressToken, abort: undefined };
    if (record.settlement !== undefined) {
      // Settled on arrival (e.g. an early terminal notification): nothing to track.
      this.emitter.emit('created', metricsOf(record, this.now()));
      emitSettled([this.emitter], record, this.now());
      if (progressToken !== undefined) this.progress.delete(progressToken);
      return handle;
    }
    this.live.set(record.taskId, live);
    const route = progressToken === undefined ? undefined : this.progress.get(progressToken);
    if (route !== undefined) route.live = live;
    const metrics = metricsOf(record, this.now());
    this.emitter.emit('created', metrics);
    // A task can be created already waiting for input (its notification may even overtake it).
    if (record.task.status === 'input_required') this.emitter.emit('inputRequired', metrics, record.task);
    return handle;
  }

  private onStatus(record: TaskRecord, _source: SnapshotSource, previous: Task): void {
    const live = this.live.get(record.taskId);
    const handleEvents = live?.handle.events;
    if (!this.emitter.has('status') && !this.emitter.has('inputRequired') && handleEvents === undefined) return;
    const metrics = metricsOf(record, this.now());
    const task = record.task;
    const enteredInput = task.status === 'input_required' && previous.status !== 'input_required';
    for (const emitter of [this.emitter, handleEvents] as Array<SafeEmitter<TaskHandleEvents> | undefined>) {
      emitter?.emit('status', metrics, task);
      if (enteredInput) emitter?.emit('inputRequired', metrics, task);
    }
  }

  private onSettled(record: TaskRecord): void {
    const live = this.live.get(record.taskId);
    if (live?.record === record) {
      this.live.delete(record.taskId);
      live.abort?.abort(new Error('The task ended'));
      if (live.progressToken !== undefined) this.progress.delete(live.progressToken);
    }
    const handleEvents = live?.handle.events;
    emitSettled(handleEvents === undefined ? [this.emitter] : [this.emitter, handleEvents], record, this.now());
  }

  private onExpiring(record: TaskRecord, expiresAt: number): void {
    const live = this.live.get(record.taskId);
    const metrics = metricsOf(record, this.now());
    const expiry = { expiresAt, remainingMs: expiresAt - this.now() };
    this.emitter.emit('expiring', metrics, expiry);
    live?.handle.events?.emit('expiring', metrics, expiry);
  }

  private onProgress(token: string, progress: TaskProgress): boolean {
    const route = this.progress.get(token);
    if (route === undefined) return false;
    const live = route.live;
    try {
      route.callback(progress, { taskId: live?.record.taskId, handle: live?.handle, toolName: route.toolName });
    } catch (error) {
      this.emitter.emit('error', new TaskError(`The onProgress callback threw`, { toolName: route.toolName, cause: error }), undefined);
    }
    if (live !== undefined) {
      const metrics = metricsOf(live.record, this.now());
      this.emitter.emit('progress', metrics, progress);
      live.handle.events?.emit('progress', metrics, progress);
    }
    return true;
  }

  private inputOwner(taskId: string): { handle: TaskHandle; callbacks: InputCallbacks | undefined; signal: AbortSignal } | undefined {
    const live = this.live.get(taskId);
    if (live === undefined) return undefined;
    live.abort ??= new AbortController();
    return { handle: live.handle, callbacks: live.callbacks, signal: live.abort.signal };
  }

  private detach(record: TaskRecord): TaskReference {
    const reference = this.reference(record);
    this.engine.settle(record, {
      ok: false,
      error: new TaskDetachedError('The handle was detached; the remote task keeps running', {
        task: record.task,
        toolName: record.toolName,
      }),
    });
    return reference;
  }

  private async dispose(record: TaskRecord): Promise<void> {
    await giveUp(this.engine, record, {
      cancelRemote: true,
      throwFromIterators: false,
      error: (remote) =>
        new TaskDetachedError(`The handle was disposed; ${describeRemoteCancel(remote)}`, {
          task: record.task,
          toolName: record.toolName,
        }),
    });
  }

  private reference(record: TaskRecord): TaskReference {
    const task: Task = record.task;
    return {
      v: 1,
      taskId: task.taskId,
      toolName: record.toolName,
      createdAt: task.createdAt,
      ttl: task.ttl,
      server: this.engine.wire.serverIdentity(),
      revision: this.engine.wire.revision,
    };
  }

  /**
   * Settles every handle with {@link TaskClosedError}, stops every timer and releases the SDK
   * client's handlers (and closes the SDK client if {@link TaskClient.connect} made it). With
   * `cancelRunning`, still-running remote tasks are cancelled first. Idempotent.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.closing ??= (async () => {
      const engine = this.engine;
      this.limiter.rejectAll(new TaskClosedError('The TaskClient was closed while the call waited for a slot'));
      await Promise.all(
        [...engine.tracked()].map((record) =>
          giveUp(engine, record, {
            cancelRemote: options.cancelRunning === true,
            error: (remote) =>
              new TaskClosedError(`The TaskClient was closed; ${describeRemoteCancel(remote)}`, {
                task: record.task,
                toolName: record.toolName,
              }),
          }),
        ),
      );
      this.detachWire();
      engine.shutdown();
      this.progress.clear();
      if (this.ownsClient) await this.client.close();
    })();
    return this.closing;
  }
}

/**
 * Fails fast when callbacks are given for input the SDK client never receives: it gets
 * elicitation/sampling requests only if it declared those capabilities when it connected.
 * @throws TaskNotSupportedError naming the missing capability.
 */
function checkInputCapabilities(wire: TaskWire, callbacks: InputCallbacks, toolName?: string): void {
  const declared = wire.inputCapabilities();
  const need: Array<[InputKind, unknown]> = [
    ['elicitation', callbacks.onElicitation],
    ['sampling', callbacks.onSampling],
  ];
  for (const [kind, callback] of need) {
    if (callback !== undefined && !declared[kind]) {
      throw new TaskNotSupportedError(
        `on${kind === 'elicitation' ? 'Elicitation' : 'Sampling'} was given, but the SDK Client did not declare the "${kind}" capability, so the server will never send such requests. Create the Client with capabilities: { ${kind}: {} }, or use TaskClient.connect().`,
        { feature: kind, toolName },
      );
    }
  }
}
