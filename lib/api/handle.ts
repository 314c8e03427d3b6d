/**
 * Public types of a task handle: its members and kinds, the options of `result()` and `updates()`,
 * and the resume reference it hands out.
 */
import type { CallToolResult, Task } from '../types.js';
import type { WireKind } from './wire.js';
import type { TaskHandleEvents, TaskMetrics } from './events.js';

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
   * @defaultValue 1024
   */
  readonly bufferSize?: number | undefined;
}

/** What kind of handle: `task` when the server created a task, `immediate` for a plain result. */
export type HandleKind = 'task' | 'immediate';

// A type alias and not an interface, so that `TaskHandle` itself is a union that narrows on
// `kind`. `@interface` has TypeDoc document it as one; the kind-dependent members are documented
// once, on the task branch (a comment on both would be ambiguous to TypeDoc).
/**
 * A tool call run as a task, or answered at once: what `TaskClient.callToolAsTask` and
 * `TaskClient.resume` give, the one handle type to name. `TaskHandle` is a handle of either kind;
 * checking `handle.kind === 'task'` narrows it to a `TaskHandle<'task'>`, whose `taskId` is a
 * `string`. Cheap: all state lives in the client's engine; any number of `result()` awaiters and
 * iterators can share one handle.
 *
 * @typeParam K - the kind of handle: `task` when the server created a task, `immediate` when it
 *   answered with a plain result; either kind when omitted.
 * @interface
 */
export type TaskHandle<K extends HandleKind = HandleKind> = {
  /** The tool that was called. */
  readonly toolName: string;
  /** The task wire the call ran on: `2025-11-25` or `io.modelcontextprotocol/tasks`. */
  readonly wire: WireKind;
  /** The server's `io.modelcontextprotocol/model-immediate-response` hint, if it sent one. */
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
   * Like {@link TaskHandle.on}, for one event only: each registration runs at most once.
   * @returns a function that removes this registration only.
   */
  once<E extends keyof TaskHandleEvents>(event: E, listener: (...args: TaskHandleEvents[E]) => void): () => void;
  /**
   * Removes every registration of `listener` on `event`, whether added with {@link TaskHandle.on}
   * or {@link TaskHandle.once}.
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
   * Cancels the remote task and returns the final snapshot. The task is first read once (at most
   * half of `cancelGraceMs`): when that shows it already ended, no `tasks/cancel` is sent, its
   * snapshot is returned and `result()` settles as the task really ended. On 2025-11-25
   * `tasks/cancel` answers with the task; on the tasks extension it only acknowledges, and one
   * confirming read tells what became of it (cancellation there is cooperative: the task may still
   * finish). When the task had already finished the truth is returned instead of failing,
   * and `result()` settles as the task really ended. A settled or immediate handle returns its last
   * snapshot, except one whose task is gone: it rejects as `result()` does. So does a handle whose
   * task was left running (`detach()`, a deadline with `cancelOnTimeout: false`, an abort with
   * `cancelOnAbort: false`): it sends no `tasks/cancel`; to cancel that task, `resume()` its
   * reference and cancel the new handle. Bounded: it waits for
   * the server at most `requestTimeoutMs` + `cancelGraceMs` (transient failures retried within
   * that), and no longer than the handle's deadline (or abort) and its grace.
   * @throws TaskTimeoutError when the bound passed first: its `remoteCancel` says what became of
   *   the remote task (`'unknown'`, `'acknowledged'`, `'failed'`); the `tasks/cancel` goes on in the
   *   background, and the task is still followed. When the handle's deadline (or abort signal)
   *   stopped it meanwhile, the stop's own `TaskTimeoutError` (or `TaskAbortError`).
   * @throws TaskNotSupportedError when the server cannot cancel tasks.
   * @throws TaskNotFoundError / TaskExpiredError when the server no longer knows the task (found
   *   before or during the cancel, with no cancel of it accepted): the same error as `result()`.
   * @throws TaskClosedError when `close()` left this task running, also when it came while the
   *   cancel was under way.
   * @throws TaskRpcError when the cancel request fails, or the server refused it (any JSON-RPC
   *   error) and a read shows the task still running; the task is still followed.
   */
  cancel(): Promise<Task | undefined>;
  /**
   * Stops tracking locally and leaves the remote task running. Pending `result()` calls reject with
   * `TaskDetachedError`; iterators end; an input callback still answering may finish. Returns what
   * `TaskClient.resume` needs to pick the task up again; `undefined` for an immediate handle.
   */
  detach(): TaskReference | undefined;
  /** A resume reference for this task (see {@link TaskHandle.detach}); `undefined` when immediate. */
  toJSON(): TaskReference | undefined;
  /**
   * Cancels the remote task if it is still running and stops tracking; free on a settled handle.
   * The task is read once first: one found ended is not cancelled and settles as it really ended
   * (`result()` resolves with its result). Bounded by `cancelGraceMs`. This is what `await using`
   * calls on scope exit. Call
   * {@link TaskHandle.detach} first to keep the task running instead.
   */
  dispose(): Promise<void>;
  /** `await using handle = await tasks.callToolAsTask(...)` support; see {@link TaskHandle.dispose}. */
  [Symbol.asyncDispose](): Promise<void>;
  /** Same as {@link TaskHandle.updates} without options: `for await (const task of handle)` works. */
  [Symbol.asyncIterator](): AsyncIterator<Task>;
} & (K extends 'task'
  ? {
      /** `task` when the server created a task; `immediate` when it answered with a plain result. */
      readonly kind: 'task';
      /** The task id; `undefined` for an immediate handle. */
      readonly taskId: string;
    }
  : { readonly kind: 'immediate'; readonly taskId: undefined });

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
  readonly capabilities?:
    | {
        /** The server can cancel tasks. */
        readonly cancel: boolean;
        /** The server lists tasks (`tasks/list`). */
        readonly list: boolean;
      }
    | undefined;
}
