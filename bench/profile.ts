/**
 * `npm run bench:profile`: profiles one scenario to find where a contender's CPU goes. It runs
 * the scenario in a child process started with `--cpu-prof` and `--trace-gc` (plus
 * `--expose-gc`, as the benchmark does), then keeps only the samples and collections of one
 * measured phase (the scenario reports its time window) and prints:
 *
 * - self time by owner: the library under test, the SDK (v1 or v2), zod, ext-tasks, the
 *   contender's and the harness's own code, Node internals, native code, garbage collection;
 * - the library's self time by module;
 * - the top functions by self time;
 * - the garbage collections of the phase (count and pause time by kind, from `--trace-gc`).
 *
 * Usage:
 *   npm run bench:profile -- [--wire=2025|ext] [--contender=mcp-task-client] [--transport=memory|stdio|http]
 *                            [--workload=random-poll] [--n=1000] [--phase=warm|cold] [--pace=100]
 *                            [--top=30] [--out=DIR] [--heap=1|retainers] [--jit=1] [--calls=1]
 *                            [--node-flags="--single-threaded-gc ..."]
 * With `--heap=1` it also diffs two heap snapshots of the memory phase (before the N tasks start,
 * and with all of them in flight) and prints what the in-flight tasks keep alive, by kind
 * (bench/heap.ts); `--heap=retainers` also names what holds each kind. With `--jit=1` it counts
 * the functions V8's optimizing compiler began to compile in the cold and the warm phase, and
 * leaves V8's trace (`--trace-opt`, `--trace-deopt`, `--trace-gc`) in the directory's trace.log. With
 * `--calls=1` it counts the entries into each function in the warm phase, per task (calls, and
 * resumptions after an `await`; bench/calls.ts; counting deoptimizes the process's code, so that
 * run's CPU figures are not the plain run's).
 * It runs the compiled copy of lib/ and bench/ that `npm run bench` runs (bench/build.ts).
 * The raw `.cpuprofile` files stay in DIR (default: a fresh temporary directory) for Chrome
 * DevTools or speedscope. Compare two contenders by running it twice (e.g. `--contender=floor`).
 */
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBench, type BenchBuild } from './build.js';
import { callSummary, callTables, type CallSummary } from './calls.js';
import { COLLECTIONS_PER_FORCE } from './forced-gc.js';
import { heapDiff, heapTable, type HeapKind } from './heap.js';
import { LIBRARY, moduleOf, owner, where, type CallFrame } from './owners.js';
import type { PhaseResult, ScenarioResult, ScenarioSpec } from './scenario.js';
import { WORKLOADS } from './workloads.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function options(argv: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const arg of argv) {
    const match = /^--([a-z-]+)=(.*)$/.exec(arg);
    if (match === null) throw new Error(`Unknown argument ${arg} (expected --name=value)`);
    out[match[1]!] = match[2]!;
  }
  return out;
}

interface AllocNode {
  readonly callFrame: CallFrame;
  readonly selfSize: number;
  readonly children: readonly AllocNode[];
}

/** Bytes allocated per task in the warm phase, by owner and by library module (`bench/scenario.ts`'s alloc.heapprofile). */
export interface AllocSummary {
  readonly totalPerTask: number;
  readonly byOwner: ReadonlyMap<string, number>;
  readonly byModule: ReadonlyMap<string, number>;
}

function allocSummary(file: string, n: number): AllocSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: AllocNode };
  const byOwner = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  const walk = (node: AllocNode): void => {
    if (node.selfSize > 0) {
      total += node.selfSize;
      const who = owner(node.callFrame);
      add(byOwner, who, node.selfSize / n);
      if (who === LIBRARY) add(byModule, moduleOf(node.callFrame), node.selfSize / n);
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { totalPerTask: total / n, byOwner, byModule };
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

function table(title: string, map: ReadonlyMap<string, number>, total: number, top: number): string {
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
  const width = Math.max(title.length, ...rows.map(([k]) => k.length));
  const lines = [`${title.padEnd(width)}  self ms   share`];
  for (const [key, us] of rows)
    lines.push(
      `${key.padEnd(width)}  ${(us / 1000).toFixed(1).padStart(7)}  ${((100 * us) / total).toFixed(1).padStart(5)}%`,
    );
  return lines.join('\n');
}

function bytesTable(title: string, map: ReadonlyMap<string, number>, total: number): string {
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, 20);
  const width = Math.max(title.length, ...rows.map(([k]) => k.length));
  const lines = [`${title.padEnd(width)}  bytes/task   share`];
  for (const [key, bytes] of rows)
    lines.push(
      `${key.padEnd(width)}  ${bytes.toFixed(0).padStart(10)}  ${((100 * bytes) / total).toFixed(1).padStart(5)}%`,
    );
  return lines.join('\n');
}

/** What one profiled scenario shows. */
export interface ProfileResult {
  readonly spec: ScenarioSpec;
  readonly phase: 'warm' | 'cold';
  readonly measured: PhaseResult;
  readonly scope: ScenarioResult['scope'];
  /** Sampled busy time in the phase, in µs. */
  readonly busyUs: number;
  readonly idleUs: number;
  /** Self time in µs by owner, by library module, by function. */
  readonly byOwner: ReadonlyMap<string, number>;
  readonly byModule: ReadonlyMap<string, number>;
  readonly byFunction: ReadonlyMap<string, number>;
  /** Collections in the phase, from `--trace-gc`. */
  readonly gcKinds: ReadonlyMap<string, { readonly count: number; readonly pauseMs: number }>;
  /** What the in-flight tasks keep alive (only when asked for). */
  readonly heap: readonly HeapKind[] | undefined;
  /** What the warm phase allocated, per task (only when asked for: the sampling slows the process, so its CPU figures are not the plain run's). */
  readonly alloc: AllocSummary | undefined;
  /** The warm phase's function calls per task (only when asked for: counting slows the process). */
  readonly calls: CallSummary | undefined;
  /** The optimizing compilations begun in each phase (only when asked for). */
  readonly compiles: PhaseCompiles | undefined;
  /** The functions whose optimized code was thrown away before the warm phase (with `compiles`). */
  readonly lost: readonly string[] | undefined;
  /** Where the raw profiles are. */
  readonly dir: string;
}

/** How to profile: the phase, whether to diff heap snapshots (and by retainer), where to keep the files. */
export interface ProfileOptions {
  readonly phase?: 'warm' | 'cold';
  readonly heap?: false | 'kinds' | 'retainers';
  readonly dir?: string;
  /** CPU sampling interval in µs (default 200). */
  readonly intervalUs?: number;
  /** Also sample the warm phase's allocations (bench/scenario.ts writes `alloc.heapprofile` to the directory). */
  readonly alloc?: boolean;
  /** Also count the warm phase's function calls (bench/scenario.ts writes `calls.json` to the directory). */
  readonly calls?: boolean;
  /** Also count the functions V8's optimizing compiler began to compile in each measured phase (`--trace-opt`). */
  readonly jit?: boolean;
  /**
   * Node or V8 flags added to the child's (e.g. `--single-threaded-gc`, which moves the collector's
   * helper threads' work onto the main thread, or `--no-concurrent-recompilation`, which does the
   * same for the optimizing compiler): run twice, with and without, they tell how much of the
   * "background threads" CPU is collection and how much is compilation.
   */
  readonly nodeFlags?: readonly string[];
}

/** Optimizing compilations begun in each measured phase. */
export interface PhaseCompiles {
  readonly cold: number;
  readonly warm: number;
}

/**
 * Counts the optimizing compilations (`--trace-opt`'s "compiling method ... TURBOFAN" lines) that
 * began in the cold and in the warm phase. `--trace-opt` prints no time, so the phases are found by
 * the harness's forced collections around them, which `--trace-gc` prints in the same stream
 * ("Mark-Compact ... testing"): bench/scenario.ts's `measure` forces them once before a phase and
 * once after it ({@link COLLECTIONS_PER_FORCE} each time), so with K of them the cold phase lies
 * after the K-th, the unmeasured warm-up after the 2K-th, and the warm phase after the 3K-th.
 */
export function compilesByPhase(log: string): PhaseCompiles {
  const k = COLLECTIONS_PER_FORCE;
  let forced = 0;
  let cold = 0;
  let warm = 0;
  for (const line of log.split('\n')) {
    if (/ ms: Mark-Compact\b.*\btesting\b/.test(line)) forced += 1;
    else if (line.startsWith('[compiling method') && line.includes('(target TURBOFAN)')) {
      if (forced === k) cold += 1;
      else if (forced === 3 * k) warm += 1;
    }
  }
  return { cold, warm };
}

/**
 * The functions whose optimized code V8 threw away between the cold and the warm phase because an
 * object it embeds died ("weak objects": mostly a hidden class, once no object had it), each once,
 * in the trace's order. V8 prints those lines during a collection, before the collection's own line,
 * so with K forced collections each time ({@link compilesByPhase}) they are the ones after the 2K-th
 * and before the 3K-th (the warm-up between the phases, and the forced collections before the warm
 * phase). Each is compiled again in the warm phase if it is still used there: a class the library
 * keeps alive (lib/util/shapes.ts) is not in it.
 */
export function lostBeforeWarm(log: string): string[] {
  const k = COLLECTIONS_PER_FORCE;
  let forced = 0;
  const names = new Set<string>();
  for (const line of log.split('\n')) {
    if (/ ms: Mark-Compact\b.*\btesting\b/.test(line)) forced += 1;
    else if (forced >= 2 * k && forced < 3 * k && line.includes('reason: weak objects')) {
      const name = /<SharedFunctionInfo ?([^>]*)>/.exec(line)?.[1];
      names.add(name === undefined || name === '' ? '(anonymous)' : name);
    }
  }
  return [...names];
}

/**
 * Runs `spec` in a child process of `build` under `--cpu-prof` and `--trace-gc` (and, with
 * `heap`, writing two heap snapshots of the memory phase) and sorts out one phase's samples.
 */
export async function profileScenario(
  build: BenchBuild,
  spec: ScenarioSpec,
  options: ProfileOptions = {},
): Promise<ProfileResult> {
  const phase = options.phase ?? 'warm';
  const heap = options.heap ?? false;
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'bench-profile-'));
  mkdirSync(dir, { recursive: true });
  let gcLog = '';
  const result = await new Promise<ScenarioResult>((resolve, reject) => {
    const child = fork(build.child, [JSON.stringify(spec)], {
      cwd: build.dir,
      execArgv: [
        '--expose-gc',
        '--cpu-prof',
        `--cpu-prof-dir=${dir}`,
        `--cpu-prof-interval=${options.intervalUs ?? 200}`,
        '--trace-gc',
        ...(options.jit === true ? ['--trace-opt', '--trace-deopt'] : []),
        '--no-warnings',
        ...(options.nodeFlags ?? []),
      ],
      env: {
        ...process.env,
        ...(heap === false ? {} : { BENCH_HEAP_SNAPSHOTS: dir }),
        ...(options.alloc === true ? { BENCH_ALLOC_PROFILE: dir } : {}),
        ...(options.calls === true ? { BENCH_CALL_COUNTS: dir } : {}),
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (gcLog += chunk.toString('utf8')));
    let answer: { ok: true; result: ScenarioResult } | { ok: false; error: string } | undefined;
    child.on('message', (message) => (answer = message as typeof answer));
    child.on('exit', () => {
      // The child's trace (--trace-gc, and with `jit` --trace-opt and --trace-deopt) next to the
      // profiles, a failed run's too.
      writeFileSync(path.join(dir, 'trace.log'), gcLog);
      if (answer?.ok === true) resolve(answer.result);
      else reject(new Error(answer?.ok === false ? answer.error : 'scenario process exited without a result'));
    });
  });
  const measured: PhaseResult | null = result[phase];
  if (measured === null) throw new Error(`The scenario failed: ${result.errors.join('; ')}`);
  const [fromNs, toNs] = measured.windowNs.map((t) => Number(BigInt(t) / 1000n)) as [number, number];
  // The phase's window next to the profiles, for tools that read the `.cpuprofile` files again.
  writeFileSync(
    path.join(dir, 'window.json'),
    JSON.stringify({
      phase,
      windowUs: [fromNs, toNs],
      windowMs: measured.windowMs,
      n: spec.n,
      cpuPerTaskMs: measured.cpuPerTaskMs,
    }),
  );

  const byOwner = new Map<string, number>();
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  let idleUs = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i += 1) {
      const delta = profile.timeDeltas[i] ?? 0;
      t += delta;
      if (t < fromNs || t > toNs) continue;
      const frame = nodes.get(profile.samples[i]!)!.callFrame;
      if (frame.functionName === '(idle)' || frame.functionName === '(program)') {
        idleUs += delta;
        continue;
      }
      busyUs += delta;
      const who = owner(frame);
      add(byOwner, who, delta);
      if (who === LIBRARY) add(byModule, where(frame).replace(/:\d+$/, ''), delta);
      add(byFunction, `${frame.functionName || '(anonymous)'}  ${where(frame)}`, delta);
    }
  }

  // --trace-gc lines: "[pid:0x...]   1234 ms: Scavenge 10.1 (12.3) -> 9.8 (13.3) MB, 1.23 / 0.00 ms ..."
  const [fromMs, toMs] = measured.windowMs;
  const gcKinds = new Map<string, { count: number; pauseMs: number }>();
  for (const line of gcLog.split('\n')) {
    const match = /\s(\d+(?:\.\d+)?) ms: ([A-Za-z-]+(?: [A-Za-z-]+)?)\b.*?MB, (\d+(?:\.\d+)?) \/ .*?\) ([^;]*)/.exec(
      line,
    );
    if (match === null) continue;
    const at = Number(match[1]);
    if (at < fromMs || at > toMs) continue;
    const kind = `${match[2]!} (${match[4]!.trim()})`;
    // The harness's forced collections (gc(), "testing") lie outside the CPU window by
    // construction; --trace-gc's clock starts a little apart from performance.now()'s, so drop them.
    if (kind.includes('(testing)')) continue;
    const entry = gcKinds.get(kind) ?? { count: 0, pauseMs: 0 };
    entry.count += 1;
    entry.pauseMs += Number(match[3]);
    gcKinds.set(kind, entry);
  }
  const heapKinds =
    heap === false
      ? undefined
      : heapDiff(
          path.join(dir, 'base.heapsnapshot'),
          path.join(dir, 'in-flight.heapsnapshot'),
          spec.n,
          heap === 'retainers',
        );
  const alloc =
    options.alloc === true && phase === 'warm' ? allocSummary(path.join(dir, 'alloc.heapprofile'), spec.n) : undefined;
  return {
    spec,
    phase,
    measured,
    scope: result.scope,
    busyUs,
    idleUs,
    byOwner,
    byModule,
    byFunction,
    gcKinds,
    heap: heapKinds,
    alloc,
    calls: options.calls === true && phase === 'warm' ? callSummary(path.join(dir, 'calls.json'), spec.n) : undefined,
    compiles: options.jit === true ? compilesByPhase(gcLog) : undefined,
    lost: options.jit === true ? lostBeforeWarm(gcLog) : undefined,
    dir,
  };
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  const workload = WORKLOADS.find((w) => w.id === (o.workload ?? 'random-poll'));
  if (workload === undefined) throw new Error(`Unknown workload ${o.workload}`);
  const spec: ScenarioSpec = {
    wire: (o.wire ?? '2025') as ScenarioSpec['wire'],
    contender: (o.contender ?? 'mcp-task-client') as ScenarioSpec['contender'],
    workload,
    n: Number(o.n ?? 1000),
    transport: (o.transport ?? 'memory') as ScenarioSpec['transport'],
    pace: o.pace === undefined ? undefined : Number(o.pace),
    seed: 1000,
    warmup: 1000,
    timeoutMs: 300_000,
  };
  const heap = o.heap === undefined || o.heap === '0' ? false : o.heap === 'retainers' ? 'retainers' : 'kinds';
  const build = buildBench();
  let p: ProfileResult;
  try {
    p = await profileScenario(build, spec, {
      phase: (o.phase ?? 'warm') as 'warm' | 'cold',
      heap,
      alloc: o.alloc !== undefined && o.alloc !== '0',
      calls: o.calls !== undefined && o.calls !== '0',
      jit: o.jit !== undefined && o.jit !== '0',
      ...(o.interval === undefined ? {} : { intervalUs: Number(o.interval) }),
      ...(o['node-flags'] === undefined ? {} : { nodeFlags: o['node-flags'].split(' ').filter((f) => f !== '') }),
      ...(o.out === undefined ? {} : { dir: o.out }),
    });
  } finally {
    build.remove();
  }
  const top = Number(o.top ?? 30);
  console.log(
    `${spec.contender} on the ${spec.wire} wire, ${spec.transport}, ${workload.id}, N=${spec.n}, ${p.phase} phase: ` +
      `CPU ${p.measured.cpuPerTaskMs.toFixed(3)} ms per task` +
      (p.measured.mainThreadCpuPerTaskMs === null
        ? ''
        : ` (main thread ${p.measured.mainThreadCpuPerTaskMs.toFixed(3)}, V8's background threads ${(p.measured.cpuPerTaskMs - p.measured.mainThreadCpuPerTaskMs).toFixed(3)})`) +
      ` (${p.measured.completed}/${spec.n} done); ` +
      `${(p.busyUs / 1000).toFixed(0)} ms sampled busy, ${(p.idleUs / 1000).toFixed(0)} ms idle in the window (${p.scope}).`,
  );
  console.log('');
  console.log(table('owner', p.byOwner, p.busyUs, 20));
  console.log('');
  console.log(table('library module', p.byModule, p.busyUs, 20));
  console.log('');
  console.log(table('function', p.byFunction, p.busyUs, top));
  console.log('');
  console.log('garbage collection in the window (from --trace-gc):');
  for (const [kind, { count, pauseMs }] of p.gcKinds)
    console.log(`  ${kind}: ${count} collections, ${pauseMs.toFixed(1)} ms paused`);
  if (p.compiles !== undefined)
    console.log(
      `\noptimizing compilations begun (--trace-opt): ${p.compiles.cold} in the cold phase, ${p.compiles.warm} in the warm phase`,
    );
  if (p.lost !== undefined)
    console.log(
      `optimized code thrown away before the warm phase (a hidden class or object it embeds died): ${p.lost.length} functions` +
        (p.lost.length === 0 ? '' : `: ${p.lost.join(', ')}`),
    );
  if (p.calls !== undefined) {
    console.log(
      '\nentries into functions in the warm phase, per task (calls and resumptions after an await; precise coverage; this run is slowed by counting):',
    );
    console.log(callTables(p.calls, top));
  }
  if (p.alloc !== undefined) {
    console.log(
      `\nallocated in the warm phase: ${p.alloc.totalPerTask.toFixed(0)} bytes per task (sampling heap profiler, collected objects included)`,
    );
    console.log(bytesTable('owner', p.alloc.byOwner, p.alloc.totalPerTask));
    console.log(bytesTable('library module', p.alloc.byModule, p.alloc.totalPerTask));
  }
  if (p.heap !== undefined) {
    console.log(`\nnew heap nodes with all ${spec.n} tasks in flight (memory phase, heap snapshots diffed):`);
    console.log(heapTable(p.heap, top));
  }
  console.log(`\nProfiles: ${p.dir}`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
