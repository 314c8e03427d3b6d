/**
 * One request of the library's opened on a port (session.ts): refused before it is sent, or its
 * open entry made and registered (its timeout armed, its abort and group joined), and its message
 * written, each failure on the way failing it as the request's own.
 */
import { onAbort } from '../util/abort.js';
import { deliver, type Sink } from '../util/deliver.js';
import { messageOf } from '../util/text.js';
import { instrumentedConnection } from './connection-info.js';
import { Pending, type Abandoner } from './pending.js';
import {
  PortError,
  type ErrorMapper,
  type JsonObject,
  type PortRequestOptions,
  type ResultDecoder,
  type SessionPort,
} from './port.js';
import { abortedError, refusalOf, refused } from './reply.js';
import type { SendOptions } from './sdk-access.js';

/** What opening a request needs of its port, beside the port itself (RawSession). */
export interface RequestHost extends SessionPort, Abandoner {
  /** A new request id of the port's. */
  issueId(): string;
  /**
   * `params` as they go out: an instrumentation's `_meta` entries (`meta`) and the envelope (with
   * `declare`), on a copy unless `fresh`.
   */
  outgoing(
    params: JsonObject | undefined,
    meta: Readonly<JsonObject> | undefined,
    declare: JsonObject | undefined,
    fresh: boolean,
  ): JsonObject | undefined;
  /** `entry` is open: its answer settles it, and its timeout is armed. */
  register(entry: Pending, options: PortRequestOptions): void;
  /** Writes a message on the transport; it may throw rather than reject. */
  write(message: JsonObject, options?: SendOptions): Promise<void>;
  /** The request `id` could not be written. */
  sendFailed(id: string, error: unknown): void;
  /** The stream that carries the answer of request `id` ended without it (`reason`: how it failed, if it did). */
  streamEnded(id: string, reason?: string): void;
  /**
   * The send options that have the transport tell when the stream of request `id` ends (Streamable
   * HTTP, either era, either SDK), on a 2025-11-25 session; `undefined` on a transport with no stream
   * per request.
   */
  endOptions(id: string): SendOptions | undefined;
  /** Takes request `id` off the open ones (its timeout, abort and group let go). */
  take(id: string): Pending | undefined;
}

/**
 * Sends a request, its outcome going to `resolve` and `reject`, or to `sink` with `token` (see
 * {@link SessionPort.requestInto}); one refused before it is sent fails the same way.
 */
export function openRequest<T>(
  host: RequestHost,
  method: string,
  params: JsonObject | undefined,
  decode: ResultDecoder<T>,
  options: PortRequestOptions,
  mapError: ErrorMapper | undefined,
  context: string | undefined,
  declare: JsonObject | undefined,
  fresh: boolean,
  resolve: (value: unknown) => void,
  reject: (error: unknown) => void,
  sink: Sink<T, unknown> | undefined,
  token: unknown,
): void {
  const refusal = refusalOf(host.closed, options);
  if (refusal !== undefined) {
    const error = refused(refusal, method, mapError, context);
    if (sink === undefined) reject(error);
    else deliver(sink, token, error, true);
    return;
  }
  const group = options.group;
  const signal = group === undefined ? options.signal : undefined;
  const id = host.issueId();
  // Instrumentation: one read when unused. Its `_meta` entries go under the request's own.
  // Told of the connection it goes over: after a reconnection, another session than its call's.
  const watcher =
    options.instrument === undefined
      ? undefined
      : options.instrument.request?.({ method, id, connection: instrumentedConnection(host) });
  const body = host.outgoing(params, watcher?.meta, declare ?? options.declare, fresh);
  const entry = new Pending(host, id, method, decode, resolve, reject, options.timers, group, mapError, context);
  if (sink !== undefined) {
    entry.sink = sink;
    entry.token = token;
  }
  if (watcher !== undefined) entry.watcher = watcher;
  if (options.quietTimeout === true) entry.quietTimeout = true;
  try {
    host.register(entry, options);
    if (signal !== undefined) {
      // Aborted while the request was set up (by the instrumentation's hook): failed as aborted,
      // and neither written nor cancelled by a notification (the server never got it).
      if (signal.aborted) {
        host.take(id);
        entry.reject(abortedError(signal));
        return;
      }
      entry.off = onAbort(signal, () => host.giveUp(id, abortedError(signal)));
    }
    group?.join(entry);
    const message: JsonObject =
      body === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: body };
    if (host.sendsHeaders()) entry.post = new AbortController();
    // A transport that throws instead of rejecting fails the request the same way (typed, its
    // entry and timer released, and no notifications/cancelled for a request never sent).
    // A request stream (Streamable HTTP) that ends without the answer (a proxy cutting it, the
    // server dropping it) fails the request at once, rather than at its timeout (or never).
    // Headers of the request's own ([E32]) go only on such a transport, which takes them per send.
    // On a 2025-11-25 session such a transport tells the stream's end too (a blocking tasks/result
    // cut by a proxy would otherwise wait for ever), without a signal or headers of its own: SDK
    // v2's by itself, SDK v1's through the port (stream-ends.ts).
    const streamOptions: SendOptions | undefined =
      entry.post !== undefined
        ? { ...host.endOptions(id), requestSignal: entry.post.signal, headers: options.headers }
        : host.endOptions(id);
    let sent: Promise<void>;
    try {
      sent = host.write(message, streamOptions);
    } catch (error) {
      // Thrown, not rejected: failed at once, before anything else (an abort in the same
      // tick) could take it for a request the server got and send notifications/cancelled.
      host.sendFailed(id, error);
      return;
    }
    sent.then(undefined, (error: unknown) => host.sendFailed(id, error));
  } catch (error) {
    // Ended already (its answer came back while it was being written): settled once, as it is.
    if (entry.ended) return;
    // Whatever threw while the request was set up fails the request, as a throw in a promise
    // executor would (its entry and timer released). Its watcher learns it could not be sent,
    // so that what it started (a span) ends.
    host.take(id);
    entry.watcher?.end(new PortError('send', messageOf(error), { cause: error }));
    entry.failRaw(error);
  }
}
