/**
 * The public types of the library, in one module: options, handle, references, input callbacks,
 * events and logging. Declarations only; the classes that implement them (`TaskClient`,
 * `TaskHandleOf`, the errors) live beside their code.
 */
import type { RetryPolicy } from '../engine/timing.js';
import type {
  TaskCancelledError,
  TaskError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskTimeoutError,
} from '../errors.js';
import type {
  CallToolResult,
  Clock,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  JsonObject,
  McpClient,
  Task,
  TaskStatus,
} from '../types.js';
import type { WireKind } from '../wire/wire.js';

/** Retries of transient failures, field by field; an absent or `undefined` field keeps its default. */
export type RetryOptions = { readonly [K in keyof RetryPolicy]?: RetryPolicy[K] | undefined };

/** Receives a call's progress notifications for the task's whole life ([R35]). */
export type ProgressCallback = (progress: TaskProgress, context: ProgressContext) => void;

/** What a progress callback learns: the task (once created), its handle and the tool. */
export type ProgressContext = Pick<InputContext, 'taskId' | 'handle' | 'toolName'>;

/** Options of a {@link TaskClient}. */
export interface TaskClientOptions extends InputCallbacks {
  /**
   * Floor of every poll delay: a server asking for `pollInterval: 0` gets no request storm.
   * @defaultValue 100
   */
  readonly minPollIntervalMs?: number | undefined;
  /**
   * Ceiling of every poll delay (an enormous `pollInterval` is clamped to it).
   * @defaultValue 60000
   */
  readonly maxPollIntervalMs?: number | undefined;
  /**
   * First poll delay when the server sends no `pollInterval` (D2); it grows by 1.5x per poll.
   * @defaultValue 500
   */
  readonly initialPollIntervalMs?: number | undefined;
  /**
   * Ceiling of that growth.
   * @defaultValue 5000
   */
  readonly hintlessMaxPollIntervalMs?: number | undefined;
  /**
   * Timeout of each short request (`tasks/get`, `tasks/cancel`, `tasks/list`, `tools/list`, and
   * `tasks/result` once the task is terminal). Separate from the task deadline; a poll that times
   * out is simply retried at the next tick. The task-creating `tools/call` gets the time left
   * before the deadline (or 60 s without one) plus this, as a backstop for a server that never
   * answers.
   * @defaultValue 10000
   */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Default deadline for each task, from the call until the result is in hand. Per-call
   * `timeoutMs` overrides it.
   * @defaultValue undefined (no deadline)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Default `ttl` requested for each task, in ms ([R11]); the server may override it.
   * @defaultValue undefined (the server's default)
   */
  readonly ttlMs?: number | undefined;
  /**
   * When the deadline passes, cancel the remote task with `tasks/cancel` (if the server supports it).
   * @defaultValue true
   */
  readonly cancelOnTimeout?: boolean | undefined;
  /**
   * How long a deadline, an abort or `dispose()` waits for the remote cancel (and for the payload
   * of a task found to have finished) before settling anyway: a handle always settles within
   * `timeoutMs + cancelGraceMs`. An unanswered cancel is reported as `remoteCancel: 'unknown'`;
   * it is not withdrawn, and may still be retried in the background while the client is open.
   * @defaultValue 2000
   */
  readonly cancelGraceMs?: number | undefined;
  /**
   * Upper bound of `close({ cancelRunning: true })`: every cancel is sent at once, once, and
   * `close()` resolves when all are answered or this time has passed. Also bounds how long
   * `close()` of a client made by `TaskClient.connect` waits for the answer to a call given up
   * before it came, so that a task created anyway gets its `tasks/cancel` before the connection
   * closes.
   * @defaultValue requestTimeoutMs
   */
  readonly closeTimeoutMs?: number | undefined;
  /**
   * When a call's `signal` aborts, cancel the remote task with `tasks/cancel`; `false` only detaches.
   * @defaultValue true
   */
  readonly cancelOnAbort?: boolean | undefined;
  /**
   * Throw {@link TaskNotSupportedError} instead of falling back to a plain `tools/call` when the
   * server or the tool does not support tasks.
   * @defaultValue false
   */
  readonly requireTask?: boolean | undefined;
  /**
   * Emit `expiring` this long before a still-running task's ttl runs out (the server may drop it
   * then, [V11]).
   * @defaultValue 10% of the task's ttl, between 1 s and 60 s
   */
  readonly ttlWarningMs?: number | undefined;
  /** Retries of transient request failures (timeouts, lost connections, HTTP 5xx, 429 and 408). */
  readonly retry?: RetryOptions | undefined;
  /**
   * Most tasks this client runs at once (a slot is held from the call until the task settles).
   * @defaultValue Infinity
   */
  readonly maxConcurrentTasks?: number | undefined;
  /**
   * What a call does when `maxConcurrentTasks` is reached: wait its turn in a FIFO queue
   * (abortable by its signal, counted against its deadline), or reject with `TaskQueueFullError`.
   * @defaultValue 'queue'
   */
  readonly whenFull?: 'queue' | 'reject' | undefined;
  /**
   * Receives structured lifecycle logs ([R36]); `consoleLogger()` is provided.
   * @defaultValue undefined (silent)
   */
  readonly logger?: TaskLogger | undefined;
  /**
   * Makes a new connected SDK `Client` when the connection closes; the TaskClient then resumes
   * every unsettled task over it (see `TaskClient.reconnect`). Retried with the `retry` backoff
   * while tasks are tracked. The clients it returns are the library's: each is closed when a later
   * one replaces it after a loss, or by `close()`.
   * @defaultValue undefined (wait for a manual `reconnect(client)`)
   */
  readonly reconnect?: (() => Promise<McpClient>) | undefined;
  /**
   * Log task ids in full. Off by default: task ids are secrets, so logs carry a fingerprint.
   * @defaultValue false
   */
  readonly logTaskIds?: boolean | undefined;
  /**
   * Clock used for every delay and deadline; inject one for deterministic tests.
   * @defaultValue wall clock and Node timers
   */
  readonly clock?: Clock | undefined;
  /**
   * Source of randomness for jitter, returning values in [0, 1).
   * @defaultValue Math.random
   */
  readonly random?: (() => number) | undefined;
  /**
   * Serve the server's task-augmented `elicitation/create` and `sampling/createMessage` requests
   * (the receiver role of 2025-11-25 tasks) from the start, as {@link TaskClient.serve} would.
   * `TaskClient.connect` also declares the capabilities this needs; a client made elsewhere must
   * have declared them. See docs/receiver.md.
   * @defaultValue undefined (not served)
   */
  readonly serve?: ServeOptions | undefined;
}

/** Options of one {@link TaskClient.callToolAsTask} call. */
export interface CallToolAsTaskOptions extends InputCallbacks {
  /** Requested `ttl` in ms (wire `task.ttl`). @defaultValue the client's `ttlMs` */
  readonly ttlMs?: number | undefined;
  /** Deadline for the whole task, in ms. @defaultValue the client's `timeoutMs` */
  readonly timeoutMs?: number | undefined;
  /** Aborts the call; by default the remote task is cancelled too (`cancelOnAbort`). */
  readonly signal?: AbortSignal | undefined;
  /** Cancel the remote task when this call's deadline passes. @defaultValue the client's `cancelOnTimeout` */
  readonly cancelOnTimeout?: boolean | undefined;
  /** Cancel the remote task when this call's `signal` aborts. @defaultValue the client's `cancelOnAbort` */
  readonly cancelOnAbort?: boolean | undefined;
  /** Fail instead of running the tool as a plain call when no task can be had. @defaultValue the client's `requireTask` */
  readonly requireTask?: boolean | undefined;
  /** Timeout of each short request for this task. @defaultValue the client's `requestTimeoutMs` */
  readonly requestTimeoutMs?: number | undefined;
  /** Extra `_meta` entries for the `tools/call` request. */
  readonly meta?: Record<string, unknown> | undefined;
  /**
   * Receives the server's progress notifications for this call, for the task's whole life
   * ([R35], [V27]). A `progressToken` is sent only when this is set.
   */
  readonly onProgress?: ProgressCallback | undefined;
}

/** Options of `TaskClient.close`. */
export interface CloseOptions {
  /**
   * Cancel every still-running remote task with `tasks/cancel` before closing.
   * @defaultValue false
   */
  readonly cancelRunning?: boolean | undefined;
}

/** Options of `TaskClient.connect`: the SDK client's identity and options, plus the TaskClient's. */
export interface TaskClientConnectOptions extends TaskClientOptions {
  /**
   * The SDK to build the client with: `v1` (`@modelcontextprotocol/sdk`) or `v2`
   * (`@modelcontextprotocol/client`, which negotiates the protocol era automatically and so also
   * reaches servers that offer tasks only through the 2026 extension). The two SDKs' transports
   * look alike, so this cannot be told from `transport`, with one exception: SDK v1's Streamable
   * HTTP transport gets SDK v1 (an SDK v2 client cannot negotiate over it).
   * @defaultValue the installed SDK; when both are installed, `v1` for SDK v1's Streamable HTTP
   * transport and `v2` for any other
   */
  readonly sdk?: 'v1' | 'v2' | undefined;
  /**
   * The client's name and version, sent to the server.
   * @defaultValue `{ name: 'mcp-task-client', version: '0.1.0' }`
   */
  readonly clientInfo?: { readonly name: string; readonly version: string; readonly [key: string]: unknown } | undefined;
  /**
   * Capabilities to declare, merged with what the callbacks need: `elicitation` when
   * `onElicitation` is given, `sampling` when `onSampling` is. Declare them here too if only
   * per-call callbacks will answer.
   */
  readonly capabilities?: JsonObject | undefined;
  /** Other options for the SDK `Client` constructor (e.g. `versionNegotiation` for SDK v2). */
  readonly clientOptions?: JsonObject | undefined;
}

/** Options of {@link TaskHandleApi.result}. */
export interface ResultOptions {
  /** Stops this wait only: the task and other waiters carry on. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link TaskHandleApi.updates}. */
export interface UpdatesOptions {
  /** Ends this iterator only (it throws a `TaskAbortError`); the task and other consumers carry on. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Snapshots buffered for a slow consumer before the oldest are dropped (the terminal one never is).
   * @defaultValue 1024
   */
  readonly bufferSize?: number | undefined;
}

/** What kind of handle: `task` when the server created a task, `immediate` for a plain result. */
export type HandleKind = 'task' | 'immediate';

/**
 * The members of a {@link TaskHandle} of kind `K`. You get a `TaskHandle` (either kind) from
 * `TaskClient.callToolAsTask` or `TaskClient.resume`; checking `handle.kind === 'task'` narrows
 * it, and `taskId` is then a `string`. Cheap: all state lives in the client's engine; any number
 * of `result()` awaiters and iterators can share one handle.
 */
export interface TaskHandleApi<K extends HandleKind> extends AsyncIterable<Task> {
  /** `task` when the server created a task; `immediate` when it answered with a plain result. */
  readonly kind: K;
  /** The task id; `undefined` for an immediate handle. */
  readonly taskId: K extends 'task' ? string : undefined;
  /** The tool that was called. */
  readonly toolName: string;
  /** The task wire the call ran on: `2025-11-25` or `io.modelcontextprotocol/tasks`. */
  readonly wire: WireKind;
  /** The server's `io.modelcontextprotocol/model-immediate-response` hint, if it sent one ([R39]). */
  readonly immediateResponse: string | undefined;
  /**
   * The latest snapshot; `undefined` for an immediate handle, and for a resumed task not yet read
   * from the server.
   */
  readonly task: Task | undefined;
  /** True once `result()` would settle at once. */
  readonly settled: boolean;
  /** The task's numbers so far (polls, notifications, retries, durations); `undefined` when immediate. */
  readonly metrics: TaskMetrics | undefined;
  /**
   * Listens to this task's lifecycle events (`status`, `inputRequired`, `progress`, `expiring`,
   * `completed`, `failed`, `cancelled`, `timeout`, `expired`, `settled`); see {@link TaskHandleEvents}. A listener
   * that throws is reported on the client's `error` event. An immediate handle emits nothing.
   * Each call adds one registration, even of a function already added.
   * @returns a function that removes this registration only.
   */
  on<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void;
  /**
   * Like {@link TaskHandleApi.on}, for one event only: each registration runs at most once.
   * @returns a function that removes this registration only.
   */
  once<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void;
  /**
   * Removes every registration of `listener` on `event`, whether added with {@link TaskHandleApi.on}
   * or {@link TaskHandleApi.once}.
   */
  off<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): void;
  /**
   * The tool's result, fetched once and shared by every caller.
   * @throws TaskFailedError when the task failed (with the server's payload and message).
   * @throws TaskCancelledError when the task was cancelled.
   * @throws TaskTimeoutError, TaskAbortError, TaskExpiredError, TaskNotFoundError, TaskDetachedError,
   *   TaskClosedError when the wait ended locally or the task vanished.
   * @throws TaskRpcError, TaskProtocolError when tracking gave up on the server's replies (5 hard
   *   poll failures in a row, or an input answer that could never be delivered).
   * @throws TaskAbortError when `options.signal` aborts (this wait only).
   * @throws TaskOptionError when `options` is not an object or `options.signal` is not an
   *   `AbortSignal` (then nothing else happens).
   */
  result(options?: ResultOptions): Promise<CallToolResult>;
  /**
   * A new iterator over this task's snapshots: the current one first, then every change, ending
   * after the terminal one. Each iterator is independent; `break` affects no other consumer.
   * An immediate handle yields nothing.
   * @throws TaskOptionError (at once, with nothing subscribed) for an invalid `bufferSize`, a
   *   `signal` that is not an `AbortSignal`, or `options` that are not an object.
   * @throws (from `next()`) the error that stopped tracking early: TaskTimeoutError, TaskAbortError,
   *   TaskClosedError, TaskExpiredError, TaskNotFoundError, or TaskRpcError / TaskProtocolError when
   *   tracking gave up on the server's replies.
   */
  updates(options?: UpdatesOptions): AsyncIterableIterator<Task, undefined>;
  /**
   * Cancels the remote task and returns the final snapshot. On 2025-11-25 `tasks/cancel` answers
   * with the task; on the tasks extension it only acknowledges, and one confirming read tells what
   * became of it (cancellation there is cooperative: the task may still finish). When the task had
   * already finished ([V23]) the truth is returned instead of failing, and `result()` settles as the
   * task really ended. A settled or immediate handle returns its last snapshot.
   * @throws TaskNotSupportedError when the server cannot cancel tasks.
   * @throws TaskClosedError when `close()` left this task running.
   * @throws TaskRpcError when the cancel request fails.
   */
  cancel(): Promise<Task | undefined>;
  /**
   * Stops tracking locally and leaves the remote task running. Pending `result()` calls reject with
   * `TaskDetachedError`; iterators end; an input callback still answering may finish. Returns what
   * `TaskClient.resume` needs to pick the task up again; `undefined` for an immediate handle.
   */
  detach(): TaskReference | undefined;
  /** A resume reference for this task (see {@link TaskHandleApi.detach}); `undefined` when immediate. */
  toJSON(): TaskReference | undefined;
  /**
   * Cancels the remote task if it is still running and stops tracking; free on a settled handle.
   * Bounded by `cancelGraceMs`. This is what `await using` calls on scope exit. Call
   * {@link TaskHandleApi.detach} first to keep the task running instead.
   */
  dispose(): Promise<void>;
  /** `await using handle = await tasks.callToolAsTask(...)` support; see {@link TaskHandleApi.dispose}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * What `TaskClient.callToolAsTask` and `TaskClient.resume` give: a handle of either kind. Narrow
 * it with `handle.kind === 'task'`; every handle is an instance of {@link TaskHandleOf}.
 */
export type TaskHandle = TaskHandleApi<'task'> | TaskHandleApi<'immediate'>;

/**
 * What is needed to find a task again later, in this process or another: pass it to
 * `TaskClient.resume`. Small, JSON-safe and versioned. The task id inside is a secret.
 */
export interface TaskReference {
  /** Format version. */
  readonly v: 2;
  /** The task id (a secret: whoever has it can read the task). */
  readonly taskId: string;
  /** The tool that was called. */
  readonly toolName: string;
  /** Server-side creation time (ISO 8601). */
  readonly createdAt: string;
  /** Retention from creation in ms; `null` when unlimited or unknown. */
  readonly ttl: number | null;
  /** Identity of the server that holds the task (`name@version`); `''` when unknown. */
  readonly server: string;
  /** The task wire the task runs on. */
  readonly wire: WireKind;
  /**
   * The Streamable HTTP session the task was created in, if any. Servers built on the MCP SDKs
   * keep tasks per session: to resume in another process, open the transport with this session id.
   */
  readonly sessionId?: string | undefined;
  /**
   * The server's task capabilities, for a session that resumes without a handshake (and so never
   * learns them).
   */
  readonly capabilities?: { readonly cancel: boolean; readonly list: boolean } | undefined;
}

/** Options of `TaskClient.resume`: the stop and input options of a call. */
export interface ResumeOptions
  extends Pick<
    CallToolAsTaskOptions,
    'timeoutMs' | 'signal' | 'cancelOnTimeout' | 'cancelOnAbort' | 'requestTimeoutMs' | 'onElicitation' | 'onSampling'
  > {
  /** Tool name to report when resuming by bare task id. @defaultValue 'unknown' */
  readonly toolName?: string | undefined;
}

/**
 * How an input request reached the client: `request`, `task-update` and `retry` for input a
 * task of this client's asks for, `receiver-task` for a task-augmented request this client runs
 * as a receiver task (see {@link TaskClient.serve}).
 */
export type InputDelivery = 'request' | 'task-update' | 'retry' | 'receiver-task';

/** What an input callback learns about the request it answers. */
export interface InputContext {
  /** The task that asked; `undefined` for an untagged request (e.g. from mcp-go, D14) or before a task exists (`retry`). */
  readonly taskId: string | undefined;
  /** The handle of that task, when this client tracks it. */
  readonly handle: TaskHandle | undefined;
  /** The tool that was called, when known. */
  readonly toolName: string | undefined;
  /**
   * Which path brought the request: `request` (a 2025-11-25 side-channel request), `task-update`
   * (a task's `inputRequests` on the tasks extension), `retry` (asked before a task exists; the
   * call is sent again with the answer) or `receiver-task` (a task-augmented request: the answer
   * becomes the result of the receiver task {@link InputContext.receiverTaskId}, which the server
   * polls).
   */
  readonly delivery: InputDelivery;
  /**
   * With delivery `receiver-task`: the id of the task this client created to run the request (a
   * secret, like every task id). `taskId` is then the server's own task the request belongs to,
   * if it said so.
   */
  readonly receiverTaskId?: string | undefined;
  /**
   * Fires when the answer is no longer wanted: the task ended, timed out or was cancelled, the
   * call was abandoned, or the server cancelled the request; for a receiver task, when the server
   * cancelled it (`tasks/cancel`), its ttl ran out, or serving stopped. Dismiss any prompt then.
   */
  readonly signal: AbortSignal;
}

/** Answers an elicitation (`elicitation/create`); the result is sent back to the server. */
export type ElicitationCallback = (params: ElicitRequestParams, context: InputContext) => ElicitResult | Promise<ElicitResult>;

/** Answers a sampling request (`sampling/createMessage`); the result is sent back to the server. */
export type SamplingCallback = (
  params: CreateMessageRequestParams,
  context: InputContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

/** Input callbacks, per call or client-wide. */
export interface InputCallbacks {
  /** Answers elicitations. The SDK client must have declared the `elicitation` capability. */
  readonly onElicitation?: ElicitationCallback | undefined;
  /** Answers sampling requests. The SDK client must have declared the `sampling` capability. */
  readonly onSampling?: SamplingCallback | undefined;
}

/** How a tracked task ended for this client. */
export type TaskOutcomeKind =
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'timeout'
  | 'aborted'
  | 'expired'
  | 'detached'
  | 'closed'
  | 'error';

/**
 * Which side of a task this client is: `requestor` for a task it created on the server (a tool
 * call), `receiver` for a task it runs for the server (a task-augmented elicitation or sampling
 * request, {@link TaskClient.serve}).
 */
export type TaskRole = 'requestor' | 'receiver';

/** Numbers about one task, carried by every lifecycle event. */
export interface TaskMetrics {
  /** Whether this client created the task (`requestor`) or runs it for the server (`receiver`). */
  readonly role: TaskRole;
  /** The task id (a secret; the logger fingerprints it). */
  readonly taskId: string;
  /**
   * The tool that was called; for a receiver task, the request it runs (`elicitation/create` or
   * `sampling/createMessage`).
   */
  readonly toolName: string;
  /** The latest status. */
  readonly status: TaskStatus;
  /** The latest status message, if any. */
  readonly statusMessage: string | undefined;
  /** Server-side creation time (ISO 8601). */
  readonly createdAt: string;
  /** Local time (ms since epoch) the call started. */
  readonly startedAt: number;
  /** Local time (ms since epoch) the task settled; `undefined` while it runs. */
  readonly completedAt: number | undefined;
  /** Local milliseconds from the call to settlement (or to now, while it runs). */
  readonly durationMs: number;
  /** `tasks/get` requests sent for this task (served, for a receiver task). */
  readonly polls: number;
  /** `notifications/tasks/status` received for this task (sent, for a receiver task). */
  readonly notifications: number;
  /** Retried requests for this task. */
  readonly retries: number;
  /** The error the task settled with, if any. */
  readonly error: TaskError | undefined;
}

/** Progress reported by the server for a call's `progressToken` ([R35]). */
export interface TaskProgress {
  /** Progress so far (increases with each notification). */
  readonly progress: number;
  /** Total, when the server knows it. */
  readonly total?: number | undefined;
  /** A human-readable progress message, if any. */
  readonly message?: string | undefined;
}

/** Events of a {@link TaskClient}, with their listener arguments. */
export interface TaskClientEvents {
  /** A task was created on the server and is now tracked. */
  created: [metrics: TaskMetrics];
  /** A task's snapshot changed (every accepted change). */
  status: [metrics: TaskMetrics, task: Task];
  /** A task entered `input_required`: it waits for its user. */
  inputRequired: [metrics: TaskMetrics, task: Task];
  /** Progress for a task's `progressToken`. */
  progress: [metrics: TaskMetrics, progress: TaskProgress];
  /**
   * A task completed; its result is in hand: the tool's result for a requestor task, the
   * callback's answer for a receiver task (narrow on `role`).
   */
  completed: [metrics: CompletedMetrics];
  /** A task failed. */
  failed: [metrics: TaskMetrics & { readonly error: TaskFailedError }];
  /** A task was cancelled (by anyone). */
  cancelled: [metrics: TaskMetrics & { readonly error: TaskCancelledError }];
  /** A task's deadline passed. */
  timeout: [metrics: TaskMetrics & { readonly error: TaskTimeoutError }];
  /** The server dropped a task: its ttl elapsed (`TaskExpiredError`) or it vanished early (`TaskNotFoundError`). */
  expired: [metrics: TaskMetrics & { readonly error: TaskExpiredError | TaskNotFoundError }];
  /**
   * A task still running is close to the end of its ttl: the server may drop it at `expiresAt`
   * ([V11]). Time to extend, persist or give up.
   */
  expiring: [metrics: TaskMetrics, expiry: { readonly expiresAt: number; readonly remainingMs: number }];
  /** The connection to the server closed; tracking is paused until it comes back. */
  connectionLost: [];
  /** A new connection took over (`reconnect`); every unsettled task is read again. */
  connectionRestored: [];
  /** Any settlement, whatever the outcome (also aborted, detached, closed). */
  settled: [metrics: TaskMetrics & { readonly outcome: TaskOutcomeKind }];
  /** A library-internal problem that did not fail a task (a failed poll, a malformed message, a throwing listener). */
  error: [error: TaskError, metrics: TaskMetrics | undefined];
}

/** The payload of a `completed` event: the metrics and the result, by {@link TaskRole}. */
export type CompletedMetrics =
  | (TaskMetrics & { readonly role: 'requestor'; readonly result: CallToolResult })
  | (TaskMetrics & { readonly role: 'receiver'; readonly result: ReceiverResult });

/**
 * Events of one {@link TaskHandle}: the same shapes, for that task only (a handle is always the
 * requestor's, so `completed` carries a tool result).
 */
export interface TaskHandleEvents
  extends Pick<
    TaskClientEvents,
    'status' | 'inputRequired' | 'progress' | 'expiring' | 'failed' | 'cancelled' | 'timeout' | 'expired' | 'settled'
  > {
  /** The task completed; its result is in hand. */
  completed: [metrics: TaskMetrics & { readonly result: CallToolResult }];
}

/** Severity of a log entry. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One structured log entry. */
export interface LogEntry {
  /** Severity. */
  readonly level: LogLevel;
  /** What happened, e.g. `task created`, `task failed`. */
  readonly message: string;
  /** Structured details: task fingerprint (or id), tool, status, metrics, error. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Receives log entries; adapt it to any logging library. */
export interface TaskLogger {
  /** Receives one entry; an exception thrown here is ignored. */
  log(entry: LogEntry): void;
}

/** Options of {@link consoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Lowest level printed. @defaultValue 'info' */
  readonly level?: LogLevel | undefined;
  /** Where to print. @defaultValue globalThis.console */
  readonly console?: Pick<Console, LogLevel> | undefined;
}

/** A tool the server lists, with whether it can run as a task. */
export interface ToolTaskSupport {
  /** The tool's name. */
  readonly name: string;
  /**
   * Its declared `execution.taskSupport` on 2025-11-25 ([R7]-[R9]; `forbidden` when absent); on the
   * tasks extension the server decides per call: `server-decides`. On a 2026-07-28 server that
   * does not offer the extension no call can become a task: `forbidden`.
   */
  readonly taskSupport: 'forbidden' | 'optional' | 'required' | 'server-decides';
  /** Its title, if the server gave one. */
  readonly title?: string | undefined;
  /** Its description, if the server gave one. */
  readonly description?: string | undefined;
}

/** What a receiver task's callback answers: an elicitation's or a sampling request's result. */
export type ReceiverResult = ElicitResult | CreateMessageResult;

/**
 * Options of {@link TaskClient.serve} (and of the `serve` client option): how this client runs the
 * server's task-augmented `elicitation/create` and `sampling/createMessage` requests as receiver
 * tasks (MCP 2025-11-25). Every duration is in milliseconds.
 */
export interface ServeOptions {
  /**
   * Answers elicitations, task-augmented or not (a plain one reaches it when no call or client
   * callback answers first). Only the kinds given a callback are served.
   * @defaultValue the client's `onElicitation` when neither callback is given
   */
  readonly elicitation?: ElicitationCallback | undefined;
  /**
   * Answers sampling requests, task-augmented or not.
   * @defaultValue the client's `onSampling` when neither callback is given
   */
  readonly sampling?: SamplingCallback | undefined;
  /**
   * Retention granted when the server asks for no `ttl` (capped by `maxTtlMs`).
   * @defaultValue 3600000 (1 hour)
   */
  readonly ttlMs?: number | undefined;
  /**
   * Longest retention granted: a larger requested `ttl` is lowered to it, and the granted value is
   * what the task reports ([V10]). A task and its result are deleted `ttl` after creation, running
   * or not ([V11]).
   * @defaultValue 86400000 (24 hours)
   */
  readonly maxTtlMs?: number | undefined;
  /**
   * The `pollInterval` suggested to the server in every task snapshot.
   * @defaultValue 1000
   */
  readonly pollIntervalMs?: number | undefined;
  /**
   * Most receiver tasks held per connection, running or finished. When a new task would exceed
   * it, the oldest finished task is deleted; when every task is still running, the request is
   * refused with a JSON-RPC error.
   * @defaultValue 1000
   */
  readonly maxTasks?: number | undefined;
  /**
   * Tasks per `tasks/list` page.
   * @defaultValue 50
   */
  readonly pageSize?: number | undefined;
}

/**
 * Serving of receiver tasks, from {@link TaskClient.serve}: numbers for a host's UI, and the way
 * to stop. Stopping (or closing the TaskClient) cancels every running receiver task, aborts the
 * signals of their callbacks and deletes every task; the server then gets errors for them.
 */
export interface ReceiverHandle extends AsyncDisposable {
  /** True once serving stopped. */
  readonly closed: boolean;
  /** Receiver tasks held on the current connection, running or finished. */
  readonly size: number;
  /** Receiver tasks whose callback is still running. */
  readonly running: number;
  /** Snapshots of the receiver tasks held on the current connection, oldest first. */
  tasks(): Task[];
  /** Stops serving (idempotent). */
  close(): Promise<void>;
  /** `await using receiver = tasks.serve(...)` support; see {@link ReceiverHandle.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}
