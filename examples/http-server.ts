/**
 * The example task server over Streamable HTTP: `npx tsx examples/http-server.ts` listens on
 * http://127.0.0.1:3000/mcp (`PORT` to change it). One server and transport per session, as a
 * real deployment runs them; a request naming a session this process does not know gets HTTP 404.
 * It sends the CORS headers a web page on another origin needs (examples/cors.ts names them; any
 * origin by default, `CORS_ORIGIN` to allow one only): examples/browser/ uses it from a page.
 *
 * Try it with `npx mcp-task call analyze id=7 --url http://127.0.0.1:3000/mcp`, or the
 * `TaskClient.connect(new StreamableHTTPClientTransport(url))` of docs/getting-started.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { applyCors } from './cors.js';
import { createExampleServer, type ExampleServerOptions } from './server.js';

/** Options of {@link serveHttp}: the example server's own, and the page origin CORS allows. */
export interface ServeHttpOptions extends Omit<ExampleServerOptions, 'store'> {
  /** `Access-Control-Allow-Origin`. @defaultValue '*' */
  readonly origin?: string;
}

/** Starts listening on 127.0.0.1:`port` (0: any free port); resolves once it does. */
export async function serveHttp(port: number, options: ServeHttpOptions = {}): Promise<{ readonly url: URL; close(): Promise<void> }> {
  const { origin, ...serverOptions } = options;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    if (applyCors(req, res, origin)) return;
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (transport === undefined) {
        // Only an initialize (a POST without a session id) opens a session.
        if (req.method !== 'POST' || sid !== undefined) {
          res.writeHead(sid === undefined ? 400 : 404).end();
          return;
        }
        const { server, store } = createExampleServer(serverOptions);
        const opened: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, opened);
          },
        });
        opened.onclose = () => {
          if (opened.sessionId !== undefined) sessions.delete(opened.sessionId);
          store.cleanup();
        };
        await server.connect(opened);
        transport = opened;
      }
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { url } = await serveHttp(Number(process.env.PORT ?? 3000), { origin: process.env.CORS_ORIGIN });
  console.error(`example task server on ${url.href}`);
}
