/**
 * The seam between the wire-neutral engine and a protocol revision. The engine (observation,
 * scheduling, state) only ever talks to a {@link TaskWire}; `v2025.ts` implements it for the
 * MCP 2025-11-25 tasks wire, and the 2026 tasks extension can sit beside it as a second adapter.
 *
 * Adapters throw {@link TaskRpcError} for failed requests and {@link TaskProtocolError} for
 * malformed replies; nothing else escapes them.
 */
import type { CallToolResult, JsonRpcErrorInfo, Task } from '../types.js';

/** Per-request options. */
export interface WireRequestOptions {
  /** Request timeout in milliseconds (clamped by the adapter to what timers support). */
  readonly timeoutMs: number;
  /** Aborts the request locally (and tells the server the request is cancelled, [R27]). */
  readonly signal?: AbortSignal | undefined;
}

/** What the server supports, read from its declared capabilities. */
export interface WireCapabilities {
  /** Task-augmented `tools/call` is accepted ([R6]). */
  readonly toolsCall: boolean;
  /** `tasks/cancel` is served ([R5]). */
  readonly cancel: boolean;
  /** `tasks/list` is served ([R5]). */
  readonly list: boolean;
}

/** A tool's declared `execution.taskSupport` ([R7]-[R9]); `forbidden` when absent. */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** The request to start a tool call. */
export interface StartToolCall {
  readonly name: string;
  readonly arguments?: Record<string, unknown> | undefined;
  /** When present the call is task-augmented; `ttl` is the requested retention ([R11]). */
  readonly task?: { readonly ttl?: number | undefined } | undefined;
  /** Extra `_meta` for the request (e.g. a caller's own keys). */
  readonly meta?: Record<string, unknown> | undefined;
  /**
   * Progress token to send; the server's `notifications/progress` for it reach
   * {@link WireEvents.progress} for the task's whole life ([R35]). Tokens must start with
   * {@link PROGRESS_TOKEN_PREFIX}.
   */
  readonly progressToken?: string | undefined;
}

/** Prefix of every progress token this library issues; other tokens are left to the SDK. */
export const PROGRESS_TOKEN_PREFIX = 'mcp-task-client/';

/** Kinds of input a server can ask for while a task waits in `input_required`. */
export type InputKind = 'elicitation' | 'sampling';

/** An input request from the server (elicitation or sampling), with the task it belongs to. */
export interface InputRequest {
  readonly kind: InputKind;
  /** The request's params as sent (`ElicitRequest['params']` or `CreateMessageRequest['params']`). */
  readonly params: Record<string, unknown>;
  /** The related task ([V7]); `undefined` for untagged requests (mcp-go, D14). */
  readonly taskId: string | undefined;
  /** Aborted when the server cancels the request or the connection closes. */
  readonly signal: AbortSignal;
}

/**
 * Answers an input request: a promise of the result to send back, or `undefined` (returned, or
 * resolved) to leave the request to whatever handled it before (the SDK client's own handler).
 */
export type InputHandler = (request: InputRequest) => Promise<Record<string, unknown> | undefined> | undefined;

/** A progress notification's payload. */
export interface WireProgress {
  readonly progress: number;
  readonly total?: number | undefined;
  readonly message?: string | undefined;
}

/** The server's answer to a tool call. */
export type StartOutcome =
  | {
      readonly kind: 'task';
      readonly task: Task;
      /** `_meta["io.modelcontextprotocol/model-immediate-response"]`, if sent ([R39]). */
      readonly immediateResponse?: string | undefined;
    }
  | { readonly kind: 'immediate'; readonly result: CallToolResult };

/** The final payload of a task: a tool result, or the JSON-RPC error the task ended with ([V17]). */
export type TaskOutcome =
  | {
      readonly kind: 'result';
      readonly result: CallToolResult;
      /** The reply named its task in the related-task `_meta` ([V19]). */
      readonly tagged: boolean;
    }
  | { readonly kind: 'error'; readonly error: JsonRpcErrorInfo };

/** One page of `tasks/list`. */
export interface TaskPage {
  readonly tasks: readonly Task[];
  /** Opaque; pass back unchanged ([R23]). */
  readonly nextCursor?: string | undefined;
}

/** One page of the server's tools, reduced to what task negotiation needs. */
export interface ToolPage {
  readonly tools: ReadonlyArray<{ readonly name: string; readonly taskSupport: TaskSupport }>;
  readonly nextCursor?: string | undefined;
}

/** Events a wire delivers without being asked. */
export interface WireEvents {
  /** A pushed task snapshot (`notifications/tasks/status`), already decoded. */
  status(task: Task): void;
  /** A pushed message that could not be decoded. */
  malformed(error: Error): void;
  /** The server's tool list changed. */
  toolsChanged(): void;
  /** The connection closed. */
  closed(): void;
  /**
   * A progress notification for a token this library issued; return `true` when the token is
   * known (the notification is then consumed).
   */
  progress(token: string, progress: WireProgress): boolean;
}

/** A protocol revision's task operations. */
export interface TaskWire {
  /** Protocol revision this adapter speaks, e.g. `2025-11-25`. */
  readonly revision: string;
  /**
   * True when input requests (elicitation, sampling) are delivered while a result request is
   * outstanding, so the engine must fetch the outcome on entering `input_required` ([R29]).
   */
  readonly inputViaResult: boolean;
  /** The server's task capabilities; all false when it has none. */
  capabilities(): WireCapabilities;
  /** A stable identity of the server (name, version), for resume references. */
  serverIdentity(): string;
  /** One page of `tools/list`. */
  listTools(cursor: string | undefined, options: WireRequestOptions): Promise<ToolPage>;
  /** `tools/call`, task-augmented when `call.task` is set. */
  callTool(call: StartToolCall, options: WireRequestOptions): Promise<StartOutcome>;
  /** Current snapshot (`tasks/get`). */
  getTask(taskId: string, options: WireRequestOptions): Promise<Task>;
  /** Final payload (`tasks/result`); may block until the task is terminal ([V16]). */
  getOutcome(taskId: string, options: WireRequestOptions): Promise<TaskOutcome>;
  /** `tasks/cancel`; resolves with the snapshot the server returned. */
  cancelTask(taskId: string, options: WireRequestOptions): Promise<Task>;
  /** One page of `tasks/list`. */
  listTasks(cursor: string | undefined, options: WireRequestOptions): Promise<TaskPage>;
  /** Starts delivering {@link WireEvents}; returns a function that stops it. */
  subscribe(events: WireEvents): () => void;
  /**
   * Serves the server's input requests through `handler`; the adapter tags every answer with the
   * related task ([R31]) and checks its shape. `owns` tells which tasks are this client's, so a
   * request for a task another client owns reaches that one. Returns a function that stops serving.
   */
  serveInput(handler: InputHandler, owns: (taskId: string) => boolean): () => void;
  /** Which input requests the local client declared it can receive. */
  inputCapabilities(): Readonly<Record<InputKind, boolean>>;
}
