/**
 * One benchmark scenario: one contender, one wire, one workload, N tasks, one client, one
 * server, one transport. `runScenario` measures everything itself and returns plain JSON;
 * `bench/run.ts` runs each scenario in its own child process (so memory figures are isolated),
 * the smoke test runs it in-process with a small N.
 *
 * Phases (see bench/README.md):
 * 1. Connect (in process, stdio or Streamable HTTP), set up the contender (tool discovery
 *    included) and run one task, so every module is loaded.
 * 2. Cold: N tasks measured in a fresh process.
 * 3. Warm-up: `warmup` (1,000) short tasks, not measured.
 * 4. Warm: N tasks measured again, in the now warm process.
 * 5. Memory (only with `--expose-gc`): the server's gate is closed, so tasks are created but their
 *    clocks held; after a forced GC, a baseline; N tasks started; once all exist, heap and RSS
 *    after a forced GC, per task. Then the gate opens and every result is awaited.
 * In a measured phase the server's counters are reset, N tasks are started (all at once, or
 * paced at `pace` per second), each task's clock starts when the server creates it, and every
 * result is awaited; CPU, loop delay and wall time cover the phase, and after it a forced GC
 * shows what stays retained per task.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import { contender as contenderInfo, type ContenderId, type StartedTask } from './contenders/index.js';
import { forceGc } from './forced-gc.js';
import { median, now, percentile, prng } from './stats.js';
import { clockOffset, connect, type TransportKind, type WireKind } from './transports.js';

/** How long each task runs on the server, from the gate release. */
export type Duration =
  | { readonly kind: 'fixed'; readonly ms: number }
  | { readonly kind: 'random'; readonly minMs: number; readonly maxMs: number };

/** A workload: task durations and server behaviour. */
export interface Workload {
  /** Short id, e.g. `random-notify`. */
  readonly id: string;
  readonly duration: Duration;
  /** The server sends status notifications (2025: `notifications/tasks/status`; extension: `notifications/tasks` on a subscription). */
  readonly notify: boolean;
  /** The server's pollInterval, in ms. */
  readonly pollInterval: number;
}

/** One scenario. */
export interface ScenarioSpec {
  readonly wire: WireKind;
  readonly contender: ContenderId;
  readonly workload: Workload;
  /** Tasks per measured phase (all in flight together unless paced). */
  readonly n: number;
  readonly transport: TransportKind;
  /** Starts per second in the measured and memory phases; undefined starts all at once. */
  readonly pace: number | undefined;
  /** Seed of the duration PRNG (the same for every contender). */
  readonly seed: number;
  /** Unmeasured short tasks between the cold and the warm phase. */
  readonly warmup: number;
  /** Give up on a phase after this long (ms) and report what completed. */
  readonly timeoutMs: number;
}

/** The figures of one measured phase. All times in ms, memory in bytes. */
export interface PhaseResult {
  readonly ok: boolean;
  readonly created: number;
  readonly completed: number;
  readonly failed: number;
  readonly lag: {
    readonly median: number;
    readonly p99: number;
    readonly min: number;
    readonly max: number;
    readonly mean: number;
  } | null;
  readonly tasksGetPerTask: number;
  readonly tasksResultPerTask: number;
  /** Every request the server received in the phase, divided by N. */
  readonly requestsPerTask: number;
  readonly requestsByMethod: Record<string, number>;
  readonly clientNotifications: Record<string, number>;
  readonly serverNotifications: Record<string, number>;
  /** Shortest gap the server saw between the creation answer and a poll, or two polls, of a task. */
  readonly minPollGapMs: number | null;
  /** Process CPU (user + system) per task over the phase. */
  readonly cpuPerTaskMs: number;
  /**
   * The main thread's share of it (the JavaScript, the event loop, the transport); the rest ran on
   * V8's background threads (the optimizing compiler, the garbage collector's helpers). Linux only
   * (`/proc/thread-self/schedstat`), null elsewhere.
   */
  readonly mainThreadCpuPerTaskMs: number | null;
  /** Heap still held per task after the phase ended, after forced GC (leaks show here). */
  readonly retainedPerTaskBytes: number | null;
  /** Event-loop delay p99 and max over the phase: how late a 5 ms JS timer fired. */
  readonly eventLoopDelayP99Ms: number;
  readonly eventLoopDelayMaxMs: number;
  readonly loopSamples: number;
  /** Time to create all N tasks. */
  readonly createMs: number;
  /** Wall time of the phase. */
  readonly wallMs: number;
  /** `process.hrtime` (ns, as text) at the start and end of the phase, for bench/profile.ts. */
  readonly windowNs: readonly [string, string];
  /** `performance.now()` at the start and end of the phase (V8's `--trace-gc` clock), for bench/profile.ts. */
  readonly windowMs: readonly [number, number];
}

/** Everything measured in one scenario. */
export interface ScenarioResult {
  readonly spec: ScenarioSpec;
  /** Both phases completed all N tasks without failure. */
  readonly ok: boolean;
  readonly errors: readonly string[];
  readonly cold: PhaseResult | null;
  readonly warm: PhaseResult | null;
  /** Heap used per in-flight task over the baseline, after forced GC (memory phase); null without `--expose-gc`. */
  readonly heapPerTaskBytes: number | null;
  /** RSS per in-flight task over the baseline (memory phase); null without `--expose-gc`. */
  readonly rssPerTaskBytes: number | null;
  /** What the CPU and memory figures cover. */
  readonly scope: 'client+server process' | 'client process';
  /** Out of process only: estimated server-minus-client clock offset and its uncertainty (half the best RTT). */
  readonly clock: { readonly offsetMs: number; readonly uncertaintyMs: number } | null;
  /** Process warnings seen (e.g. MaxListenersExceededWarning), deduplicated with counts. */
  readonly warnings: Record<string, number>;
}

/**
 * `bench/profile.ts --heap` sets BENCH_HEAP_SNAPSHOTS to a directory: the memory phase then writes
 * a heap snapshot before the N tasks start and one with all of them in flight, for the diff.
 */
function heapSnapshot(name: string): void {
  const dir = process.env.BENCH_HEAP_SNAPSHOTS;
  if (dir !== undefined && dir !== '') writeHeapSnapshot(path.join(dir, `${name}.heapsnapshot`));
}

/**
 * `bench/profile.ts --alloc` sets BENCH_ALLOC_PROFILE to a directory: the warm phase then runs
 * under V8's sampling heap profiler, counting every allocation (those collected since included),
 * and writes `alloc.heapprofile` there: the bytes allocated per function, whatever the machine's load.
 */
async function allocationSampling(phase: string): Promise<(() => Promise<void>) | undefined> {
  const dir = process.env.BENCH_ALLOC_PROFILE;
  if (dir === undefined || dir === '' || phase !== 'warm') return undefined;
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.BENCH_ALLOC_INTERVAL ?? 4096),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async () => {
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: unknown };
    writeFileSync(path.join(dir, 'alloc.heapprofile'), JSON.stringify(profile));
    session.disconnect();
  };
}

/**
 * With `BENCH_CALL_COUNTS` set (bench/profile.ts `--calls=1`), counts the entries into every
 * function in the warm phase (V8's precise coverage with call counts, bench/calls.ts) and writes the counts to
 * `calls.json` in that directory. Counting slows the process: its CPU figures are not the plain run's.
 */
async function callCounting(phase: string): Promise<(() => Promise<void>) | undefined> {
  const dir = process.env.BENCH_CALL_COUNTS;
  if (dir === undefined || dir === '' || phase !== 'warm') return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  // Taking the counts resets them: what the next take returns is the phase's alone.
  await session.post('Profiler.takePreciseCoverage');
  return async () => {
    const { result } = (await session.post('Profiler.takePreciseCoverage')) as { result: unknown };
    writeFileSync(path.join(dir, 'calls.json'), JSON.stringify(result));
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
  };
}

/** Interval of the event-loop delay sampler. */
const LOOP_SAMPLE_MS = 5;
/** Warm-up tasks are started in batches of this many (creation awaited per batch). */
const WARMUP_BATCH = 100;

function durations(duration: Duration, n: number, seed: number): number[] {
  if (duration.kind === 'fixed') return Array.from({ length: n }, () => duration.ms);
  const random = prng(seed);
  return Array.from({ length: n }, () => Math.round(duration.minMs + random() * (duration.maxMs - duration.minMs)));
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU time of the calling (main) thread in ms, where the kernel tells it per thread (Linux); else undefined. */
function mainThreadCpuMs(): number | undefined {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
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

type Starter = { start(ms: number): Promise<StartedTask> };

/** A started task as the harness follows it. */
interface TimedTask {
  readonly taskId: string;
  /**
   * Resolves with the wall-aligned time (`stats.now()`) at which the contender's result promise
   * fulfilled, or with its failure as a {@link Failed}. It never rejects: a task that fails while
   * later ones are still being started (a paced start) is noted, not an unhandled rejection that
   * would end the scenario's process.
   */
  readonly done: Promise<number | Failed>;
}

/** A task's failure, as {@link TimedTask.done} resolves with it. */
class Failed {
  constructor(readonly error: unknown) {}
}

/** The harness's continuation on every contender's result promise: one function, no closure per task. */
const stamp = (): number => now();

/** Its counterpart for a failed result: the same single reaction, so a task in flight costs no more. */
const failed = (error: unknown): Failed => new Failed(error);

/** `value`, or the failure it stands for thrown (for the phases that stop at a failure). */
function orThrow<T>(value: T | Failed): T {
  if (value instanceof Failed) throw value.error;
  return value;
}

/** The time a task finished, or its failure thrown. */
function finished(task: TimedTask): Promise<number> {
  return task.done.then(orThrow);
}

/**
 * Follows a task as soon as its contender hands it over, with the same continuation for every
 * contender (bench/contenders/types.ts): what a task costs in flight beyond the contender's own
 * objects is the same for all of them.
 */
function timed(task: StartedTask): TimedTask {
  return { taskId: task.taskId, done: task.result.then(stamp, failed) };
}

/**
 * Starts one task and follows it ({@link timed}). A start that fails resolves with its
 * {@link Failed}, never rejects: paced starts are gathered only once the last has been made.
 */
function startTimed(contender: Starter, ms: number): Promise<TimedTask | Failed> {
  return contender.start(ms).then(timed, failed);
}

/** {@link startTimed} for the phases that stop at a failure: its failure thrown. */
function startOrThrow(contender: Starter, ms: number): Promise<TimedTask> {
  return startTimed(contender, ms).then(orThrow);
}

/**
 * Starts one task per entry of `list`, all at once or `pace` per second; resolves with the
 * created ones (failures go to `noteError`).
 */
async function startAll(
  contender: Starter,
  list: readonly number[],
  pace: number | undefined,
  noteError: (error: unknown) => void,
): Promise<TimedTask[]> {
  let starts: Array<Promise<TimedTask | Failed>>;
  if (pace === undefined) starts = list.map((ms) => startTimed(contender, ms));
  else {
    starts = [];
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const due = Math.min(list.length, Math.floor(((performance.now() - t0) * pace) / 1000) + 1);
        while (starts.length < due) starts.push(startTimed(contender, list[starts.length]!));
        if (starts.length >= list.length) resolve();
        else setTimeout(tick, Math.max(1, (starts.length * 1000) / pace - (performance.now() - t0)));
      };
      tick();
    });
  }
  const started: TimedTask[] = [];
  for (const start of await Promise.all(starts)) {
    if (start instanceof Failed) noteError(start.error);
    else started.push(start);
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
  const info = contenderInfo(spec.wire, spec.contender);
  const connection = await connect({
    sdk: info.sdk,
    wire: spec.wire,
    transport: spec.transport,
    pollInterval: workload.pollInterval,
    notify: workload.notify,
  });
  const server = connection.server;
  const errors: string[] = [];
  const noteError = (error: unknown): void => {
    if (errors.length < 5) errors.push(message(error));
  };
  const scope = spec.transport === 'memory' ? 'client+server process' : 'client process';
  try {
    const contender = await (await info.load())(connection, { pollInterval: workload.pollInterval });
    // Setup: one task, so every module is loaded and the tools are known.
    const first = await startOrThrow(contender, 0);
    await withTimeout(finished(first), 30_000, 'setup task');
    const clock = await clockOffset(server);
    const list = durations(workload.duration, n, spec.seed);

    const measure = async (phase: string): Promise<PhaseResult> => {
      await server.reset(false);
      const gcAvailable = await forceGc();
      const before = process.memoryUsage().heapUsed;
      const sampler = new LoopDelaySampler(LOOP_SAMPLE_MS);
      const allocations = await allocationSampling(phase);
      const calls = await callCounting(phase);
      const startNs = process.hrtime.bigint();
      const startMs = performance.now();
      sampler.start();
      const main0 = mainThreadCpuMs();
      const cpu0 = cpuMs();
      const t0 = now();
      const started = await startAll(contender, list, spec.pace, noteError);
      const createMs = now() - t0;
      let failures = n - started.length;
      const resolvedAt = new Map<string, number>();
      const settled = Promise.allSettled(
        started.map((task) =>
          task.done.then((at) => {
            if (at instanceof Failed) {
              failures += 1;
              noteError(at.error);
            } else resolvedAt.set(task.taskId, at);
          }),
        ),
      );
      try {
        await withTimeout(settled, spec.timeoutMs, `${phase} phase (${n} tasks)`);
      } catch (error) {
        noteError(error);
      }
      const cpu = cpuMs() - cpu0;
      const main1 = mainThreadCpuMs();
      await allocations?.();
      await calls?.();
      const wallMs = now() - t0;
      const endNs = process.hrtime.bigint();
      const endMs = performance.now();
      const loop = sampler.stop();
      const retainedPerTaskBytes =
        gcAvailable && (await forceGc()) ? (process.memoryUsage().heapUsed - before) / n : null;
      const stats = await server.stats();
      const offset = clock?.offsetMs ?? 0;
      const lags: number[] = [];
      for (const [taskId, at] of resolvedAt) {
        const completedAt = stats.completedAt[taskId];
        if (completedAt !== undefined) lags.push(at - (completedAt - offset));
      }
      const requests = stats.requests;
      const requestsTotal = Object.values(requests).reduce((a, b) => a + b, 0);
      return {
        ok: resolvedAt.size === n && failures === 0,
        created: started.length,
        completed: resolvedAt.size,
        failed: failures,
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
        requestsPerTask: requestsTotal / n,
        requestsByMethod: requests,
        clientNotifications: stats.clientNotifications,
        serverNotifications: stats.serverNotifications,
        minPollGapMs: stats.minPollGapMs,
        cpuPerTaskMs: cpu / n,
        mainThreadCpuPerTaskMs: main0 === undefined || main1 === undefined ? null : (main1 - main0) / n,
        retainedPerTaskBytes,
        eventLoopDelayP99Ms: loop.p99,
        eventLoopDelayMaxMs: loop.max,
        loopSamples: loop.samples,
        createMs,
        wallMs,
        windowNs: [String(startNs), String(endNs)],
        windowMs: [startMs, endMs],
      };
    };

    const cold = await measure('cold');

    // Warm-up: short tasks, in batches (creation awaited per batch), not measured.
    const warm: TimedTask[] = [];
    for (let i = 0; i < spec.warmup; i += WARMUP_BATCH) {
      const batch = Math.min(WARMUP_BATCH, spec.warmup - i);
      warm.push(...(await Promise.all(Array.from({ length: batch }, () => startOrThrow(contender, 0)))));
    }
    await withTimeout(Promise.all(warm.map(finished)), spec.timeoutMs, 'warm-up');
    warm.length = 0;

    const warmPhase = await measure('warm');

    // Memory: heap and RSS with all N tasks in flight (their clocks held by the server's gate).
    let heapPerTaskBytes: number | null = null;
    let rssPerTaskBytes: number | null = null;
    if (await forceGc()) {
      await server.reset(true);
      await forceGc();
      heapSnapshot('base');
      const base = process.memoryUsage();
      const held = await startAll(
        contender,
        list.map(() => 0),
        spec.pace === undefined ? undefined : spec.pace * 4,
        noteError,
      );
      await forceGc();
      const inFlight = process.memoryUsage();
      heapSnapshot('in-flight');
      heapPerTaskBytes = (inFlight.heapUsed - base.heapUsed) / n;
      rssPerTaskBytes = (inFlight.rss - base.rss) / n;
      await server.release();
      await withTimeout(
        Promise.all(held.map((task) => task.done.then((at) => at instanceof Failed && noteError(at.error)))),
        spec.timeoutMs,
        'memory phase',
      );
    }

    try {
      await contender.close();
    } catch (error) {
      noteError(error);
    }
    return {
      spec,
      ok: cold.ok && warmPhase.ok,
      errors,
      cold,
      warm: warmPhase,
      heapPerTaskBytes,
      rssPerTaskBytes,
      scope,
      clock,
      warnings,
    };
  } catch (error) {
    noteError(error);
    return {
      spec,
      ok: false,
      errors,
      cold: null,
      warm: null,
      heapPerTaskBytes: null,
      rssPerTaskBytes: null,
      scope,
      clock: null,
      warnings,
    };
  } finally {
    process.off('warning', onWarning);
    await connection.close().catch(() => {});
  }
}
