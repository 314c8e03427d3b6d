/**
 * When a request's own SSE stream ends without its answer on SDK v1's Streamable HTTP transport.
 *
 * That transport reads the SSE stream a POST answers with, and when the stream ends (a proxy cut
 * it, the server dropped it) before the request's answer came, it resumes only a stream that
 * carried an event id; otherwise it says nothing (an `onerror` at most), and the request stays
 * open for ever: the blocking `tasks/result`, which has no timeout, would wait for questions that
 * can no longer come on it. SDK v2's transport tells such an end (`onRequestStreamEnd`); this
 * module makes SDK v1's tell it too.
 *
 * The transport reads every SSE stream in its method `_handleSseStream(stream, options,
 * reconnectable)` (private, the same from 1.24 to 1.32); a POST's stream comes with the
 * `onresumptiontoken` its `send` was given. The library gives each of its own requests a callback
 * of its own there ({@link streamEndOptions}), and the method, wrapped once per transport, reads
 * the streams of those requests through {@link withEndNotice}: once the response body ends or
 * fails, one more event follows, a notification of the library's ({@link STREAM_ENDED}) naming
 * the request. The SDK parses it after every event before it and hands it to `onmessage`, where
 * the port takes it: an answer the stream carried has settled the request by then, so the request
 * still open has none coming on that stream. Whether the stream carried an event id (the SDK then
 * resumes it) the callback has told by then as well. SDK v1 hands the callback on to the GETs that
 * resume the stream: their streams are watched the same way, and the SDK giving up on a
 * resumption is told too, which it otherwise keeps to itself (stream-resume.ts). Only whole events reach the SDK: an event
 * the cut left unfinished is dropped, its id with it, so SDK v1 resumes from the last event it
 * got whole, which the server then sends again.
 */
import type { JsonObject } from './port.js';
import type { SendOptions } from './sdk-access.js';
import { isObject } from '../util/json.js';
import { noop } from '../util/noop.js';

/** The notification that follows the last event of a watched request stream (never sent by a server). */
export const STREAM_ENDED = 'notifications/mcp-task-client/stream-ended';

/** How a watched stream ended, as its {@link STREAM_ENDED} notification says. */
export interface StreamEnd {
  readonly id: string;
  /** The failure of the stream's read, if it failed rather than ended. */
  readonly reason: string | undefined;
  /** It was a resumed stream, which SDK v1 always resumes again. */
  readonly resumed: boolean;
}

/** What the port is told of a watched request's streams: their event ids, and SDK v1 giving up resuming them. */
export interface StreamWatcher {
  resumed(id: string): void;
  gaveUp(id: string, why: string): void;
}

/** The session of a watched request. */
export interface OpenRequests {
  /** True while request `id` is open. */
  isOpen(id: string): boolean;
}

/** A library request's streams, as the wrapped methods see them. */
interface Watched {
  readonly id: string;
  /** Its session: whether the request is still open. */
  readonly host: OpenRequests;
  /** Absent on SDK v2, which tells the ends itself. */
  readonly watcher: StreamWatcher | undefined;
  /** How many resumed streams of it were opened. */
  opened: number;
  /** The last event id its streams carried: where a resumption of them starts. */
  point: string | undefined;
}

/** The request of each resumption-token callback handed to a watched transport's `send`. */
const requestOf = new WeakMap<object, Watched>();
/** The transports whose methods are wrapped. */
const watched = new WeakSet<object>();
/** The transports whose resumptions keep their point ({@link keepResumePoints}). */
const planned = new WeakSet<object>();

/** The library's request whose streams SDK v1 reads or resumes with `options`, if any. */
function ownerOf(options: unknown): Watched | undefined {
  const token = isObject(options) ? options.onresumptiontoken : undefined;
  return typeof token === 'function' ? requestOf.get(token) : undefined;
}

/** A method of SDK v1's Streamable HTTP transport. */
type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Wraps the stream reading of `transport` when it is SDK v1's Streamable HTTP transport (once per
 * transport); false for any other, which tells stream ends itself (SDK v2's) or has no stream per
 * request. Private methods, the same from 1.24 to 1.32: `_handleSseStream(stream, options,
 * reconnectable)` reads every SSE stream; `_startOrAuthSse(options)` opens a GET stream, that of a
 * resumption too, and resolves without one when the server offers none. The `options` of a
 * resumption carry its request's resumption-token callback on. Either SDK's Streamable HTTP
 * transport has its resumptions start where the request's streams got to ({@link keepResumePoints}).
 */
export function watchStreamEnds(transport: object): boolean {
  if (watched.has(transport)) return true;
  const t = transport as Record<string, unknown>;
  const read = t._handleSseStream;
  const start = t._startOrAuthSse;
  keepResumePoints(t);
  if (t.hasPerRequestStream === true || typeof t.terminateSession !== 'function' || typeof read !== 'function')
    return false;
  t._handleSseStream = function (this: unknown, stream: unknown, options: unknown, reconnectable: unknown): unknown {
    // The session's own GET stream, and a POST's of the host's own requests, have no callback of
    // ours: both are read as they are. A GET that resumes the stream of one of ours is watched
    // like the POST's.
    const mine = ownerOf(options);
    if (mine === undefined || !(stream instanceof ReadableStream))
      return (read as Method).call(this, stream, options, reconnectable);
    const resumed = reconnectable === true;
    if (resumed) mine.opened++;
    return (read as Method).call(this, withEndNotice(stream, mine.id, resumed), options, reconnectable);
  };
  if (typeof start === 'function')
    t._startOrAuthSse = function (this: unknown, options: unknown): unknown {
      const mine = ownerOf(options);
      const opened = mine?.opened;
      const started = (start as Method).call(this, options);
      // Settled without a stream of its own (a 405, a body-less answer, a re-authentication that
      // opens the session's stream instead): the SDK tries no more. A failure is the SDK's to retry.
      if (mine !== undefined)
        Promise.resolve(started).then(() => {
          if (mine.opened === opened) mine.watcher?.gaveUp(mine.id, 'not resumed: no stream offered');
        }, noop);
      return started;
    };
  watched.add(transport);
  return true;
}

/**
 * Makes the resumptions of the library's requests on `transport` (either SDK's Streamable HTTP
 * transport; once per transport) start where their streams got to. Both SDKs resume a stream from
 * the last event id read on that one stream (`_scheduleReconnection(options, attempt)`, private,
 * the same in SDK v1 1.24 to 1.32 and SDK v2): a resumed stream that ends with no event (a server
 * with nothing new to replay, that closes its streams to be polled) is resumed with no
 * `Last-Event-ID` at all, a GET that opens the session's own stream instead, where the request's
 * answer never comes. Such a resumption gets the last event id the request's streams carried;
 * none is made once the request ended. On SDK v1, the SDK giving up (from `maxRetries` tries on) is told to the request's watcher.
 */
function keepResumePoints(t: Record<string, unknown>): void {
  const plan = t._scheduleReconnection;
  if (typeof plan !== 'function' || planned.has(t)) return;
  planned.add(t);
  t._scheduleReconnection = function (this: unknown, options: unknown, attempt: unknown): unknown {
    const mine = ownerOf(options);
    if (mine === undefined) return (plan as Method).call(this, options, attempt);
    // Ended (answered, an error answer too, or given up): its streams are no longer resumed, where
    // the SDKs would go on for as long as each resumed stream ends with no answer on it.
    if (!mine.host.isOpen(mine.id)) return undefined;
    const retries = (this as { _reconnectionOptions?: { maxRetries?: unknown } })._reconnectionOptions?.maxRetries;
    if (typeof retries === 'number' && typeof attempt === 'number' && attempt >= retries)
      mine.watcher?.gaveUp(mine.id, `not resumed after ${attempt} retries`);
    // The SDK's own object, made for this resumption and handed on to its retries.
    if (isObject(options) && options.resumptionToken === undefined) options.resumptionToken = mine.point;
    return (plan as Method).call(this, options, attempt);
  };
}

/**
 * The send options of the library's request `id` on a Streamable HTTP transport: a
 * resumption-token callback of its own, which marks its streams (the SDKs hand it on to the GETs
 * that resume them) and keeps the last event id they carry; on SDK v1, it tells `watcher` of each.
 */
export function streamEndOptions(id: string, host: OpenRequests, watcher?: StreamWatcher): SendOptions {
  const mine: Watched = { id, host, watcher, opened: 0, point: undefined };
  const onresumptiontoken = (token: string): void => {
    mine.point = token;
    watcher?.resumed(id);
  };
  requestOf.set(onresumptiontoken, mine);
  return { onresumptiontoken };
}

/** The request, the failure (if the stream failed) and the kind of stream a {@link STREAM_ENDED} notification names. */
export function endOf(params: JsonObject): StreamEnd | undefined {
  const { requestId, reason } = params;
  if (typeof requestId !== 'string') return undefined;
  return { id: requestId, reason: typeof reason === 'string' ? reason : undefined, resumed: params.resumed === true };
}

/** Bytes of line ends: an SSE event ends at an empty line (LF, CR LF or CR). */
const LF = 10;
const CR = 13;
const NOTHING = new Uint8Array(0);
const UTF8 = new TextEncoder();

/**
 * The length of the part of `bytes` that ends with the last complete event (after the empty line
 * that ends it, and the LF of a CR LF there); 0 when no event ends in it.
 */
function completeEvents(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i > 0; i--) {
    const byte = bytes[i];
    if (byte !== LF && byte !== CR) continue;
    const before = bytes[i - 1];
    // A line end right after another (CR LF being one): an empty line, the end of an event.
    const empty =
      byte === LF
        ? before === LF || (before === CR && i > 1 && (bytes[i - 2] === LF || bytes[i - 2] === CR))
        : before === LF || before === CR;
    if (empty) return byte === CR && bytes[i + 1] === LF ? i + 2 : i + 1;
  }
  return 0;
}

/** `a` then `b`, in one array (`b` itself when `a` is empty). */
function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const both = new Uint8Array(a.length + b.length);
  both.set(a);
  both.set(b, a.length);
  return both;
}

/**
 * `body` as the SDK reads it, whole events only, and then one more event: the
 * {@link STREAM_ENDED} notification of request `id` (with the failure, when the body failed rather
 * than ended, and whether it was a `resumed` stream). The bytes of an event the body left unfinished are held back and dropped at its
 * end, as the SDK's parser would drop them: an event cut short never reaches it, so neither its
 * data nor its id counts (an id read from a cut event would make SDK v1 resume after an answer it
 * never delivered). The body's failure is not passed on: the request's own failure tells it.
 */
function withEndNotice(body: ReadableStream<Uint8Array>, id: string, resumed: boolean): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let held = NOTHING;
  const notice = (reason?: string): Uint8Array => {
    const params: JsonObject = { requestId: id };
    if (reason !== undefined) params.reason = reason;
    if (resumed) params.resumed = true;
    const message = JSON.stringify({ jsonrpc: '2.0', method: STREAM_ENDED, params });
    return UTF8.encode(`data: ${message}\n\n`);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller): Promise<void> {
      // Until a whole event has come (or the body ends): each pull gives the reader something.
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          controller.enqueue(notice(error instanceof Error ? `${error.name}: ${error.message}` : String(error)));
          controller.close();
          return;
        }
        if (chunk.done) {
          controller.enqueue(notice());
          controller.close();
          return;
        }
        const bytes = joined(held, chunk.value);
        const whole = completeEvents(bytes);
        held = whole === bytes.length ? NOTHING : bytes.slice(whole);
        if (whole > 0) {
          controller.enqueue(whole === bytes.length ? bytes : bytes.subarray(0, whole));
          return;
        }
      }
    },
    cancel(reason: unknown): Promise<void> {
      return reader.cancel(reason);
    },
  });
}
