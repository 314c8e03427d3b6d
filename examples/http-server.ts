/**
 * The example task server over Streamable HTTP: `npx tsx examples/http-server.ts` listens on
 * http://127.0.0.1:3000/mcp (`PORT` to change it). One server and transport per session, as a
 * real deployment runs them; a request naming a session this process does not know gets HTTP 404.
 * Tasks belong to the session that created them (the SDK's task store keeps them per session).
 * It sends the CORS headers a web page on another origin needs (examples/cors.ts names them; any
 * origin by default, `CORS_ORIGIN` to allow one only): examples/browser/ uses it from a page.
 *
 * Try it with `npx mcp-task call analyze id=7 --url http://127.0.0.1:3000/mcp`, or the
 * `TaskClient.connect(new StreamableHTTPClientTransport(url))` of docs/getting-started.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import type { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { applyCors } from './cors.js';
import { createExampleServer, type ExampleServerOptions } from './server.js';

/** Options of {@link serveHttp}: the example server's own, the page origin CORS allows, a message tap. */
export interface ServeHttpOptions extends Omit<ExampleServerOptions, 'store'> {
  /** `Access-Control-Allow-Origin`. @defaultValue '*' */
  readonly origin?: string;
  /** Sees every JSON-RPC message a client POSTs, before the server does (to count `tools/call`, say). */
  readonly onMessage?: (message: Record<string, unknown>) => void;
}

/** A running server. */
export interface HttpEndpoint {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: URL;
  /** The status of every task of every session, by task id. */
  statuses(): Promise<Map<string, string>>;
  /** Closes every session and stops listening. */
  close(): Promise<void>;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    req.on('error', reject);
  });
}

/** Starts listening on 127.0.0.1:`port` (0: a free port); resolves once it does. */
export async function serveHttp(port: number, options: ServeHttpOptions = {}): Promise<HttpEndpoint> {
  const { origin, onMessage, ...serverOptions } = options;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const stores = new Set<InMemoryTaskStore>();
  const http = createServer((req, res) => {
    if (applyCors(req, res, origin)) return;
    void (async () => {
      // The body is read here (and handed to the transport) so that onMessage sees it.
      let body: unknown;
      if (req.method === 'POST') {
        try {
          body = await readJson(req);
        } catch {
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
          return;
        }
      }
      if (onMessage !== undefined) {
        for (const message of Array.isArray(body) ? (body as unknown[]) : [body]) {
          if (typeof message === 'object' && message !== null) onMessage(message as Record<string, unknown>);
        }
      }
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (transport === undefined) {
        // Only an initialize (a POST without a session id) opens a session.
        if (req.method !== 'POST' || sid !== undefined) {
          res.writeHead(sid === undefined ? 400 : 404).end();
          return;
        }
        const { server, store } = createExampleServer(serverOptions);
        stores.add(store);
        const opened: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, opened);
          },
        });
        opened.onclose = () => {
          if (opened.sessionId !== undefined) sessions.delete(opened.sessionId);
          store.cleanup();
          stores.delete(store);
        };
        await server.connect(opened);
        transport = opened;
      }
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const { port: bound } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${bound}/mcp`),
    statuses: async () => {
      const out = new Map<string, string>();
      for (const store of stores) {
        let cursor: string | undefined;
        do {
          const page = await store.listTasks(cursor);
          for (const task of page.tasks) out.set(task.taskId, task.status);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
      }
      return out;
    },
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  await serveHttp(port, { origin: process.env.CORS_ORIGIN });
  console.error(`example task server on http://127.0.0.1:${port}/mcp`);
}
