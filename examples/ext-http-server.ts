/**
 * The tasks-extension example server (examples/ext-server.ts) over Streamable HTTP, in the
 * sessionless 2026-07-28 shape: one POST endpoint, one JSON-RPC message per POST; a request is
 * answered with `application/json`, a notification with `202`; `subscriptions/listen` is answered
 * with an event stream that stays open and carries its acknowledgement and `notifications/tasks`
 * (closing that stream ends the subscription). No sessions: every client sees every task.
 *
 *     npx tsx examples/ext-http-server.ts     # http://127.0.0.1:3001/mcp (PORT, EXT_STEP_MS)
 *     npm run cli -- call analyze id=7 --url http://127.0.0.1:3001/mcp
 *
 * It sends the CORS headers a web page on another origin needs (examples/cors.ts names them; any
 * origin by default, `CORS_ORIGIN` to allow one only): examples/browser/ uses it from a page.
 *
 * One {@link ExtExampleServer} serves every client. Request ids are rewritten on the way in (two
 * clients may both send id 1) and back on the way out.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { applyCors } from './cors.js';
import { ExtExampleServer, type ExtExampleOptions } from './ext-server.js';

type Json = Record<string, unknown>;
type RequestId = string | number;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** Options of {@link serveExtHttp}. */
export interface ExtHttpOptions extends ExtExampleOptions {
  /** Port on 127.0.0.1. @defaultValue 0 (a free one) */
  readonly port?: number;
  /** `Access-Control-Allow-Origin`. @defaultValue '*' */
  readonly origin?: string;
  /** Sees every JSON-RPC message a client sent, before the server does (to count `tools/call`, say). */
  readonly onMessage?: (message: Json) => void;
}

/** A running endpoint. */
export interface ExtHttpEndpoint {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: URL;
  /** The status of every task the server created, by id, as `tasks/get` reads it now. */
  statuses(): Map<string, string>;
  /** Ends open streams and stops listening. */
  close(): Promise<void>;
}

/** Where a message the server sends goes: the HTTP response of a request, or a listen's stream. */
interface Pending {
  readonly clientId: RequestId;
  readonly res: ServerResponse;
  readonly listen: boolean;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts the example extension server on 127.0.0.1; resolves once it listens. */
export async function serveExtHttp(options: ExtHttpOptions = {}): Promise<ExtHttpEndpoint> {
  const pending = new Map<string, Pending>();
  const created = new Set<string>();
  let next = 0;
  /** Answers of requests this module sends itself (the status reads). */
  const own = new Map<string, (message: Json) => void>();

  const route = (message: Json): void => {
    const meta = isObject(message.params) && isObject(message.params._meta) ? message.params._meta : undefined;
    const internal = message.method === undefined ? message.id : meta?.[SUBSCRIPTION_ID];
    if (typeof internal !== 'string') return;
    const mine = own.get(internal);
    if (mine !== undefined) {
      own.delete(internal);
      mine(message);
      return;
    }
    const target = pending.get(internal);
    if (target === undefined) return;
    if (message.method === undefined) {
      // The answer of a request: JSON, with the client's id back.
      pending.delete(internal);
      const result = isObject(message.result) ? message.result : undefined;
      if (result?.resultType === 'task' && typeof result.taskId === 'string') created.add(result.taskId);
      const body = JSON.stringify({ ...message, id: target.clientId });
      target.res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    // A notification of a subscription: onto its stream, naming the client's listen id.
    const params = { ...(message.params as Json), _meta: { ...meta, [SUBSCRIPTION_ID]: target.clientId } };
    target.res.write(`event: message\ndata: ${JSON.stringify({ ...message, params })}\n\n`);
  };
  const server = new ExtExampleServer(route, options);

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') return void res.writeHead(404).end();
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    let message: unknown;
    try {
      message = JSON.parse(await readBody(req));
    } catch {
      return void res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    }
    if (!isObject(message) || typeof message.method !== 'string') return void res.writeHead(400).end();
    options.onMessage?.(message);
    const clientId = message.id;
    if (clientId === undefined) {
      server.receive(message);
      return void res.writeHead(202).end();
    }
    if (typeof clientId !== 'string' && typeof clientId !== 'number') return void res.writeHead(400).end();
    const internal = `h${++next}`;
    const listen = message.method === 'subscriptions/listen';
    pending.set(internal, { clientId, res, listen });
    if (listen)
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
    res.on('close', () => {
      if (!pending.delete(internal) || !listen) return;
      // Closing a listen's stream ends its subscription.
      server.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: internal } });
    });
    server.receive({ ...message, id: internal });
  };

  const http = createServer((req, res) => {
    if (applyCors(req, res, options.origin)) return;
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    statuses: () => {
      const out = new Map<string, string>();
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      };
      for (const taskId of created) {
        const id = `own${++next}`;
        // The server answers tasks/get at once, inside receive().
        own.set(id, (answer) => {
          const status = isObject(answer.result) ? answer.result.status : undefined;
          out.set(taskId, typeof status === 'string' ? status : 'unknown');
        });
        server.receive({ jsonrpc: '2.0', id, method: 'tasks/get', params: { taskId, _meta: envelope } });
        own.delete(id);
      }
      return out;
    },
    close: async () => {
      for (const { res, listen } of pending.values()) if (listen) res.end();
      pending.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const endpoint = await serveExtHttp({
    port: Number(process.env.PORT ?? 3001),
    stepMs: Number(process.env.EXT_STEP_MS ?? 500),
    origin: process.env.CORS_ORIGIN,
  });
  console.error(`tasks-extension example server on ${endpoint.url.href}`);
}
