/**
 * Turning a port failure into the library's errors, and reading them back: shared by every wire.
 * Classification goes by what happened and by the JSON-RPC `code`, never by an SDK error class.
 */
import { TaskProtocolError, TaskRpcError } from '../errors.js';
import { PortError } from '../port/port.js';
import { scrub } from '../util/fingerprint.js';
import type { ErrorClass } from './wire.js';

/** JSON-RPC codes that say the request itself is wrong: never retried. */
const PROTOCOL_CODES: ReadonlySet<number> = new Set([-32600, -32601, -32602]);

/** HTTP statuses worth another attempt: none at all (the request never got an answer), 5xx, 429, 408. */
function retryableStatus(status: number | undefined): boolean {
  return status === undefined || status >= 500 || status === 429 || status === 408;
}

/** A server message without the "MCP error <code>: " prefixes SDK servers add ([S17]). */
export function stripPrefix(message: string, code: number): string {
  const prefix = `MCP error ${code}: `;
  let text = message;
  while (text.startsWith(prefix)) text = text.slice(prefix.length);
  return text;
}

/**
 * The library's error for a failed `method` request: {@link TaskProtocolError} for a malformed
 * reply, {@link TaskRpcError} otherwise. Messages never repeat the task id (it is a secret).
 */
export function toWireError(method: string, error: unknown, taskId?: string): TaskRpcError | TaskProtocolError {
  if (error instanceof TaskRpcError || error instanceof TaskProtocolError) return error;
  if (!(error instanceof PortError)) {
    const text = error instanceof Error ? error.message : String(error);
    return new TaskRpcError(`${method} failed: ${scrub(text, taskId)}`, {
      method,
      code: -32603,
      transient: false,
      kind: 'local',
      taskId,
      cause: scrubChain(error, taskId),
    });
  }
  if (error.kind === 'malformed') {
    if (error.cause instanceof TaskProtocolError) return scrubChain(error.cause, taskId) as TaskProtocolError;
    return new TaskProtocolError(scrub(error.message, taskId), { method, taskId, cause: error });
  }
  const message = scrub(stripPrefix(error.message, error.code), taskId);
  // The cause is kept for its kind and code, but its text is scrubbed too: `inspect(error)` prints
  // the whole chain, and the task id is a secret.
  const cause = message === error.message ? error : scrubbed(error, taskId);
  const transient =
    error.kind === 'timeout' ||
    error.kind === 'closed' ||
    error.kind === 'session' ||
    (error.kind === 'send' && retryableStatus(error.httpStatus));
  const data =
    error.kind === 'server' || error.httpStatus === undefined ? error.data : { httpStatus: error.httpStatus };
  return new TaskRpcError(`${method} failed: ${message}`, {
    method,
    code: error.code,
    data,
    transient,
    kind: error.kind,
    taskId,
    cause,
  });
}

/** `error` with what its code means on the wire added to its message (not transient: the server answered). */
export function withMeaning(error: TaskRpcError, meaning: string): TaskRpcError {
  return new TaskRpcError(`${error.message} (${meaning})`, {
    method: error.method,
    code: error.code,
    data: error.data,
    transient: false,
    kind: error.kind,
    taskId: error.taskId,
    cause: error.cause,
  });
}

/** A copy of a port error whose message (and whole cause chain) names the task by fingerprint. */
function scrubbed(error: PortError, taskId: string | undefined): PortError {
  const copy = new PortError(error.kind, scrub(error.message, taskId), {
    code: error.code,
    data: error.data,
    httpStatus: error.httpStatus,
    cause: scrubChain(error.cause, taskId),
  });
  copy.stack = scrub(error.stack ?? '', taskId);
  return copy;
}

/** How deep a cause chain is scrubbed (chains are short; a cycle must not loop). */
const MAX_CHAIN = 8;

/**
 * `error` as is when neither it nor its causes name the task; else a copy of each link that does
 * (same prototype and own properties, so its class and fields stay), its message and stack
 * scrubbed. `inspect(error)` prints the whole chain, and the task id is a secret: an SDK's HTTP
 * error quoting a server's body, or a server's own text, may repeat it.
 */
function scrubChain(error: unknown, taskId: string | undefined, depth = 0): unknown {
  if (taskId === undefined || !(error instanceof Error) || depth >= MAX_CHAIN) return error;
  const cause = scrubChain(error.cause, taskId, depth + 1);
  const message = scrub(error.message, taskId);
  const stack = error.stack === undefined ? undefined : scrub(error.stack, taskId);
  if (cause === error.cause && message === error.message && stack === error.stack) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  for (const key of Reflect.ownKeys(error)) {
    const descriptor = Object.getOwnPropertyDescriptor(error, key);
    if (descriptor !== undefined) Object.defineProperty(copy, key, descriptor);
  }
  Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true, enumerable: false });
  if (stack !== undefined)
    Object.defineProperty(copy, 'stack', { value: stack, writable: true, configurable: true, enumerable: false });
  if (error.cause !== undefined)
    Object.defineProperty(copy, 'cause', { value: cause, writable: true, configurable: true, enumerable: false });
  return copy;
}

/** True for an error the server itself answered with (a JSON-RPC error reply, not a local failure). */
export function fromServer(error: unknown): error is TaskRpcError & { readonly cause: PortError } {
  return error instanceof TaskRpcError && error.cause instanceof PortError && error.cause.kind === 'server';
}

/** What a wire error means, apart from the protocol-specific cases each wire reads first. */
export function classifyRpc(error: unknown): ErrorClass {
  if (error instanceof TaskProtocolError) return 'protocol';
  if (!(error instanceof TaskRpcError)) return 'server';
  const cause = error.cause instanceof PortError ? error.cause : undefined;
  switch (cause?.kind) {
    case 'timeout':
      return 'timeout';
    case 'aborted':
      return 'stopped';
    case 'session':
      return 'session';
    case 'closed':
      return 'transient';
    case 'send':
      return error.transient ? 'transient' : 'server';
    default:
      return PROTOCOL_CODES.has(error.code) ? 'protocol' : 'server';
  }
}
