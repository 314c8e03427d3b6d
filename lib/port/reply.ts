/**
 * How a request of the port ends other than by a timeout or a stop: its reply, taken off the
 * transport, settles it with the decoded result or fails it (a server error, or a malformed
 * reply); a send that failed, and a request refused before it was sent, fail it with a
 * {@link PortError} of their own.
 */
import { PortError, type ErrorMapper, type JsonObject, type PortRequestOptions } from './port.js';
import type { Pending } from './pending.js';
import { isObject } from '../util/json.js';
import { wireCode } from '../util/rpc-error.js';

/** Settles the open request `entry` (already taken from the open ones) with its reply `message`. */
export function settleReply(entry: Pending, message: JsonObject): void {
  if ('result' in message) {
    const result = message.result;
    // A `_meta` of null (servers that write every absent field as null) counts as absent.
    if (!isObject(result) || (result._meta !== undefined && result._meta !== null && !isObject(result._meta))) {
      const what = isObject(result) ? 'its _meta is not an object' : 'the result is not an object';
      entry.reject(new PortError('malformed', `Malformed ${entry.method} reply from server: ${what}`));
      return;
    }
    let value: unknown;
    try {
      value = entry.decode(message.result, entry.context);
    } catch (error) {
      entry.reject(
        new PortError('malformed', error instanceof Error ? error.message : String(error), { cause: error }),
      );
      return;
    }
    // A tool result with `isError` is a successful JSON-RPC answer: the watcher learns it from the
    // wire's decoder (the OpenTelemetry conventions' `error.type` `tool_error`). Neither is read
    // without a watcher.
    entry.watcher?.end(undefined, entry.decode.toolError?.(value) ? { toolError: true } : undefined);
    entry.fulfil(value);
    return;
  }
  const error = message.error;
  // A code written as a numeric string (a writer that quotes every value) still says what the
  // server refused (a `tasks/cancel` of an ended task, an unknown task): read, not malformed.
  const code = isObject(error) && typeof error.message === 'string' ? wireCode(error.code) : undefined;
  if (code !== undefined) {
    const { message: text, data } = error as JsonObject;
    entry.reject(new PortError('server', text as string, { code, data }));
    return;
  }
  entry.reject(
    new PortError('malformed', `Malformed ${entry.method} reply from server: neither a result nor a valid error`),
  );
}

/**
 * The error of a request that could not be written on the transport: `status` is the HTTP status
 * the write failed with, if any; `hasSession`, whether the transport has a session id.
 */
export function sendError(error: unknown, status: number | undefined, hasSession: boolean): PortError {
  const text = error instanceof Error ? error.message : String(error);
  // A Streamable HTTP server that no longer knows the session answers 404 (or 400 naming the
  // session): the connection is lost, not the request. Only with a session: without one (the
  // 2026-07-28 era has none, [E21]) a 404 is an HTTP error of this request.
  const lost = hasSession && (status === 404 || (status === 400 && /session/i.test(text)));
  return new PortError(lost ? 'session' : 'send', text, { httpStatus: status, cause: error });
}

/**
 * Why a request with `options` cannot be sent on a port (`closed`: the port is), if it cannot: the
 * port closed, its signal aborted, or its group stopped.
 */
export function refusalOf(closed: boolean, options: PortRequestOptions): PortError | undefined {
  if (closed) return new PortError('closed', 'Connection closed');
  // A request with a group never reads `signal` (a task's options make its signal on first read).
  const group = options.group;
  if (group === undefined) return options.signal?.aborted === true ? abortedError(options.signal) : undefined;
  return group.stopped ? new PortError('aborted', 'Request aborted', { cause: group.stopReason }) : undefined;
}

/** The error of a request refused before it was sent: what it would have failed with once sent. */
export function refused(
  error: PortError,
  method: string,
  mapError: ErrorMapper | undefined,
  context: string | undefined,
): unknown {
  return mapError === undefined ? error : mapError(method, error, context);
}

/** The error of a request whose signal aborted. */
export function abortedError(signal: AbortSignal): PortError {
  return new PortError('aborted', 'Request aborted', { cause: signal.reason });
}
