/**
 * The session port: the only code that touches an SDK `Client`. Everything above it (wires,
 * engine, facade) sees this interface, whatever the SDK major (`@modelcontextprotocol/sdk` 1.x or
 * `@modelcontextprotocol/client` 2.x) and whatever the protocol era.
 *
 * The library's own requests go out through a raw dispatch on the client's transport, decoded
 * by an explicit result decoder per request: SDK codecs never see them. That is what lets one
 * engine run on both SDKs: SDK v2 rejects `resultType: "task"` replies and gates `tasks/*` by era,
 * SDK v1 keeps a progress handler per task-creating request forever ([S13]) and sends
 * `notifications/cancelled` for requests it already answered ([S4]). Here timeouts, cancellation
 * and progress routing are the library's own, and nothing of them outlives a request.
 */

import type { CallInstrument } from '../api/index.js';
import type { Sink } from '../util/deliver.js';

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** The protocol era of a session: `legacy` (an `initialize` handshake, up to 2025-11-25) or `modern` (2026-07-28 and later). */
export type Era = 'legacy' | 'modern';

/** The two SDK majors a port can sit on. */
export type SdkMajor = 'v1' | 'v2';

/** Timers the port uses for request timeouts (the engine's scheduler fits). */
export interface Timers {
  /** Runs `run` after `ms`; a `weak` timer never keeps the process alive. */
  after(ms: number, run: () => void, weak?: boolean): unknown;
  /** Cancels a timer made by {@link Timers.after}. */
  cancel(timer: unknown): void;
  /**
   * The timers' clock, in ms. With it, requests of one timeout length share one timer (their
   * deadlines come in the order they were sent); without it, each request arms its own.
   */
  now?(): number;
  /**
   * Puts a timer made by {@link Timers.after} to rest: it neither runs nor counts as set (nothing
   * is held open by it) until {@link Timers.wake} wakes it. Without it, a timer is cancelled instead.
   */
  rest?(timer: unknown): void;
  /** Wakes a timer put to rest; false when it ended meanwhile (a new one is needed then). */
  wake?(timer: unknown): boolean;
}

/**
 * Turns a request's failure into the caller's own error (a wire's), inside the port, so that no
 * extra promise is needed per request. `context` is what the caller passed along (a task id).
 */
export type ErrorMapper = (method: string, error: PortError, context: string | undefined) => unknown;

/** Options of one request. */
export interface PortRequestOptions {
  /** The request fails with a `timeout` {@link PortError} after this many ms (`Infinity`: never). */
  readonly timeoutMs: number;
  /** Timers for the timeout. */
  readonly timers: Timers;
  /**
   * Aborts the request: it fails with an `aborted` {@link PortError}, and the server is told with
   * `notifications/cancelled` (only while the request is still open, [R27]).
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Stops the request together with the other requests of its group (a task's requests when its
   * tracking stops), like an aborted `signal`, without an `AbortSignal` per request. A request
   * with a group never reads `signal`: the group alone stops it.
   */
  readonly group?: RequestGroup | undefined;
  /** The timeout timer never keeps the process alive (background requests). */
  readonly weak?: boolean | undefined;
  /**
   * The timeout fails the request here only: no `notifications/cancelled` is sent for it. For a
   * request that may create a task, which is cancelled with `tasks/cancel` alone, never with
   * `notifications/cancelled` ([R24], [R25]), even when its answer never came ([A5]). A request
   * stream of its own (Streamable HTTP) is still closed, so that nothing stays open.
   */
  readonly quietTimeout?: boolean | undefined;
  /**
   * Client capabilities to declare on this request only, merged into the per-request envelope of
   * the modern era (e.g. the tasks extension, [E1]): each one merged one level into the client's
   * own, and one set to `null` left out of the request's declaration ([E35]). Ignored on a legacy
   * session.
   */
  readonly declare?: JsonObject | undefined;
  /**
   * Watches the request (`TaskClientOptions.instrumentation`): told of it as it is written, its
   * `_meta` entries merged into the request's own (which win), and told how it ended. Read once per
   * request; without it, nothing of this runs.
   */
  readonly instrument?: CallInstrument | undefined;
  /**
   * HTTP headers of this request's POST (the `Mcp-Param-*` headers of a `tools/call`, [E32]).
   * Sent only on a modern-era transport that carries each request on a stream of its own
   * (Streamable HTTP), in browsers too; ignored on any other.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * Decodes a request's result (`context` lets one decoder serve every request, with no closure per
 * request). A decoder of replies that may be, or carry, a tool result (a `tools/call`, a
 * `tasks/result`, a `tasks/get` with the final result inline) may also say which decoded values
 * are a tool error (`isError: true`): `toolError`, asked only when the request has a watcher
 * (instrumentation), which is then told so (`RequestResult` of the instrumentation hook). The
 * JSON-RPC request itself succeeded either way; the port knows no tool result shape, only the wire
 * that decodes it does.
 */
export interface ResultDecoder<T> {
  (result: unknown, context: string | undefined): T;
  /** True when `value`, as decoded, is or carries a tool result with `isError: true`. */
  toolError?(value: T): boolean;
}

/** The arguments of a request of the port: what {@link SessionPort.request} describes. */
export type RequestArgs<T> = [
  method: string,
  params: JsonObject | undefined,
  decode: ResultDecoder<T>,
  options: PortRequestOptions,
  mapError?: ErrorMapper,
  context?: string,
  declare?: JsonObject,
  fresh?: boolean,
];

/** An open request as its {@link RequestGroup} sees it. */
export interface GroupMember {
  /** Stops the request: it fails with an `aborted` {@link PortError} whose cause is `reason`. */
  stop(reason: unknown): void;
}

/**
 * Requests that stop together: each open request joins its group and leaves it when it ends;
 * stopping the group stops every member (an `aborted` failure, and `notifications/cancelled` to
 * the server, [R27]). A request sent once the group stopped fails at once.
 */
export interface RequestGroup {
  /** True once the group stopped. */
  readonly stopped: boolean;
  /** Why it stopped (the cause of the `aborted` failures). */
  readonly stopReason: unknown;
  join(member: GroupMember): void;
  leave(member: GroupMember): void;
}

/** Why a request failed. */
export type PortErrorKind =
  /** The server answered with a JSON-RPC error (`code`, `message`, `data` are the server's). */
  | 'server'
  /** No answer within the request's timeout. */
  | 'timeout'
  /** The caller aborted the request. */
  | 'aborted'
  /** The connection closed before the answer, or the server cancelled the request ([E30]). */
  | 'closed'
  /** The transport could not send the request (`httpStatus` when an HTTP error answered). */
  | 'send'
  /** The session is gone on the server (an HTTP session it no longer knows). */
  | 'session'
  /** The reply is not a valid JSON-RPC response, or its result failed the request's decoder. */
  | 'malformed';

/** A failed request, classified by what happened (never by an SDK class). */
export class PortError extends Error {
  override name = 'PortError';
  /** What happened. */
  readonly kind: PortErrorKind;
  /** The JSON-RPC code: the server's for `server`, else a local stand-in. */
  readonly code: number;
  /** The server's error `data` (`server`), or details. */
  readonly data: unknown;
  /** The HTTP status that answered a failed send, if any. */
  readonly httpStatus: number | undefined;

  constructor(
    kind: PortErrorKind,
    message: string,
    options: { code?: number; data?: unknown; httpStatus?: number | undefined; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.code = options.code ?? LOCAL_CODES[kind];
    this.data = options.data;
    this.httpStatus = options.httpStatus;
  }
}

/** The JSON-RPC code a local failure of `kind` carries (the one SDK v1 used for the same case). */
export function localCode(kind: PortErrorKind): number {
  return LOCAL_CODES[kind];
}

/** The codes local failures carry (the ones SDK v1 used for the same cases). */
const LOCAL_CODES: Record<PortErrorKind, number> = {
  server: -32603,
  timeout: -32001,
  aborted: -32001,
  closed: -32000,
  send: -32000,
  session: -32000,
  malformed: -32603,
};

/** A request the server sent to the client. */
export interface InboundRequest {
  /** The request's JSON-RPC id, as the server sent it. */
  readonly id: string | number;
  readonly method: string;
  readonly params: JsonObject;
  /** Aborted when the server cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /**
   * Runs `run` once this request's answer is settled: with `sent` true in the microtask the
   * transport took the answer of a tap (its `send` resolved), false when none was sent (the server
   * cancelled the request, the connection closed, the SDK's own handler took it) or the transport
   * refused it; a hook added later runs on a microtask. Work the answer announces (a task's
   * callback, its first status change) then never reaches the peer before the answer, on any
   * transport, and never starts for an answer the peer did not get ([V14]). `run` must not throw.
   */
  afterReply(run: (sent: boolean) => void): void;
}

/**
 * Answers an inbound request: a promise of the result (or of a {@link PortError}-like rejection,
 * sent as a JSON-RPC error), or `undefined` (returned or resolved) to leave the request to the SDK
 * client's own handler.
 */
export type RequestTap = (request: InboundRequest) => Promise<JsonObject | undefined> | undefined;

/**
 * Sees an inbound notification's params (every tap of the method does); returns `true` to consume
 * it, so the SDK never sees it.
 */
export type NotificationTap = (params: JsonObject) => boolean | void;

/**
 * The kind of an SDK client transport, told by its shape: `stdio`, `streamable-http` or `sse`;
 * `undefined` for any other (in-memory, custom). `origin` is the server's (scheme, host, port) for
 * an HTTP transport.
 */
export interface TransportInfo {
  readonly kind: 'stdio' | 'streamable-http' | 'sse' | undefined;
  readonly origin: string | undefined;
}

/** What is known of the server. */
export interface ServerIdentity {
  readonly name: string;
  readonly version: string;
}

/** The library's view of one connected SDK client. */
export interface SessionPort {
  /** The SDK major under it. */
  readonly sdk: SdkMajor;
  /** The negotiated era; `legacy` when the session skipped the handshake (a resumed HTTP session). */
  era(): Era;
  /** The negotiated protocol version, when known. */
  protocolVersion(): string | undefined;
  /** The server's declared capabilities; `undefined` when the session skipped the handshake. */
  serverCapabilities(): JsonObject | undefined;
  /** The server's name and version; `undefined` when the session skipped the handshake. */
  serverIdentity(): ServerIdentity | undefined;
  /** The capabilities the client declared when it connected. */
  clientCapabilities(): JsonObject;
  /** The transport's session id (Streamable HTTP), if any. */
  sessionId(): string | undefined;
  /**
   * True when a request's own headers ({@link PortRequestOptions.headers}) are sent: on a
   * modern-era transport that carries each request on a stream of its own (Streamable HTTP).
   */
  sendsHeaders(): boolean;
  /** What kind of transport carries the session, and the server's URL for an HTTP one (for instrumentation). */
  transportInfo(): TransportInfo;
  /**
   * Requests the host's own code sent through the SDK client (not the library's) that are not
   * answered yet, of the kinds a server may ask questions during (`tools/call`, `prompts/get`,
   * `resources/read`): an input request that names no task may belong to one of them.
   */
  hostRequests(): number;
  /** True once the connection closed. */
  readonly closed: boolean;
  /**
   * Sends a request and decodes its result with `decode(result, context)` (the request's explicit
   * result schema; it throws for a result it rejects, which becomes a `malformed` {@link PortError};
   * `context` lets one decoder serve every request, with no closure per request). A failure
   * rejects with `mapError(method, error, context)` when a mapper is given (the caller's own
   * error, with no promise of its own per request). `declare` is merged into the request's
   * envelope like `options.declare` (a constant, so the caller's options need no copy). `fresh`
   * says `params` is a new object of the caller's, sent once and not read again: the port may
   * then add the envelope to it rather than to a copy. A decoder's `toolError` (see
   * {@link ResultDecoder}) tells the request's watcher of a decoded result that is a tool error.
   * @throws PortError, or what `mapError` makes of it
   */
  request<T>(...args: RequestArgs<T>): Promise<T>;
  /**
   * {@link SessionPort.request}, its outcome told to `sink` with `token` rather than through a
   * promise: for requests sent often (a poll), which then make no promise or closure of their
   * own. The outcome comes as a promise's would, in a later microtask, never inside this call.
   */
  requestInto<T, Token>(sink: Sink<T, Token>, token: Token, ...args: RequestArgs<T>): void;
  /**
   * True when `id` is the JSON-RPC id of a request the library sent on this port (by any
   * TaskClient sharing it), open or not: what tells the library's own subscriptions
   * (`io.modelcontextprotocol/subscriptionId` is the listen request's id) from the host's.
   */
  sentRequest(id: unknown): boolean;
  /**
   * The JSON-RPC id the next {@link SessionPort.request} on this port will carry. Read it right
   * before that call, in the same synchronous run (nothing else can send in between), to know a
   * request's id before anything about it can arrive: a subscription is named by its listen
   * request's id ([E18]).
   */
  nextRequestId(): string;
  /** Sends a notification (best effort: failures are swallowed). */
  notify(method: string, params: JsonObject): void;
  /**
   * Taps an inbound request method; returns a function that removes the tap. When no tap answers
   * and the SDK client has no handler of its own, the request is refused with the error `missing`
   * makes (the SDK's bare -32601 otherwise).
   */
  onRequest(method: string, tap: RequestTap, missing?: (params: JsonObject) => Error): () => void;
  /** Taps an inbound notification method; returns a function that removes the tap. */
  onNotification(method: string, tap: NotificationTap): () => void;
  /** Calls `listener` once when the connection closes; returns a function that stops listening. */
  onClose(listener: () => void): () => void;
  /** Whether the SDK client would answer `method` itself (a handler of the user's). */
  hasOwnHandler(method: string): boolean;
  /** Closes the SDK client (only for clients the library created). */
  closeClient(): Promise<void>;
}
