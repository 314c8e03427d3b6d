/**
 * The measured causes of the page's misses: the full run ends by profiling a few scenarios
 * (bench/profile.ts) for the library and for the floor, and the page prints, side by side, where
 * each one's CPU goes per task and what each one keeps per in-flight task. Every figure of this
 * section comes from the same run as the rest of the page.
 */
import type { ContenderId } from './contenders/index.js';
import type { ProfileResult } from './profile.js';
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
  /** Sampled self time per task, µs, by owner (library, SDK, garbage collection, ...). */
  readonly ownerUs: Readonly<Record<string, number>>;
  /** The library's sampled self time per task, µs, by module (the largest). */
  readonly moduleUs: Readonly<Record<string, number>>;
  /** New heap bytes per in-flight task, by kind (the largest), and all of them; absent for a CPU profile. */
  readonly heapBytes?: Readonly<Record<string, number>>;
  readonly heapTotalBytes?: number;
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

/** The profiles of the full run: the largest CPU misses, and the heap on both wires out of process. */
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
    wire: '2025',
    transport: 'stdio',
    workload: 'random-poll',
    n: 10_000,
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

/** Reduces a profile to its {@link CauseProfile}. */
export function causeOf(spec: ScenarioSpec, profile: ProfileResult): CauseProfile {
  const n = profile.measured.completed || spec.n;
  const base = {
    wire: spec.wire,
    transport: spec.transport,
    workload: spec.workload.id,
    n: spec.n,
    contender: spec.contender,
    cpuPerTaskMs: profile.measured.cpuPerTaskMs,
    ownerUs: perTask(profile.byOwner, n, 20),
    moduleUs: perTask(profile.byModule, n, TOP_MODULES),
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

/** The page's "Measured causes" section (markdown lines). */
export function causesMarkdown(cpu: readonly CauseProfile[], heap: readonly CauseProfile[]): string[] {
  const lines: string[] = ['## Measured causes', ''];
  lines.push(
    'Profiled at the end of this run with `npm run bench:profile` (one process each, warm phase; the sampling profiler adds some CPU of its own). ' +
      'Reproduce one with e.g. `npm run bench:profile -- --wire=ext --transport=memory --workload=random-poll --n=1000 --contender=mcp-task-client` (add `--heap=1` for the heap, `--contender=floor` for the floor).',
    '',
  );
  for (const [mine, floor] of pairs(cpu)) {
    lines.push(
      `**Where the CPU goes, per task** (${scenario(mine)}; sampled self time in µs per task; CPU per task ${num(mine.cpuPerTaskMs, 3)} ms against the floor's ${num(floor?.cpuPerTaskMs, 3)} ms):`,
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
};
