/**
 * The extension example server (examples/ext-server.ts) over Streamable HTTP:
 * `npx tsx examples/ext-http-server.ts` listens on http://127.0.0.1:3001/mcp (`PORT` to change it,
 * `EXT_STEP_MS` for the time between two steps of a task), with the CORS headers a web page on
 * another origin needs (examples/cors.ts; `CORS_ORIGIN` to allow one origin only).
 *
 * The 2026-07-28 era has no sessions: each POSTed request is answered with JSON, except
 * `subscriptions/listen`, whose answer is an event stream carrying the subscription's
 * notifications until the client closes it (the server then drops the subscription).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { applyCors } from './cors.js';
import { ExtExampleServer, type ExtExampleOptions } from './ext-server.js';

type Json = Record<string, unknown>;
type RequestId = string | number;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is RequestId => typeof value === 'string' || typeof value === 'number';

/** Options of {@link serveExtHttp}. */
export interface ServeExtHttpOptions extends ExtExampleOptions {
  /** `Access-Control-Allow-Origin`. @defaultValue '*' */
  readonly origin?: string;
  /** Called with every JSON-RPC message received, before the server handles it. */
  readonly onMessage?: (message: Json) => void;
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(chunk as Uint8Array);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Starts listening on 127.0.0.1:`port` (0: any free port); resolves once it does. */
export async function serveExtHttp(port: number, options: ServeExtHttpOptions = {}): Promise<{ readonly url: URL; close(): Promise<void> }> {
  const { origin, onMessage, ...serverOptions } = options;
  const answers = new Map<RequestId, (message: Json) => void>();
  const streams = new Map<RequestId, ServerResponse>();
  const server = new ExtExampleServer((message) => {
    // A response goes to the POST that asked; a notification to the stream of its subscription.
    if (message.method === undefined && isId(message.id)) return answers.get(message.id)?.(message);
    const meta = isObject(message.params) && isObject(message.params._meta) ? message.params._meta : {};
    const stream = isId(meta[SUBSCRIPTION_ID]) ? streams.get(meta[SUBSCRIPTION_ID]) : undefined;
    stream?.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }, serverOptions);

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST, OPTIONS' }).end();
    const message = await bodyOf(req);
    if (!isObject(message)) {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    }
    onMessage?.(message);
    const id = message.id;
    if (!isId(id) || typeof message.method !== 'string') {
      server.receive(message);
      return void res.writeHead(202).end();
    }
    if (message.method === 'subscriptions/listen') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams.set(id, res);
      res.on('close', () => {
        streams.delete(id);
        server.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
      });
      server.receive(message);
      return;
    }
    const answered = new Promise<Json>((resolve) => answers.set(id, resolve));
    server.receive(message);
    const reply = await answered;
    answers.delete(id);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  };

  const http = createServer((req, res) => {
    if (applyCors(req, res, origin)) return;
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    close: async () => {
      for (const stream of streams.values()) stream.end();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { url } = await serveExtHttp(Number(process.env.PORT ?? 3001), { origin: process.env.CORS_ORIGIN, stepMs: Number(process.env.EXT_STEP_MS ?? 500) });
  console.error(`extension example server on ${url.href}`);
}
