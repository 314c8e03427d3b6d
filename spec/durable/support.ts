/**
 * Real parts for the durable-queue suites: a throwaway `redis-server` per test file (a free port on
 * 127.0.0.1, no persistence, its own directory), the example workers as separate Node processes
 * (examples/durable/worker.ts, killed with SIGKILL when a test says so), and BullMQ queues.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents, type Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { pendingQuestions, type PendingQuestion } from '../../lib/bullmq/index.js';
import type { TaskReference } from '../../lib/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `_meta` key that ties a server's request to its task (2025-11-25). */
export const RELATED = 'io.modelcontextprotocol/related-task';

/** The question the scripted servers of the control-channel specs ask. */
export const PUBLISH_QUESTION = {
  message: 'Publish the report?',
  requestedSchema: { type: 'object', properties: { who: { type: 'string' } } },
} as const;

/** Whether a `redis-server` binary is on the PATH (the suites skip, saying so, when it is not). */
export const REDIS_AVAILABLE = spawnSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' }).status === 0;

/** Why the suites are skipped, for the skipped test's title. */
export const NO_REDIS = 'SKIPPED: redis-server is not installed (apt-get install -y redis-server; .ci/run installs it)';

/**
 * Without redis-server, a suite's one test that says so (on stderr, which `npm test` shows) and
 * skips; `describe.skipIf(!REDIS_AVAILABLE)` skips the real ones.
 */
export function skipWithoutRedis(suite: string): void {
  if (REDIS_AVAILABLE) return;
  describe(suite, () => {
    it('needs redis-server', (context) => {
      console.warn(`${suite}: ${NO_REDIS}`);
      context.skip(NO_REDIS);
    });
  });
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** One raw command (inline protocol) to the Redis on `port`; its first reply line. */
function redisCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let reply = '';
    socket.setTimeout(2_000, () => socket.destroy(new Error('redis: no answer')));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) {
        socket.end();
        resolve(reply.split('\r\n')[0] ?? '');
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(reply.split('\r\n')[0] ?? ''));
    socket.connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
  });
}

/** A running `redis-server`. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** BullMQ connection options for it. */
  readonly connection: { readonly host: string; readonly port: number; readonly maxRetriesPerRequest: null };
  /** Sum of the calls of every command since the last {@link RedisServer.resetStats} (`INFO commandstats`). */
  commands(): Promise<number>;
  /** Resets the command counters (`CONFIG RESETSTAT`). */
  resetStats(): Promise<void>;
  /**
   * Stops it with a snapshot (`SHUTDOWN SAVE`), waits `downMs`, and starts it again on the same
   * port and directory: the data comes back, every connection was cut. With `keepData: false` it
   * stops without one (`SHUTDOWN NOSAVE`, the snapshot removed): it comes back empty.
   */
  restart(downMs: number, options?: { readonly keepData?: boolean }): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 200; i += 1) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if ((await redisCommand(port, 'PING').catch(() => '')) === '+PONG') return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('redis-server did not answer PING');
}

/** Starts a throwaway `redis-server` on a free port. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-durable-redis-'));
  let child = await launch(port, dir);
  const exited = (process: ChildProcess): Promise<void> =>
    process.exitCode !== null ? Promise.resolve() : new Promise((resolve) => process.once('exit', () => resolve()));
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
    commands: async () => {
      const info = await new Promise<string>((resolve, reject) => {
        const socket = new Socket();
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          const header = /^\$(\d+)\r\n/.exec(text);
          if (header !== null && Buffer.byteLength(text) >= header[0].length + Number(header[1])) {
            socket.end();
            resolve(text);
          }
        });
        socket.on('error', reject);
        socket.connect(port, '127.0.0.1', () => socket.write('INFO commandstats\r\n'));
      });
      let total = 0;
      for (const match of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm))
        if (match[1] !== 'info') total += Number(match[2]);
      return total;
    },
    resetStats: async () => {
      await redisCommand(port, 'CONFIG RESETSTAT');
    },
    restart: async (downMs, options = {}) => {
      const keep = options.keepData !== false;
      await redisCommand(port, keep ? 'SHUTDOWN SAVE' : 'SHUTDOWN NOSAVE').catch(() => '');
      await exited(child);
      if (!keep) rmSync(path.join(dir, 'dump.rdb'), { force: true });
      await new Promise((resolve) => setTimeout(resolve, downMs));
      child = await launch(port, dir);
    },
    stop: async () => {
      child.kill('SIGKILL');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One JSON line a worker printed. */
export type WorkerLine = Record<string, unknown> & {
  readonly event: string;
  readonly jobId?: string;
  readonly taskId?: string;
};

/** What a durable suite's shared set-up gives it (see {@link useRedis}). */
export interface RedisSuite {
  /** The suite's Redis server: usable in its tests and hooks (it starts before the first test). */
  readonly redis: RedisServer;
  /** Run after each test, the last added first (a failing one fails that test). */
  readonly cleanups: Array<() => Promise<unknown>>;
}

/** Options of {@link useRedis}. */
export interface RedisSuiteOptions {
  /** More set-up, once Redis runs (an MCP server the suite's workers share, say). */
  readonly setup?: () => Promise<unknown>;
  /** More teardown, after the worker processes were killed and before Redis stops. */
  readonly teardown?: () => Promise<unknown>;
}

/**
 * The Redis set-up every durable suite shares; call it at the top of its `describe`. A throwaway
 * `redis-server` starts before the suite's tests (then `options.setup`); after each test its
 * `cleanups` run, the last added first; after the last one, every worker process still running is
 * killed, `options.teardown` runs, and Redis stops.
 */
export function useRedis(options: RedisSuiteOptions = {}): RedisSuite {
  let server: RedisServer | undefined;
  const started = (): RedisServer => {
    if (server === undefined) throw new Error('Redis is not started yet: use it in a test or a hook');
    return server;
  };
  // Read when used: the server starts in beforeAll, after the suite was collected.
  const redis: RedisServer = {
    get port() {
      return started().port;
    },
    get url() {
      return started().url;
    },
    get connection() {
      return started().connection;
    },
    commands: () => started().commands(),
    resetStats: () => started().resetStats(),
    restart: (downMs, restartOptions) => started().restart(downMs, restartOptions),
    stop: () => started().stop(),
  };
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    server = await startRedis();
    await options.setup?.();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await killWorkers();
    await options.teardown?.();
    await server?.stop();
  });
  return { redis, cleanups };
}

/** A worker process (examples/durable/worker.ts) and what it printed. */
export interface WorkerProcess {
  readonly pid: number;
  readonly lines: WorkerLine[];
  readonly stderr: string[];
  /** Resolves once it printed "worker ready". */
  readonly ready: Promise<void>;
  /** Kills it with SIGKILL; resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (it hands its jobs back and exits); resolves once it is gone. */
  stop(): Promise<void>;
}

/** Options of {@link startWorker}: the worker's flags. */
export interface WorkerOptions {
  readonly redis: string;
  readonly url?: string;
  readonly stdio?: string;
  readonly queue: string;
  readonly concurrency?: number;
  readonly lockDuration?: number;
  readonly stalledInterval?: number;
  readonly controlPoll?: number;
}

const running = new Set<ChildProcess>();

/** Starts examples/durable/worker.ts as its own Node process (no npx wrapper: SIGKILL hits the worker itself). */
export function startWorker(options: WorkerOptions): WorkerProcess {
  const args = [
    '--import',
    'tsx',
    path.join(ROOT, 'examples/durable/worker.ts'),
    '--redis',
    options.redis,
    '--queue',
    options.queue,
  ];
  if (options.url !== undefined) args.push('--url', options.url);
  if (options.stdio !== undefined) args.push('--stdio', options.stdio);
  args.push('--concurrency', String(options.concurrency ?? 10));
  args.push(
    '--lock-duration',
    String(options.lockDuration ?? 2_000),
    '--stalled-interval',
    String(options.stalledInterval ?? 1_000),
  );
  args.push('--control-poll', String(options.controlPoll ?? 100));
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const lines: WorkerLine[] = [];
  const stderr: string[] = [];
  let ready!: () => void;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as WorkerLine);
    } catch {
      stderr.push(`(stdout) ${line}`);
    }
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr.push(line);
    if (line.startsWith('worker ready')) ready();
  });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void gone.then(() => running.delete(child));
  return {
    pid: child.pid ?? -1,
    lines,
    stderr,
    ready: Promise.race([
      readyPromise,
      gone.then(() => Promise.reject(new Error(`worker exited early: ${stderr.join('\n')}`))),
    ]),
    kill: async () => {
      child.kill('SIGKILL');
      await gone;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** Kills every worker process still running (afterAll). */
export async function killWorkers(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** A queue and its events on `redis`, with a fresh name. */
export async function openQueue(
  redis: RedisServer,
  name: string,
): Promise<{ queue: Queue; events: QueueEvents; close: () => Promise<void> }> {
  const queue = new Queue(name, { connection: redis.connection });
  const events = new QueueEvents(name, { connection: redis.connection });
  // Connection errors while a test restarts Redis: ioredis reconnects; nothing to report.
  queue.on('error', () => {});
  events.on('error', () => {});
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  return {
    queue,
    events,
    close: async () => {
      await events.close();
      await queue.close();
    },
  };
}

/** Counts the JSON-RPC requests a server received, by method. */
export class MethodCounter {
  readonly counts = new Map<string, number>();
  /** The `onMessage` hook of the example servers. */
  readonly onMessage = (message: Record<string, unknown>): void => {
    if (typeof message.method === 'string' && message.id !== undefined)
      this.counts.set(message.method, (this.counts.get(message.method) ?? 0) + 1);
  };
  /** How many `method` requests came. */
  count(method: string): number {
    return this.counts.get(method) ?? 0;
  }
}

/** Waits until `check` resolves true (polled every 50 ms), or fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits until job `jobId` shows `count` pending questions (read from the job as a dashboard
 * would), and returns them; fails after `timeoutMs`, naming `what`.
 */
export async function questionsOn(
  queue: Queue,
  jobId: string,
  what = 'the question on the job',
  count = 1,
  timeoutMs = 30_000,
): Promise<PendingQuestion[]> {
  let asked: PendingQuestion[] = [];
  await eventually(
    async () => {
      const job = await queue.getJob(jobId);
      asked = job === undefined ? [] : pendingQuestions(job);
      return asked.length === count;
    },
    timeoutMs,
    what,
  );
  return asked;
}

/** A TCP proxy on 127.0.0.1 to `targetPort` that a test can take down (connections cut, refused) and bring back. */
export async function startProxy(
  targetPort: number,
): Promise<{ port: number; down(): Promise<void>; up(): Promise<void>; close(): Promise<void> }> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const make = () =>
    createServer((client) => {
      const upstream = new Socket();
      sockets.add(client).add(upstream);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      upstream.connect(targetPort, '127.0.0.1', () => {
        client.pipe(upstream);
        upstream.pipe(client);
      });
    });
  let server = make();
  const listen = (): Promise<void> => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const down = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen();
  return {
    port,
    down,
    up: async () => {
      server = make();
      await listen();
    },
    close: async () => {
      if (server.listening) await down();
    },
  };
}

/** Waits until `job` is completed or failed (at most `timeoutMs`), and returns it read again. */
export async function finished(queue: Queue, job: Job, timeoutMs = 30_000): Promise<Job> {
  await eventually(
    async () => ['completed', 'failed'].includes(await job.getState()),
    timeoutMs,
    `job ${job.id} to finish`,
  );
  return (await queue.getJob(job.id!))!;
}

/**
 * The reference a worker stores for `task`, a task of the scripted 2025-11-25 server
 * (spec/support/scripted-server.ts) running tool `job`: what a job holds once its worker died or
 * handed it back.
 */
export function scriptedReference(task: { taskId?: unknown; createdAt?: unknown }): TaskReference {
  return {
    v: 2,
    taskId: String(task.taskId),
    toolName: 'job',
    createdAt: String(task.createdAt),
    ttl: 60_000,
    server: 'scripted-server@1.0.0',
    wire: '2025-11-25',
    capabilities: { cancel: true, list: true },
  };
}
