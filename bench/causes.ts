/**
 * The measured causes of the page's misses: the full run ends by profiling a few scenarios
 * (bench/profile.ts) for the library and for the floor, and the page prints, side by side, where
 * each one's CPU goes per task (by owner on the main thread, and the share of V8's background
 * threads), what each one allocates per task, and what each one keeps per in-flight task. Every
 * figure of this section comes from the same run as the rest of the page.
 */
import type { CallSummary } from './calls.js';
import type { ContenderId } from './contenders/index.js';
import { LIBRARY } from './owners.js';
import type { AllocSummary, PhaseCompiles, ProfileResult } from './profile.js';
import type { ScenarioSpec } from './scenario.js';
import type { TransportKind, WireKind } from './transports.js';

/** One profiled scenario, reduced to plain per-task figures (kept in results.json). */
export interface CauseProfile {
  readonly wire: WireKind;
  readonly transport: TransportKind;
  readonly workload: string;
  readonly n: number;
  readonly contender: ContenderId;
  /** CPU per task of the profiled phase (the profiler itself adds some). */
  readonly cpuPerTaskMs: number;
  /** Its main thread's share; the rest ran on V8's background threads (compiler, GC helpers). Linux only. */
  readonly mainCpuPerTaskMs?: number | null;
  /** Bytes allocated per task in the warm phase (a run of its own under the sampling heap profiler), by owner, and the library's by module. */
  readonly allocBytes?: Readonly<Record<string, number>>;
  readonly allocTotalBytes?: number;
  readonly allocModuleBytes?: Readonly<Record<string, number>>;
  /** Sampled self time per task, µs, by owner (library, SDK, garbage collection, ...). */
  readonly ownerUs: Readonly<Record<string, number>>;
  /** The library's sampled self time per task, µs, by module (the largest). */
  readonly moduleUs: Readonly<Record<string, number>>;
  /** New heap bytes per in-flight task, by kind (the largest), and all of them; absent for a CPU profile. */
  readonly heapBytes?: Readonly<Record<string, number>>;
  readonly heapTotalBytes?: number;
  /** Functions V8's optimizing compiler began to compile in the cold and the warm phase (`--trace-opt`, the CPU profile's process). */
  readonly compiles?: PhaseCompiles;
  /**
   * Entries into functions per task in the warm phase (a call, or a resumption after an `await`
   * or a `yield`), counted by V8's precise coverage in a process of its own, by owner; the
   * library's most entered functions.
   */
  readonly calls?: CodeCalls;
}

/** Entries per task of one owner, and how many of its functions were entered at least once per task. */
export interface OwnerEntries {
  readonly perTask: number;
  readonly functions: number;
}

/** See {@link CauseProfile.calls}. */
export interface CodeCalls {
  /** By owner (bench/owners.ts), the owners entered at least once per 20 tasks. */
  readonly owners: Readonly<Record<string, OwnerEntries>>;
  /** The library's most entered functions, by name (the first of each name), entries per task to one decimal. */
  readonly top: Readonly<Record<string, number>>;
}

/**
 * The client's code on a task's path: the library (or the floor's own code) with its bench shim,
 * and the SDK request path and schema validation it runs (the library skips the SDK's `Protocol`
 * for its own requests; the 2025-11-25 floor sends them through it, so leaving the SDK out would
 * shorten the floor's path but not the library's).
 */
const CLIENT_CODE: readonly string[] = [
  LIBRARY,
  'contender code (bench/contenders)',
  'SDK v1 request path (Protocol, its maps, schemas)',
  'SDK v2 request path (Protocol, its maps, schemas)',
  'zod (schema validation)',
  'ext-tasks',
];

/** One decimal. */
const tenth = (x: number): number => Math.round(x * 10) / 10;

/** A phase's entries per task, reduced to what the page prints (see {@link CauseProfile.calls}). */
export function codeCalls(summary: CallSummary): CodeCalls {
  const owners: Record<string, OwnerEntries> = {};
  for (const o of summary.byOwner)
    if (o.callsPerTask >= 0.05) owners[o.owner] = { perTask: tenth(o.callsPerTask), functions: o.perTaskFunctions };
  const top: Record<string, number> = {};
  for (const f of summary.libraryFunctions) {
    if (Object.keys(top).length === 8) break;
    const name = f.name.split('  ')[0]!;
    if (!(name in top)) top[name] = tenth(f.callsPerTask);
  }
  return { owners, top };
}

/** The client's entries per task and functions entered on every task (see {@link CLIENT_CODE}), and the library's alone. */
export function clientEntries(calls: CodeCalls): { client: OwnerEntries; library: OwnerEntries } {
  let perTask = 0;
  let functions = 0;
  for (const owner of CLIENT_CODE) {
    perTask += calls.owners[owner]?.perTask ?? 0;
    functions += calls.owners[owner]?.functions ?? 0;
  }
  return {
    client: { perTask: Math.round(perTask), functions },
    library: calls.owners[LIBRARY] ?? { perTask: 0, functions: 0 },
  };
}

/** A profile to take at the end of the full run. */
export interface CauseSpec {
  readonly kind: 'cpu' | 'heap';
  readonly wire: WireKind;
  readonly transport: TransportKind;
  readonly workload: string;
  readonly n: number;
  /** The library and its floor on this wire. */
  readonly contenders: readonly [ContenderId, ContenderId];
}

/**
 * The profiles of the full run: the rows issue 29 names (the extension in process and over stdio,
 * the 2025-11-25 wire over stdio, polling only, N = 1,000) for the CPU and the allocations, and
 * the heap on both wires out of process.
 */
export const CAUSE_SPECS: readonly CauseSpec[] = [
  {
    kind: 'cpu',
    wire: 'ext',
    transport: 'memory',
    workload: 'random-poll',
    n: 1000,
    contenders: ['mcp-task-client', 'floor'],
  },
  {
    kind: 'cpu',
    wire: 'ext',
    transport: 'stdio',
    workload: 'random-poll',
    n: 1000,
    contenders: ['mcp-task-client', 'floor'],
  },
  {
    kind: 'cpu',
    wire: '2025',
    transport: 'stdio',
    workload: 'random-poll',
    n: 1000,
    contenders: ['mcp-task-client', 'floor'],
  },
  {
    kind: 'heap',
    wire: '2025',
    transport: 'stdio',
    workload: 'random-poll',
    n: 1000,
    contenders: ['mcp-task-client', 'floor'],
  },
  {
    kind: 'heap',
    wire: 'ext',
    transport: 'stdio',
    workload: 'random-poll',
    n: 1000,
    contenders: ['mcp-task-client', 'floor'],
  },
];

const TOP_MODULES = 8;
const TOP_KINDS = 14;

function perTask(map: ReadonlyMap<string, number>, n: number, top: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) out[key] = us / n;
  return out;
}

/** The largest entries of a per-task map, rounded to whole bytes. */
function topBytes(map: ReadonlyMap<string, number>, top: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) out[key] = Math.round(bytes);
  return out;
}

/** Reduces a profile (and, for a CPU profile, the allocation profile of another run of it) to its {@link CauseProfile}. */
export function causeOf(
  spec: ScenarioSpec,
  profile: ProfileResult,
  alloc?: AllocSummary,
  calls?: CallSummary,
): CauseProfile {
  const n = profile.measured.completed || spec.n;
  const base = {
    wire: spec.wire,
    transport: spec.transport,
    workload: spec.workload.id,
    n: spec.n,
    contender: spec.contender,
    cpuPerTaskMs: profile.measured.cpuPerTaskMs,
    mainCpuPerTaskMs: profile.measured.mainThreadCpuPerTaskMs ?? null,
    ...(profile.compiles === undefined ? {} : { compiles: profile.compiles }),
    ...(calls === undefined ? {} : { calls: codeCalls(calls) }),
    ownerUs: perTask(profile.byOwner, n, 20),
    moduleUs: perTask(profile.byModule, n, TOP_MODULES),
    ...(alloc === undefined
      ? {}
      : {
          allocBytes: topBytes(alloc.byOwner, 12),
          allocTotalBytes: Math.round(alloc.totalPerTask),
          allocModuleBytes: topBytes(alloc.byModule, TOP_MODULES),
        }),
  };
  if (profile.heap === undefined) return base;
  const heapBytes: Record<string, number> = {};
  for (const kind of profile.heap.slice(0, TOP_KINDS)) heapBytes[kind.kind] = kind.bytesPerTask;
  return { ...base, heapBytes, heapTotalBytes: profile.heap.reduce((sum, k) => sum + k.bytesPerTask, 0) };
}

const TRANSPORT: Record<TransportKind, string> = { memory: 'in process', stdio: 'stdio', http: 'Streamable HTTP' };
const WIRE: Record<WireKind, string> = { '2025': '2025-11-25', ext: 'extension' };

function scenario(p: CauseProfile): string {
  return `${WIRE[p.wire]}, ${TRANSPORT[p.transport]}, ${p.workload}, N=${p.n.toLocaleString('en-US')}`;
}

function pairs(profiles: readonly CauseProfile[]): Array<readonly [CauseProfile, CauseProfile | undefined]> {
  const mine = profiles.filter((p) => p.contender.startsWith('mcp-task-client'));
  return mine.map((p) => [
    p,
    profiles.find(
      (q) =>
        q !== p &&
        !q.contender.startsWith('mcp-task-client') &&
        q.wire === p.wire &&
        q.transport === p.transport &&
        q.workload === p.workload &&
        q.n === p.n,
    ),
  ]);
}

const num = (value: number | undefined, digits: number): string => (value === undefined ? '–' : value.toFixed(digits));

/** `0.300 ms (main thread 0.200, V8's background threads 0.100)`, or just the CPU where threads were not told apart. */
function cpuOf(p: CauseProfile): string {
  const main = p.mainCpuPerTaskMs;
  if (main === undefined || main === null) return `${num(p.cpuPerTaskMs, 3)} ms`;
  return `${num(p.cpuPerTaskMs, 3)} ms (main thread ${num(main, 3)}, V8's background threads ${num(p.cpuPerTaskMs - main, 3)})`;
}

/** The page's "Measured causes" section (markdown lines). */
export function causesMarkdown(cpu: readonly CauseProfile[], heap: readonly CauseProfile[]): string[] {
  const lines: string[] = ['## Measured causes', ''];
  lines.push(
    'Profiled at the end of this run with `npm run bench:profile` (one process each, warm phase; the sampling profiler adds some CPU of its own). ' +
      'Reproduce one with e.g. `npm run bench:profile -- --wire=ext --transport=memory --workload=random-poll --n=1000 --contender=mcp-task-client` ' +
      '(add `--alloc=1` for the allocations, `--calls=1` for the entries into functions, `--heap=1` for the heap, `--contender=floor` for the floor). ' +
      "The main thread runs the JavaScript, the event loop and the transport; V8's background threads compile hot functions (the optimizing compiler) and help the garbage collector. " +
      "The SDK's code is split into its transport (framing and validating each message, which every contender pays) and its request path (`Protocol` with its request and response maps and result schemas, which the library's raw dispatch skips).",
    '',
  );
  for (const [mine, floor] of pairs(cpu)) {
    lines.push(
      `**Where the CPU goes, per task** (${scenario(mine)}; CPU per task ${cpuOf(mine)} against the floor's ${floor === undefined ? '–' : cpuOf(floor)}; ` +
        "below, the main thread's time sampled by owner, in µs per task):",
      '',
    );
    lines.push('| owner | mcp-task-client | floor |', '|---|---:|---:|');
    const owners = [...new Set([...Object.keys(mine.ownerUs), ...Object.keys(floor?.ownerUs ?? {})])];
    owners.sort((a, b) => (mine.ownerUs[b] ?? 0) - (mine.ownerUs[a] ?? 0));
    for (const owner of owners)
      lines.push(`| ${owner} | ${num(mine.ownerUs[owner], 1)} | ${num(floor?.ownerUs[owner], 1)} |`);
    lines.push('');
    const modules = Object.entries(mine.moduleUs);
    if (modules.length > 0)
      lines.push(
        `The library's own time by module (µs per task): ${modules.map(([m, us]) => `${m} ${us.toFixed(1)}`).join(', ')}.`,
        '',
      );
    if (mine.compiles !== undefined)
      lines.push(
        `Functions V8's optimizing compiler began to compile (the same process, \`--trace-opt\`; each compilation runs on a background thread): ` +
          `${mine.compiles.cold} in the cold phase and ${mine.compiles.warm} in the warm one, against the floor's ` +
          `${floor?.compiles === undefined ? '–' : `${floor.compiles.cold} and ${floor.compiles.warm}`}. ` +
          "A function is compiled once it has run enough, so code that runs once or twice per task reaches that point only after some thousands of tasks: the library's longer path per task shows as more compilations, in the warm phase too.",
        '',
      );
    if (mine.calls !== undefined) {
      const own = clientEntries(mine.calls);
      const theirs = floor?.calls === undefined ? undefined : clientEntries(floor.calls).client;
      lines.push(
        `How long a task's path is (entries into functions per task in the warm phase, a call or a resumption after an \`await\`, counted by V8's precise coverage in a process of its own, \`npm run bench:profile -- --calls=1\`): ` +
          `the client's code (the library with its bench shim, and the SDK request path and schema validation it runs) enters functions ${own.client.perTask} times per task, ${own.client.functions} of them on every task, against the floor's ` +
          `${theirs === undefined ? '–' : `${theirs.perTask} and ${theirs.functions}`}; the library's own code alone, ${Math.round(own.library.perTask)} and ${own.library.functions}. ` +
          `The library's most entered functions, per task: ${Object.entries(mine.calls.top)
            .map(([name, count]) => `${name} ${count}`)
            .join(', ')}.`,
        '',
      );
    }
    if (mine.allocBytes !== undefined) {
      lines.push(
        `**What a task allocates** (the same scenario, warm phase, another process under the sampling heap profiler; bytes per task, collected objects included: ` +
          `${num(mine.allocTotalBytes, 0)} against the floor's ${num(floor?.allocTotalBytes, 0)}):`,
        '',
      );
      lines.push('| owner | mcp-task-client | floor |', '|---|---:|---:|');
      const allocOwners = [...new Set([...Object.keys(mine.allocBytes), ...Object.keys(floor?.allocBytes ?? {})])];
      allocOwners.sort((a, b) => (mine.allocBytes![b] ?? 0) - (mine.allocBytes![a] ?? 0));
      for (const owner of allocOwners)
        lines.push(`| ${owner} | ${num(mine.allocBytes[owner], 0)} | ${num(floor?.allocBytes?.[owner], 0)} |`);
      lines.push('');
      const allocModules = Object.entries(mine.allocModuleBytes ?? {});
      if (allocModules.length > 0)
        lines.push(
          `The library's allocations by module (bytes per task): ${allocModules.map(([m, b]) => `${m} ${b}`).join(', ')}.`,
          '',
        );
    }
  }
  for (const [mine, floor] of pairs(heap)) {
    if (mine.heapBytes === undefined) continue;
    lines.push(
      `**What each in-flight task keeps** (${scenario(mine)}; new heap objects with all N tasks in flight, from two heap snapshots, bytes per task: ` +
        `${num(mine.heapTotalBytes, 0)} against the floor's ${num(floor?.heapTotalBytes, 0)}):`,
      '',
    );
    lines.push('| kind | mcp-task-client | floor |', '|---|---:|---:|');
    for (const [kind, bytes] of Object.entries(mine.heapBytes))
      lines.push(`| ${kind} | ${bytes.toFixed(0)} | ${num(floor?.heapBytes?.[kind], 0)} |`);
    lines.push('');
  }
  return lines;
}

/** What causes a miss of each target, in words; the figures are in {@link causesMarkdown}'s tables and the scenario tables. */
export const CAUSE_TEXT: Readonly<Record<string, string>> = {
  cpu:
    'the library\'s own code per task and the garbage it makes, above what the floor spends (see "Where the CPU goes" below: the rows "library under test" and "garbage collection"). ' +
    "On the extension wire the floor writes raw JSON-RPC on the transport and keeps nothing per task but a timer and a promise, so all of the library's per-task work (launch, record, handle, request bookkeeping) is extra.",
  cpuVsOthers: 'the same per-task work; those contenders keep no record, handle or deadline per task.',
  heap:
    'what the library keeps per in-flight task: its record, its handle, and the latest snapshot with its timestamps, against the floor\'s promise and timer (see "What each in-flight task keeps" below). ' +
    "In process the server's own per-task state counts for both, so the ratio there is smaller.",
  lag:
    "lag is the time from the server finishing a task to `result()` resolving. Where marked *within spread*, a process of the library met the target against a process of the floor: the miss is within this run's variation. " +
    'Elsewhere it is the library\'s work per notification and completion (see "Where the CPU goes"), which queues up when many tasks finish together.',
  requests:
    "with notifications, whether a task's poll leaves before its terminal notification arrives is a matter of timing; where marked *within spread*, the processes overlap.",
  cpu29:
    'two parts, told apart by the threads (the main thread\'s share is in the table above, and per profiled row under "Where the CPU goes"). ' +
    "On V8's background threads, the optimizing compiler: the library has more code on each task's path than the floor (the entries into functions per task, and the functions entered on every task, are counted under \"Where the CPU goes\"), and the cold phase (and, at N = 1,000, still the warm one) is when that code reaches V8's optimization threshold and is compiled (the functions compiled in each phase are counted there too). " +
    'On the main thread, the library\'s own work per task (rows "library under test" and its modules; allocations under "What a task allocates"), against a floor that keeps a timer and a promise per task.',
  heap29:
    "what each in-flight task keeps beyond the floor (see \"What each in-flight task keeps\"): its record, its handle, its latest snapshot (with the `createdAt` string), the result promise with its settle function, the poll timer's entry, and one more map entry (the engine's tasks and the client's handles), against the floor's entry, timer and promise; " +
    'and code V8 compiles while the phase runs, which counts in the heap of that phase. ' +
    "Over Streamable HTTP the figure varies most between runs (the floor's own by a third): each process reads `heapUsed` once, with a socket, a parser and buffers per open stream counted alike for everyone; " +
    "runs before 2026-12-05 also counted about 1 KB per task of the library's finished requests' signals, which Node's `fetch` holds until a finalization task that then ran only after the reading (bench/README.md, the memory phase).",
};
