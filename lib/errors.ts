/**
 * Every error this library throws. Each carries the task id and the last snapshot it knew (when
 * there is a task), and the underlying `cause`. Check with `instanceof`, or with
 * {@link isTaskError} across bundled copies of the library.
 */
import type { CallToolResult, JsonRpcErrorInfo, Task } from './types.js';

const BRAND = Symbol.for('mcp-task-client.TaskError');

/** Fields every {@link TaskError} constructor accepts. */
export interface TaskErrorOptions {
  /** The task the error is about, when one exists. */
  readonly taskId?: string | undefined;
  /** The last snapshot known when the error was raised. */
  readonly task?: Task | undefined;
  /** The tool that was called. */
  readonly toolName?: string | undefined;
  /** The underlying error, if any. */
  readonly cause?: unknown;
}

/** Base class of every error raised by mcp-task-client. */
export class TaskError extends Error {
  /** `TaskError`. */
  override name = 'TaskError';
  /** The task id, or `undefined` when no task exists (yet). */
  readonly taskId: string | undefined;
  /** The last snapshot known when the error was raised. */
  readonly task: Task | undefined;
  /** The tool that was called, when known. */
  readonly toolName: string | undefined;
  /** @internal Marks errors of any copy of this library (see {@link isTaskError}). */
  declare readonly [BRAND]: true;

  constructor(message: string, options: TaskErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.taskId = options.taskId ?? options.task?.taskId;
    this.task = options.task;
    this.toolName = options.toolName;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True when `value` is a {@link TaskError} from any copy of this library. */
export function isTaskError(value: unknown): value is TaskError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
}

/**
 * The task ended `failed`, or its result came back as a JSON-RPC error. Carries the real payload:
 * the `CallToolResult` with `isError` ({@link TaskFailedError.result}) or the JSON-RPC error that
 * `tasks/result` returned ({@link TaskFailedError.rpcError}), plus the server's `statusMessage`.
 */
export class TaskFailedError extends TaskError {
  /** `TaskFailedError`. */
  override name = 'TaskFailedError';
  /** The server's `statusMessage` for the failed task, if any. */
  readonly statusMessage: string | undefined;
  /** The tool result with `isError: true`, when the server returned one. */
  readonly result: CallToolResult | undefined;
  /** The JSON-RPC error `tasks/result` returned, when it returned one. */
  readonly rpcError: JsonRpcErrorInfo | undefined;

  constructor(
    message: string,
    options: TaskErrorOptions & { result?: CallToolResult | undefined; rpcError?: JsonRpcErrorInfo | undefined },
  ) {
    super(message, options);
    this.statusMessage = options.task?.statusMessage;
    this.result = options.result;
    this.rpcError = options.rpcError;
  }
}

/** The task ended `cancelled`, by this client or by the server. */
export class TaskCancelledError extends TaskError {
  /** `TaskCancelledError`. */
  override name = 'TaskCancelledError';
  /** The server's `statusMessage` for the cancelled task, if any. */
  readonly statusMessage: string | undefined;

  constructor(message: string, options: TaskErrorOptions) {
    super(message, options);
    this.statusMessage = options.task?.statusMessage;
  }
}

/** What happened to the remote task when a caller gave up on it. */
export type RemoteCancelOutcome =
  /** `tasks/cancel` succeeded: the server reports the task `cancelled`. */
  | 'cancelled'
  /** `tasks/cancel` was sent and failed; the task may still run until its ttl. */
  | 'failed'
  /**
   * `tasks/cancel` was sent but not answered within the grace (`cancelGraceMs`, or the close
   * bound): whether the task stops is not known. The request is not withdrawn.
   */
  | 'unknown'
  /** The remote task had already ended on its own (completed or failed); nothing to cancel. */
  | 'finished'
  /**
   * The server acknowledged the cancel, but its confirming read still showed the task running or
   * did not arrive within the grace: cancellation is cooperative on the tasks extension,
   * so the task stops when it can, or not at all.
   */
  | 'acknowledged'
  /** The server did not declare `tasks.cancel`; the task may still run until its ttl. */
  | 'not-supported'
  /** Cancelling was switched off (`cancelOnTimeout: false`, `cancelOnAbort: false`); the task runs on. */
  | 'disabled'
  /** No remote task existed (the call never created one). */
  | 'no-task'
  /**
   * The task-creating request was still unanswered; if a task is created anyway it is cancelled
   * as soon as its id arrives.
   */
  | 'pending';

const REMOTE_FATE: Record<RemoteCancelOutcome, string> = {
  cancelled: 'the remote task was cancelled',
  failed: 'cancelling the remote task failed, it may still be running',
  unknown: 'a tasks/cancel was sent but not answered in time, the remote task may still be running',
  finished: 'the remote task had already finished',
  acknowledged: 'the server acknowledged the cancel, the remote task stops when it can',
  'not-supported': 'the server cannot cancel tasks, the remote task may still be running',
  disabled: 'the remote task was left running',
  'no-task': 'no remote task was created',
  pending: 'a task created anyway will be cancelled as soon as its id arrives',
};

/** A short phrase for error messages saying what became of the remote task. */
export function describeRemoteCancel(fate: RemoteCancelOutcome): string {
  return REMOTE_FATE[fate];
}

/**
 * A library feature the server (or the local SDK client) does not support: tasks at all, task mode
 * for this tool, `tasks/cancel`, `tasks/list`, an input capability, or (`input`) a kind of input
 * request this library cannot answer.
 */
export class TaskNotSupportedError extends TaskError {
  /** `TaskNotSupportedError`. */
  override name = 'TaskNotSupportedError';
  /** What is missing. */
  readonly feature: 'tasks' | 'tool' | 'cancel' | 'list' | 'elicitation' | 'sampling' | 'input';
  /**
   * The tool's result, when the server ran the call at once although a task was required (on the
   * tasks extension the server decides, so `requireTask` can only be checked afterwards).
   */
  readonly result: CallToolResult | undefined;

  constructor(
    message: string,
    options: TaskErrorOptions & { feature: TaskNotSupportedError['feature']; result?: CallToolResult | undefined },
  ) {
    super(message, options);
    this.feature = options.feature;
    this.result = options.result;
  }
}

/**
 * An input callback (`onElicitation` or `onSampling`) threw or rejected while answering a task's
 * input request; reported on the TaskClient's `error` event. The message reads "The elicitation
 * callback failed: …" (or "sampling"), `cause` is what the callback threw, and `feature` says
 * which callback it was.
 */
export class TaskInputError extends TaskError {
  /** `TaskInputError`. */
  override name = 'TaskInputError';
  /** Which callback failed. */
  readonly feature: 'elicitation' | 'sampling';

  constructor(message: string, options: TaskErrorOptions & { feature: TaskInputError['feature'] }) {
    super(message, options);
    this.feature = options.feature;
  }
}

/**
 * The task's deadline (`timeoutMs`) passed before its result was in hand; also `cancel()` when
 * its `tasks/cancel` was not answered within its bound (`timeoutMs` is then that bound).
 */
export class TaskTimeoutError extends TaskError {
  /** `TaskTimeoutError`. */
  override name = 'TaskTimeoutError';
  /** The deadline that was set, in milliseconds. */
  readonly timeoutMs: number;
  /** Milliseconds from the call to the moment the deadline fired. */
  readonly elapsedMs: number;
  /** What became of the remote task. */
  readonly remoteCancel: RemoteCancelOutcome;
  /** True when the connection to the server was lost and had not come back. */
  readonly connectionLost: boolean;

  constructor(
    message: string,
    options: TaskErrorOptions & {
      timeoutMs: number;
      elapsedMs: number;
      remoteCancel: RemoteCancelOutcome;
      connectionLost?: boolean | undefined;
    },
  ) {
    super(message, options);
    this.timeoutMs = options.timeoutMs;
    this.elapsedMs = options.elapsedMs;
    this.remoteCancel = options.remoteCancel;
    this.connectionLost = options.connectionLost ?? false;
  }
}

/**
 * An `AbortSignal` stopped the call or a waiter. Its `name` is `'AbortError'`, like the DOM
 * error, so `err.name === 'AbortError'` checks keep working; `reason` is the signal's reason.
 */
export class TaskAbortError extends TaskError {
  /** `AbortError`. */
  override name = 'AbortError';
  /** The signal's `reason`. */
  readonly reason: unknown;
  /** What became of the remote task; `undefined` when only a waiter was aborted. */
  readonly remoteCancel: RemoteCancelOutcome | undefined;

  constructor(
    message: string,
    options: TaskErrorOptions & { reason: unknown; remoteCancel?: RemoteCancelOutcome | undefined },
  ) {
    super(message, { ...options, cause: options.cause ?? options.reason });
    this.reason = options.reason;
    this.remoteCancel = options.remoteCancel;
  }
}

/**
 * The task's ttl ran out: the server no longer knows the task and its ttl had elapsed, or, on the
 * tasks extension, it still ran when its ttl elapsed. The ttl is counted on the local clock from
 * when this client first saw the task.
 */
export class TaskExpiredError extends TaskError {
  /** `TaskExpiredError`. */
  override name = 'TaskExpiredError';
}

/** The server no longer knows the task although its ttl had not elapsed (or was unlimited). */
export class TaskNotFoundError extends TaskError {
  /** `TaskNotFoundError`. */
  override name = 'TaskNotFoundError';
}

/** The handle was detached (`detach()`) before the result was in hand; the remote task runs on. */
export class TaskDetachedError extends TaskError {
  /** `TaskDetachedError`. */
  override name = 'TaskDetachedError';
}

/** The `TaskClient` was closed before the result was in hand. */
export class TaskClosedError extends TaskError {
  /** `TaskClosedError`. */
  override name = 'TaskClosedError';
}

/**
 * What a {@link TaskRpcError} stands for: `server` when the server answered the request with a
 * JSON-RPC error (`code` is the server's), else what went wrong on this side, `code` being a local
 * stand-in: `timeout` (no answer in time), `closed` (the connection closed before the answer, or
 * the server cancelled the request), `send` (the transport could not send it: an HTTP error status,
 * such as 401 or 503, is in `data.httpStatus`), `session` (the server no longer knows the HTTP
 * session), `aborted` (the library stopped waiting for it), `local` (anything else that failed
 * here while it was sent).
 */
export type TaskRpcErrorKind = 'server' | 'timeout' | 'closed' | 'send' | 'session' | 'aborted' | 'local';

/** The server answered a request with a JSON-RPC error, or the request itself failed. */
export class TaskRpcError extends TaskError {
  /** `TaskRpcError`. */
  override name = 'TaskRpcError';
  /** The request method, e.g. `tasks/get`. */
  readonly method: string;
  /**
   * JSON-RPC error code: the server's when {@link TaskRpcError.kind} is `server`; else a local
   * stand-in (the SDK's -32001 for timeouts, -32000 for a closed connection or a failed send,
   * -32603 for anything else).
   */
  readonly code: number;
  /** The error's `data`, if any. */
  readonly data: unknown;
  /** True for failures worth retrying: timeouts, lost connections, HTTP 5xx, 429 and 408. */
  readonly transient: boolean;
  /**
   * Whether the server answered with this error (`server`) or the request failed on this side, and
   * how (`timeout`, `send`, …): only a `server` error's `code` is the server's. Defaults to `server`
   * when not given to the constructor.
   */
  readonly kind: TaskRpcErrorKind;

  constructor(
    message: string,
    options: TaskErrorOptions & {
      method: string;
      code: number;
      data?: unknown;
      transient: boolean;
      kind?: TaskRpcErrorKind | undefined;
    },
  ) {
    super(message, options);
    this.method = options.method;
    this.code = options.code;
    this.data = options.data;
    this.transient = options.transient;
    this.kind = options.kind ?? 'server';
  }
}

/** The server sent something that breaks the protocol (a malformed task, a missing field). */
export class TaskProtocolError extends TaskError {
  /** `TaskProtocolError`. */
  override name = 'TaskProtocolError';
  /** The method or notification whose message was malformed. */
  readonly method: string;

  constructor(message: string, options: TaskErrorOptions & { method: string }) {
    super(message, options);
    this.method = options.method;
  }
}

/** A caller passed an invalid option or argument. */
export class TaskOptionError extends TaskError {
  /** `TaskOptionError`. */
  override name = 'TaskOptionError';
  /** The offending option. */
  readonly option: string;

  constructor(message: string, options: TaskErrorOptions & { option: string }) {
    super(message, options);
    this.option = options.option;
  }
}

/** Why no MCP session could be held with a target (see {@link TaskConnectError}). */
export type ConnectFailure =
  /** The target could not be reached: a command that is missing or exited, a refused or failed connection. */
  | 'unreachable'
  /** Something answered, but not as an MCP server does (a handshake refused as an unknown method, a reply that is not MCP). */
  | 'not-mcp'
  /** The target did not finish the MCP handshake in time. */
  | 'no-answer'
  /**
   * The target speaks MCP, but refused the protocol version the SDK client offered (-32022): a
   * server of the 2026-07-28 protocol only met with the 2025-11-25 handshake (SDK v1, or SDK v2
   * without era negotiation), or one whose versions the SDK does not speak.
   */
  | 'version';

/**
 * No MCP session could be held with the target: it could not be reached, it does not speak MCP,
 * it did not answer the handshake in time, or it refused the protocol version offered (`reason`
 * says which). The message names the
 * target's own error; `cause` is that error.
 */
export class TaskConnectError extends TaskError {
  /** `TaskConnectError`. */
  override name = 'TaskConnectError';
  /** What went wrong. */
  readonly reason: ConnectFailure;

  constructor(message: string, options: TaskErrorOptions & { reason: ConnectFailure }) {
    super(message, options);
    this.reason = options.reason;
  }
}

/** A call was rejected because `maxConcurrentTasks` was reached and queueing is off. */
export class TaskQueueFullError extends TaskError {
  /** `TaskQueueFullError`. */
  override name = 'TaskQueueFullError';
}

/** Wraps anything in a {@link TaskError} that names the task it happened to. */
export function asTaskError(
  error: unknown,
  about: { readonly task: Task; readonly toolName: string } | undefined,
): TaskError {
  if (error instanceof TaskError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TaskError(message, { task: about?.task, toolName: about?.toolName, cause: error });
}
