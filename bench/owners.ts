/**
 * Who owns a function of a profile (bench/profile.ts, bench/calls.ts): the library under test, the
 * SDKs (their transport apart from their request path), zod, Node, the harness, ... by the script's
 * URL and the function's name.
 */

/** Where a function is, as V8's profiles give it. */
export interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
/** The owner name of the library's own code. */
export const LIBRARY = 'library under test (lib)';

/**
 * Functions of the SDKs' transports (framing, serializing, validating each JSON-RPC message), by
 * name: SDK v2 ships one bundle, so the file does not tell them from the request path.
 */
const SDK_TRANSPORT =
  /^(deserializeMessage|serializeMessage|readMessage|processReadBuffer|append|_onData|_onRead|_onResponseStream|_handleSseStream|_send|send|start|close)$|Transport|ReadBuffer|onmessage|^(ondata|onerror)$/;

/**
 * Who owns the code a sample ran in. The SDKs' code is split into their transport (framing and
 * validating each message, paid by every contender) and the rest (the request path: `Protocol`'s
 * request and response maps, result schemas, handlers), which the library's own requests skip.
 */
export function owner(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'garbage collection (main thread)';
  if (url === '')
    return functionName === 'parse' || functionName === 'stringify'
      ? 'JSON (parse, stringify)'
      : 'native (V8 builtins, ...)';
  if (url.includes('/@modelcontextprotocol/ext-tasks/')) return 'ext-tasks';
  if (url.includes('/@modelcontextprotocol/')) {
    const sdk = url.includes('/@modelcontextprotocol/sdk/') ? 'SDK v1' : 'SDK v2';
    const transport = /\/(stdio|inMemory|streamableHttp|sse)\.m?js$/.test(url) || SDK_TRANSPORT.test(functionName);
    return transport
      ? `${sdk} transport (framing, validating each message)`
      : `${sdk} request path (Protocol, its maps, schemas)`;
  }
  if (url.includes('/node_modules/zod/')) return 'zod (schema validation)';
  if (url.includes('/node_modules/')) return `other package (${url.split('/node_modules/').at(-1)!.split('/')[0]})`;
  if (url.startsWith('node:internal/deps/undici')) return 'undici (fetch)';
  if (
    /^node:(net|stream|internal\/stream|internal\/streams\/|internal\/stream_base_commons|internal\/child_process)/.test(
      url,
    )
  )
    return 'Node streams and sockets (transport)';
  if (/^node:(timers|internal\/timers)/.test(url)) return 'Node timers';
  if (url.startsWith('node:')) return 'Node internals (other)';
  if (url.includes('/bench/contenders/')) return 'contender code (bench/contenders)';
  if (url.includes('/bench/')) return 'harness and in-process server (bench)';
  if (url.includes('/lib/')) return LIBRARY;
  return 'other';
}

/** A module of the library (`lib/engine/engine.js`), or the owner of other code (see {@link owner}). */
export function moduleOf(frame: CallFrame): string {
  const who = owner(frame);
  return who === LIBRARY ? where(frame).replace(/:\d+$/, '') : who;
}

/** A short location: `lib/engine/engine.js:12`, or the file's folder and name. */
export function where(frame: CallFrame): string {
  const url = frame.url;
  const short =
    url.includes('/lib/') && !url.includes('node_modules')
      ? `lib/${url.split('/lib/').at(-1)}`
      : url.split('/').slice(-2).join('/');
  return `${short}:${frame.lineNumber + 1}`;
}
