/**
 * The bench server in a child process, for the runs with real I/O: the 2025-11-25 server
 * ({@link BenchServer}, the SDK's `McpServer`) or the extension server ({@link ExtBenchServer}),
 * over stdio or Streamable HTTP on 127.0.0.1. Started by `bench/transports.ts`; configured by
 * BENCH_WIRE (`2025` | `ext`), BENCH_TRANSPORT (`stdio` | `http`), BENCH_POLL_INTERVAL and
 * BENCH_NOTIFY.
 *
 * The harness drives it out of band, so its own messages never touch the measured connection: a
 * control socket on 127.0.0.1 (one JSON line per request: `{op}` with `reset`, `release`, `stats`,
 * `clock`), whose address is the first stderr line, `BENCH_CONTROL tcp://127.0.0.1:<port>`. Over HTTP the MCP endpoint follows on the
 * next line, `BENCH_MCP <url>`. Nothing but MCP messages is written to stdout.
 *
 * The 2025 HTTP server is the SDK's stateful `StreamableHTTPServerTransport` (one session; task
 * status notifications go out on the GET stream). The extension server speaks the sessionless
 * 2026-07-28 shape: one JSON-RPC message per POST, answered with `application/json`, except
 * `subscriptions/listen`, answered with an event stream that carries the acknowledgement and the
 * `notifications/tasks` until the client cancels it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import { ExtBenchServer, type ExtLink } from './ext-server.js';
import { BenchServer, type ServerCore } from './server.js';
import { now } from './stats.js';

const wire = process.env.BENCH_WIRE === 'ext' ? 'ext' : '2025';
const transport = process.env.BENCH_TRANSPORT === 'http' ? 'http' : 'stdio';
const options = {
  pollInterval: Number(process.env.BENCH_POLL_INTERVAL ?? 1000),
  notify: process.env.BENCH_NOTIFY !== '0',
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const http = createServer(handler);
  http.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/**
 * The out-of-band control endpoint: a plain TCP socket carrying one JSON request per line, each
 * answered by one JSON line (no HTTP client in the measured process).
 */
async function control(core: ServerCore): Promise<string> {
  const server = createNetServer((socket) => {
    createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
      const { op, gate } = JSON.parse(line) as { op: string; gate?: boolean };
      let body: unknown = {};
      if (op === 'reset') core.reset(gate === true);
      else if (op === 'release') core.release();
      else if (op === 'stats') body = core.stats();
      else if (op === 'clock') body = { now: now() };
      socket.write(`${JSON.stringify(body)}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The 2025-11-25 server over the SDK's Streamable HTTP server transport (one stateful session). */
async function legacyHttp(bench: BenchServer): Promise<string> {
  const server = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await bench.connect(server);
  return `${await listen((req, res) => void server.handleRequest(req, res))}/mcp`;
}

/** The extension server over sessionless Streamable HTTP. */
async function extHttp(ext: ExtBenchServer): Promise<string> {
  const url = await listen((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    void readBody(req).then((text) => {
      const message = JSON.parse(text) as { id?: string | number; method?: string };
      if (message.id === undefined) {
        ext.receive(message, { send: () => {} });
        res.writeHead(202).end();
        return;
      }
      let streaming = false;
      let done = false;
      const link: ExtLink = {
        send: (out) => {
          if (done) return;
          const final = out.id === message.id && out.method === undefined;
          if (final && !streaming) {
            done = true;
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
            return;
          }
          if (!streaming) {
            streaming = true;
            res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          }
          res.write(`event: message\ndata: ${JSON.stringify(out)}\n\n`);
          if (final) {
            done = true;
            res.end();
          }
        },
        onAnswered: () => {
          // A cancelled subscription: its stream ends without a response.
          if (done || !streaming) return;
          done = true;
          res.end();
        },
      };
      res.on('close', () => {
        if (!done) ext.detach(link);
      });
      ext.receive(message, link);
    });
  });
  return `${url}/mcp`;
}

function extStdio(ext: ExtBenchServer): void {
  const link: ExtLink = { send: (message) => void process.stdout.write(`${JSON.stringify(message)}\n`) };
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line.trim() !== '') ext.receive(JSON.parse(line), link);
  });
}

const core = wire === 'ext' ? new ExtBenchServer(options) : new BenchServer(options);
const controlUrl = await control(core);
process.stderr.write(`BENCH_CONTROL ${controlUrl}\n`);
if (transport === 'http') {
  const mcpUrl = core instanceof BenchServer ? await legacyHttp(core) : await extHttp(core);
  process.stderr.write(`BENCH_MCP ${mcpUrl}\n`);
  // The harness holds our stdin: when it goes away, so do we.
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
} else {
  if (core instanceof BenchServer) await core.connect(new StdioServerTransport());
  else extStdio(core);
  process.stdin.on('end', () => process.exit(0));
}
