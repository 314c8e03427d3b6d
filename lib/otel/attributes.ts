/**
 * Attribute values: those of a connection (the MCP conventions' transport table), and the
 * `error.type` of a failed request, a failed call or a task's end.
 */
import type { Attributes } from '@opentelemetry/api';
import {
  TaskAbortError,
  TaskFailedError,
  TaskRpcError,
  taskFingerprint,
  type InstrumentedConnection,
  type RequestFailure,
  type TaskOutcomeKind,
} from '../index.js';
import { ATTR } from './names.js';
import type { OtelInstrumentationOptions } from './types.js';

/**
 * The attributes of every span and metric point of a call on `connection`: the protocol version,
 * the session id (only where there is one: never on stdio nor on a 2026-07-28 connection),
 * `network.transport` (`pipe` for stdio, `tcp` for HTTP), `network.protocol.name` and the server's
 * address and port.
 */
export function connectionAttributes(
  connection: InstrumentedConnection,
  server: OtelInstrumentationOptions['server'],
): Attributes {
  const attributes: Attributes = {};
  if (connection.protocolVersion !== undefined) attributes[ATTR.protocolVersion] = connection.protocolVersion;
  if (connection.sessionId !== undefined) attributes[ATTR.sessionId] = connection.sessionId;
  if (connection.transport === 'stdio') attributes[ATTR.transport] = 'pipe';
  else if (connection.transport !== undefined) {
    attributes[ATTR.transport] = 'tcp';
    attributes[ATTR.protocolName] = 'http';
  }
  const address = server ?? addressOf(connection.origin);
  if (address !== undefined) {
    attributes[ATTR.serverAddress] = address.address;
    if (address.port !== undefined) attributes[ATTR.serverPort] = address.port;
  }
  return attributes;
}

/** `attributes` without the session id, which is not a metric attribute. */
export function metricAttributesOf(attributes: Attributes): Attributes {
  const { [ATTR.sessionId]: _session, ...shared } = attributes;
  return shared;
}

/** Host and port of an origin (`https://host:port`); the scheme's default port when none is written. */
function addressOf(origin: string | undefined): { address: string; port?: number } | undefined {
  if (origin === undefined) return undefined;
  try {
    const url = new URL(origin);
    const port =
      url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : undefined;
    const address = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    return port === undefined ? { address } : { address, port };
  } catch {
    return undefined;
  }
}

/**
 * `error.type` of a failed request: the JSON-RPC code, as the conventions say, when the server
 * answered with an error; else what happened (`timeout`, `closed`, `send`, `session`, `malformed`).
 * A request the library stopped waiting for (`aborted`) is not an error.
 */
export function requestErrorType(failure: RequestFailure): string | undefined {
  if (failure.kind === 'server') return String(failure.code);
  return failure.kind === 'aborted' ? undefined : failure.kind;
}

/**
 * The JSON-RPC codes that, in the answer to a request this client serves (an input request of the
 * server's), say the caller sent a request the receiver could not serve, and "SHOULD NOT be
 * considered errors" (the MCP conventions' `mcp.server.status.attributes`, common.yaml lines
 * 73-83 of the reviewed copy): parse error, invalid request, method not found, invalid params,
 * resource not found.
 */
const NOT_SERVER_ERRORS: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602, -32002]);

/** True when `code`, answering a request this client serves, classifies as an error. */
export function isServerErrorCode(code: number): boolean {
  return !NOT_SERVER_ERRORS.has(code);
}

/** The error attributes and status description of an error a call or task ended with. */
export interface ErrorReading {
  /** `error.type`. */
  readonly type: string;
  /** `rpc.response.status_code`, when the server answered with a JSON-RPC error. */
  readonly statusCode?: string | undefined;
  /** The span status description: the server's JSON-RPC message when there is one. */
  readonly description: string;
}

/**
 * How an error a call or task ended with reads: a failed task's JSON-RPC error by its code, an
 * `isError` tool result as `tool_error` (as the conventions say), a request the server refused by
 * its code, a request that failed on this side by what happened (`timeout`, `send`, `session`,
 * `closed`, as a failed request's span says), anything else by its class name
 * (`TaskTimeoutError`, `TaskCancelledError`, …). Only a code the server answered with is a
 * `rpc.response.status_code`: a local stand-in (-32000 for an HTTP 401, say) is not.
 */
export function readError(error: unknown): ErrorReading {
  if (error instanceof TaskFailedError) {
    const rpc = error.rpcError;
    if (rpc !== undefined) return { type: String(rpc.code), statusCode: String(rpc.code), description: rpc.message };
    return { type: 'tool_error', description: error.message };
  }
  if (error instanceof TaskRpcError) {
    const kind = error.kind;
    if (kind === 'server')
      return { type: String(error.code), statusCode: String(error.code), description: error.message };
    if (kind !== 'local' && kind !== 'aborted') return { type: kind, description: error.message };
  }
  // The library's errors by class name (TaskAbortError's `name` is the DOM's `AbortError`).
  if (error instanceof TaskAbortError) return { type: 'TaskAbortError', description: error.message };
  if (error instanceof Error)
    return { type: error.name === 'Error' ? '_OTHER' : error.name, description: error.message };
  return { type: '_OTHER', description: String(error) };
}

/** Outcomes that are not errors: the task completed, or was left running on purpose. */
export function isErrorOutcome(outcome: TaskOutcomeKind): boolean {
  return outcome !== 'completed' && outcome !== 'detached';
}

/** `text` with `taskId` (8 characters or more) replaced by its fingerprint. */
export function scrubbed(text: string, taskId: string | undefined): string {
  if (taskId === undefined || taskId.length < 8 || !text.includes(taskId)) return text;
  return text.replaceAll(taskId, taskFingerprint(taskId));
}

/** `value` as JSON (for the opt-in arguments and result attributes); `undefined` when it cannot be. */
export function json(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
