/**
 * The protocol-neutral seam between the engine and a task wire. The engine (observation,
 * scheduling, state) only ever talks to a {@link TaskWire}; each protocol form of tasks is one
 * module behind it:
 *
 * - `v2025/`: MCP 2025-11-25 tasks (`params.task`, `tasks/get|result|list|cancel`, input as
 *   side-channel requests tagged with the task);
 * - `ext/`: the 2026-07-28 `io.modelcontextprotocol/tasks` extension (the server decides, the
 *   final payload and input requests ride on `tasks/get`, `tasks/update` answers them).
 *
 * A wire tells what it can do ({@link WireFeatures}) and classifies its own errors
 * ({@link TaskWire.classify}), so no engine or facade code reads a JSON-RPC code. Wires throw
 * `TaskRpcError` for failed requests and `TaskProtocolError` for malformed replies.
 */
import type { CallInstrument, WireKind } from '../api/index.js';
import type { TaskProtocolError } from '../errors.js';
import type { JsonObject, RequestGroup, Timers } from '../port/port.js';
import type { Sink } from '../util/deliver.js';
import type { CallToolResult, JsonRpcErrorInfo, Task, TaskPage } from '../types.js';
import type { InlineInput, InputAnswers, InputHandler, InputKind, InputRefusal } from './input-types.js';

export { ANSWERS_ELICITATION, ANSWERS_SAMPLING } from './input-types.js';
export type {
  InlineInput,
  InputAnswers,
  InputHandler,
  InputKind,
  InputRefusal,
  InputRequest,
  UnattributedNote,
} from './input-types.js';

/**
 * Bits of {@link WireSnapshot.omitted}: the task fields a status notification left out (D20). A
 * null counts as left out, except for `ttl`, where null means unlimited.
 */
export const OMITTED = { createdAt: 1, lastUpdatedAt: 2, ttl: 4, pollInterval: 8 } as const;

export type { GroupMember, RequestGroup } from '../port/port.js';

/** Per-request options. */
export interface WireRequestOptions {
  /** Request timeout in milliseconds. */
  readonly timeoutMs: number;
  /** Timers for the timeout (the engine's scheduler). */
  readonly timers: Timers;
  /** Aborts the request locally (and tells the server the request is cancelled, [R27]). */
  readonly signal?: AbortSignal | undefined;
  /**
   * The request's group (a task's requests): stopping it stops the request like an aborted
   * `signal`. The engine gives both for a task's requests: a wire on the session port passes the
   * group on and never reads `signal` (no `AbortSignal` per request); a wire that reads `signal`
   * gets one, made on first read, that aborts with the group.
   */
  readonly group?: RequestGroup | undefined;
  /** Background request: its timeout never keeps the process alive. */
  readonly weak?: boolean | undefined;
  /** Its timeout tells the server nothing (a request that may create a task, [R24], [A5]). */
  readonly quietTimeout?: boolean | undefined;
  /**
   * Watches the request (instrumentation, on the call it belongs to): a wire on the session port
   * passes it on with the options, untouched.
   */
  readonly instrument?: CallInstrument | undefined;
  /**
   * The input that a callback answers for the call this request belongs to (its own callbacks,
   * then the client's): on the 2026-07-28 era the request declares those input capabilities and
   * no others ([E35]). Absent: what the client answers for any call ({@link TaskWire.answerInput}).
   */
  readonly input?: InputAnswers | undefined;
}

/** What a wire can do on its connection. */
export interface WireFeatures {
  /** Tool calls can run as tasks on this connection at all. */
  readonly tasks: boolean;
  /**
   * The server offers tasks, but in a form this connection cannot use (only through the tasks
   * extension, on a legacy-era session, [E20]): no call becomes a task here, although one could on
   * another connection; {@link TaskWire.unsupportedReason} says what would fix it. Always false
   * when `tasks` is true.
   */
  readonly tasksElsewhere: boolean;
  /**
   * The client decides task mode per tool, from the server's capabilities and each tool's
   * `execution.taskSupport` ([R6]-[R9]); otherwise the server decides per call.
   */
  readonly toolNegotiation: boolean;
  /** The final payload is fetched with its own request ({@link TaskWire.getPayload}); otherwise it rides on the terminal snapshot. */
  readonly payloadFetch: boolean;
  /** Input requests arrive while a blocking payload request is open ([R29]). */
  readonly inputViaPayload: boolean;
  /** Input requests ride on snapshots and are answered with {@link TaskWire.supplyInput}. */
  readonly inlineInput: boolean;
  /** Tasks can be cancelled. */
  readonly cancel: boolean;
  /** A cancel answers with the task's snapshot; otherwise with a bare acknowledgement. */
  readonly cancelSnapshot: boolean;
  /** The server lists tasks ({@link TaskWire.listTasks}). */
  readonly list: boolean;
  /** Progress notifications flow for a task's whole life ([R35]). */
  readonly progress: boolean;
  /** The client may ask for a ttl. */
  readonly requestTtl: boolean;
  /** A task still running when its ttl ran out is given up as expired without waiting for the server ([E13]). */
  readonly ttlBackstop: boolean;
  /**
   * Servers may keep tasks per session (SDK servers do on 2025-11-25), so another session may not
   * see a task; the extension is sessionless.
   */
  readonly sessionScoped: boolean;
}

/** What an error means, as the wire that raised it reads it. */
export type ErrorClass =
  /** The server does not know the task (any more). */
  | 'vanished'
  /** No answer in time: worth another attempt. */
  | 'timeout'
  /** A passing failure (lost connection, HTTP 5xx, 429, 408): worth another attempt. */
  | 'transient'
  /** The session is gone on the server: the connection is lost. */
  | 'session'
  /** The server refused to run this tool as a task; a plain call may still work ([A1], [V3]). */
  | 'refused'
  /** A malformed reply, or a request the server rejects as invalid: never retried. */
  | 'protocol'
  /**
   * The server refused a `tools/call`'s HTTP headers before running it ([E33]): nothing ran, and
   * headers from a fresh tool listing may get it through. Otherwise like `protocol`.
   */
  | 'headers'
  /** Any other JSON-RPC error the server sent. */
  | 'server'
  /** The library's own abort (tracking stopped, the client closed). */
  | 'stopped';

/** A tool's declared `execution.taskSupport` ([R7]-[R9]); `forbidden` when absent. */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** The request to start a tool call. */
export interface StartToolCall {
  readonly name: string;
  readonly arguments?: Record<string, unknown> | undefined;
  /**
   * Ask for a task: on 2025-11-25 the call is task-augmented with `ttl` as the requested
   * retention ([R11]); on the extension the call opts in and the server decides ([E1]).
   */
  readonly task?: { readonly ttl?: number | undefined } | undefined;
  /** Extra `_meta` for the request (e.g. a caller's own keys). */
  readonly meta?: Record<string, unknown> | undefined;
  /** Progress token to send; its notifications reach {@link WireEvents.progress} ([R35]). */
  readonly progressToken?: string | undefined;
  /** Answers to the input a previous attempt asked for (multi round-trip, [E17]). */
  readonly inputResponses?: Record<string, JsonObject> | undefined;
  /** The opaque state a previous attempt returned, sent back unchanged ([E17]). */
  readonly requestState?: string | undefined;
  /**
   * The `Mcp-Param-*` headers mirrored from the arguments ([E32]), for every attempt of the call;
   * the port sends them where the transport takes headers per request.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Prefix of every progress token this library issues; other tokens are left to the SDK. */
export const PROGRESS_TOKEN_PREFIX = 'mcp-task-client/';

/** A progress notification's payload. */
export interface WireProgress {
  readonly progress: number;
  readonly total?: number | undefined;
  readonly message?: string | undefined;
}

/** The final payload of a task: a tool result, or the JSON-RPC error the task ended with ([V17]). */
export type TaskPayload =
  | {
      readonly kind: 'result';
      readonly result: CallToolResult;
      /** The reply named its task ([V19]); always true for a payload that rides on a snapshot. */
      readonly tagged: boolean;
    }
  | {
      readonly kind: 'error';
      readonly error: JsonRpcErrorInfo;
      /**
       * Set when the same error may instead say that the server no longer knows the task ([V26]):
       * the error to report if so. The engine tells the two apart by what it already saw.
       */
      readonly gone?: unknown;
    };

/** One observation of a task. */
export interface WireSnapshot {
  readonly task: Task;
  /** The final payload, when it rides on the snapshot ([E3]). */
  readonly payload?: TaskPayload | undefined;
  /** Input requests pending on the task ([E3]). */
  readonly input?: readonly InlineInput[] | undefined;
  /**
   * The task fields a status notification left out, as {@link OMITTED} bits (D20): `task` holds
   * the decoder's defaults for them, and the engine keeps the values it held instead.
   */
  readonly omitted?: number | undefined;
}

/** The server's answer to a tool call. */
export type StartReply =
  | {
      readonly kind: 'task';
      readonly snapshot: WireSnapshot;
      /** `_meta["io.modelcontextprotocol/model-immediate-response"]`, if sent ([R39]). */
      readonly immediateResponse?: string | undefined;
    }
  | { readonly kind: 'immediate'; readonly result: CallToolResult }
  /** The server needs input before it answers (multi round-trip, [E17]): answer and call again. */
  | { readonly kind: 'input'; readonly input: readonly InlineInput[]; readonly requestState: string | undefined };

/** What a cancel request answered. */
export type CancelReply = { readonly kind: 'snapshot'; readonly snapshot: WireSnapshot } | { readonly kind: 'ack' };

export type { TaskPage };

/** One page of the server's tools, reduced to what task negotiation needs. */
export interface ToolPage {
  readonly tools: ReadonlyArray<{
    readonly name: string;
    readonly taskSupport: TaskSupport;
    readonly title?: string | undefined;
    readonly description?: string | undefined;
    /** The tool's input JSON Schema, as listed (an object). */
    readonly inputSchema?: JsonObject | undefined;
    /** The tool's output JSON Schema, when it declares one. */
    readonly outputSchema?: JsonObject | undefined;
    /** The tool's annotations (hints), when it has any. */
    readonly annotations?: JsonObject | undefined;
  }>;
  readonly nextCursor?: string | undefined;
}

/** Events a wire delivers without being asked. */
export interface WireEvents {
  /** A pushed task snapshot, already decoded. */
  status(snapshot: WireSnapshot): void;
  /** A pushed message that could not be decoded. */
  malformed(error: Error): void;
  /** The server's tool list changed. */
  toolsChanged(): void;
  /** The connection closed. */
  closed(): void;
  /** A progress notification for a token this library issued; `true` when the token is known. */
  progress(token: string, progress: WireProgress): boolean;
}

/** One protocol form's task operations, on one connection. */
export interface TaskWire {
  /** The protocol form. */
  readonly kind: WireKind;
  /** The method of the status notifications it delivers (for error messages). */
  readonly statusNotification: string;
  /** What this wire can do on its connection. */
  features(): WireFeatures;
  /** Why tool calls cannot run as tasks here (when `features().tasks` is false). */
  unsupportedReason(): string;
  /** A stable identity of the server (`name@version`); `undefined` when the session skipped the handshake. */
  serverIdentity(): string | undefined;
  /** The transport's session id (Streamable HTTP), if any. */
  sessionId(): string | undefined;
  /** What an error thrown by this wire means. */
  classify(error: unknown): ErrorClass;
  /**
   * True when `error` is an answer of the server's (a JSON-RPC error it sent), not a local failure
   * (timeout, lost connection, failed send) nor a reply that could not be read.
   */
  answeredByServer(error: unknown): boolean;
  /**
   * Takes the server's task capabilities from a resume reference, for a session that skipped the
   * handshake and so never learned them.
   */
  assume(capabilities: Readonly<Partial<Record<'cancel' | 'list' | 'toolsCall', boolean>>>): void;
  /** One page of `tools/list` (only with `toolNegotiation`). */
  listTools(cursor: string | undefined, options: WireRequestOptions): Promise<ToolPage>;
  /** Starts a tool call, as a task when `call.task` is set and the wire can. */
  startToolCall(call: StartToolCall, options: WireRequestOptions): Promise<StartReply>;
  /**
   * Starts a tool call as {@link TaskWire.startToolCall} does, the reply or the failure told to
   * `sink` with `token` (in a later microtask, as a promise's reaction would run): the usual
   * call's form, with no promise per call.
   */
  startToolCallInto<Token>(
    call: StartToolCall,
    options: WireRequestOptions,
    sink: Sink<StartReply, Token>,
    token: Token,
  ): void;
  /** Reads a task. */
  getTask(taskId: string, options: WireRequestOptions): Promise<WireSnapshot>;
  /**
   * Reads a task as {@link TaskWire.getTask} does, the snapshot or the failure told to `sink` with
   * `token` (in a later microtask, as a promise's reaction would run): the poll's form, with no
   * promise per read.
   */
  readTask<Token>(taskId: string, options: WireRequestOptions, sink: Sink<WireSnapshot, Token>, token: Token): void;
  /** Fetches the final payload (only with `payloadFetch`); may block until the task ends ([V16]). */
  getPayload(taskId: string, options: WireRequestOptions): Promise<TaskPayload>;
  /** Cancels a task. */
  cancelTask(taskId: string, options: WireRequestOptions): Promise<CancelReply>;
  /** Answers inline input requests by key (only with `inlineInput`, [E5]). */
  supplyInput(taskId: string, responses: Record<string, JsonObject>, options: WireRequestOptions): Promise<void>;
  /**
   * One page of the server's tasks (only with `list`). Entries that cannot be used are left out
   * of the page, each told to `onSkip`.
   */
  listTasks(
    cursor: string | undefined,
    options: WireRequestOptions,
    onSkip?: (error: TaskProtocolError) => void,
  ): Promise<TaskPage>;
  /** The engine tracks `taskId` (pushed snapshots wanted); each call is undone by one {@link TaskWire.unwatch}. */
  watch(taskId: string, timers: Timers): void;
  /** Undoes one {@link TaskWire.watch} of `taskId`. */
  unwatch(taskId: string): void;
  /** Starts delivering {@link WireEvents}; returns a function that stops it. */
  subscribe(events: WireEvents): () => void;
  /**
   * Serves the server's side-channel input requests through `handler` (tagging every answer with
   * its task, [R31]); `owns` tells which tasks are this client's, so a request for a task another
   * client on the same SDK client owns reaches that one. `refused` hears of a request for one of
   * this client's tasks that nobody answered (no callback, no handler of the SDK client's), which
   * the server was told so. Returns a function that stops serving.
   */
  serveInput(
    handler: InputHandler,
    owns: (taskId: string) => boolean,
    refused?: (refusal: InputRefusal) => void,
  ): () => void;
  /**
   * Which input requests the client can be sent when a callback answers them: on 2025-11-25, those
   * whose capability the SDK client declared when it connected; on the tasks extension, both kinds,
   * since each request declares the input its call answers ([E35]).
   */
  inputCapabilities(): Readonly<Record<InputKind, boolean>>;
  /**
   * The input the client answers for any call (its own callbacks): what a request declares when its
   * options name no call's ({@link WireRequestOptions.input}), and the requests of no call (the
   * tasks extension's `subscriptions/listen`). Only the tasks extension declares per request
   * ([E35]); elsewhere the capabilities were fixed when the client connected, and this does nothing.
   */
  answerInput(answers: InputAnswers): void;
}
