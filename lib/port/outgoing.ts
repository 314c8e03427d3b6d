/**
 * What the library's own outgoing messages carry: request ids of its own (a prefix unique per
 * transport, and a counter), and params with the modern per-request envelope under `_meta` and
 * the `_meta` entries an instrumentation adds. Fresh objects every time, since an in-process
 * server may keep or change what it receives.
 */
import type { JsonObject } from './port.js';
import { isObject } from '../util/json.js';
import { randomHex } from '../util/random.js';

/** Prefix of every request id the library sends; unique per transport, so ids never collide. */
export function idPrefix(): string {
  return `mcp-task-client:${randomHex(4)}:`;
}

/** True when `id` is one the session with `prefix` issued, its counter being at `nextId` now. */
export function issued(id: unknown, prefix: string, nextId: number): boolean {
  // Ids are the prefix (unique per port) and a counter: one issued here is below `nextId`.
  if (typeof id !== 'string' || !id.startsWith(prefix)) return false;
  const rest = id.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) && Number(rest) < nextId;
}

/**
 * A shallow copy of `source`. `Object.assign` onto a fresh literal, because V8 makes adding a key
 * to the copy slow when the copy came from a spread (measured about 0.8 µs per request, nearly
 * all of the port's own time on the extension wire); a spread only when `source` has an own
 * "__proto__" key (from JSON.parse), which assignment would turn into a prototype.
 */
function copyOf(source: JsonObject): JsonObject {
  return Object.hasOwn(source, '__proto__') ? { ...source } : Object.assign({}, source);
}

/**
 * `params` with the modern per-request envelope in its `_meta`. The envelope's keys win over the
 * request's own `_meta` (a caller's `meta`, an instrumentation's entries): the protocol version,
 * client info and capabilities are the library's to declare ([E1]). Fresh objects every time,
 * since an in-process server may keep or change what it receives. With `fresh`, `params` is the
 * caller's own new object, sent once and never read again: the `_meta` goes onto it instead of
 * onto a copy (one object and one copy less per request).
 */
export function withEnvelope(params: JsonObject | undefined, envelope: JsonObject, fresh: boolean): JsonObject {
  const own = params?._meta;
  let meta: JsonObject;
  if (!isObject(own)) meta = copyOf(envelope);
  else if (Object.hasOwn(own, '__proto__')) meta = { ...own, ...envelope };
  else meta = Object.assign(copyOf(own), envelope);
  const body: JsonObject = params === undefined ? {} : fresh ? params : copyOf(params);
  body._meta = meta;
  return body;
}

/** The W3C trace context keys: one trace's, never to be mixed with another's. */
const TRACE_CONTEXT = ['traceparent', 'tracestate'] as const;

/** True when `meta` has any of the W3C trace context keys. */
function hasTraceContext(meta: Readonly<JsonObject>): boolean {
  return TRACE_CONTEXT.some((key) => Object.hasOwn(meta, key));
}

/**
 * `params` with `extra` merged under its `_meta` (the request's own entries win): the entries an
 * instrumentation adds (trace context). The trace context goes as a whole: when the request's own
 * `_meta` has a `traceparent` or a `tracestate`, none of `extra`'s is added, so that a caller's
 * trace never gets another trace's `tracestate`. Fresh objects, as for the envelope.
 */
export function withMeta(params: JsonObject | undefined, extra: Readonly<JsonObject>): JsonObject {
  const own = params?._meta;
  const body: JsonObject = params === undefined ? {} : copyOf(params);
  if (!isObject(own)) {
    body._meta = { ...extra };
    return body;
  }
  let added: Readonly<JsonObject> = extra;
  if (hasTraceContext(own) && hasTraceContext(extra)) {
    const rest: JsonObject = { ...extra };
    delete rest.traceparent;
    delete rest.tracestate;
    added = rest;
  }
  body._meta = { ...added, ...own };
  return body;
}
