/**
 * Public types of task lifecycle events: the outcome and role of a task, its metrics, progress,
 * and the events of a client and of a handle with their listener arguments.
 */
import type {
  TaskCancelledError,
  TaskError,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskTimeoutError,
} from '../errors.js';
import type { CallToolResult, CreateMessageResult, ElicitResult, Task, TaskStatus } from '../types.js';

/** How a tracked task ended for this client. */
export type TaskOutcomeKind =
  'completed' | 'failed' | 'cancelled' | 'timeout' | 'aborted' | 'expired' | 'detached' | 'closed' | 'error';

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

/** Progress reported by the server for a call's `progressToken`. */
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
  /**
   * A task was created on the server and is now tracked: its handle is in `handles()` and counted
   * in `active` when this fires.
   */
  created: [metrics: TaskMetrics];
  /**
   * A task's snapshot: first the one `created` announced (right after it; for a resumed task, its
   * first read), then every accepted change, as an iterator sees them.
   */
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
  failed: [
    metrics: TaskMetrics & {
      /** The failure and its payload (a tool result with `isError`, or a JSON-RPC error). */
      readonly error: TaskFailedError;
    },
  ];
  /** A task was cancelled (by anyone). */
  cancelled: [
    metrics: TaskMetrics & {
      /** The cancellation (by this client or by the server). */
      readonly error: TaskCancelledError;
    },
  ];
  /** A task's deadline passed. */
  timeout: [
    metrics: TaskMetrics & {
      /** The error for the deadline (`timeoutMs`) that passed. */
      readonly error: TaskTimeoutError;
    },
  ];
  /**
   * A task was lost to its ttl or its server: the server dropped it after its ttl, or on the tasks
   * extension its ttl ran out while it still ran (`TaskExpiredError`), or the server dropped it
   * early (`TaskNotFoundError`).
   */
  expired: [
    metrics: TaskMetrics & {
      /** `TaskExpiredError` when the ttl elapsed; `TaskNotFoundError` when the task vanished before its ttl did (or had none). */
      readonly error: TaskExpiredError | TaskNotFoundError;
    },
  ];
  /**
   * A task still running is close to the end of its ttl: the server may drop it at `expiresAt`.
   * Time to extend, persist or give up.
   */
  expiring: [
    metrics: TaskMetrics,
    expiry: {
      /**
       * Local clock time (ms since epoch) at which the ttl ends, counted from when the `tools/call`
       * that created the task was sent (the earliest the server can have created it; for a resumed
       * task, from the resume), never from the server's timestamps: a server clock that is off, or
       * nodes that disagree, never bring it forward. The server may drop the task from about then
       * on. A resumed task was created before its resume, perhaps long before, so the server may
       * drop it earlier.
       */
      readonly expiresAt: number;
      /** `expiresAt` minus the local clock's time when the event was emitted, in ms (negative if the ttl already ended). */
      readonly remainingMs: number;
    },
  ];
  /** The connection to the server closed; tracking is paused until it comes back. */
  connectionLost: [];
  /** A new connection took over (`reconnect`); every unsettled task is read again. */
  connectionRestored: [];
  /** Any settlement, whatever the outcome (also aborted, detached, closed). */
  settled: [
    metrics: TaskMetrics & {
      /**
       * How the task ended: `completed`, `failed`, `cancelled`, `timeout` (its deadline passed),
       * `aborted` (an `AbortSignal` stopped it), `expired` (its ttl elapsed, or the server no longer
       * knew it), `detached` (`detach()`), `closed` (the client closed, or serving stopped), or
       * `error` (any other error, e.g. a protocol or RPC error).
       */
      readonly outcome: TaskOutcomeKind;
    },
  ];
  /**
   * An elicitation or sampling request that named no task (no related-task `_meta`, as mcp-go
   * sends them) could not be tied to one call, so no call's own `onElicitation`/`onSampling`
   * answers it: the TaskClient-level callback does, else `serve()`'s, else it is passed on (to
   * another TaskClient on the same SDK client, your SDK handler, or a `-32601` error naming the
   * cause). Each TaskClient that looks at the request emits it. A request refused with `-32602`
   * before any callback (params that break the schema, a mode the client did not declare) does not
   * emit it, as a malformed request tagged with a task is reported nowhere.
   */
  inputUnattributed: [input: UnattributedInput];
  /** A library-internal problem that did not fail a task (a failed poll, a malformed message, a throwing listener). */
  error: [error: TaskError, metrics: TaskMetrics | undefined];
}

/**
 * Why `no-task`: no call of the library was in flight on the connection (at most requests your own
 * code sent through the SDK client). Why `ambiguous`: several calls were in flight, and none was
 * alone in waiting for input (after waiting up to one poll interval for one to show it).
 */
export type UnattributedReason = 'no-task' | 'ambiguous';

/**
 * The payload of `inputUnattributed`: what came, why it was not tied to a call, and who answers.
 * It names no task: the calls in flight are only counted (task ids are secrets, and none of them
 * is known to be the one that asked).
 */
export interface UnattributedInput {
  /** The request's method. */
  readonly method: 'elicitation/create' | 'sampling/createMessage';
  /** Why it was not tied to a call. */
  readonly reason: UnattributedReason;
  /**
   * Calls of the library in flight on the connection (by every TaskClient on the SDK client) that
   * could have asked: tasks being tracked and calls still waiting for the server's answer. A task
   * whose earlier questions came tagged with its id is not counted: its server tags its questions.
   */
  readonly inFlight: number;
  /** Of {@link UnattributedInput.inFlight}, the tasks whose latest status was `input_required`. */
  readonly waitingForInput: number;
  /**
   * Requests your own code sent through the SDK client (`tools/call`, `prompts/get`,
   * `resources/read`) that were still open: the question may be theirs.
   */
  readonly hostRequests: number;
  /**
   * Which of this TaskClient's callbacks answers it: `client` (the TaskClient-level one), `serve`
   * (those of {@link TaskClient.serve}), or `undefined` when it has none for this kind and passes
   * the request on.
   */
  readonly answeredBy: 'client' | 'serve' | undefined;
}

/** The payload of a `completed` event: the metrics and the result, by {@link TaskRole}. */
export type CompletedMetrics =
  | (TaskMetrics & {
      /** A task this client created on the server. */
      readonly role: 'requestor';
      /** The tool's result. */
      readonly result: CallToolResult;
    })
  | (TaskMetrics & {
      /** A task this client ran for the server. */
      readonly role: 'receiver';
      /** What the elicitation or sampling callback answered. */
      readonly result: ReceiverResult;
    });

/** What a receiver task's callback answers: an elicitation's or a sampling request's result. */
export type ReceiverResult = ElicitResult | CreateMessageResult;

/**
 * Events of one {@link TaskHandle}: the same shapes, for that task only (a handle is always the
 * requestor's, so `completed` carries a tool result).
 */
export interface TaskHandleEvents extends Pick<
  TaskClientEvents,
  'status' | 'inputRequired' | 'progress' | 'expiring' | 'failed' | 'cancelled' | 'timeout' | 'expired' | 'settled'
> {
  /** The task completed; its result is in hand. */
  completed: [
    metrics: TaskMetrics & {
      /** The tool's result. */
      readonly result: CallToolResult;
    },
  ];
}
