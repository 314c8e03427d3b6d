/**
 * The extension example server (examples/ext-server.ts, `ExtExampleServer`) on real transports,
 * recording every message it receives, so a test can tell what the server saw (a `tasks/cancel`):
 *
 * - over stdio, as a child process: `node --import tsx spec/ai/ext-example-host.ts`, with
 *   `EXT_STEP_MS` (time between two steps) and `EXT_LOG` (a file that gets one line per received
 *   request: its method);
 * - over Streamable HTTP on 127.0.0.1, in process ({@link startExtExampleHttp}): each POSTed
 *   request is answered with JSON, except `subscriptions/listen`, whose answer is an SSE stream
 *   that carries the subscription's notifications until the client closes it (the example server
 *   is then told, as on stdio, with `notifications/cancelled`).
 */
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { ExtExampleServer, type ExtExampleOptions } from '../../examples/ext-server.js';

type Json = Record<string, unknown>;
type RequestId = string | number;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number';
}

/** A running HTTP host. */
export interface ExtExampleHttp {
  /** The endpoint. */
  readonly url: URL;
  /** Every message the server received, in order. */
  readonly received: Json[];
  /** Ends the open streams and stops listening. */
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Serves a new `ExtExampleServer` over Streamable HTTP on 127.0.0.1 (an ephemeral port). */
export async function startExtExampleHttp(options: ExtExampleOptions = {}): Promise<ExtExampleHttp> {
  const received: Json[] = [];
  const answers = new Map<RequestId, (message: Json) => void>();
  const streams = new Map<RequestId, ServerResponse>();
  const server = new ExtExampleServer((message) => {
    // A response goes to the POST that asked; a notification to the stream of its subscription.
    if (message.method === undefined && isId(message.id)) return answers.get(message.id)?.(message);
    const meta = isObject(message.params) && isObject(message.params._meta) ? message.params._meta : {};
    const stream = isId(meta[SUBSCRIPTION_ID]) ? streams.get(meta[SUBSCRIPTION_ID]) : undefined;
    stream?.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }, options);

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const message = JSON.parse(await readBody(req)) as unknown;
    if (!isObject(message)) return void res.writeHead(400).end();
    received.push(message);
    const id = message.id;
    if (!isId(id)) {
      server.receive(message);
      return void res.writeHead(202).end();
    }
    if (message.method === 'subscriptions/listen') {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      streams.set(id, res);
      res.on('close', () => {
        streams.delete(id);
        server.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
      });
      server.receive(message);
      return;
    }
    const answer = new Promise<Json>((resolve) => answers.set(id, resolve));
    server.receive(message);
    const reply = await answer;
    answers.delete(id);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  };
  const http = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    received,
    close: async () => {
      for (const stream of streams.values()) stream.end();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Serves a new `ExtExampleServer` on stdin/stdout, logging each received request's method to `log`. */
function serveStdio(options: ExtExampleOptions, log: string | undefined): void {
  const server = new ExtExampleServer((message) => process.stdout.write(`${JSON.stringify(message)}\n`), options);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    const message = JSON.parse(line) as unknown;
    if (!isObject(message)) return;
    if (log !== undefined && typeof message.method === 'string' && isId(message.id))
      appendFileSync(log, `${message.method}\n`);
    server.receive(message);
  });
  lines.on('close', () => process.exit(0));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  serveStdio({ stepMs: Number(process.env.EXT_STEP_MS ?? 100) }, process.env.EXT_LOG);
}
