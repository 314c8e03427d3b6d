/**
 * The example task server over Streamable HTTP on 127.0.0.1 (an ephemeral port): one McpServer
 * and transport per session, as a real deployment would run it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import {
  StreamableHTTPServerTransport,
  type StreamableHTTPServerTransportOptions,
} from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';

/** A running HTTP server. */
export interface HttpTaskServer {
  readonly url: URL;
  /**
   * Forgets every session, as a restarted server would: requests naming an old session id get
   * HTTP 404, and a new `initialize` opens a new session.
   */
  dropSessions(): Promise<void>;
  /** Closes every session and the listener. */
  close(): Promise<void>;
}

/**
 * Decides, per POSTed JSON-RPC message, to answer with an HTTP error status instead of serving it
 * (e.g. 503 for a few `tasks/get`), or never to answer it (`'silent'`: a hung or stopped server
 * that still accepts connections), to test HTTP faults.
 */
export type HttpIntercept = (message: { method?: string; id?: unknown }) => number | 'silent' | undefined;

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    req.on('error', reject);
  });
}

/**
 * Starts the example server (or `make()`'s server) over Streamable HTTP. `transportOptions` go to
 * each session's server transport (an event store makes its streams resumable).
 */
export async function startHttpServer(
  options: ExampleServerOptions = {},
  make: () => { server: McpServer; cleanup(): void } = () => {
    const { server, store } = createExampleServer(options);
    return { server, cleanup: () => store.cleanup() };
  },
  intercept?: HttpIntercept,
  transportOptions: Pick<StreamableHTTPServerTransportOptions, 'eventStore' | 'retryInterval'> = {},
): Promise<HttpTaskServer> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; cleanup(): void }>();
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let session = typeof sid === 'string' ? sessions.get(sid) : undefined;
      let fresh = false;
      if (session === undefined) {
        fresh = true;
        if (req.method !== 'POST' || sid !== undefined) {
          res.writeHead(sid === undefined ? 400 : 404).end();
          return;
        }
        const made = make();
        const cleanup = (): void => made.cleanup();
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          ...transportOptions,
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, { transport, cleanup });
          },
        });
        session = { transport, cleanup };
        await made.server.connect(transport);
      }
      let body: unknown;
      if (intercept !== undefined && req.method === 'POST') {
        body = await readBody(req);
        const status = Array.isArray(body) ? undefined : intercept(body as { method?: string; id?: unknown });
        if (status === 'silent') return;
        if (status !== undefined) {
          res.writeHead(status, { 'content-type': 'text/plain' }).end(`injected ${status}`);
          return;
        }
      }
      await session.transport.handleRequest(req, res, body);
      // A first POST that opened no session (SDK v2's `server/discover` probe under automatic era
      // negotiation, which this legacy server refuses with 400): drop its server at once.
      if (fresh && session.transport.sessionId === undefined) {
        await session.transport.close();
        session.cleanup();
      }
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const dropSessions = async (): Promise<void> => {
    const old = [...sessions.values()];
    sessions.clear();
    for (const session of old) {
      await session.transport.close();
      session.cleanup();
    }
  };
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    dropSessions,
    close: async () => {
      for (const session of sessions.values()) {
        await session.transport.close();
        session.cleanup();
      }
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * An HTTP server on 127.0.0.1 that takes every request and never answers it (a hung server that
 * still accepts connections), at `url` (`/mcp` on its ephemeral port). `close` ends its
 * connections and the listener.
 */
export async function silentHttpServer(): Promise<{ readonly url: URL; close(): Promise<void> }> {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: () =>
      new Promise<void>((resolve) => {
        silent.closeAllConnections();
        silent.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 nothing listens on (it was free a moment ago): a connection to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
