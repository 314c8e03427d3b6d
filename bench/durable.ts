/**
 * The durable-queue row of the benchmark (`npm run bench -- --only durable`, and the end of a full
 * run): what running tool calls as BullMQ jobs (mcp-task-client/bullmq) costs over the plain
 * in-process TaskClient, and how soon a job whose worker died is resumed by another worker.
 *
 * - **Overhead.** On the 2025-11-25 example server over Streamable HTTP (its own process), N short
 *   tasks run through a plain `TaskClient` (one process) and through a BullMQ worker with
 *   `taskProcessor` at its defaults (another process; the harness enqueues the jobs). Per task:
 *   the client process's CPU, Redis commands (`INFO commandstats`, every client: producer and
 *   worker) and the Redis server's own CPU. Each side runs `warmup` tasks unmeasured first.
 * - **Window.** In the same runs, per job: from the `CreateTaskResult` in hand to its reference
 *   stored in Redis, and from the task's `createdAt` to that moment.
 * - **Takeover.** The example worker (examples/durable/worker.ts) takes M long jobs, a second one
 *   waits; the first is killed with SIGKILL; per job, the time from the kill to the second
 *   worker's `resumed` line, for each pair of BullMQ settings (lockDuration, stalledInterval).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { enqueueToolTask } from '../lib/bullmq/index.js';
import { median } from './stats.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Median and spread of some samples. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly p99?: number | undefined;
}

/** What the durable row measured (stored in bench/results.json as `durable`). */
export interface DurableResult {
  readonly generatedAt: string;
  readonly command: string;
  readonly machine: string;
  readonly versions: Record<string, string>;
  /** The task each job runs. */
  readonly task: string;
  readonly n: number;
  readonly warmup: number;
  readonly reps: number;
  /** Client CPU ms per task, one value per repetition. */
  readonly plainCpuMsPerTask: readonly number[];
  readonly durableCpuMsPerTask: readonly number[];
  /** Requests to Redis per task (every client; a script counts once), from one pass under MONITOR. */
  readonly redisRequestsPerTask: readonly number[];
  /** Commands Redis ran per task (those inside BullMQ's scripts included), per repetition. */
  readonly redisCommandsPerTask: readonly number[];
  /** The Redis server's CPU ms per task, per repetition. */
  readonly redisCpuMsPerTask: readonly number[];
  /** Commands per task by name, in the median repetition. */
  readonly commandMix: Readonly<Record<string, number>>;
  /** CreateTaskResult in hand → reference stored, over every measured job. */
  readonly storeMs: Spread;
  /** Task createdAt (the server's clock) → reference stored. */
  readonly windowMs: Spread;
  /** Death of a worker → the resumed wait on another, per BullMQ setting. */
  readonly takeover: ReadonlyArray<{
    readonly lockDurationMs: number;
    readonly stalledIntervalMs: number;
    readonly jobs: number;
    readonly ms: Spread;
  }>;
}

function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: median(sorted),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
    p99: sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))],
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** One command (inline protocol) to Redis; the whole reply, read until `done` says it is complete. */
function redisReply(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let text = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error(`redis: no answer to ${command}`)));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const bulk = /^\$(\d+)\r\n/.exec(text);
      if (
        (bulk === null && text.includes('\r\n')) ||
        (bulk !== null && Buffer.byteLength(text) >= bulk[0].length + Number(bulk[1]))
      ) {
        socket.end();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
  });
}

/** A throwaway redis-server. */
async function startRedis(): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  for (let i = 0; ; i += 1) {
    if ((await redisReply(port, 'PING').catch(() => '')).startsWith('+PONG')) break;
    if (i > 200 || child.exitCode !== null)
      throw new Error('redis-server did not start (is it installed? apt-get install -y redis-server)');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      child.kill('SIGKILL');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The commands run by command name since the last reset (those inside BullMQ's Lua scripts
 * included: Redis counts both alike), and the server's CPU seconds.
 */
async function redisStats(port: number): Promise<{ commands: Map<string, number>; cpuS: number }> {
  const stats = await redisReply(port, 'INFO commandstats');
  const cpu = await redisReply(port, 'INFO cpu');
  const commands = new Map<string, number>();
  for (const match of stats.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
    if (match[1] !== 'info' && match[1] !== 'config|resetstat' && match[1] !== 'config')
      commands.set(match[1]!, Number(match[2]));
  }
  const read = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  return { commands, cpuS: read('used_cpu_user') + read('used_cpu_sys') };
}

/** A child process printing JSON lines. */
function child(args: readonly string[]): {
  proc: ChildProcess;
  next(phase: string, timeoutMs: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
} {
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: proc.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      for (const wake of waiters.splice(0)) wake();
    } catch {
      // not a JSON line
    }
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    next: async (phase, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find((l) => l.phase === phase || l.event === phase);
        if (found !== undefined) {
          lines.splice(lines.indexOf(found), 1);
          return found;
        }
        if (proc.exitCode !== null) throw new Error(`${args.join(' ')} exited (${proc.exitCode}) before "${phase}"`);
        if (Date.now() > deadline) throw new Error(`${args.join(' ')}: no "${phase}" within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    stop: async () => {
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Options of {@link runDurable}. */
export interface DurableOptions {
  readonly n: number;
  readonly warmup: number;
  readonly reps: number;
  /** Long jobs per takeover measurement. */
  readonly takeoverJobs: number;
  readonly takeoverReps: number;
  readonly settings: ReadonlyArray<{ readonly lockDurationMs: number; readonly stalledIntervalMs: number }>;
  readonly log: (line: string) => void;
}

/** Counts what Redis runs while attached: requests from clients, and commands run by scripts. */
function monitor(port: number): Promise<{ stop(): { requests: number; scripted: number } }> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let requests = 0;
    let scripted = 0;
    let rest = '';
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\r\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (!started) {
          started = line === '+OK';
          if (started) resolve({ stop: () => (socket.destroy(), { requests, scripted }) });
          continue;
        }
        if (/^\+\d+\.\d+ \[\d+ lua\]/.test(line)) scripted += 1;
        else if (/^\+\d+\.\d+ \[\d+ [^\]]+:\d+\]/.test(line)) requests += 1;
      }
    });
    socket.on('error', reject);
    socket.connect(port, '127.0.0.1', () => socket.write('MONITOR\r\n'));
  });
}

/** One durable pass: a fresh Redis and worker, `warmup` jobs unmeasured, then `n` measured. */
async function durablePass(
  config: { url: string; tool: string; args: Record<string, unknown>; warmup: number; n: number },
  name: string,
  monitored: boolean,
): Promise<{
  cpuMsPerTask: number;
  commandsPerTask: number;
  requestsPerTask: number | undefined;
  redisCpuMsPerTask: number;
  mix: Record<string, number>;
  storeMs: number[];
  windowMs: number[];
}> {
  const redis = await startRedis();
  const queue = new Queue(name, { connection: { url: redis.url, maxRetriesPerRequest: null } });
  const worker = child([
    'bench/durable-child.ts',
    'worker',
    JSON.stringify({ ...config, redis: redis.url, queue: name }),
  ]);
  try {
    await worker.next('ready', 60_000);
    for (let i = 0; i < config.warmup; i += 1)
      await enqueueToolTask(queue, { server: 'default', tool: config.tool, args: config.args });
    await worker.next('warm', 300_000);
    await redisReply(redis.port, 'CONFIG RESETSTAT');
    const before = await redisStats(redis.port);
    const watching = monitored ? await monitor(redis.port) : undefined;
    for (let i = 0; i < config.n; i += 1)
      await enqueueToolTask(queue, { server: 'default', tool: config.tool, args: config.args });
    const measured = await worker.next('done', 300_000);
    const seen = watching?.stop();
    const after = await redisStats(redis.port);
    const total = [...after.commands.values()].reduce((a, b) => a + b, 0);
    return {
      cpuMsPerTask: Number(measured.cpuMs) / config.n,
      commandsPerTask: total / config.n,
      requestsPerTask: seen === undefined ? undefined : seen.requests / config.n,
      redisCpuMsPerTask: ((after.cpuS - before.cpuS) * 1000) / config.n,
      mix: Object.fromEntries([...after.commands].map(([command, calls]) => [command, calls / config.n])),
      storeMs: measured.storeMs as number[],
      windowMs: measured.windowMs as number[],
    };
  } finally {
    await worker.stop();
    await queue.close();
    await redis.stop();
  }
}

/** Runs the durable row; see the module comment. */
export async function runDurable(
  options: DurableOptions,
  meta: { command: string; machine: string; versions: Record<string, string> },
): Promise<DurableResult> {
  const serverPort = await freePort();
  const server = spawn(process.execPath, ['--import', 'tsx', 'examples/http-server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(serverPort) },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${serverPort}/mcp`;
  const tool = 'analyze';
  const args = { steps: 1, stepMs: 1_000 };
  const plainCpu: number[] = [];
  const durableCpu: number[] = [];
  const commandsPerTask: number[] = [];
  const requestsPerTask: number[] = [];
  const redisCpu: number[] = [];
  const mixes: Array<Record<string, number>> = [];
  const store: number[] = [];
  const window: number[] = [];
  const takeover: Array<{ lockDurationMs: number; stalledIntervalMs: number; jobs: number; ms: Spread }> = [];
  try {
    for (let i = 0; ; i += 1) {
      if (
        await fetch(url, { method: 'GET' }).then(
          () => true,
          () => false,
        )
      )
        break;
      if (i > 300) throw new Error('the example server did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const config = { url, tool, args, warmup: options.warmup, n: options.n };
    for (let rep = 0; rep < options.reps; rep += 1) {
      // The plain client.
      const plain = child(['bench/durable-child.ts', 'plain', JSON.stringify(config)]);
      const done = await plain.next('done', 300_000);
      await plain.stop();
      plainCpu.push(Number(done.cpuMs) / options.n);
      // The same tasks as BullMQ jobs.
      const pass = await durablePass(config, `bench-${rep}`, false);
      durableCpu.push(pass.cpuMsPerTask);
      commandsPerTask.push(pass.commandsPerTask);
      redisCpu.push(pass.redisCpuMsPerTask);
      mixes.push(pass.mix);
      store.push(...pass.storeMs);
      window.push(...pass.windowMs);
      options.log(
        `durable rep ${rep + 1}/${options.reps}: plain ${plainCpu.at(-1)!.toFixed(3)} ms CPU/task; durable ${pass.cpuMsPerTask.toFixed(3)} ms CPU/task, ` +
          `${pass.commandsPerTask.toFixed(1)} Redis commands run/task, Redis CPU ${pass.redisCpuMsPerTask.toFixed(3)} ms/task`,
      );
    }
    // One more pass with MONITOR attached, to tell the clients' requests from the commands BullMQ's
    // scripts run (Redis counts both alike); its CPU figures are left out (MONITOR costs CPU).
    const monitored = await durablePass(config, 'bench-monitor', true);
    requestsPerTask.push(monitored.requestsPerTask ?? Number.NaN);
    options.log(`durable, with MONITOR: ${requestsPerTask[0]!.toFixed(1)} Redis requests/task`);
    for (const setting of options.settings) {
      const samples: number[] = [];
      for (let rep = 0; rep < options.takeoverReps; rep += 1)
        samples.push(...(await measureTakeover(url, setting, options.takeoverJobs)));
      takeover.push({ ...setting, jobs: samples.length, ms: spreadOf(samples) });
      options.log(
        `takeover, lockDuration ${setting.lockDurationMs} ms, stalledInterval ${setting.stalledIntervalMs} ms: median ${median(samples).toFixed(0)} ms ` +
          `(${Math.min(...samples).toFixed(0)}-${Math.max(...samples).toFixed(0)}) over ${samples.length} jobs`,
      );
    }
  } finally {
    server.kill('SIGKILL');
  }
  const middle = commandsPerTask.indexOf(
    [...commandsPerTask].sort((a, b) => a - b)[Math.floor(commandsPerTask.length / 2)]!,
  );
  return {
    generatedAt: new Date().toISOString(),
    ...meta,
    task: `\`${tool}\` ${JSON.stringify(args)} on the 2025-11-25 example server over Streamable HTTP (its own process)`,
    n: options.n,
    warmup: options.warmup,
    reps: options.reps,
    plainCpuMsPerTask: plainCpu,
    durableCpuMsPerTask: durableCpu,
    redisRequestsPerTask: requestsPerTask,
    redisCommandsPerTask: commandsPerTask,
    redisCpuMsPerTask: redisCpu,
    commandMix: mixes[middle] ?? {},
    storeMs: spreadOf(store),
    windowMs: spreadOf(window),
    takeover,
  };
}

/** Kill → resumed, in ms, for each of `jobs` long jobs of a worker killed with SIGKILL. */
async function measureTakeover(
  url: string,
  setting: { lockDurationMs: number; stalledIntervalMs: number },
  jobs: number,
): Promise<number[]> {
  const redis = await startRedis();
  const queue = new Queue('takeover', { connection: { url: redis.url, maxRetriesPerRequest: null } });
  const flags = [
    'examples/durable/worker.ts',
    '--redis',
    redis.url,
    '--url',
    url,
    '--queue',
    'takeover',
    '--concurrency',
    String(jobs),
    '--lock-duration',
    String(setting.lockDurationMs),
    '--stalled-interval',
    String(setting.stalledIntervalMs),
  ];
  const first = child(flags);
  let second: ReturnType<typeof child> | undefined;
  try {
    for (let i = 0; i < jobs; i += 1)
      await enqueueToolTask(queue, { server: 'default', tool: 'analyze', args: { steps: 1, stepMs: 600_000 } });
    for (let i = 0; i < jobs; i += 1) await first.next('started', 120_000);
    second = child(flags);
    // The second worker is up (its blocking fetch waits) before the first dies.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    const killedAt = Date.now();
    await first.stop();
    const samples: number[] = [];
    for (let i = 0; i < jobs; i += 1) {
      await second.next('resumed', setting.lockDurationMs + 3 * setting.stalledIntervalMs + 60_000);
      samples.push(Date.now() - killedAt);
    }
    return samples;
  } finally {
    await first.stop();
    await second?.stop();
    await queue.close();
    await redis.stop();
  }
}

/** `npm run bench -- --only durable [--n=N] [--reps=K] [--write]`, run by bench/run.ts. */
export function durableOptions(flags: ReadonlyMap<string, string>, log: (line: string) => void): DurableOptions {
  const quick = flags.has('quick');
  return {
    n: Number(flags.get('n') ?? (quick ? 50 : 200)),
    warmup: quick ? 10 : 50,
    reps: Number(flags.get('reps') ?? (quick ? 1 : 3)),
    takeoverJobs: quick ? 3 : 10,
    takeoverReps: quick ? 1 : 2,
    settings: quick
      ? [{ lockDurationMs: 2_000, stalledIntervalMs: 1_000 }]
      : [
          { lockDurationMs: 30_000, stalledIntervalMs: 30_000 },
          { lockDurationMs: 5_000, stalledIntervalMs: 2_500 },
        ],
    log,
  };
}
