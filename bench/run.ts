/**
 * `npm run bench`: runs every contender × workload × N in its own child process (`--expose-gc`),
 * prints a table, writes bench/results.json, and regenerates docs/performance.md and
 * docs/performance.svg from this run's numbers.
 *
 * Options (also as environment variables):
 *   --quick             N = 1 and 100, stdio at N = 100 (BENCH_QUICK=1)
 *   --n=1,100           concurrent task counts (BENCH_N)
 *   --contenders=a,b    mcp-task-client, sdk-stream, ext-tasks, floor (BENCH_CONTENDERS)
 *   --workloads=a,b     fixed-notify, fixed-poll, random-notify, random-poll (BENCH_WORKLOADS)
 *   --reps=K            repetitions per scenario; default 3 for N = 1, 2 for N <= 100, else 1 (BENCH_REPS)
 *   --stdio-n=K         N of the stdio run, 0 to skip it (BENCH_STDIO_N)
 *   --write / --no-write  write results and docs; by default only a full run writes
 *   --in-process        run scenarios in this process (debugging; memory figures then need --expose-gc)
 */
import { execFileSync, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTENDER_IDS, CONTENDER_LABELS, versions, type ContenderId } from './contenders/index.js';
import { aggregate, checkTargets, consoleTable, markdown, shortfalls, sortRows, svgChart } from './report.js';
import { runScenario, type ScenarioResult, type ScenarioSpec, type Workload } from './scenario.js';
import { WORKLOADS } from './workloads.js';

const FULL_N = [1, 100, 1000, 10_000];
const WARMUP = 20;

interface Options {
  ns: number[];
  contenders: ContenderId[];
  workloads: Workload[];
  reps: number | undefined;
  stdioN: number;
  write: boolean;
  inProcess: boolean;
  subset: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (match === null) throw new Error(`Unknown argument ${arg}`);
    flags.set(match[1]!, match[2] ?? 'true');
  }
  const get = (flag: string, env: string): string | undefined => flags.get(flag) ?? process.env[env];
  const list = (value: string | undefined): string[] | undefined => value?.split(',').map((s) => s.trim()).filter(Boolean);
  const quick = get('quick', 'BENCH_QUICK') !== undefined && get('quick', 'BENCH_QUICK') !== '0';
  const ns = list(get('n', 'BENCH_N'))?.map(Number) ?? (quick ? [1, 100] : FULL_N);
  if (ns.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--n takes positive integers');
  const contenders = (list(get('contenders', 'BENCH_CONTENDERS')) ?? [...CONTENDER_IDS]) as ContenderId[];
  for (const c of contenders) if (!CONTENDER_IDS.includes(c)) throw new Error(`Unknown contender ${c}`);
  const workloadIds = list(get('workloads', 'BENCH_WORKLOADS'));
  const workloads = workloadIds === undefined ? [...WORKLOADS] : WORKLOADS.filter((w) => workloadIds.includes(w.id));
  if (workloadIds !== undefined && workloads.length !== workloadIds.length) throw new Error(`Unknown workload in ${workloadIds.join(',')}`);
  const reps = get('reps', 'BENCH_REPS');
  const stdio = get('stdio-n', 'BENCH_STDIO_N');
  const subset =
    quick ||
    ['n', 'contenders', 'workloads', 'reps', 'stdio-n'].some((f) => flags.has(f)) ||
    ['BENCH_N', 'BENCH_CONTENDERS', 'BENCH_WORKLOADS', 'BENCH_REPS', 'BENCH_STDIO_N'].some((e) => process.env[e] !== undefined);
  return {
    ns,
    contenders,
    workloads,
    reps: reps === undefined ? undefined : Number(reps),
    stdioN: stdio === undefined ? (quick ? 100 : 1000) : Number(stdio),
    write: flags.has('no-write') ? false : flags.has('write') || !subset,
    inProcess: flags.has('in-process'),
    subset,
  };
}

function repsFor(options: Options, n: number): number {
  return options.reps ?? (n === 1 ? 3 : n <= 100 ? 2 : 1);
}

function timeoutFor(n: number): number {
  return 60_000 + n * 20;
}

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A frozen copy of lib/ for one run, and what it was copied from. */
interface LibSnapshot {
  /** Absolute path of the snapshot's index.ts (passed to children as BENCH_LIB). */
  readonly entry: string;
  /** Human-readable origin: commit, uncommitted changes, content hash. */
  readonly describe: string;
  remove(): void;
}

function hashDir(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else hash.update(path.relative(dir, full)).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

function git(args: readonly string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/**
 * Copies lib/ to a temporary directory (with package.json and a node_modules link), so the whole
 * run measures one version of the library even if lib/ is edited meanwhile.
 */
function snapshotLib(): LibSnapshot {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-task-client-bench-'));
  cpSync(path.join(ROOT, 'lib'), path.join(dir, 'lib'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const commit = git(['rev-parse', '--short', 'HEAD']) || 'unknown commit';
  const dirty = git(['status', '--porcelain', '--', 'lib']) !== '';
  return {
    entry: path.join(dir, 'lib', 'index.ts'),
    describe: `lib/ at ${commit}${dirty ? ' with uncommitted changes' : ''} (content sha256 ${hashDir(path.join(ROOT, 'lib'))})`,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function runChild(spec: ScenarioSpec): Promise<ScenarioResult> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [JSON.stringify(spec)], {
      execArgv: ['--expose-gc', '--no-warnings', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: { ok: true; result: ScenarioResult } | { ok: false; error: string } | undefined;
    const killer = setTimeout(() => child.kill('SIGKILL'), spec.timeoutMs + 60_000);
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
    created: 0,
    completed: 0,
    failed: spec.n,
    errors: [error instanceof Error ? error.message.split('\n')[0]! : String(error)],
    lag: null,
    tasksGetPerTask: Number.NaN,
    tasksResultPerTask: Number.NaN,
    requestsTotal: Number.NaN,
    requestsByMethod: {},
    clientNotifications: {},
    serverNotifications: {},
    minPollGapMs: null,
    cpuPerTaskMs: Number.NaN,
    heapPerTaskBytes: null,
    rssPerTaskBytes: null,
    retainedPerTaskBytes: null,
    eventLoopDelayP99Ms: Number.NaN,
    eventLoopDelayMaxMs: Number.NaN,
    loopSamples: 0,
    createMs: Number.NaN,
    wallMs: Number.NaN,
    scope: spec.transport === 'memory' ? 'client+server process' : 'client process',
    clock: null,
    warnings: {},
  };
}

function machine(): string {
  const cpus = os.cpus();
  return `${cpus[0]?.model.trim() ?? 'unknown CPU'} × ${cpus.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const specs: ScenarioSpec[] = [];
  for (const workload of options.workloads) {
    for (const n of options.ns) {
      for (let rep = 0; rep < repsFor(options, n); rep += 1) {
        for (const contender of options.contenders) {
          specs.push({ contender, workload, n, transport: 'memory', seed: 1000 + rep, warmup: WARMUP, timeoutMs: timeoutFor(n) });
        }
      }
    }
  }
  if (options.stdioN > 0) {
    for (const workload of options.workloads.filter((w) => w.duration.kind === 'random')) {
      for (const contender of options.contenders) {
        specs.push({ contender, workload, n: options.stdioN, transport: 'stdio', seed: 1000, warmup: WARMUP, timeoutMs: timeoutFor(options.stdioN) });
      }
    }
  }
  const snapshot = snapshotLib();
  try {
    await runAll(options, specs, snapshot);
  } finally {
    snapshot.remove();
  }
}

async function runAll(options: Options, specs: readonly ScenarioSpec[], snapshot: LibSnapshot): Promise<void> {
  process.env.BENCH_LIB = snapshot.entry;
  const v = { ...versions(), 'mcp-task-client': `${versions()['mcp-task-client']}, ${snapshot.describe}` };
  console.error(`Benchmark: ${specs.length} scenarios. Versions: ${Object.entries(v).map(([k, x]) => `${k} ${x}`).join(', ')}`);
  // Pre-flight: the library under test must load and run before minutes are spent on it.
  const probe = await (options.inProcess ? runScenario : runChild)({
    ...specs[0]!,
    contender: 'mcp-task-client',
    n: 10,
    transport: 'memory',
    timeoutMs: 30_000,
  }).catch((error: unknown) => failedResult(specs[0]!, error));
  if (!probe.ok && options.contenders.includes('mcp-task-client')) {
    throw new Error(`Pre-flight run of mcp-task-client failed: ${probe.errors.join('; ')}`);
  }
  const started = Date.now();
  const results: ScenarioResult[] = [];
  for (const [i, spec] of specs.entries()) {
    const t = Date.now();
    let result: ScenarioResult;
    try {
      result = options.inProcess ? await runScenario(spec) : await runChild(spec);
    } catch (error) {
      result = failedResult(spec, error);
    }
    results.push(result);
    const lag = result.lag === null ? '–' : `${result.lag.median.toFixed(2)} ms`;
    console.error(
      `[${String(i + 1).padStart(3)}/${specs.length}] ${spec.transport.padEnd(6)} ${spec.workload.id.padEnd(13)} N=${String(spec.n).padEnd(5)} ` +
        `${CONTENDER_LABELS[spec.contender].padEnd(20)} ${((Date.now() - t) / 1000).toFixed(1).padStart(5)} s  ` +
        `done ${result.completed}/${spec.n}  lag ${lag}${result.errors.length > 0 ? `  ERR ${result.errors[0]}` : ''}`,
    );
  }
  const elapsedS = (Date.now() - started) / 1000;
  const rows = sortRows(aggregate(results), options.workloads);
  console.log('');
  console.log(`Versions: ${Object.entries(v).map(([k, x]) => `${k} ${x}`).join(', ')}`);
  console.log(`Machine: ${machine()}`);
  console.log('');
  console.log(consoleTable(rows));
  console.log('');
  const checks = checkTargets(rows, options.workloads);
  for (const c of checks) console.log(`${c.pass ? 'met    ' : 'NOT MET'}  ${c.target} [${c.scenario}]: ${c.measured}`);
  const behind = shortfalls(rows).filter((s) => s.contender !== 'floor');
  console.log('');
  console.log(`${behind.length} figure(s) where another contender measured better than mcp-task-client${behind.length > 0 ? ':' : '.'}`);
  for (const s of behind) console.log(`  ${s.figure} [${s.scenario}] ${CONTENDER_LABELS[s.contender]} ${s.theirs.toFixed(3)} vs ours ${s.ours.toFixed(3)}`);
  console.log(`\nTotal time ${elapsedS.toFixed(0)} s.`);
  if (!options.write) {
    console.log('Subset run: nothing written (pass --write to write bench/results.json and docs/performance.md).');
    return;
  }
  const generatedAt = new Date().toISOString();
  const root = new URL('../', import.meta.url);
  writeFileSync(
    new URL('bench/results.json', root),
    `${JSON.stringify({ generatedAt, versions: v, machine: machine(), elapsedS, options: { ...options, workloads: options.workloads.map((w) => w.id) }, workloads: options.workloads, rows, runs: results }, null, 2)}\n`,
  );
  writeFileSync(new URL('docs/performance.svg', root), `${svgChart(rows, options.workloads)}\n`);
  writeFileSync(
    new URL('docs/performance.md', root),
    markdown({
      generatedAt,
      versions: v,
      machine: machine(),
      command: options.subset ? `npm run bench -- ${process.argv.slice(2).join(' ')}` : 'npm run bench',
      workloads: options.workloads,
      rows,
      chartFile: 'performance.svg',
      elapsedS,
    }),
  );
  console.log('Wrote bench/results.json, docs/performance.md and docs/performance.svg.');
}

await main();
