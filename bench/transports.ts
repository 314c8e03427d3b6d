/**
 * Connections of one scenario: an SDK client (v1 `@modelcontextprotocol/sdk` or v2
 * `@modelcontextprotocol/client`) connected to a bench server of either wire, in process
 * (linked in-memory pair), over stdio (the server a child process) or over Streamable HTTP (the
 * server a child process on 127.0.0.1). The harness drives the server through {@link ServerSide}:
 * directly in process, through the child's out-of-band control endpoint otherwise
 * (bench/server-main.ts), so its own traffic never touches the measured connection.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect as connectSocket } from 'node:net';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport as V1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ExtBenchServer } from './ext-server.js';
import { BenchServer, type ServerCore, type ServerStats } from './server.js';
import { now } from './stats.js';

/** The SDK major a contender's client comes from. */
export type Sdk = 'v1' | 'v2';
/** Where the server runs and how messages travel. */
export type TransportKind = 'memory' | 'stdio' | 'http';
/** The task wire of the server: MCP 2025-11-25 tasks, or the 2026-07-28 tasks extension. */
export type WireKind = '2025' | 'ext';

/** The server end as the harness sees it. */
export interface ServerSide {
  /** Forgets counts and completions; with `gate`, holds the clock of new tasks until release. */
  reset(gate: boolean): Promise<void>;
  release(): Promise<void>;
  stats(): Promise<ServerStats>;
  /** The server's clock (`stats.now()`), for the offset estimate; undefined in process. */
  clock(): Promise<number> | undefined;
}

/** A connected client and its server. */
export interface BenchConnection {
  readonly sdk: Sdk;
  readonly wire: WireKind;
  readonly transport: TransportKind;
  /** A connected `Client` of `sdk` (a v1 `Client`, or a v2 `Client` in the era the wire needs). */
  readonly client: unknown;
  readonly server: ServerSide;
  close(): Promise<void>;
}

/** What a connection is made of. */
export interface ConnectionSpec {
  readonly sdk: Sdk;
  readonly wire: WireKind;
  readonly transport: TransportKind;
  readonly pollInterval: number;
  readonly notify: boolean;
}

/** Compiled (bench/build.ts), the server runs with plain node; from sources, through tsx. */
const COMPILED = import.meta.url.endsWith('.js');
const SERVER_MAIN = fileURLToPath(new URL(COMPILED ? './server-main.js' : './server-main.ts', import.meta.url));
const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };

interface AnyClient {
  connect(transport: unknown): Promise<void>;
  close(): Promise<void>;
}

async function newClient(spec: ConnectionSpec): Promise<AnyClient> {
  if (spec.sdk === 'v1') return new V1Client(CLIENT_INFO);
  const v2 = await import('@modelcontextprotocol/client');
  // The extension needs the modern era (a server/discover probe); the 2025 server is legacy.
  return new v2.Client(CLIENT_INFO, { versionNegotiation: { mode: spec.wire === 'ext' ? 'auto' : 'legacy' } });
}

function inProcess(core: ServerCore): ServerSide {
  return {
    reset: async (gate) => core.reset(gate),
    release: async () => core.release(),
    stats: async () => core.stats(),
    clock: () => undefined,
  };
}

async function linkedPair(sdk: Sdk): Promise<[Transport, Transport]> {
  if (sdk === 'v1') return V1InMemoryTransport.createLinkedPair();
  const v2 = await import('@modelcontextprotocol/client');
  return v2.InMemoryTransport.createLinkedPair();
}

async function connectMemory(spec: ConnectionSpec): Promise<BenchConnection> {
  const [clientSide, serverSide] = await linkedPair(spec.sdk);
  let core: ServerCore;
  if (spec.wire === '2025') {
    const bench = new BenchServer({ pollInterval: spec.pollInterval, notify: spec.notify });
    await bench.connect(serverSide);
    core = bench;
  } else {
    const ext = new ExtBenchServer({ pollInterval: spec.pollInterval, notify: spec.notify });
    const link = { send: (message: Record<string, unknown>) => void serverSide.send(message as never).catch(() => {}) };
    serverSide.onmessage = (message) => ext.receive(message, link);
    serverSide.onclose = () => ext.detach(link);
    await serverSide.start();
    core = ext;
  }
  const client = await newClient(spec);
  await client.connect(clientSide);
  return {
    ...spec,
    client,
    server: inProcess(core),
    close: async () => {
      await client.close();
      await core.close();
    },
  };
}

/** Reads the child's `BENCH_<KEY> <url>` lines from its stderr; everything else goes to ours. */
function announcements(stderr: Readable, keys: readonly string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const found: Record<string, string> = {};
    const lines = createInterface({ input: stderr, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const match = /^BENCH_([A-Z]+) (\S+)$/.exec(line);
      if (match === null) {
        process.stderr.write(`${line}\n`);
        return;
      }
      found[match[1]!] = match[2]!;
      if (keys.every((key) => found[key] !== undefined)) resolve(found);
    });
    lines.on('close', () => reject(new Error(`bench server exited before announcing ${keys.join(', ')}`)));
  });
}

/** The child's control socket: one JSON line per request, one per answer, one request at a time. */
async function viaControl(address: string): Promise<ServerSide> {
  const { hostname, port } = new URL(address);
  const socket = connectSocket({ host: hostname, port: Number(port) });
  await once(socket, 'connect');
  socket.unref();
  const answers = createInterface({ input: socket, crlfDelay: Infinity })[Symbol.asyncIterator]();
  let queue: Promise<unknown> = Promise.resolve();
  const call = (body: Record<string, unknown>): Promise<unknown> => {
    const next = queue.then(async () => {
      socket.write(`${JSON.stringify(body)}\n`);
      const line = await answers.next();
      if (line.done === true) throw new Error('the bench server closed its control socket');
      return JSON.parse(line.value) as unknown;
    });
    queue = next.catch(() => {});
    return next;
  };
  return {
    reset: async (gate) => void (await call({ op: 'reset', gate })),
    release: async () => void (await call({ op: 'release' })),
    stats: async () => (await call({ op: 'stats' })) as ServerStats,
    clock: async () => ((await call({ op: 'clock' })) as { now: number }).now,
  };
}

function serverEnv(spec: ConnectionSpec): Record<string, string> {
  return {
    ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }),
    BENCH_WIRE: spec.wire,
    BENCH_TRANSPORT: spec.transport,
    BENCH_POLL_INTERVAL: String(spec.pollInterval),
    BENCH_NOTIFY: spec.notify ? '1' : '0',
  };
}

/**
 * The server's own arguments: `--no-warnings`, because under load the SDK's stdio server
 * transport adds a `drain` listener per blocked write and would warn about the server, not a
 * contender.
 */
const SERVER_ARGS = COMPILED ? ['--no-warnings', SERVER_MAIN] : ['--no-warnings', '--import', 'tsx', SERVER_MAIN];

async function connectStdio(spec: ConnectionSpec): Promise<BenchConnection> {
  const parameters = { command: process.execPath, args: SERVER_ARGS, env: serverEnv(spec), stderr: 'pipe' as const };
  let transport: Transport & { stderr: unknown };
  if (spec.sdk === 'v1') transport = new V1StdioTransport(parameters);
  else {
    const v2 = await import('@modelcontextprotocol/client/stdio');
    transport = new v2.StdioClientTransport(parameters);
  }
  const announced = announcements(transport.stderr as Readable, ['CONTROL']);
  const client = await newClient(spec);
  await client.connect(transport);
  const { CONTROL } = await announced;
  return { ...spec, client, server: await viaControl(CONTROL!), close: () => client.close() };
}

async function connectHttp(spec: ConnectionSpec): Promise<BenchConnection> {
  const child: ChildProcess = spawn(process.execPath, SERVER_ARGS, {
    env: serverEnv(spec),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const { CONTROL, MCP } = await announcements(child.stderr!, ['CONTROL', 'MCP']);
  const url = new URL(MCP!);
  let transport: Transport;
  if (spec.sdk === 'v1') transport = new V1HttpTransport(url);
  else {
    const v2 = await import('@modelcontextprotocol/client');
    transport = new v2.StreamableHTTPClientTransport(url);
  }
  const client = await newClient(spec);
  await client.connect(transport);
  return {
    ...spec,
    client,
    server: await viaControl(CONTROL!),
    close: async () => {
      await client.close().catch(() => {});
      child.kill('SIGTERM');
    },
  };
}

/** Connects a client of `spec.sdk` to a fresh bench server of `spec.wire` over `spec.transport`. */
export function connect(spec: ConnectionSpec): Promise<BenchConnection> {
  if (spec.transport === 'memory') return connectMemory(spec);
  return spec.transport === 'stdio' ? connectStdio(spec) : connectHttp(spec);
}

/**
 * Estimates server clock − client clock (best of `rounds` round trips to the control endpoint;
 * the uncertainty is half the best round trip). Null in process (one clock).
 */
export async function clockOffset(
  server: ServerSide,
  rounds = 25,
): Promise<{ offsetMs: number; uncertaintyMs: number } | null> {
  if (server.clock() === undefined) return null;
  let best = { offsetMs: 0, uncertaintyMs: Infinity };
  for (let i = 0; i < rounds; i += 1) {
    const t0 = now();
    const serverNow = await server.clock()!;
    const t1 = now();
    const half = (t1 - t0) / 2;
    if (half < best.uncertaintyMs) best = { offsetMs: serverNow - (t0 + half), uncertaintyMs: half };
  }
  return best;
}
