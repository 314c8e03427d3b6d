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
   * @default 100
   */
  readonly minPollIntervalMs?: number | undefined;
  /**
   * Ceiling of every poll delay (an enormous `pollInterval` is clamped to it).
   * @default 60000
   */
  readonly maxPollIntervalMs?: number | undefined;
  /**
   * First poll delay when the server sends no `pollInterval` (D2); it grows by 1.5x per poll.
   * @default 500
   */
  readonly initialPollIntervalMs?: number | undefined;
  /**
   * Ceiling of that growth.
   * @default 5000
   */
  readonly hintlessMaxPollIntervalMs?: number | undefined;
  /**
   * Timeout of each short request (`tasks/get`, `tasks/cancel`, `tasks/list`, `tools/list`, and
   * `tasks/result` once the task is terminal). Separate from the task deadline; a poll that times
   * out is simply retried at the next tick. The task-creating `tools/call` gets the time left
   * before the deadline (or 60 s without one) plus this, as a backstop for a server that never
   * answers.
   * @default 10000
   */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Default deadline for each task, from the call until the result is in hand. Per-call
   * `timeoutMs` overrides it.
   * @default undefined (no deadline)
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Default `ttl` requested for each task, in ms ([R11]); the server may override it.
   * @default undefined (the server's default)
   */
  readonly ttlMs?: number | undefined;
  /**
   * When the deadline passes, cancel the remote task with `tasks/cancel` (if the server supports it).
   * @default true
   */
  readonly cancelOnTimeout?: boolean | undefined;
  /**
   * How long a deadline, an abort or `dispose()` waits for the remote cancel (and for the payload
   * of a task found to have finished) before settling anyway: a handle always settles within
   * `timeoutMs + cancelGraceMs`. An unanswered cancel is reported as `remoteCancel: 'unknown'`;
   * it is not withdrawn, and may still be retried in the background while the client is open.
   * @default 2000
   */
  readonly cancelGraceMs?: number | undefined;
  /**
   * Upper bound of `close({ cancelRunning: true })`: every cancel is sent at once, once, and
   * `close()` resolves when all are answered or this time has passed.
   * @default requestTimeoutMs
   */
  readonly closeTimeoutMs?: number | undefined;
  /**
   * When a call's `signal` aborts, cancel the remote task with `tasks/cancel`; `false` only detaches.
   * @default true
   */
  readonly cancelOnAbort?: boolean | undefined;
  /**
   * Throw {@link TaskNotSupportedError} instead of falling back to a plain `tools/call` when the
   * server or the tool does not support tasks.
   * @default false
   */
  readonly requireTask?: boolean | undefined;
  /**
   * Emit `expiring` this long before a still-running task's ttl runs out (the server may drop it
   * then, [V11]).
   * @default 10% of the task's ttl, between 1 s and 60 s
   */
  readonly ttlWarningMs?: number | undefined;
  /** Retries of transient request failures (timeouts, lost connections, HTTP 5xx/429). */
  readonly retry?: RetryOptions | undefined;
  /**
   * Most tasks this client runs at once (a slot is held from the call until the task settles).
   * @default Infinity
   */
  readonly maxConcurrentTasks?: number | undefined;
  /**
   * What a call does when `maxConcurrentTasks` is reached: wait its turn in a FIFO queue
   * (abortable by its signal, counted against its deadline), or reject with `TaskQueueFullError`.
   * @default 'queue'
   */
  readonly whenFull?: 'queue' | 'reject' | undefined;
  /**
   * Receives structured lifecycle logs ([R36]); `consoleLogger()` is provided.
   * @default undefined (silent)
   */
  readonly logger?: TaskLogger | undefined;
  /**
   * Makes a new connected SDK `Client` when the connection closes; the TaskClient then resumes
   * every unsettled task over it (see `TaskClient.reconnect`). Retried with the `retry` backoff
   * while tasks are tracked.
   * @default undefined (wait for a manual `reconnect(client)`)
   */
  readonly reconnect?: (() => Promise<McpClient>) | undefined;
  /**
   * Log task ids in full. Off by default: task ids are secrets, so logs carry a fingerprint.
   * @default false
   */
  readonly logTaskIds?: boolean | undefined;
  /**
   * Clock used for every delay and deadline; inject one for deterministic tests.
   * @default wall clock and Node timers
   */
  readonly clock?: Clock | undefined;
  /**
   * Source of randomness for jitter, returning values in [0, 1).
   * @default Math.random
   */
  readonly random?: (() => number) | undefined;
}

/** Options of one {@link TaskClient.callToolAsTask} call. */
export interface CallToolAsTaskOptions extends InputCallbacks {
  /** Requested `ttl` in ms (wire `task.ttl`). @default the client's `ttlMs` */
  readonly ttlMs?: number | undefined;
  /** Deadline for the whole task, in ms. @default the client's `timeoutMs` */
  readonly timeoutMs?: number | undefined;
  /** Aborts the call; by default the remote task is cancelled too (`cancelOnAbort`). */
  readonly signal?: AbortSignal | undefined;
  /** @default the client's `cancelOnTimeout` */
  readonly cancelOnTimeout?: boolean | undefined;
  /** @default the client's `cancelOnAbort` */
  readonly cancelOnAbort?: boolean | undefined;
  /** @default the client's `requireTask` */
  readonly requireTask?: boolean | undefined;
  /** Timeout of each short request for this task. @default the client's `requestTimeoutMs` */
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
   * @default false
   */
  readonly cancelRunning?: boolean | undefined;
}

/** Options of `TaskClient.connect`: the SDK client's identity and options, plus the TaskClient's. */
export interface TaskClientConnectOptions extends TaskClientOptions {
  /**
   * The SDK to build the client with: `v1` (`@modelcontextprotocol/sdk`) or `v2`
   * (`@modelcontextprotocol/client`, which negotiates the protocol era automatically and so also
   * reaches servers that offer tasks only through the 2026 extension). The two SDKs' transports
   * look alike, so this cannot be told from `transport`.
   * @default the installed SDK; `v2` when both are installed
   */
  readonly sdk?: 'v1' | 'v2' | undefined;
  /**
   * The client's name and version, sent to the server.
   * @default { name: 'mcp-task-client', version: '0.1.0' }
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

/** Options of {@link TaskHandle.result}. */
export interface ResultOptions {
  /** Stops this wait only: the task and other waiters carry on. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link TaskHandle.updates}. */
export interface UpdatesOptions {
  /** Ends this iterator only (it throws a `TaskAbortError`); the task and other consumers carry on. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Snapshots buffered for a slow consumer before the oldest are dropped (the terminal one never is).
   * @default 1024
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
   * Listens to this task's lifecycle events (`status`, `inputRequired`, `progress`, `completed`,
   * `failed`, `cancelled`, `timeout`, `expired`, `settled`); see {@link TaskHandleEvents}. A listener
   * that throws is reported on the client's `error` event. An immediate handle emits nothing.
   * @returns a function that removes the listener.
   */
  on<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void;
  /** Like {@link TaskHandleApi.on}, for one event only. */
  once<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void;
  /** Removes a listener added with {@link TaskHandleApi.on}. */
  off<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): void;
  /**
   * The tool's result, fetched once and shared by every caller.
   * @throws TaskFailedError when the task failed (with the server's payload and message).
   * @throws TaskCancelledError when the task was cancelled.
   * @throws TaskTimeoutError, TaskAbortError, TaskExpiredError, TaskNotFoundError, TaskDetachedError,
   *   TaskClosedError when the wait ended locally or the task vanished.
   * @throws TaskAbortError when `options.signal` aborts (this wait only).
   */
  result(options?: ResultOptions): Promise<CallToolResult>;
  /**
   * A new iterator over this task's snapshots: the current one first, then every change, ending
   * after the terminal one. Each iterator is independent; `break` affects no other consumer.
   * An immediate handle yields nothing.
   * @throws TaskOptionError (at once) for an invalid `bufferSize`.
   * @throws (from `next()`) the error that stopped tracking early: TaskTimeoutError, TaskAbortError,
   *   TaskClosedError, TaskExpiredError, TaskNotFoundError.
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
 * it with `handle.kind === 'task'`; `handle instanceof TaskHandle` also works.
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
  /** Tool name to report when resuming by bare task id. @default 'unknown' */
  readonly toolName?: string | undefined;
}

/** How an input request reached the client. */
export type InputDelivery = 'request' | 'task-update' | 'retry';

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
   * (a task's `inputRequests` on the tasks extension) or `retry` (asked before a task exists; the
   * call is sent again with the answer).
   */
  readonly delivery: InputDelivery;
  /**
   * Fires when the answer is no longer wanted: the task ended, timed out or was cancelled, the
   * call was abandoned, or the server cancelled the request. Dismiss any prompt then.
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

/** Numbers about one task, carried by every lifecycle event. */
export interface TaskMetrics {
  /** The task id (a secret; the logger fingerprints it). */
  readonly taskId: string;
  /** The tool that was called. */
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
  /** `tasks/get` requests sent for this task. */
  readonly polls: number;
  /** `notifications/tasks/status` received for this task. */
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
  /** A task completed; its result is in hand. */
  completed: [metrics: TaskMetrics & { readonly result: CallToolResult }];
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

/** Events of one {@link TaskHandle}: the same shapes, for that task only. */
export type TaskHandleEvents = Pick<
  TaskClientEvents,
  | 'status'
  | 'inputRequired'
  | 'progress'
  | 'expiring'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'timeout'
  | 'expired'
  | 'settled'
>;

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
  /** Lowest level printed. @default 'info' */
  readonly level?: LogLevel | undefined;
  /** Where to print. @default globalThis.console */
  readonly console?: Pick<Console, LogLevel> | undefined;
}

/** A tool the server lists, with whether it can run as a task. */
export interface ToolTaskSupport {
  /** The tool's name. */
  readonly name: string;
  /**
   * Its declared `execution.taskSupport` on 2025-11-25 ([R7]-[R9]; `forbidden` when absent); on the
   * tasks extension the server decides per call: `server-decides`.
   */
  readonly taskSupport: 'forbidden' | 'optional' | 'required' | 'server-decides';
  /** Its title, if the server gave one. */
  readonly title?: string | undefined;
  /** Its description, if the server gave one. */
  readonly description?: string | undefined;
}
