/**
 * `npm run bench`: runs every scenario (wire × transport × workload × N × contender) in fresh child
 * processes (`--expose-gc`), at least three per scenario, interleaving the contenders so that a
 * change in the machine's load touches them alike; then `npm run soak`; prints a table and the
 * targets, writes bench/results.json, and regenerates docs/performance.md and docs/performance.svg
 * from this run's numbers. Everything runs the compiled copy of lib/ and bench/ made when the run
 * starts (bench/build.ts).
 *
 * Options (also as environment variables):
 *   --quick              a development run in under two minutes: N = 100, one process each, the
 *                        random workloads, a subset of contenders, stdio once; writes nothing (BENCH_QUICK=1)
 *   --wires=2025,ext     (BENCH_WIRES)
 *   --transports=a,b     memory, stdio, http (BENCH_TRANSPORTS)
 *   --n=1,100            task counts (BENCH_N); out of process only the N ≥ 1,000 of the list run
 *   --contenders=a,b     ids (BENCH_CONTENDERS); see bench/contenders/index.ts
 *   --workloads=a,b      fixed-notify, fixed-poll, random-notify, random-poll (BENCH_WORKLOADS)
 *   --reps=K             processes per scenario, default 3 (BENCH_REPS)
 *   --no-soak            skip `npm run soak`
 *   --causes / --no-causes profile the library and the floor at the end, for the page's measured
 *                        causes of misses (bench/causes.ts); by default only a full run does
 *   --write / --no-write write results and docs; by default only a full run writes
 *   --only=durable       only the durable-queue row (bench/durable.ts; needs redis-server): with
 *                        --write it replaces that row in bench/results.json and renders the page
 *                        again; --quick, --n=N and --reps=K apply to it
 */
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { buildBench, type BenchBuild } from './build.js';
import type { CallSummary } from './calls.js';
import { CAUSE_SPECS, causeOf, type CauseProfile } from './causes.js';
import { durableOptions, runDurable, type DurableResult } from './durable.js';
import { renderStored } from './render.js';
import { measureSize, type SizeResult } from './size.js';
import { profileScenario } from './profile.js';
import { CONTENDERS, versions, type ContenderId } from './contenders/index.js';
import {
  aggregate,
  checksOf,
  consoleTable,
  label,
  LIMITS,
  shortfalls,
  sortRows,
  targetRows,
  type SoakResult,
} from './report.js';
import type { ScenarioResult, ScenarioSpec, Workload } from './scenario.js';
import { median } from './stats.js';
import type { TransportKind, WireKind } from './transports.js';
import { WORKLOADS } from './workloads.js';

/** One block of the matrix: the scenarios of a wire on a transport. */
interface Block {
  readonly wire: WireKind;
  readonly transport: TransportKind;
  readonly ns: readonly number[];
  readonly workloads: readonly string[];
  readonly contenders: readonly ContenderId[];
  /** Starts per second (Streamable HTTP). */
  readonly pace?: number;
}

const ALL_WORKLOADS = WORKLOADS.map((w) => w.id);
const RANDOM = ['random-notify', 'random-poll'];
/** Over Streamable HTTP, tasks start at this rate (the HTTP client costs ~1 ms of CPU per request here). */
const HTTP_PACE = 100;

/** The full run. */
const FULL: readonly Block[] = [
  {
    wire: '2025',
    transport: 'memory',
    ns: [1000, 10_000],
    workloads: ALL_WORKLOADS,
    contenders: ['mcp-task-client', 'sdk-stream', 'ext-tasks', 'floor'],
  },
  // The library over SDK v2 against a floor over SDK v2, at N = 1,000 (the SDK v1 rows carry the targets).
  {
    wire: '2025',
    transport: 'memory',
    ns: [1000],
    workloads: ALL_WORKLOADS,
    contenders: ['mcp-task-client-v2', 'floor-v2'],
  },
  {
    wire: '2025',
    transport: 'stdio',
    ns: [1000, 10_000],
    workloads: ALL_WORKLOADS,
    contenders: ['mcp-task-client', 'sdk-stream', 'ext-tasks', 'floor'],
  },
  {
    wire: '2025',
    transport: 'http',
    ns: [1000],
    workloads: ALL_WORKLOADS,
    contenders: ['mcp-task-client', 'sdk-stream', 'ext-tasks', 'floor'],
    pace: HTTP_PACE,
  },
  {
    wire: 'ext',
    transport: 'memory',
    ns: [1000, 10_000],
    workloads: RANDOM,
    contenders: ['mcp-task-client', 'ext-tasks', 'floor'],
  },
  {
    wire: 'ext',
    transport: 'stdio',
    ns: [1000, 10_000],
    workloads: RANDOM,
    contenders: ['mcp-task-client', 'ext-tasks', 'floor'],
  },
  {
    wire: 'ext',
    transport: 'http',
    ns: [1000],
    workloads: RANDOM,
    contenders: ['mcp-task-client', 'ext-tasks', 'floor'],
    pace: HTTP_PACE,
  },
];

/**
 * Contenders a run leaves out unless named with `--contenders`, and the blocks they then join: the
 * library with OpenTelemetry on, beside the library without it in process (docs/observability.md
 * states the overhead from that pair). The published page (a full run) has no such row.
 */
const ON_REQUEST: ReadonlyArray<readonly [ContenderId, (block: Block) => boolean]> = [
  [
    'mcp-task-client-otel',
    (block) => block.wire === '2025' && block.transport === 'memory' && block.contenders.includes('mcp-task-client'),
  ],
];

/** `--quick`: under two minutes. */
const QUICK: readonly Block[] = [
  {
    wire: '2025',
    transport: 'memory',
    ns: [100],
    workloads: RANDOM,
    contenders: ['mcp-task-client', 'sdk-stream', 'floor'],
  },
  { wire: 'ext', transport: 'memory', ns: [100], workloads: RANDOM, contenders: ['mcp-task-client', 'floor'] },
  { wire: '2025', transport: 'stdio', ns: [100], workloads: ['random-poll'], contenders: ['mcp-task-client', 'floor'] },
];

interface Options {
  readonly blocks: readonly Block[];
  readonly reps: number;
  readonly warmup: number;
  readonly soak: boolean;
  /** Profile the library and the floor at the end for the page's measured causes (bench/causes.ts). */
  readonly causes: boolean;
  readonly write: boolean;
  readonly subset: boolean;
  readonly quick: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (match === null) throw new Error(`Unknown argument ${arg}`);
    flags.set(match[1]!, match[2] ?? 'true');
  }
  const get = (flag: string, env: string): string | undefined => flags.get(flag) ?? process.env[env];
  const list = (value: string | undefined): string[] | undefined =>
    value
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const quickValue = get('quick', 'BENCH_QUICK');
  const quick = quickValue !== undefined && quickValue !== '0';
  const wires = list(get('wires', 'BENCH_WIRES'));
  const transports = list(get('transports', 'BENCH_TRANSPORTS'));
  const ns = list(get('n', 'BENCH_N'))?.map(Number);
  const contenders = list(get('contenders', 'BENCH_CONTENDERS'));
  const workloads = list(get('workloads', 'BENCH_WORKLOADS'));
  if (ns?.some((n) => !Number.isInteger(n) || n < 1) === true) throw new Error('--n takes positive integers');
  for (const w of workloads ?? []) if (!ALL_WORKLOADS.includes(w)) throw new Error(`Unknown workload ${w}`);
  for (const c of contenders ?? []) if (!CONTENDERS.some((x) => x.id === c)) throw new Error(`Unknown contender ${c}`);
  const requested = ON_REQUEST.filter(([id]) => contenders?.includes(id) === true);
  const blocks = (quick ? QUICK : FULL)
    .map((b) => ({
      ...b,
      contenders: [...b.contenders, ...requested.filter(([, joins]) => joins(b)).map(([id]) => id)],
    }))
    .filter((b) => wires === undefined || wires.includes(b.wire))
    .filter((b) => transports === undefined || transports.includes(b.transport))
    .map((b) => ({
      ...b,
      ns: ns === undefined ? b.ns : b.transport === 'memory' ? ns : ns.filter((n) => n >= 1000 || quick),
      workloads: workloads === undefined ? b.workloads : b.workloads.filter((w) => workloads.includes(w)),
      contenders: contenders === undefined ? b.contenders : b.contenders.filter((c) => contenders.includes(c)),
    }))
    .filter((b) => b.ns.length > 0 && b.workloads.length > 0 && b.contenders.length > 0);
  const reps = Number(get('reps', 'BENCH_REPS') ?? (quick ? 1 : 3));
  const subset =
    quick ||
    ['wires', 'transports', 'n', 'contenders', 'workloads', 'reps'].some((f) => flags.has(f)) ||
    ['BENCH_WIRES', 'BENCH_TRANSPORTS', 'BENCH_N', 'BENCH_CONTENDERS', 'BENCH_WORKLOADS', 'BENCH_REPS'].some(
      (e) => process.env[e] !== undefined,
    );
  return {
    blocks,
    reps,
    warmup: quick ? 200 : 1000,
    soak: !flags.has('no-soak') && !quick,
    causes: flags.has('causes') || (!flags.has('no-causes') && !subset),
    write: flags.has('no-write') ? false : flags.has('write') || !subset,
    subset,
    quick,
  };
}

/** How long one phase may take before the scenario gives up on it. */
function timeoutFor(n: number, pace: number | undefined): number {
  return 60_000 + n * 20 + (pace === undefined ? 0 : (n / pace) * 1000);
}

function specs(options: Options): ScenarioSpec[] {
  const out: ScenarioSpec[] = [];
  for (const block of options.blocks) {
    for (const workloadId of block.workloads) {
      const workload = WORKLOADS.find((w) => w.id === workloadId)!;
      for (const n of block.ns) {
        for (let rep = 0; rep < options.reps; rep += 1) {
          // Contenders interleaved: each repetition runs them all, one after another.
          for (const contender of block.contenders) {
            out.push({
              wire: block.wire,
              contender,
              workload,
              n,
              transport: block.transport,
              pace: block.pace,
              seed: 1000 + rep,
              warmup: options.warmup,
              timeoutMs: timeoutFor(n, block.pace),
            });
          }
        }
      }
    }
  }
  return out;
}

function runChild(build: BenchBuild, spec: ScenarioSpec): Promise<ScenarioResult> {
  return new Promise((resolve, reject) => {
    const child = fork(build.child, [JSON.stringify(spec)], {
      cwd: build.dir,
      execArgv: ['--expose-gc', '--no-warnings'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: { ok: true; result: ScenarioResult } | { ok: false; error: string } | undefined;
    const killer = setTimeout(() => child.kill('SIGKILL'), spec.timeoutMs * 3 + 60_000);
    child.on('message', (message) => {
      answer = message as typeof answer;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      if (answer?.ok === true) resolve(answer.result);
      else reject(new Error(answer?.ok === false ? answer.error : `scenario process exited (${code ?? signal})`));
    });
  });
}

function failedResult(spec: ScenarioSpec, error: unknown): ScenarioResult {
  return {
    spec,
    ok: false,
    errors: [error instanceof Error ? error.message.split('\n')[0]! : String(error)],
    cold: null,
    warm: null,
    heapPerTaskBytes: null,
    rssPerTaskBytes: null,
    scope: spec.transport === 'memory' ? 'client+server process' : 'client process',
    clock: null,
    warnings: {},
  };
}

/** Runs the compiled `npm run soak` and reads its heap readings. */
function runSoak(build: BenchBuild): Promise<SoakResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(build.dir, 'bench', 'soak.js')], {
      cwd: build.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('exit', (code) => {
      const readings = [...output.matchAll(/^\s*(\d+) tasks\s+heap ([\d.]+) MiB/gm)];
      const first = Number(readings[0]?.[2] ?? Number.NaN);
      const last = Number(readings.at(-1)?.[2] ?? Number.NaN);
      resolve({
        tasks: Number(readings.at(-1)?.[1] ?? 0),
        readingsMiB: readings.map((m) => Number(m[2])),
        growth: (last - first) / first,
        passed: code === 0,
        output,
      });
    });
  });
}

/** The warm phase's function entries per task (bench/calls.ts), in a process of its own; undefined if that run fails. */
async function countCalls(build: BenchBuild, spec: ScenarioSpec): Promise<CallSummary | undefined> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-calls-'));
  try {
    return (await profileScenario(build, spec, { calls: true, dir })).calls;
  } catch (error) {
    console.error(
      `Counting the calls of ${spec.contender} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Profiles {@link CAUSE_SPECS} (library and floor each) for the page's measured causes. */
async function profileCauses(
  build: BenchBuild,
  options: Options,
): Promise<{ cpu: CauseProfile[]; heap: CauseProfile[] }> {
  const cpu: CauseProfile[] = [];
  const heap: CauseProfile[] = [];
  for (const c of CAUSE_SPECS) {
    for (const contender of c.contenders) {
      const spec: ScenarioSpec = {
        wire: c.wire,
        contender,
        workload: WORKLOADS.find((w) => w.id === c.workload)!,
        n: c.n,
        transport: c.transport,
        pace: undefined,
        seed: 1000,
        warmup: options.warmup,
        timeoutMs: timeoutFor(c.n, undefined),
      };
      const t = Date.now();
      try {
        const profile = await profileScenario(build, spec, {
          heap: c.kind === 'heap' ? 'kinds' : false,
          jit: c.kind === 'cpu',
        });
        rmSync(profile.dir, { recursive: true, force: true });
        // The allocations in a process of their own: the sampling heap profiler slows the one it runs in.
        const allocated = c.kind === 'cpu' ? await profileScenario(build, spec, { alloc: true }) : undefined;
        if (allocated !== undefined) rmSync(allocated.dir, { recursive: true, force: true });
        // The calls in a process of their own too: counting them changes what V8 optimizes. A
        // failure there costs only the counts, not the profiles measured above.
        const calls = c.kind === 'cpu' ? await countCalls(build, spec) : undefined;
        (c.kind === 'cpu' ? cpu : heap).push(causeOf(spec, profile, allocated?.alloc, calls));
        console.error(
          `Profile (${c.kind}): ${c.wire} ${c.transport} ${c.workload} N=${c.n} ${label(c.wire, contender)} ${((Date.now() - t) / 1000).toFixed(1)} s`,
        );
      } catch (error) {
        console.error(
          `Profile (${c.kind}) of ${label(c.wire, contender)} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
  return { cpu, heap };
}

function machine(): string {
  const cpus = os.cpus();
  return `${cpus[0]?.model.trim() ?? 'unknown CPU'} × ${cpus.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

/** The versions the durable row names: bullmq and the redis-server binary. */
function durableVersions(): Record<string, string> {
  const bullmq = (
    JSON.parse(readFileSync(new URL('../node_modules/bullmq/package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  const redis =
    /v=([\d.]+)/.exec(spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? 'unknown';
  return { bullmq, 'redis-server': redis };
}

/** `--only=durable`: the durable-queue row alone. */
async function mainDurable(argv: readonly string[]): Promise<void> {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--(quick|write|n|reps)(?:=(.*))?$/.exec(arg);
    if (match === null) throw new Error(`--only=durable takes --quick, --n=N, --reps=K and --write, not ${arg}`);
    flags.set(match[1]!, match[2] ?? 'true');
  }
  const command = `npm run bench -- --only=durable${argv.length > 0 ? ` ${argv.join(' ')}` : ''}`;
  const durable = await runDurable(
    durableOptions(flags, (line) => console.error(line)),
    { command, machine: machine(), versions: durableVersions() },
  );
  console.log(JSON.stringify(durable, null, 2));
  if (!flags.has('write')) {
    console.log(
      'Nothing written (pass --write to store the durable row in bench/results.json and render docs/performance.md).',
    );
    return;
  }
  const root = new URL('../', import.meta.url);
  const stored = JSON.parse(readFileSync(new URL('bench/results.json', root), 'utf8')) as Parameters<
    typeof renderStored
  >[0] & { durable?: DurableResult };
  const next = { ...stored, durable };
  writeFileSync(new URL('bench/results.json', root), `${JSON.stringify(next, null, 2)}\n`);
  const page = renderStored(next);
  writeFileSync(new URL('docs/performance.svg', root), page.svg);
  writeFileSync(new URL('docs/performance.md', root), page.markdown);
  console.log('Wrote the durable row to bench/results.json, and docs/performance.md and docs/performance.svg.');
}

async function main(): Promise<void> {
  const only = process.argv.slice(2).find((arg) => arg.startsWith('--only='));
  if (only !== undefined) {
    if (only !== '--only=durable') throw new Error(`${only}: the only row that runs alone is --only=durable`);
    return mainDurable(process.argv.slice(2).filter((arg) => arg !== only));
  }
  const options = parseOptions(process.argv.slice(2));
  const list = specs(options);
  const workloads: Workload[] = WORKLOADS.filter((w) => list.some((s) => s.workload.id === w.id));
  const build = buildBench();
  const loads: number[] = [];
  const sampler = setInterval(() => loads.push(os.loadavg()[0]!), 10_000);
  try {
    const v = { ...versions(), 'mcp-task-client': `${versions()['mcp-task-client']}, ${build.describe}` };
    console.error(
      `Benchmark: ${list.length} scenario processes${options.soak ? ' and the soak' : ''}. ${Object.entries(v)
        .map(([k, x]) => `${k} ${x}`)
        .join(', ')}`,
    );
    // Pre-flight: the library under test must load and run before minutes are spent on it.
    const probe = await runChild(build, {
      ...list[0]!,
      contender: 'mcp-task-client',
      n: 10,
      warmup: 10,
      pace: undefined,
      transport: 'memory',
      timeoutMs: 30_000,
    }).catch((error: unknown) => failedResult(list[0]!, error));
    if (!probe.ok) throw new Error(`Pre-flight run of mcp-task-client failed: ${probe.errors.join('; ')}`);
    const started = Date.now();
    const results: ScenarioResult[] = [];
    for (const [i, spec] of list.entries()) {
      const t = Date.now();
      let result: ScenarioResult;
      try {
        result = await runChild(build, spec);
      } catch (error) {
        result = failedResult(spec, error);
      }
      results.push(result);
      const cpu = (p: typeof result.cold): string => (p === null ? '–' : p.cpuPerTaskMs.toFixed(3));
      console.error(
        `[${String(i + 1).padStart(3)}/${list.length}] ${spec.wire.padEnd(4)} ${spec.transport.padEnd(6)} ${spec.workload.id.padEnd(13)} N=${String(spec.n).padEnd(5)} ` +
          `${label(spec.wire, spec.contender).padEnd(26)} ${((Date.now() - t) / 1000).toFixed(1).padStart(5)} s  CPU ${cpu(result.cold)}/${cpu(result.warm)} ms` +
          `${result.ok ? '' : `  FAILED ${result.errors[0] ?? ''}`}`,
      );
    }
    let soak: SoakResult | undefined;
    if (options.soak) {
      console.error('Soak: npm run soak (100,000 tasks)…');
      soak = await runSoak(build);
      console.error(soak.output.trim());
    }
    const causes = options.causes ? await profileCauses(build, options) : undefined;
    // The durable-queue row (a full run only: it needs redis-server and takes several minutes).
    let durable: DurableResult | undefined;
    if (!options.subset) {
      console.error('Durable queue (bench/durable.ts)…');
      const command = 'npm run bench';
      durable = await runDurable(
        durableOptions(new Map(), (line) => console.error(line)),
        { command, machine: machine(), versions: durableVersions() },
      ).catch((error: unknown) => {
        console.error(`Durable row failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      });
    }
    // The bundle sizes (bench/size.ts) of the compiled copy under test: seconds, a full run only.
    let size: SizeResult | undefined;
    if (!options.subset) {
      size = await measureSize('npm run bench', path.join(build.dir, 'lib', 'index.js')).catch((error: unknown) => {
        console.error(`Bundle sizes failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      });
    }
    const elapsedS = (Date.now() - started) / 1000;
    const rows = sortRows(aggregate(results), workloads);
    console.log('');
    console.log(
      `Versions: ${Object.entries(v)
        .map(([k, x]) => `${k} ${x}`)
        .join(', ')}`,
    );
    console.log(`Machine: ${machine()}`);
    console.log('');
    console.log(consoleTable(rows));
    console.log('');
    const targets = targetRows(rows, workloads);
    for (const t of targets) {
      for (const c of checksOf(t)) {
        console.log(
          `${c.pass ? 'met    ' : 'NOT MET'}  ${c.target} [${t.row.wire} ${t.row.transport} ${t.row.workload} N=${t.row.n} ${label(t.row.wire, t.row.contender)}]: ${c.measured}`,
        );
      }
    }
    if (soak !== undefined)
      console.log(
        `${soak.passed && soak.growth <= LIMITS.soakGrowth ? 'met    ' : 'NOT MET'}  soak heap growth ≤ 10%: ${(soak.growth * 100).toFixed(1)}%`,
      );
    const ahead = shortfalls(rows).filter(
      (s) => s.beyondSpread && !CONTENDERS.find((c) => c.wire === s.wire && c.id === s.contender)?.floor,
    );
    console.log('');
    console.log(
      `${ahead.length} figure(s) where another contender is ahead by more than the spread${ahead.length > 0 ? ':' : '.'}`,
    );
    for (const s of ahead)
      console.log(
        `  ${s.figure} [${s.wire} ${s.scenario}] ${label(s.wire, s.contender)} ${s.theirs.median.toFixed(3)} vs ours ${s.ours.median.toFixed(3)}`,
      );
    console.log(`\nTotal time ${(elapsedS / 60).toFixed(1)} min.`);
    if (!options.write) {
      console.log('Subset run: nothing written (pass --write to write bench/results.json and docs/performance.md).');
      return;
    }
    const load = loads.length === 0 ? undefined : { median: median(loads), max: Math.max(...loads) };
    const generatedAt = new Date().toISOString();
    const root = new URL('../', import.meta.url);
    const command = options.subset ? `npm run bench -- ${process.argv.slice(2).join(' ')}` : 'npm run bench';
    const stored = {
      format: 2,
      generatedAt,
      command,
      versions: v,
      machine: machine(),
      elapsedS,
      load,
      options: { ...options, blocks: options.blocks },
      workloads,
      rows,
      shortfalls: shortfalls(rows),
      soak: soak === undefined ? undefined : { ...soak, output: soak.output.split('\n') },
      causes,
      durable,
      size,
      runs: results,
    };
    writeFileSync(new URL('bench/results.json', root), `${JSON.stringify(stored, null, 2)}\n`);
    // The page is made from what was just stored, as `npm run bench:render` makes it again.
    const page = renderStored(JSON.parse(JSON.stringify(stored)) as Parameters<typeof renderStored>[0]);
    writeFileSync(new URL('docs/performance.svg', root), page.svg);
    writeFileSync(new URL('docs/performance.md', root), page.markdown);
    console.log('Wrote bench/results.json, docs/performance.md and docs/performance.svg.');
  } finally {
    clearInterval(sampler);
    build.remove();
  }
}

await main();
