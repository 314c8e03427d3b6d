/**
 * Wire vocabulary of the `io.modelcontextprotocol/tasks` extension (SEP-2663) and of the 2026-07-28
 * core pieces it leans on (per-request `_meta` envelope, MRTR input maps, error codes). Written from
 * the extension schema (`ext-tasks/schema/draft/schema.ts`) and the core schema; see
 * `/work/notes/ext-wire.md` for the full description and sources.
 */

/** A JSON object as it travels on the wire. */
export type Json = Record<string, unknown>;
/** A JSON-RPC request id. */
export type RequestId = string | number;

/** The extension identifier, used in capabilities on both sides. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The first modern protocol revision (per-request `_meta`, no `initialize`). */
export const MODERN_VERSION = '2026-07-28';
/** The last legacy revision (the `initialize` handshake). */
export const LEGACY_VERSION = '2025-11-25';

/** Reserved `_meta` keys of the modern era (core schema `RequestMetaObject` and friends). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  relatedTask: 'io.modelcontextprotocol/related-task',
} as const;

/** JSON-RPC and MCP error codes this wire uses (MCP's own codes start at -32020). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** HTTP header absent or different from the body (SEP-2243). */
  HeaderMismatch: -32020,
  /** The request needs a client capability it did not declare (was -32003 in drafts). */
  MissingRequiredClientCapability: -32021,
  /** The requested protocol version is not served; `data.supported` lists those that are. */
  UnsupportedProtocolVersion: -32022,
} as const;

/** The five task statuses (unchanged from 2025-11-25). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
/** True for `completed`, `failed` and `cancelled`: a task never leaves them. */
export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

/** A JSON-RPC error object; also what scripted handlers throw. */
export interface RpcFailure {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}
/** A throwable JSON-RPC error: `throw rpcError(-32602, 'Task not found')`. */
export function rpcError(code: number, message: string, data?: unknown): RpcFailure & Error {
  return Object.assign(new Error(message), { code, data });
}
/** True for any object with a numeric `code` and a string `message`. */
export function isRpcFailure(value: unknown): value is RpcFailure {
  const v = value as Partial<RpcFailure> | null;
  return typeof v === 'object' && v !== null && typeof v.code === 'number' && typeof v.message === 'string';
}
/** The plain `{code, message, data?}` object of a failure (drops Error fields). */
export function errorObject(failure: RpcFailure): Json {
  return failure.data === undefined
    ? { code: failure.code, message: failure.message }
    : { code: failure.code, message: failure.message, data: failure.data };
}
/** The -32021 error for a request that did not declare the extension; `data` names what is missing. */
export function missingExtension(): RpcFailure & Error {
  return rpcError(ErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

/** One server-to-client request carried inside a result (MRTR / task `inputRequests` entry). */
export interface InputRequest {
  readonly method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list' | (string & {});
  readonly params?: Json;
}
/** Keyed input requests; keys are the server's and unique over a task's life. */
export type InputRequests = Readonly<Record<string, InputRequest>>;
/** Keyed answers: `ElicitResult`, `CreateMessageResult` or `ListRootsResult` objects. */
export type InputResponses = Readonly<Record<string, Json>>;

/** A form-mode elicitation entry asking for the given primitive `properties`. */
export function elicitation(
  message: string,
  properties: Json,
  required: readonly string[] = Object.keys(properties),
): InputRequest {
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required: [...required] } },
  };
}
/** A sampling entry (deprecated kind since 2026-07-28, still legal) with one user text message. */
export function sampling(text: string, maxTokens = 100): InputRequest {
  return {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
  };
}
/** A `roots/list` entry (deprecated kind, still legal). */
export function rootsRequest(): InputRequest {
  return { method: 'roots/list', params: {} };
}
/** A `CallToolResult` with one text block (no `resultType`; the server adds it where it belongs). */
export function textResult(text: string, extra: Json = {}): Json {
  return { content: [{ type: 'text', text }], ...extra };
}

/**
 * A task as `tasks/get` and `notifications/tasks` carry it: `Task` plus the status-specific field
 * (`inputRequests`, `result` or `error`), schema `DetailedTask`.
 */
export interface DetailedTask {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number | null;
  readonly pollIntervalMs?: number;
  readonly inputRequests?: InputRequests;
  readonly result?: Json;
  readonly error?: Json;
  readonly [key: string]: unknown;
}

/** What a client puts in `_meta` (core "per-request protocol fields"). */
export interface EnvelopeOptions {
  /** @default MODERN_VERSION */
  readonly protocolVersion?: string;
  /** Declare the tasks extension; an object is sent as its settings. @default true */
  readonly extension?: boolean | Json;
  /** Other client capabilities (merged under the extension). @default {} */
  readonly capabilities?: Json;
  /** @default { name: 'raw-client', version: '1.0.0' } */
  readonly clientInfo?: Json | false;
}
/** Builds a modern `_meta` envelope; `extension: false` leaves the extension undeclared. */
export function envelope(options: EnvelopeOptions = {}): Json {
  const capabilities: Json = { ...(options.capabilities ?? {}) };
  const extension = options.extension ?? true;
  if (extension !== false) {
    const others = (capabilities.extensions ?? {}) as Json;
    capabilities.extensions = { ...others, [TASKS_EXTENSION]: extension === true ? {} : extension };
  }
  const meta: Json = {
    [META.protocolVersion]: options.protocolVersion ?? MODERN_VERSION,
    [META.clientCapabilities]: capabilities,
  };
  if (options.clientInfo !== false)
    meta[META.clientInfo] = options.clientInfo ?? { name: 'raw-client', version: '1.0.0' };
  return meta;
}

/** A JSON deep copy (drops `undefined` keys as a real wire would). */
export function copyJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
/** True for a non-null, non-array object. */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
