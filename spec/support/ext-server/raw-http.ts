/**
 * Raw Streamable HTTP calls for tests (plain `fetch`, no SDK), with full control of the SEP-2243
 * headers: {@link standardHeaders} derives them from a message, {@link postMessage} sends one POST
 * and reads a JSON or SSE answer, {@link openStream} keeps an SSE answer (a `subscriptions/listen`)
 * open and collects its events.
 */
import { isObject, META, type Json } from './wire.js';

/** One POST's outcome. */
export interface HttpReply {
  readonly status: number;
  readonly contentType: string;
  /** Every JSON-RPC message in the body (one for JSON, each event for SSE). */
  readonly messages: readonly Json[];
  /** The last message carrying an `id` (the response), if any. */
  readonly response: Json | undefined;
}

/** The headers a conforming client sends for `message`: version, method and (where defined) name. */
export function standardHeaders(message: Json): Record<string, string> {
  const params = isObject(message.params) ? message.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  const version = meta[META.protocolVersion];
  if (typeof version === 'string') headers['mcp-protocol-version'] = version;
  if (typeof message.method === 'string') headers['mcp-method'] = message.method;
  const method = String(message.method);
  const name =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : method.startsWith('tasks/')
          ? params.taskId
          : undefined;
  if (typeof name === 'string')
    headers['mcp-name'] =
      /^[\x20-\x7e]*$/.test(name) && name.trim() === name ? name : `=?base64?${Buffer.from(name).toString('base64')}?=`;
  return headers;
}

function parseEvents(text: string): Json[] {
  const out: Json[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data !== '') out.push(JSON.parse(data) as Json);
  }
  return out;
}

/** POSTs `message` with the standard headers (`headers` override them; a `null` value removes one). */
export async function postMessage(
  url: URL,
  message: Json,
  headers: Readonly<Record<string, string | null>> = {},
  method = 'POST',
): Promise<HttpReply> {
  const merged: Record<string, string> = standardHeaders(message);
  for (const [name, value] of Object.entries(headers)) {
    if (value === null) delete merged[name.toLowerCase()];
    else merged[name.toLowerCase()] = value;
  }
  const res = await fetch(url, {
    method,
    headers: merged,
    ...(method === 'POST' ? { body: JSON.stringify(message) } : {}),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const messages =
    text === '' ? [] : contentType.includes('text/event-stream') ? parseEvents(text) : [JSON.parse(text) as Json];
  return {
    status: res.status,
    contentType,
    messages,
    response: [...messages].reverse().find((m) => m.id !== undefined),
  };
}

/** An open SSE answer. */
export interface OpenStream {
  readonly status: number;
  readonly messages: Json[];
  /** Resolves with the first collected message matching `predicate` (waits up to `timeoutMs`). */
  next(predicate: (message: Json) => boolean, timeoutMs?: number): Promise<Json>;
  /** Aborts the request (the server sees the stream close). */
  close(): void;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
}

/** POSTs `message` and keeps reading its SSE answer until the server ends it or `close()`. */
export async function openStream(url: URL, message: Json): Promise<OpenStream> {
  const abort = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    headers: standardHeaders(message),
    body: JSON.stringify(message),
    signal: abort.signal,
  });
  const messages: Json[] = [];
  const waiters = new Set<() => void>();
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        const cut = buffer.lastIndexOf('\n\n');
        if (cut < 0) continue;
        messages.push(...parseEvents(buffer.slice(0, cut)));
        buffer = buffer.slice(cut + 2);
        for (const wake of [...waiters]) wake();
      }
    } catch {
      // aborted by close()
    }
  })();
  return {
    status: res.status,
    messages,
    ended,
    close: () => abort.abort(),
    next: (predicate, timeoutMs = 3_000) =>
      new Promise<Json>((resolve, reject) => {
        const check = (): boolean => {
          const found = messages.find(predicate);
          if (found === undefined) return false;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const wake = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error('no matching SSE message in time'));
        }, timeoutMs);
        waiters.add(wake);
        check();
      }),
  };
}
