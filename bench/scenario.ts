/**
 * One benchmark scenario: one contender, one workload, N concurrent tasks, one client, one
 * server. `runScenario` measures everything itself and returns plain JSON; `bench/run.ts` runs
 * each scenario in its own child process (so memory figures are isolated), the smoke test runs
 * it in-process with a small N.
 *
 * Phases:
 * 1. connect (in-process `InMemoryTransport`, or the bench server as a child over stdio), set up
 *    the contender (tool discovery included), warm up with a few short tasks.
 * 2. Memory (only when `global.gc` exists, i.e. `--expose-gc`): close the server's gate, take a
 *    baseline after forced GC, start N tasks and wait until every one exists; all are in flight
 *    (their clocks are held), so heap and RSS are read here after forced GC. Then release them
 *    (they finish at once) and wait for every result. Nothing of this phase is in other figures.
 * 3. Performance: reset the server's counters, start N tasks at once (each task's clock starts
 *    when the server creates it) and wait for every result. CPU, loop delay and wall time cover
 *    this phase; after it, a forced GC shows what stays retained per task.
 * 4. Collect the server's counts and completion times; lag = client resolution − completion.
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import { CONTENDERS, type ContenderId, type StartedTask } from './contenders/index.js';
import { BenchServer, RELEASE_NOTIFICATION, type ServerStats } from './server.js';
import { median, now, percentile, prng } from './stats.js';

/** How long each task runs on the server, from the gate release. */
export type Duration = { readonly kind: 'fixed'; readonly ms: number } | { readonly kind: 'random'; readonly minMs: number; readonly maxMs: number };

/** A workload: task durations and server behaviour. */
export interface Workload {
  /** Short id, e.g. `random-notify`. */
  readonly id: string;
  readonly duration: Duration;
  /** The server sends `notifications/tasks/status`. */
  readonly notify: boolean;
  /** The server's pollInterval, in ms. */
  readonly pollInterval: number;
}

/** One scenario. */
export interface ScenarioSpec {
  readonly contender: ContenderId;
  readonly workload: Workload;
  /** Concurrent tasks. */
  readonly n: number;
  readonly transport: 'memory' | 'stdio';
  /** Seed of the duration PRNG (the same for every contender). */
  readonly seed: number;
  /** Short tasks run before measuring, to warm up code paths. */
  readonly warmup: number;
  /** Give up after this long (ms) and report what completed. */
  readonly timeoutMs: number;
}

/** Everything measured in one scenario. All times in ms, memory in bytes. */
export interface ScenarioResult {
  readonly spec: ScenarioSpec;
  readonly ok: boolean;
  readonly created: number;
  readonly completed: number;
  readonly failed: number;
  readonly errors: readonly string[];
  readonly lag: { readonly median: number; readonly p99: number; readonly min: number; readonly max: number; readonly mean: number } | null;
  readonly tasksGetPerTask: number;
  readonly tasksResultPerTask: number;
  readonly requestsTotal: number;
  readonly requestsByMethod: Record<string, number>;
  readonly clientNotifications: Record<string, number>;
  readonly serverNotifications: Record<string, number>;
  /** Shortest gap the server saw between the creation answer and a poll, or two polls, of a task. */
  readonly minPollGapMs: number | null;
  /** Process CPU (user + system) per task over the performance phase. */
  readonly cpuPerTaskMs: number;
  /** Heap used per in-flight task over the baseline, after forced GC (memory phase); null without `--expose-gc`. */
  readonly heapPerTaskBytes: number | null;
  /** RSS per in-flight task over the baseline (memory phase); null without `--expose-gc`. */
  readonly rssPerTaskBytes: number | null;
  /** Heap still held per task after the performance phase ended, after forced GC (leaks show here). */
  readonly retainedPerTaskBytes: number | null;
  /** Event-loop delay p99 and max over the performance phase: how late a 5 ms JS timer fired. */
  readonly eventLoopDelayP99Ms: number;
  readonly eventLoopDelayMaxMs: number;
  /** Samples behind the loop-delay figures. */
  readonly loopSamples: number;
  /** Time to create all N tasks (performance phase). */
  readonly createMs: number;
  /** Wall time of the performance phase. */
  readonly wallMs: number;
  /** What the CPU and memory figures cover. */
  readonly scope: 'client+server process' | 'client process';
  /** stdio only: estimated server-minus-client clock offset and its uncertainty (half the best RTT). */
  readonly clock: { readonly offsetMs: number; readonly uncertaintyMs: number } | null;
  /** Process warnings seen (e.g. MaxListenersExceededWarning), deduplicated with counts. */
  readonly warnings: Record<string, number>;
}

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

/** Interval of the event-loop delay sampler. */
const LOOP_SAMPLE_MS = 5;

function durations(duration: Duration, n: number, seed: number): number[] {
  if (duration.kind === 'fixed') return Array.from({ length: n }, () => duration.ms);
  const random = prng(seed);
  return Array.from({ length: n }, () => Math.round(duration.minMs + random() * (duration.maxMs - duration.minMs)));
}

function forceGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  gc();
  return true;
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

const StatsResultSchema = z.object({ stats: z.record(z.string(), z.unknown()) });
const ClockResultSchema = z.object({ now: z.number() });
const EmptyResultSchema = z.object({}).loose();

/** The server end as the harness sees it, in-process or over stdio. */
interface ServerSide {
  /** Forgets counts and completions; with `gate`, holds the clock of new tasks until release. */
  reset(gate: boolean): Promise<void>;
  release(): Promise<void>;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

async function connectMemory(workload: Workload): Promise<{ client: Client; server: ServerSide }> {
  const bench = new BenchServer({ pollInterval: workload.pollInterval, notify: workload.notify });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await bench.connect(serverSide);
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  await client.connect(clientSide);
  return {
    client,
    server: {
      reset: async (gate) => {
        bench.reset();
        if (gate) bench.closeGate();
        else bench.release();
      },
      release: async () => bench.release(),
      stats: async () => bench.stats(),
      close: async () => {
        await client.close();
        await bench.close();
      },
    },
  };
}

async function connectStdio(workload: Workload): Promise<{ client: Client; server: ServerSide }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    // --no-warnings: the SDK's StdioServerTransport adds a 'drain' listener per blocked write and
    // warns (MaxListenersExceededWarning) under load; that is the server's, not a contender's.
    args: ['--no-warnings', '--import', 'tsx', `${BENCH_DIR}stdio-server.ts`],
    env: { BENCH_POLL_INTERVAL: String(workload.pollInterval), BENCH_NOTIFY: workload.notify ? '1' : '0' },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    server: {
      reset: async (gate) => {
        await client.request({ method: 'bench/reset', params: { gate } }, EmptyResultSchema);
      },
      release: async () => {
        await client.notification({ method: RELEASE_NOTIFICATION });
      },
      stats: async () => (await client.request({ method: 'bench/stats' }, StatsResultSchema)).stats as unknown as ServerStats,
      close: () => client.close(),
    },
  };
}

/** Estimates server clock − client clock over the connection (best of `rounds` pings). */
async function clockOffset(client: Client, rounds = 25): Promise<{ offsetMs: number; uncertaintyMs: number }> {
  let best = { offsetMs: 0, uncertaintyMs: Infinity };
  for (let i = 0; i < rounds; i += 1) {
    const t0 = now();
    const { now: serverNow } = await client.request({ method: 'bench/clock' }, ClockResultSchema);
    const t1 = now();
    const half = (t1 - t0) / 2;
    if (half < best.uncertaintyMs) best = { offsetMs: serverNow - (t0 + half), uncertaintyMs: half };
  }
  return best;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Measures event-loop delay with a JS timer: every `intervalMs` it records how late it fired.
 * (`perf_hooks.monitorEventLoopDelay` uses a libuv timer that misses most of a stall in which JS
 * timer callbacks keep the loop in one long timers phase, which is what 10,000 per-task timers
 * do; a JS timer waits in the same queue as the contenders' own timers and promise jobs.)
 */
class LoopDelaySampler {
  private readonly samples: number[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private expected = 0;

  constructor(private readonly intervalMs: number) {}

  start(): void {
    this.expected = performance.now() + this.intervalMs;
    this.timer = setTimeout(this.tick, this.intervalMs);
  }

  private readonly tick = (): void => {
    const t = performance.now();
    this.samples.push(Math.max(0, t - this.expected));
    this.expected = t + this.intervalMs;
    this.timer = setTimeout(this.tick, this.intervalMs);
  };

  stop(): { p99: number; max: number; samples: number } {
    clearTimeout(this.timer);
    this.tick();
    clearTimeout(this.timer);
    return { p99: percentile(this.samples, 99), max: Math.max(...this.samples), samples: this.samples.length };
  }
}

/** Starts every task at once; returns the created ones and notes the failures. */
async function startAll(
  contender: { start(ms: number): Promise<StartedTask> },
  list: readonly number[],
  noteError: (error: unknown) => void,
): Promise<StartedTask[]> {
  const starts = await Promise.allSettled(list.map((ms) => contender.start(ms)));
  const started: StartedTask[] = [];
  for (const start of starts) {
    if (start.status === 'fulfilled') started.push(start.value);
    else noteError(start.reason);
  }
  return started;
}

/** Runs one scenario and returns its figures. */
export async function runScenario(spec: ScenarioSpec): Promise<ScenarioResult> {
  const warnings: Record<string, number> = {};
  const onWarning = (warning: Error): void => {
    warnings[warning.name] = (warnings[warning.name] ?? 0) + 1;
  };
  process.on('warning', onWarning);
  const { workload, n } = spec;
  const { client, server } = spec.transport === 'memory' ? await connectMemory(workload) : await connectStdio(workload);
  const errors: string[] = [];
  const noteError = (error: unknown): void => {
    if (errors.length < 5) errors.push(message(error));
  };
  try {
    const contender = await CONTENDERS[spec.contender](client, { pollInterval: workload.pollInterval });

    // Phase 1: warm-up (short tasks, not measured).
    const warm = await Promise.all(Array.from({ length: spec.warmup }, () => contender.start(0)));
    await withTimeout(Promise.all(warm.map((task) => task.done)), 30_000, 'warm-up');
    const clock = spec.transport === 'stdio' ? await clockOffset(client) : null;
    const list = durations(workload.duration, n, spec.seed);

    // Phase 2: heap and RSS with all N tasks in flight.
    let heapPerTaskBytes: number | null = null;
    let rssPerTaskBytes: number | null = null;
    if (forceGc()) {
      await server.reset(true);
      forceGc();
      const base = process.memoryUsage();
      const held = await startAll(
        contender,
        list.map(() => 0),
        noteError,
      );
      forceGc();
      const inFlight = process.memoryUsage();
      heapPerTaskBytes = (inFlight.heapUsed - base.heapUsed) / n;
      rssPerTaskBytes = (inFlight.rss - base.rss) / n;
      await server.release();
      await withTimeout(Promise.allSettled(held.map((task) => task.done)), spec.timeoutMs, 'memory phase');
    }

    // Phase 3: performance.
    await server.reset(false);
    const gcAvailable = forceGc();
    const before = process.memoryUsage();
    const sampler = new LoopDelaySampler(LOOP_SAMPLE_MS);
    sampler.start();
    const cpu0 = cpuMs();
    const t0 = now();
    const started = await startAll(contender, list, noteError);
    const createMs = now() - t0;
    let failed = n - started.length;
    const resolvedAt = new Map<string, number>();
    const settled = Promise.allSettled(
      started.map((task) =>
        task.done.then(
          (at) => resolvedAt.set(task.taskId, at),
          (error: unknown) => {
            failed += 1;
            noteError(error);
          },
        ),
      ),
    );
    try {
      await withTimeout(settled, spec.timeoutMs, `${n} tasks`);
    } catch (error) {
      noteError(error);
    }
    const cpu = cpuMs() - cpu0;
    const wallMs = now() - t0;
    const loop = sampler.stop();
    const retainedPerTaskBytes = gcAvailable && forceGc() ? (process.memoryUsage().heapUsed - before.heapUsed) / n : null;

    // Phase 4: server-side figures.
    const stats = await server.stats();
    const offset = clock?.offsetMs ?? 0;
    const lags: number[] = [];
    for (const [taskId, at] of resolvedAt) {
      const completedAt = stats.completedAt[taskId];
      if (completedAt !== undefined) lags.push(at - (completedAt - offset));
    }
    const requests = stats.requests;
    const requestsTotal = Object.values(requests).reduce((a, b) => a + b, 0);
    try {
      await contender.close();
    } catch (error) {
      noteError(error);
    }
    const completed = resolvedAt.size;
    return {
      spec,
      ok: completed === n && failed === 0,
      created: started.length,
      completed,
      failed,
      errors,
      lag:
        lags.length === 0
          ? null
          : {
              median: median(lags),
              p99: percentile(lags, 99),
              min: Math.min(...lags),
              max: Math.max(...lags),
              mean: lags.reduce((a, b) => a + b, 0) / lags.length,
            },
      tasksGetPerTask: (requests['tasks/get'] ?? 0) / n,
      tasksResultPerTask: (requests['tasks/result'] ?? 0) / n,
      requestsTotal,
      requestsByMethod: requests,
      clientNotifications: stats.clientNotifications,
      serverNotifications: stats.serverNotifications,
      minPollGapMs: stats.minPollGapMs,
      cpuPerTaskMs: cpu / n,
      heapPerTaskBytes,
      rssPerTaskBytes,
      retainedPerTaskBytes,
      eventLoopDelayP99Ms: loop.p99,
      eventLoopDelayMaxMs: loop.max,
      loopSamples: loop.samples,
      createMs,
      wallMs,
      scope: spec.transport === 'memory' ? 'client+server process' : 'client process',
      clock,
      warnings,
    };
  } finally {
    process.off('warning', onWarning);
    await server.close().catch(() => {});
  }
}
