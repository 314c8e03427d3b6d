/**
 * The example task server over Streamable HTTP: `npx tsx examples/http-server.ts` listens on
 * http://127.0.0.1:3000/mcp (`PORT` to change it). One server and transport per session, as a
 * real deployment runs them; a request naming a session this process does not know gets HTTP 404.
 *
 * Try it with `npx mcp-task call analyze id=7 --url http://127.0.0.1:3000/mcp`, or the
 * `TaskClient.connect(new StreamableHTTPClientTransport(url))` of docs/getting-started.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createExampleServer } from './server.js';

/** Starts listening on 127.0.0.1:`port`; resolves once it does. */
export async function serveHttp(port: number): Promise<{ close(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (transport === undefined) {
        // Only an initialize (a POST without a session id) opens a session.
        if (req.method !== 'POST' || sid !== undefined) {
          res.writeHead(sid === undefined ? 400 : 404).end();
          return;
        }
        const { server, store } = createExampleServer();
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
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  await serveHttp(port);
  console.error(`example task server on http://127.0.0.1:${port}/mcp`);
}
