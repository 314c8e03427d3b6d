/**
 * Public types of the instrumentation hook (`TaskClientOptions.instrumentation`): what a tracer or a
 * meter learns of a TaskClient's calls, resumed tasks and listings, the requests each sends and the
 * input its tasks ask for, and the `_meta` entries it may add to those requests. It names no telemetry library:
 * `mcp-task-client/otel` implements it for OpenTelemetry, and a host may implement it for another.
 */
import type { JsonObject } from '../types.js';
import type { TaskClientEvents } from './events.js';
import type { TaskHandle } from './handle.js';
import type { InputContext } from './input.js';
import type { WireKind } from './wire.js';

/**
 * Watches a TaskClient's calls: given as `TaskClientOptions.instrumentation`, attached once per
 * TaskClient when it is made. Nothing of it runs, and it costs nothing, when the option is not
 * given. Every method may be left out; a method that throws is reported on the `error` event and
 * otherwise ignored (the call goes on).
 */
export interface TaskInstrumentation {
  /**
   * Called once, at the end of the TaskClient's constructor: listen to its events here (they carry
   * retries, reconnections and every task's metrics) and return what watches its calls.
   * @throws whatever it throws fails the constructor with a `TaskOptionError` naming it.
   */
  attach(client: InstrumentedClient): ClientInstrument | undefined;
}

/** What an instrumentation sees of the TaskClient it is attached to. */
export interface InstrumentedClient {
  /** The TaskClient's `on`: listens to one of its lifecycle events; returns the remover. */
  on<K extends keyof TaskClientEvents>(event: K, listener: (...args: TaskClientEvents[K]) => void): () => void;
}

/** Watches the calls of one TaskClient and the input its tasks ask for. */
export interface ClientInstrument {
  /**
   * A `callToolAsTask` begins (its arguments and options were valid). Called synchronously inside
   * `callToolAsTask`, before it waits for anything, so the caller's own context (an active span)
   * is still current. Return what watches this call, or `undefined` to leave it unwatched.
   */
  call?(call: InstrumentedCall): CallInstrument | undefined;
  /**
   * `resume` makes a handle for a task that already exists and that this TaskClient does not
   * track (a task it already tracks keeps its handle, and nothing is called). Called synchronously
   * inside `resume`, so the caller's own context (an active span) is still current. Return what
   * watches the resumed task, or `undefined` to leave it unwatched: its `request` is told of each
   * request of the task (`tasks/get`, `tasks/result`, `tasks/update`, `tasks/cancel`; there is no
   * `tools/call`), its `handle` of the handle at once (`failed` is not called). Nothing is sent
   * until the handle is observed, and listening to it (`handle.on`) observes it: to leave that to
   * the caller, follow the task through the TaskClient's events (by `metrics.taskId`) instead.
   * Without this member, resumed tasks are left unwatched.
   */
  resume?(resume: InstrumentedResume): CallInstrument | undefined;
  /**
   * The TaskClient reads one page of a listing: the server's tasks (`tasks/list`: `listPage()`, and
   * each page of `list()`) or its tools (`tools/list`: each page the TaskClient reads for `tools()`
   * and for the task negotiation of `callToolAsTask`, once until the list changes, shared by the
   * callers waiting for it). Called synchronously as the page is asked for, before it waits for
   * anything, so the context of the caller that asked (an active span) is still current; not
   * called when the server does not list tasks (nothing is sent). Return what watches the page, or
   * `undefined`: its `request` is told of each request sent for it (a retried `tasks/list` again),
   * its `handle` and `failed` are never called. Without this member, listings are left unwatched.
   */
  list?(list: InstrumentedList): CallInstrument | undefined;
  /**
   * An elicitation or sampling request from the server is handed to an input callback (of a call,
   * of the TaskClient or of `serve()`). Return what learns how it ended, or `undefined`.
   */
  input?(input: InstrumentedInput): InputInstrument | undefined;
}

/** How the connection a call goes out on reaches its server, as far as the library can tell. */
export interface InstrumentedConnection {
  /** The task wire of the connection. */
  readonly wire: WireKind;
  /** The negotiated MCP protocol version, when known (e.g. `2025-11-25`, `2026-07-28`). */
  readonly protocolVersion: string | undefined;
  /**
   * The transport's session id (`Mcp-Session-Id` of Streamable HTTP), when there is one: never on
   * stdio, nor on a 2026-07-28 connection, which has no sessions.
   */
  readonly sessionId: string | undefined;
  /**
   * The kind of transport: `stdio`, `streamable-http` or `sse` for the SDKs' client transports;
   * `undefined` for any other (in-memory, custom).
   */
  readonly transport: 'stdio' | 'streamable-http' | 'sse' | undefined;
  /**
   * The server's origin for an HTTP transport (scheme, host and port, e.g. `https://mcp.example.com:8443`;
   * never its path, query or credentials), when the transport shows it; `undefined` otherwise.
   */
  readonly origin: string | undefined;
  /**
   * Stands for the transport the connection runs on: the same object for every call, resumed task,
   * listing, request and question over one transport (however many TaskClients share its SDK
   * client), another object for any other transport, even one to the same server (a reconnection,
   * another SDK client). An empty frozen object, to compare by identity (a `Map` or `WeakMap` key):
   * a task id names a task only on its server (and, on many, in its session), so two servers, or
   * two connections, may use the same ids; a task id and its `peer` tell their tasks apart.
   */
  readonly peer: object;
}

/** A call that begins. */
export interface InstrumentedCall {
  /** The tool called. */
  readonly toolName: string;
  /** Its arguments, as given (they may hold secrets: record them only when asked to). */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The connection the call goes out on. */
  readonly connection: InstrumentedConnection;
}

/** A page of a listing that the TaskClient reads. */
export interface InstrumentedList {
  /** The JSON-RPC method of the listing's requests: `tasks/list` or `tools/list`. */
  readonly method: 'tasks/list' | 'tools/list';
  /** The connection its requests go out on. */
  readonly connection: InstrumentedConnection;
}

/** A task that `TaskClient.resume` makes a handle for. */
export interface InstrumentedResume {
  /** The task's id (a bearer secret on many servers: record it only when asked to). */
  readonly taskId: string;
  /**
   * The tool that created the task, when the resume reference or the `toolName` option names it;
   * `undefined` for a task resumed by bare id without one.
   */
  readonly toolName: string | undefined;
  /** The connection the task's requests go out on. */
  readonly connection: InstrumentedConnection;
}

/**
 * Watches one call (or one resumed task): every request the library sends for it, and its handle
 * or its failure. Each method may be left out.
 */
export interface CallInstrument {
  /**
   * A request for this call goes out: the `tools/call` (again, with the answers, when the server
   * asked for input first), then its task's `tasks/get`, `tasks/result`, `tasks/update` and
   * `tasks/cancel` (a resumed task's requests are only these; a listing's are its `tasks/list`).
   * Called synchronously as the request is written; return what adds to its `_meta` and learns
   * how it ended, or `undefined`.
   */
  request?(request: OutgoingRequest): RequestInstrument | undefined;
  /**
   * The call has its handle: a task now tracked, or a plain result (`kind: 'immediate'`); for a
   * resumed task, the handle `resume` returns (not read yet: `task` is `undefined`). Called
   * synchronously right after the handle was made and its `created` event emitted, before any
   * other event of it: listen to `handle.on(...)` here for the rest of its life. A task that ended
   * before the handle was made is already `settled`.
   */
  handle?(handle: TaskHandle): void;
  /** The call failed before it had a handle: `error` is what `callToolAsTask` rejects with. */
  failed?(error: unknown): void;
}

/** A request the library sends. */
export interface OutgoingRequest {
  /** The JSON-RPC method (e.g. `tools/call`, `tasks/get`). */
  readonly method: string;
  /** The request's JSON-RPC id, as sent. */
  readonly id: string;
  /**
   * The connection the request goes out on: after a reconnection (`TaskClient.reconnect`), the
   * new one, whose session (and server) may differ from the call's.
   */
  readonly connection: InstrumentedConnection;
}

/** What an instrumentation does with one outgoing request. */
export interface RequestInstrument {
  /**
   * Entries to add to the request's `params._meta` (e.g. the W3C trace context: `traceparent`,
   * `tracestate`, `baggage`). An entry the request already has (one of your call's own `meta`,
   * say) is kept as it is; when the request's own `_meta` has a `traceparent` or a `tracestate`,
   * neither the `traceparent` nor the `tracestate` given here is added (one trace's context is
   * never mixed with another's); and on a 2026-07-28 connection the library's per-request envelope
   * (`io.modelcontextprotocol/protocolVersion`, `/clientInfo`, `/clientCapabilities`) wins over
   * entries of those names.
   */
  readonly meta?: Readonly<JsonObject> | undefined;
  /**
   * The request ended: `failure` is `undefined` when the server answered with a result (even a
   * tool result with `isError`: `result` tells it). Called at most once; never for a request
   * refused before it was written, and with `kind: 'send'` for one that failed while it was being
   * written.
   * @param result - what the library read in the result, given only with a result that is a tool
   *   error (see {@link RequestResult}); `undefined` otherwise, and always with a `failure`.
   */
  end(failure: RequestFailure | undefined, result?: RequestResult): void;
  /**
   * The library gives the request up and tells the server so with a notification
   * (`notifications/cancelled`: the request timed out, or was aborted while still open, [R27]).
   * Called synchronously as the notification is about to be written, before `end` learns the
   * request was given up (`timeout` or `aborted`), so that what watches the request is still open.
   * Return what adds to the notification's `params._meta` (its trace context: the OpenTelemetry
   * conventions for MCP propagate it in the `_meta` of notifications as of requests) and learns
   * whether it was written, or `undefined`. Not called when no notification goes (a request
   * cancelled by closing its HTTP stream, on a 2026-07-28 connection; a closed connection), nor
   * for a `tools/call` that may create a task, which is never cancelled this way ([R24]).
   */
  notification?(notification: OutgoingNotification): NotificationInstrument | undefined;
}

/** A notification the library sends about one of its requests. */
export interface OutgoingNotification {
  /** The JSON-RPC method: `notifications/cancelled`. */
  readonly method: string;
  /** The JSON-RPC id of the request it is about (the `requestId` it carries). */
  readonly requestId: string;
  /** The connection it goes out on. */
  readonly connection: InstrumentedConnection;
}

/** What an instrumentation does with one outgoing notification. */
export interface NotificationInstrument {
  /**
   * Entries to add to the notification's `params._meta` (e.g. the W3C trace context), under its
   * own (on a 2026-07-28 connection the library's per-request envelope wins over entries of its
   * names, as for a request).
   */
  readonly meta?: Readonly<JsonObject> | undefined;
  /**
   * The notification was written (`failure` `undefined`: a notification has no answer, so this is
   * as far as its sender can follow it), or could not be (`kind: 'send'`, or `closed` when the
   * connection closed first). Called at most once.
   */
  end(failure: RequestFailure | undefined): void;
}

/**
 * What the library read in the result of a request that did not fail, when it tells more than
 * that it succeeded.
 */
export interface RequestResult {
  /**
   * `true` when the decoded result is, or carries, a tool result with `isError: true`: a
   * `tools/call` the server answered at once, a `tasks/result` payload (2025-11-25), a `tasks/get`
   * that carries the task's final result (the tasks extension). The JSON-RPC request itself
   * succeeded (`failure` is `undefined`); the tool failed.
   */
  readonly toolError?: boolean | undefined;
}

/** Why a request failed. */
export interface RequestFailure {
  /**
   * What happened: `server` (the server answered with a JSON-RPC error), `timeout` (no answer in
   * time), `aborted` (the library stopped waiting: its task ended another way, or the call was
   * given up), `closed` (the connection closed first, or the server cancelled the request with
   * `notifications/cancelled`), `send` (the transport could not send it),
   * `session` (the server no longer knows the HTTP session), `malformed` (the reply could not be
   * read).
   */
  readonly kind: 'server' | 'timeout' | 'aborted' | 'closed' | 'send' | 'session' | 'malformed';
  /** The JSON-RPC error code: the server's for `server`, else a local stand-in (`-32001`, `-32000`, `-32603`). */
  readonly code: number;
  /** The server's error message for `server`, else what happened. */
  readonly message: string;
  /** The HTTP status that answered a failed send, if any. */
  readonly httpStatus?: number | undefined;
}

/** An input request from the server, as it reaches a callback. */
export interface InstrumentedInput {
  /** The request's method. */
  readonly method: 'elicitation/create' | 'sampling/createMessage';
  /**
   * The JSON-RPC id of the server's request, as it sent it (delivery `request`); `undefined` for
   * input that rides on a task's update or a call's reply (`task-update`, `retry`), which has no
   * request of its own.
   */
  readonly id?: string | number | undefined;
  /** The connection the request came on (for input riding on a task's update, the task's current one). */
  readonly connection: InstrumentedConnection;
  /** The request's params as the server sent them, its `_meta` (and any trace context there) included. */
  readonly params: Readonly<Record<string, unknown>>;
  /** What the callback is told: the task, its handle, the tool, how the request came. */
  readonly context: InputContext;
}

/** Learns how an input request ended. */
export interface InputInstrument {
  /**
   * Runs the input callback (optional): `run` calls `callback` once, synchronously, and returns
   * what it returns, so that an instrumentation can make its span of the question current while the
   * callback runs (what the callback traces, asking a person or a model, is then that span's child).
   * A `run` that throws before calling `callback` is reported on the `error` event, and the
   * callback runs without it; one that never calls it, likewise.
   */
  readonly run?: (<T>(callback: () => T) => T) | undefined;
  /**
   * The callback answered (`result`: for an elicitation, its `action` says whether the user
   * accepted), threw (`error`), or was abandoned because the answer was no longer wanted (the
   * task ended, the server cancelled the request: `abandoned`).
   */
  end(outcome: InputOutcome): void;
}

/** How an input request ended. */
export type InputOutcome =
  | {
      /** The callback answered. */
      readonly kind: 'answered';
      /** Its answer, as sent back. */
      readonly result: Readonly<Record<string, unknown>>;
    }
  | {
      /** The callback threw or rejected, or its answer was invalid. */
      readonly kind: 'failed';
      /**
       * What it threw; for an answer of the wrong shape (never sent), the error naming the flaw: the
       * one sent back for a request of the server's own, else the `TaskInputError` reported.
       */
      readonly error: unknown;
      /**
       * The JSON-RPC error code the server's request is answered with: for a request of its own
       * (`InputContext.delivery` `request`), the integer `code` of what the callback threw (not a
       * `DOMException`'s), else -32603 (as for an answer of the wrong shape). `undefined` when no error goes back: input that rides on
       * a task's update or a call's reply is left out of the answers instead.
       */
      readonly code?: number | undefined;
    }
  | {
      /** The answer was no longer wanted. */
      readonly kind: 'abandoned';
    };
