/**
 * Turns scenario results into rows (median and spread over the processes of each scenario), the
 * console table, the targets of issue 15 (ratios to the floor, computed from the run), the list of
 * figures where another contender is ahead by more than the measured spread, and the
 * docs/performance.md page. Pure functions: nothing here measures or writes files; the chart is
 * in chart.ts.
 */
import type { DurableResult } from './durable.js';
import { durableMarkdown } from './durable-report.js';
import type { SizeResult } from './size.js';
import { sizeMarkdown } from './size-report.js';
import { CAUSE_TEXT, causesMarkdown, type CauseProfile } from './causes.js';
import { CONTENDERS, contender as contenderInfo, type ContenderId } from './contenders/index.js';
import type { PhaseResult, ScenarioResult, Workload } from './scenario.js';
import { median } from './stats.js';
import { checks29, scenarioOf, targets29Markdown } from './targets29.js';
import type { TransportKind, WireKind } from './transports.js';

/** A figure over the processes of one scenario: their median, smallest and largest value. */
export interface Stat {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The figures of one measured phase, over the processes of a scenario. */
export interface PhaseStats {
  readonly lagMedianMs: Stat;
  readonly lagP99Ms: Stat;
  readonly tasksGetPerTask: Stat;
  readonly requestsPerTask: Stat;
  readonly cpuPerTaskMs: Stat;
  /** The main thread's share of the CPU (Linux; NaN elsewhere): the rest is V8's background threads. */
  readonly mainCpuPerTaskMs: Stat;
  readonly retainedPerTaskBytes: Stat;
  readonly eventLoopDelayP99Ms: Stat;
  /** Shortest poll gap over all processes. */
  readonly minPollGapMs: number | null;
  /** `notifications/cancelled` the client sent, per task (median). */
  readonly cancelledPerTask: number;
}

/** One wire × transport × workload × N × contender, over its processes. */
export interface Row {
  readonly wire: WireKind;
  readonly transport: TransportKind;
  readonly workload: string;
  readonly n: number;
  readonly contender: ContenderId;
  /** Processes measured. */
  readonly reps: number;
  /** Every process completed every task of both phases. */
  readonly ok: boolean;
  /** Fewest tasks completed in one phase of one process. */
  readonly completed: number;
  readonly cold: PhaseStats;
  readonly warm: PhaseStats;
  readonly heapPerTaskBytes: Stat;
  readonly rssPerTaskBytes: Stat;
  readonly scope: string;
  readonly pace: number | undefined;
  readonly clockUncertaintyMs: number | null;
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
}

const NONE: Stat = { median: Number.NaN, min: Number.NaN, max: Number.NaN };

function stat(values: ReadonlyArray<number | null | undefined>): Stat {
  const finite = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (finite.length === 0) return NONE;
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) };
}

function phaseStats(phases: ReadonlyArray<PhaseResult | null>): PhaseStats {
  const list = phases.filter((p): p is PhaseResult => p !== null);
  const gaps = list.map((p) => p.minPollGapMs).filter((g): g is number => g !== null);
  return {
    lagMedianMs: stat(list.map((p) => p.lag?.median)),
    lagP99Ms: stat(list.map((p) => p.lag?.p99)),
    tasksGetPerTask: stat(list.map((p) => p.tasksGetPerTask)),
    requestsPerTask: stat(list.map((p) => p.requestsPerTask)),
    cpuPerTaskMs: stat(list.map((p) => p.cpuPerTaskMs)),
    // Absent from runs stored before the threads were told apart.
    mainCpuPerTaskMs: stat(list.map((p) => p.mainThreadCpuPerTaskMs)),
    retainedPerTaskBytes: stat(list.map((p) => p.retainedPerTaskBytes)),
    eventLoopDelayP99Ms: stat(list.map((p) => p.eventLoopDelayP99Ms)),
    minPollGapMs: gaps.length === 0 ? null : Math.min(...gaps),
    cancelledPerTask: 0, // set by aggregate(), which knows N
  };
}

function key(r: { wire: string; transport: string; workload: string; n: number; contender: string }): string {
  return `${r.wire}|${r.transport}|${r.workload}|${r.n}|${r.contender}`;
}

/** Groups raw results by scenario (minus seed/repetition): the median and spread of every figure. */
export function aggregate(results: readonly ScenarioResult[]): Row[] {
  const groups = new Map<string, ScenarioResult[]>();
  for (const result of results) {
    const s = result.spec;
    const k = key({ wire: s.wire, transport: s.transport, workload: s.workload.id, n: s.n, contender: s.contender });
    const list = groups.get(k) ?? [];
    list.push(result);
    groups.set(k, list);
  }
  const rows: Row[] = [];
  for (const list of groups.values()) {
    const spec = list[0]!.spec;
    const warnings = new Set<string>();
    for (const r of list) for (const [name, count] of Object.entries(r.warnings)) warnings.add(`${name} ×${count}`);
    const perTask = (phase: PhaseResult | null): number =>
      phase === null ? 0 : (phase.clientNotifications['notifications/cancelled'] ?? 0) / spec.n;
    const cold = phaseStats(list.map((r) => r.cold));
    const warm = phaseStats(list.map((r) => r.warm));
    rows.push({
      wire: spec.wire,
      transport: spec.transport,
      workload: spec.workload.id,
      n: spec.n,
      contender: spec.contender,
      reps: list.length,
      ok: list.every((r) => r.ok),
      completed: Math.min(...list.map((r) => Math.min(r.cold?.completed ?? 0, r.warm?.completed ?? 0))),
      cold: { ...cold, cancelledPerTask: median(list.map((r) => perTask(r.cold))) },
      warm: { ...warm, cancelledPerTask: median(list.map((r) => perTask(r.warm))) },
      heapPerTaskBytes: stat(list.map((r) => r.heapPerTaskBytes)),
      rssPerTaskBytes: stat(list.map((r) => r.rssPerTaskBytes)),
      scope: list[0]!.scope,
      pace: spec.pace,
      clockUncertaintyMs: list.some((r) => r.clock !== null)
        ? Math.max(...list.map((r) => r.clock?.uncertaintyMs ?? 0))
        : null,
      warnings: [...warnings],
      errors: [...new Set(list.flatMap((r) => r.errors))].slice(0, 3),
    });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Order and lookup

const WIRE_ORDER: Record<WireKind, number> = { '2025': 0, ext: 1 };
const TRANSPORT_ORDER: Record<TransportKind, number> = { memory: 0, stdio: 1, http: 2 };

function contenderOrder(wire: WireKind, id: ContenderId): number {
  return CONTENDERS.findIndex((c) => c.wire === wire && c.id === id);
}

/** Rows in report order: wire, transport, workload (as given), N, contender. */
export function sortRows(rows: readonly Row[], workloads: readonly Workload[]): Row[] {
  const order = new Map(workloads.map((w, i) => [w.id, i]));
  return [...rows].sort(
    (a, b) =>
      WIRE_ORDER[a.wire] - WIRE_ORDER[b.wire] ||
      TRANSPORT_ORDER[a.transport] - TRANSPORT_ORDER[b.transport] ||
      (order.get(a.workload) ?? 99) - (order.get(b.workload) ?? 99) ||
      a.n - b.n ||
      contenderOrder(a.wire, a.contender) - contenderOrder(b.wire, b.contender),
  );
}

function find(rows: readonly Row[], like: Row, contender: ContenderId): Row | undefined {
  return rows.find((r) => key(r) === key({ ...like, contender }));
}

/** How the report names a contender of a wire. */
export function label(wire: WireKind, id: ContenderId): string {
  return contenderInfo(wire, id).label;
}

const WIRE_NAMES: Record<WireKind, string> = { '2025': 'MCP 2025-11-25 tasks', ext: 'the 2026-07-28 tasks extension' };
const TRANSPORT_NAMES: Record<TransportKind, string> = {
  memory: 'in process',
  stdio: 'stdio',
  http: 'Streamable HTTP',
};

// ---------------------------------------------------------------------------------------------
// Formatting

/**
 * `ours vs theirs` with two decimals, or more where two would show different figures as equal
 * (1.203 against 1.200 is a miss, and must not read "1.20 vs 1.20").
 */
function versus(ours: number, theirs: number): string {
  let digits = 2;
  while (ours !== theirs && digits < 6 && fmt(ours, digits) === fmt(theirs, digits)) digits += 1;
  return `${fmt(ours, digits)} vs ${fmt(theirs, digits)}`;
}

function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  if (abs !== 0 && abs < 0.1 && digits <= 2) return value.toFixed(3);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
}

function kib(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1024).toFixed(1) : '–';
}

/** `median (min–max)`, or the median alone for one process. */
function spread(s: Stat, show: (v: number) => string, reps: number): string {
  if (!Number.isFinite(s.median)) return '–';
  if (reps < 2 || s.min === s.max) return show(s.median);
  return `${show(s.median)} (${show(s.min)}–${show(s.max)})`;
}

function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–';
}

// ---------------------------------------------------------------------------------------------
// The console table

const CONSOLE_COLUMNS = [
  'wire',
  'transport',
  'workload',
  'N',
  'contender',
  'CPU cold',
  'CPU warm',
  'lag med warm',
  'lag p99 warm',
  'req/task',
  'heap KiB',
  'done',
] as const;

/** A plain-text table for the terminal (medians only). */
export function consoleTable(rows: readonly Row[]): string {
  const body = rows.map((r) => [
    r.wire,
    r.transport,
    r.workload,
    String(r.n),
    label(r.wire, r.contender),
    fmt(r.cold.cpuPerTaskMs.median, 3),
    fmt(r.warm.cpuPerTaskMs.median, 3),
    fmt(r.warm.lagMedianMs.median, 2),
    fmt(r.warm.lagP99Ms.median, 2),
    fmt(r.warm.requestsPerTask.median, 2),
    kib(r.heapPerTaskBytes.median),
    `${r.completed}/${r.n}${r.ok ? '' : ' !'}`,
  ]);
  const header = [...CONSOLE_COLUMNS] as string[];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string =>
    r.map((c, i) => (i < 5 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  let last = '';
  for (const [i, r] of body.entries()) {
    const row = rows[i]!;
    const group = `${row.wire}|${row.transport}|${row.workload}|${row.n}`;
    if (last !== '' && group !== last) out.push('');
    last = group;
    out.push(line(r));
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Targets (issue 15), computed from the run

/** The limits of issue 15. */
export const LIMITS = {
  /** CPU per task ÷ the floor's, every workload, transport, N ≥ 1,000, cold and warm. */
  cpu: 1.15,
  /** Heap per in-flight task ÷ the floor's, in process. */
  heapInProcess: 1.15,
  /** Heap per in-flight task ÷ the floor's, out of process (stdio, Streamable HTTP). */
  heapOutOfProcess: 1.3,
  /** Lag median and p99 ÷ the floor's, with notifications. */
  lagNotify: 1.2,
  /** Lag median and p99 ÷ the floor's, polling only (the floor plus 5%). */
  lagPoll: 1.05,
  /** Heap growth from 25,000 to 100,000 tasks in `npm run soak`. */
  soakGrowth: 0.1,
} as const;

/** The N the targets apply to. */
export const TARGET_NS: readonly number[] = [1000, 10_000];

/** One target check. */
export interface Check {
  readonly target: string;
  readonly measured: string;
  readonly pass: boolean;
  /**
   * For a miss: every figure that misses has a process of the library and one of the floor that
   * together meet the target (the library's smallest ≤ limit × the floor's largest), so the miss
   * lies within the run's spread.
   */
  readonly withinSpread?: boolean;
}

/** The checks of one contender in one scenario. */
export interface TargetRow {
  readonly row: Row;
  readonly floor: Row | undefined;
  readonly cpu: Check;
  readonly cpuVsOthers: Check | undefined;
  readonly heap: Check;
  readonly lag: Check;
  readonly requests: Check;
}

function check(target: string, measured: string, pass: boolean, withinSpread?: boolean): Check {
  return pass || withinSpread === undefined ? { target, measured, pass } : { target, measured, pass, withinSpread };
}

/** For the figures whose medians miss `limit` × the floor's: does each one's spread reach it? */
function spreadReaches(pairs: ReadonlyArray<readonly [Stat, Stat | undefined]>, limit: number): boolean | undefined {
  const missing = pairs.filter(([mine, theirs]) => theirs !== undefined && !(mine.median <= limit * theirs.median));
  if (missing.length === 0) return undefined;
  return missing.every(([mine, theirs]) => mine.min <= limit * theirs!.max);
}

/**
 * The rows of the library as everyone runs it: mcp-task-client on either SDK. The row with
 * OpenTelemetry on (`mcp-task-client-otel`, on request only) measures the cost of tracing, and is
 * held to no target and compared with nobody.
 */
function isLibrary(contender: string): boolean {
  return contender.startsWith('mcp-task-client') && contender !== 'mcp-task-client-otel';
}

/** The issue-15 checks of every mcp-task-client row at N = 1,000 and 10,000 that has a floor. */
export function targetRows(rows: readonly Row[], workloads: readonly Workload[]): TargetRow[] {
  const notify = new Map(workloads.map((w) => [w.id, w.notify]));
  const out: TargetRow[] = [];
  for (const row of rows) {
    const info = contenderInfo(row.wire, row.contender);
    if (info.floor || !isLibrary(row.contender) || !TARGET_NS.includes(row.n)) continue;
    const floor = info.reference === undefined ? undefined : find(rows, row, info.reference);
    const r = (mine: number, theirs: number | undefined): number => (theirs === undefined ? Number.NaN : mine / theirs);
    const cpuCold = r(row.cold.cpuPerTaskMs.median, floor?.cold.cpuPerTaskMs.median);
    const cpuWarm = r(row.warm.cpuPerTaskMs.median, floor?.warm.cpuPerTaskMs.median);
    const cpu = check(
      `CPU ≤ ${LIMITS.cpu}× floor`,
      `${ratio(cpuCold)} / ${ratio(cpuWarm)}`,
      cpuCold <= LIMITS.cpu && cpuWarm <= LIMITS.cpu,
      spreadReaches(
        [
          [row.cold.cpuPerTaskMs, floor?.cold.cpuPerTaskMs],
          [row.warm.cpuPerTaskMs, floor?.warm.cpuPerTaskMs],
        ],
        LIMITS.cpu,
      ),
    );
    const others = rows.filter(
      (o) =>
        o.wire === row.wire &&
        o.transport === row.transport &&
        o.workload === row.workload &&
        o.n === row.n &&
        !contenderInfo(o.wire, o.contender).floor &&
        !o.contender.startsWith('mcp-task-client'),
    );
    const cpuVsOthers =
      others.length === 0
        ? undefined
        : check(
            'CPU below SDK helper and ext-tasks',
            others
              .map(
                (o) =>
                  `${label(o.wire, o.contender)} ${ratio(row.cold.cpuPerTaskMs.median / o.cold.cpuPerTaskMs.median)} / ${ratio(row.warm.cpuPerTaskMs.median / o.warm.cpuPerTaskMs.median)}`,
              )
              .join('; '),
            others.every(
              (o) =>
                row.cold.cpuPerTaskMs.median < o.cold.cpuPerTaskMs.median &&
                row.warm.cpuPerTaskMs.median < o.warm.cpuPerTaskMs.median,
            ),
          );
    const heapLimit = row.transport === 'memory' ? LIMITS.heapInProcess : LIMITS.heapOutOfProcess;
    const heapRatio = r(row.heapPerTaskBytes.median, floor?.heapPerTaskBytes.median);
    const heap = check(
      `heap ≤ ${heapLimit}× floor`,
      ratio(heapRatio),
      heapRatio <= heapLimit,
      spreadReaches([[row.heapPerTaskBytes, floor?.heapPerTaskBytes]], heapLimit),
    );
    const lagLimit = notify.get(row.workload) === true ? LIMITS.lagNotify : LIMITS.lagPoll;
    const lagMedian = r(row.warm.lagMedianMs.median, floor?.warm.lagMedianMs.median);
    const lagP99 = r(row.warm.lagP99Ms.median, floor?.warm.lagP99Ms.median);
    const lagMedianCold = r(row.cold.lagMedianMs.median, floor?.cold.lagMedianMs.median);
    const lagP99Cold = r(row.cold.lagP99Ms.median, floor?.cold.lagP99Ms.median);
    const lag = check(
      `lag median, p99 ≤ ${lagLimit}× floor`,
      `${ratio(lagMedianCold)}, ${ratio(lagP99Cold)} / ${ratio(lagMedian)}, ${ratio(lagP99)}`,
      [lagMedian, lagP99, lagMedianCold, lagP99Cold].every((v) => v <= lagLimit),
      spreadReaches(
        [
          [row.cold.lagMedianMs, floor?.cold.lagMedianMs],
          [row.cold.lagP99Ms, floor?.cold.lagP99Ms],
          [row.warm.lagMedianMs, floor?.warm.lagMedianMs],
          [row.warm.lagP99Ms, floor?.warm.lagP99Ms],
        ],
        lagLimit,
      ),
    );
    const reqCold = row.cold.requestsPerTask.median;
    const reqWarm = row.warm.requestsPerTask.median;
    const floorCold = floor?.cold.requestsPerTask.median ?? Number.NaN;
    const floorWarm = floor?.warm.requestsPerTask.median ?? Number.NaN;
    const requests = check(
      'requests per task ≤ floor',
      `${versus(reqCold, floorCold)} / ${versus(reqWarm, floorWarm)}`,
      reqCold <= floorCold && reqWarm <= floorWarm,
      spreadReaches(
        [
          [row.cold.requestsPerTask, floor?.cold.requestsPerTask],
          [row.warm.requestsPerTask, floor?.warm.requestsPerTask],
        ],
        1,
      ),
    );
    out.push({ row, floor, cpu, cpuVsOthers, heap, lag, requests });
  }
  return out;
}

/** What `npm run soak` measured in this run (run.ts parses its output). */
export interface SoakResult {
  readonly tasks: number;
  /** Heap after a full GC at each quarter, MiB. */
  readonly readingsMiB: readonly number[];
  /** Growth from the first to the last reading (fraction). */
  readonly growth: number;
  readonly passed: boolean;
  readonly output: string;
}

/** Every check of a target row, in table order. */
export function checksOf(t: TargetRow): Check[] {
  return [t.cpu, ...(t.cpuVsOthers === undefined ? [] : [t.cpuVsOthers]), t.heap, t.lag, t.requests];
}

// ---------------------------------------------------------------------------------------------
// Earlier targets (issue 5), in process on the 2025 wire, warm phase

/** "A few milliseconds" of median lag in-process. */
export const FEW_MS = 5;
/** Required lag ratio against the SDK helper with notifications. */
export const LAG_RATIO = 50;
/** Timer granularity tolerated when checking "never faster than pollInterval" (Date.now() is whole ms). */
export const GAP_TOLERANCE_MS = 1;

/** A check of the earlier targets. */
export interface LegacyCheck {
  readonly target: string;
  readonly scenario: string;
  readonly measured: string;
  readonly pass: boolean;
}

/** The targets of issue 5 (lag with notifications, polling restraint, completion), per scenario. */
export function earlierTargets(rows: readonly Row[], workloads: readonly Workload[]): LegacyCheck[] {
  const checks: LegacyCheck[] = [];
  for (const row of rows) {
    if (row.contender !== 'mcp-task-client' || row.transport !== 'memory') continue;
    const w = workloads.find((x) => x.id === row.workload);
    if (w === undefined) continue;
    const scenario = `${row.wire === 'ext' ? 'extension, ' : ''}${row.workload}, N=${row.n}`;
    const sdk = find(rows, row, 'sdk-stream');
    checks.push({
      target: 'all tasks of both phases complete',
      scenario,
      measured: `${row.completed}/${row.n}`,
      pass: row.ok,
    });
    if (w.notify) {
      checks.push({
        target: `median lag ≤ ${FEW_MS} ms in process (with notifications)`,
        scenario,
        measured: `${fmt(row.warm.lagMedianMs.median, 2)} ms`,
        pass: row.warm.lagMedianMs.median <= FEW_MS,
      });
      if (sdk !== undefined) {
        const r = sdk.warm.lagMedianMs.median / row.warm.lagMedianMs.median;
        checks.push({
          target: `median lag ≥ ${LAG_RATIO}× lower than the SDK helper`,
          scenario,
          measured: `${fmt(sdk.warm.lagMedianMs.median, 1)} / ${fmt(row.warm.lagMedianMs.median, 2)} ms = ${fmt(r, 0)}×`,
          pass: r >= LAG_RATIO,
        });
      }
    } else {
      if (sdk !== undefined) {
        checks.push({
          target: 'tasks/get per task ≤ the SDK helper (no notifications)',
          scenario,
          measured: `${fmt(row.warm.tasksGetPerTask.median, 2)} vs ${fmt(sdk.warm.tasksGetPerTask.median, 2)}`,
          pass: row.warm.tasksGetPerTask.median <= sdk.warm.tasksGetPerTask.median,
        });
      }
      const gaps = [row.cold.minPollGapMs, row.warm.minPollGapMs].filter((g): g is number => g !== null);
      const gap = gaps.length === 0 ? null : Math.min(...gaps);
      checks.push({
        target: `never polls faster than pollInterval (${w.pollInterval} ms, ${GAP_TOLERANCE_MS} ms tolerance)`,
        scenario,
        measured: gap === null ? 'no poll' : `shortest gap ${fmt(gap, 1)} ms`,
        pass: gap === null || gap >= w.pollInterval - GAP_TOLERANCE_MS,
      });
    }
  }
  return checks;
}

// ---------------------------------------------------------------------------------------------
// Where another contender is ahead

/** The figures compared between contenders; lower is better for all. */
const FIGURES: ReadonlyArray<{
  readonly label: string;
  readonly get: (r: Row) => Stat;
  readonly unit: (v: number) => string;
  readonly memory?: boolean;
}> = [
  { label: 'CPU per task, cold (ms)', get: (r) => r.cold.cpuPerTaskMs, unit: (v) => fmt(v, 3) },
  { label: 'CPU per task, warm (ms)', get: (r) => r.warm.cpuPerTaskMs, unit: (v) => fmt(v, 3) },
  { label: 'lag median, cold (ms)', get: (r) => r.cold.lagMedianMs, unit: (v) => fmt(v, 2) },
  { label: 'lag median, warm (ms)', get: (r) => r.warm.lagMedianMs, unit: (v) => fmt(v, 2) },
  { label: 'lag p99, warm (ms)', get: (r) => r.warm.lagP99Ms, unit: (v) => fmt(v, 2) },
  { label: 'requests per task, warm', get: (r) => r.warm.requestsPerTask, unit: (v) => fmt(v, 2) },
  { label: 'heap per in-flight task (KiB)', get: (r) => r.heapPerTaskBytes, unit: (v) => kib(v), memory: true },
  {
    label: 'heap retained per task, warm (KiB)',
    get: (r) => r.warm.retainedPerTaskBytes,
    unit: (v) => kib(v),
    memory: true,
  },
  { label: 'loop delay p99, warm (ms)', get: (r) => r.warm.eventLoopDelayP99Ms, unit: (v) => fmt(v, 1) },
];

/** Below this N, per-task memory figures are GC noise (one task is a few KiB) and are not compared. */
export const MEMORY_MIN_N = 100;

/** A figure on which another contender (or a floor) measured better than mcp-task-client. */
export interface Shortfall {
  readonly figure: string;
  readonly wire: WireKind;
  readonly scenario: string;
  readonly ours: Stat;
  readonly theirs: Stat;
  readonly contender: ContenderId;
  /** The ranges over the processes do not overlap: the difference is larger than the spread. */
  readonly beyondSpread: boolean;
}

/**
 * Every figure, in every scenario, where another contender or a floor measured better (lower
 * median) than mcp-task-client on the same SDK; `beyondSpread` tells the differences larger than
 * the measured spread (their worst process is still better than our best).
 */
export function shortfalls(rows: readonly Row[]): Shortfall[] {
  const out: Shortfall[] = [];
  for (const ours of rows.filter((r) => isLibrary(r.contender))) {
    for (const other of rows) {
      if (other.contender.startsWith('mcp-task-client') || key({ ...other, contender: ours.contender }) !== key(ours))
        continue;
      // The SDK v2 run of the library is compared with its own floor only.
      if (ours.contender === 'mcp-task-client-v2' && other.contender !== 'floor-v2') continue;
      if (ours.contender === 'mcp-task-client' && other.contender === 'floor-v2') continue;
      for (const figure of FIGURES) {
        if (figure.memory === true && ours.n < MEMORY_MIN_N) continue;
        const mine = figure.get(ours);
        const theirs = figure.get(other);
        if (!Number.isFinite(mine.median) || !Number.isFinite(theirs.median) || !(theirs.median < mine.median))
          continue;
        out.push({
          figure: figure.label,
          wire: ours.wire,
          scenario: `${TRANSPORT_NAMES[ours.transport]}, ${ours.workload}, N=${ours.n}${ours.contender === 'mcp-task-client-v2' ? ', SDK v2' : ''}`,
          ours: mine,
          theirs,
          contender: other.contender,
          // One process has no spread to compare with: only repeated scenarios can be ahead beyond it.
          beyondSpread: ours.reps >= 2 && other.reps >= 2 && theirs.max < mine.min,
        });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The page

/** Everything the page needs. */
export interface ReportInput {
  readonly generatedAt: string;
  readonly versions: Record<string, string>;
  readonly machine: string;
  readonly command: string;
  readonly workloads: readonly Workload[];
  readonly rows: readonly Row[];
  readonly chartFile: string;
  readonly elapsedS: number;
  readonly soak: SoakResult | undefined;
  /** Load average while the run went on (1-minute, sampled), for the reader to judge the noise. */
  readonly load: { readonly median: number; readonly max: number } | undefined;
  /** Profiles taken at the end of the run (bench/causes.ts), for the measured causes of misses. */
  readonly causes?: { readonly cpu: readonly CauseProfile[]; readonly heap: readonly CauseProfile[] } | undefined;
  /** The durable-queue row (bench/durable.ts), when measured. */
  readonly durable?: DurableResult | undefined;
  /** The bundle sizes (bench/size.ts), when measured. */
  readonly size?: SizeResult | undefined;
}

/** The {@link CAUSE_TEXT} key of a target. */
function causeKey(target: string): string {
  if (target.startsWith('CPU below')) return 'cpuVsOthers';
  if (target.startsWith('CPU')) return 'cpu';
  if (target.startsWith('heap')) return 'heap';
  if (target.startsWith('lag')) return 'lag';
  return 'requests';
}

function describe(w: Workload, wire: WireKind): string {
  const d =
    w.duration.kind === 'fixed' ? `fixed ${w.duration.ms} ms` : `random ${w.duration.minMs}-${w.duration.maxMs} ms`;
  const notifications = wire === 'ext' ? '`notifications/tasks` on a subscription' : '`notifications/tasks/status`';
  return `${d}, pollInterval ${w.pollInterval} ms, ${w.notify ? `with ${notifications}` : 'polling only'}`;
}

const DETAIL_COLUMNS = [
  'workload',
  'N',
  'contender',
  'CPU ms per task, cold',
  'CPU ms per task, warm',
  'lag median ms, cold',
  'lag median ms, warm',
  'lag p99 ms, warm',
  'requests per task',
  'tasks/get per task',
  'heap KiB per in-flight task',
  'retained KiB per task',
  'loop delay p99 ms',
  'done',
] as const;

function detailTable(rows: readonly Row[]): string {
  const out = [
    `| ${DETAIL_COLUMNS.join(' | ')} |`,
    `|${DETAIL_COLUMNS.map((_, i) => (i < 3 ? '---' : '---:')).join('|')}|`,
  ];
  for (const r of rows) {
    const name = label(r.wire, r.contender);
    const c = [
      r.workload,
      String(r.n),
      r.contender.startsWith('mcp-task-client') ? `**${name}**` : name,
      spread(r.cold.cpuPerTaskMs, (v) => fmt(v, 3), r.reps),
      spread(r.warm.cpuPerTaskMs, (v) => fmt(v, 3), r.reps),
      spread(r.cold.lagMedianMs, (v) => fmt(v, 2), r.reps),
      spread(r.warm.lagMedianMs, (v) => fmt(v, 2), r.reps),
      spread(r.warm.lagP99Ms, (v) => fmt(v, 2), r.reps),
      fmt(r.warm.requestsPerTask.median, 2),
      fmt(r.warm.tasksGetPerTask.median, 2),
      spread(r.heapPerTaskBytes, kib, r.reps),
      spread(r.warm.retainedPerTaskBytes, kib, r.reps),
      fmt(r.warm.eventLoopDelayP99Ms.median, 1),
      r.ok ? `${r.completed}/${r.n}` : `**${r.completed}/${r.n}**`,
    ];
    out.push(`| ${c.join(' | ')} |`);
  }
  return out.join('\n');
}

function mark(c: Check | undefined): string {
  if (c === undefined) return '–';
  return `${c.measured} ${c.pass ? '✓' : '**✗**'}`;
}

/** docs/performance.md. */
export function markdown(input: ReportInput): string {
  const rows = sortRows(input.rows, input.workloads);
  const targets = targetRows(rows, input.workloads);
  const earlier = earlierTargets(rows, input.workloads);
  const ahead = shortfalls(rows);
  const lines: string[] = [];
  const push = (...text: string[]): void => {
    lines.push(...text);
  };
  push('# Performance', '');
  push(
    `<!-- Generated by \`${input.command}\` (bench/run.ts) on ${input.generatedAt}. Do not edit by hand: every number below comes from that run. -->`,
    '',
  );
  push(
    'mcp-task-client side by side with what a user would pick instead, and with a hand-written *floor* that does the least a client can do, ' +
      'on both task wires, in process, over stdio and over Streamable HTTP. Every figure below was measured by one run of `npm run bench`; ' +
      'how each is measured is in [bench/README.md](../bench/README.md).',
    '',
  );
  push(
    `Generated ${input.generatedAt} on ${input.machine}; the run took ${Math.round(input.elapsedS / 60)} min` +
      (input.load === undefined
        ? '.'
        : `, with a load average of ${input.load.median.toFixed(1)} (at most ${input.load.max.toFixed(1)}) on the machine meanwhile.`),
    '',
  );
  const cores = Number(/× (\d+)/.exec(input.machine)?.[1] ?? Number.NaN);
  if (input.load !== undefined && input.load.median > cores) {
    push(
      `**A loaded machine.** The load average stayed above the machine's ${cores} cores: other processes competed for the CPU throughout, which inflates and scatters every CPU figure (and the floor's as much as the library's, hence ratios of processes measured side by side). ` +
        'A run on a quiet machine gives the figures to rely on.',
      '',
    );
  }
  push('| package | version |', '|---|---|');
  for (const [name, version] of Object.entries(input.versions)) push(`| ${name} | ${version} |`);
  push('');
  push('**Method.**');
  push(
    '- Every scenario (wire × transport × workload × N × contender) runs in fresh Node processes, one per repetition; every figure is the **median over those processes, with the spread (smallest–largest) in brackets**.',
  );
  push(
    '- In each process the library under test is the compiled JavaScript (`tsc`), as users run it. After connecting and one task, the **cold** phase measures N tasks; then 1,000 short tasks run unmeasured, and the **warm** phase measures N tasks again; then a separate phase holds N tasks in flight to read the heap.',
  );
  push(
    '- In process, CPU and heap are those of the whole process (client and server); over stdio and Streamable HTTP (the server a child process on 127.0.0.1), of the client process only. Over Streamable HTTP the tasks start paced (the rate is given with each table), so that the HTTP stack does not saturate the client.',
  );
  push(
    '- The floors do the least a client can do: raw requests, one timer per task, no validation, retries, deadlines or cancellation. On the 2025-11-25 wire they call the SDK client (`floor` on SDK v1, `floor, SDK v2` on SDK v2 in the legacy era); on the extension the floor writes raw JSON-RPC on the transport. Targets are ratios to the floor on the same SDK.',
  );
  push('');
  push(
    "Workloads (N tasks started at once on one client unless paced; each task's clock starts when the server creates it):",
    '',
  );
  for (const w of input.workloads) push(`- \`${w.id}\`: ${describe(w, '2025')}`);
  push('');
  push(`![Benchmark chart](${input.chartFile})`, '');

  // Targets
  push('## Targets (issue 15)', '');
  push(
    `At N = 1,000 and 10,000, every workload and transport, for mcp-task-client against the floor of its SDK: CPU per task ≤ ${LIMITS.cpu}× (cold / warm) and below the SDK helper and ext-tasks; ` +
      `heap per in-flight task ≤ ${LIMITS.heapInProcess}× in process and ≤ ${LIMITS.heapOutOfProcess}× out of process; lag median and p99 ≤ ${LIMITS.lagNotify}× with notifications and ≤ ${LIMITS.lagPoll}× (the floor plus 5%) without (cold / warm); ` +
      "requests per task never more than the floor's. Ratios are of medians; ✓ met, **✗** not met.",
    '',
  );
  push(
    '| wire | transport | workload | N | contender | CPU ÷ floor | CPU ÷ others | heap ÷ floor | lag ÷ floor (median, p99) | requests per task |',
  );
  push('|---|---|---|---:|---|---|---|---|---|---|');
  for (const t of targets) {
    const r = t.row;
    push(
      `| ${r.wire === 'ext' ? 'extension' : '2025-11-25'} | ${TRANSPORT_NAMES[r.transport]} | ${r.workload} | ${r.n.toLocaleString('en-US')} | ${label(r.wire, r.contender)} | ` +
        `${mark(t.cpu)} | ${mark(t.cpuVsOthers)} | ${mark(t.heap)} | ${mark(t.lag)} | ${mark(t.requests)} |`,
    );
  }
  const all = targets.flatMap(checksOf);
  const missed = all.filter((c) => !c.pass);
  push('');
  if (input.soak !== undefined) {
    const s = input.soak;
    push(
      `Endurance (\`npm run soak\`, ${s.tasks.toLocaleString('en-US')} tasks through one TaskClient over stdio, heap after a full GC at each quarter: ${s.readingsMiB.map((v) => `${v.toFixed(1)} MiB`).join(', ')}): ` +
        `growth ${(s.growth * 100).toFixed(1)}% (limit ${LIMITS.soakGrowth * 100}%) ${s.passed && s.growth <= LIMITS.soakGrowth ? '✓' : '**✗**'}`,
      '',
    );
  }
  const soakMissed = input.soak !== undefined && !(input.soak.passed && input.soak.growth <= LIMITS.soakGrowth) ? 1 : 0;
  const missed29 = checks29(rows).filter((c) => !c.pass);
  push(
    missed.length + soakMissed === 0
      ? `All ${all.length + (input.soak === undefined ? 0 : 1)} target checks met in this run.`
      : `**${missed.length + soakMissed} of ${all.length + (input.soak === undefined ? 0 : 1)} target checks not met in this run**; the causes measured are under [Targets missed](#targets-missed).`,
    '',
  );

  push(...targets29Markdown(rows));

  // Where another contender is ahead
  const real = ahead.filter((s) => s.beyondSpread && !contenderInfo(s.wire, s.contender).floor);
  const floors = ahead.filter((s) => s.beyondSpread && contenderInfo(s.wire, s.contender).floor);
  push('## Where another contender is ahead', '');
  push(
    'Every figure on which another contender measured better than mcp-task-client **by more than the measured spread** (their worst process better than our best). ' +
      `Smaller differences are within the noise of this machine and are only in bench/results.json (${ahead.filter((s) => !s.beyondSpread).length} of them in this run). Per-task memory below N=${MEMORY_MIN_N} is not compared.`,
    '',
  );
  if (real.length === 0) push('None.');
  else {
    push('| figure | wire | scenario | contender | theirs | mcp-task-client |', '|---|---|---|---|---:|---:|');
    for (const s of real) {
      const figure = FIGURES.find((f) => f.label === s.figure)!;
      push(
        `| ${s.figure} | ${s.wire === 'ext' ? 'extension' : '2025-11-25'} | ${s.scenario} | ${label(s.wire, s.contender)} | ${spread(s.theirs, figure.unit, 3)} | ${spread(s.ours, figure.unit, 3)} |`,
      );
    }
  }
  push('');
  push(
    `Against the floors, mcp-task-client is behind by more than the spread on ${floors.length} figure(s) (expected in part: the floors do no validation, merging, retries or cancellation); the targets above bound how far.`,
    '',
  );

  // Detailed tables
  for (const wire of ['2025', 'ext'] as const) {
    for (const transport of ['memory', 'stdio', 'http'] as const) {
      const subset = rows.filter((r) => r.wire === wire && r.transport === transport);
      if (subset.length === 0) continue;
      push(`## ${WIRE_NAMES[wire]}, ${TRANSPORT_NAMES[transport]}`, '');
      const pace = subset.find((r) => r.pace !== undefined)?.pace;
      const uncertainty = Math.max(...subset.map((r) => r.clockUncertaintyMs ?? 0));
      push(
        transport === 'memory'
          ? "CPU, heap and RSS of the whole process, client and server together: the server's share is the same for every contender except for the requests it answers (see the floor). Lag on one monotonic clock."
          : `CPU and heap of the client process only. Lag compares the server's and the client's wall-aligned monotonic clocks, corrected by an offset estimated with round trips to the server's control endpoint (uncertainty at most ${fmt(uncertainty, 3)} ms).` +
              (pace === undefined ? '' : ` Tasks start paced at ${pace} per second.`),
        '',
      );
      push(detailTable(subset), '');
    }
  }

  // Targets missed
  const missedRows = targets.filter((t) => checksOf(t).some((c) => !c.pass));
  if (missedRows.length > 0 || soakMissed > 0 || missed29.length > 0) {
    push('## Targets missed', '');
    push(
      "Each target missed, the scenarios that miss it (cold / warm), and its cause. *Within spread* marks a miss where a process of the library and one of the floor together met the target (the library's smallest figure ≤ the limit × the floor's largest). " +
        'The figures behind the causes are under [Measured causes](#measured-causes); the method of the profiles is in bench/README.md ("What the profile shows").',
      '',
    );
    const byTarget = new Map<string, { where: string[]; within: number }>();
    for (const t of missedRows) {
      for (const c of checksOf(t).filter((x) => !x.pass)) {
        const entry = byTarget.get(c.target) ?? { where: [], within: 0 };
        if (c.withinSpread === true) entry.within += 1;
        entry.where.push(
          `${t.row.wire === 'ext' ? 'extension' : '2025-11-25'} ${TRANSPORT_NAMES[t.row.transport]} ${t.row.workload} N=${t.row.n}${t.row.contender === 'mcp-task-client-v2' ? ' (SDK v2)' : ''}: ${c.measured}${c.withinSpread === true ? ' (*within spread*)' : ''}`,
        );
        byTarget.set(c.target, entry);
      }
    }
    for (const [target, { where, within }] of byTarget) {
      push(
        `- **${target}** — ${where.length} scenario(s)${within > 0 ? `, ${within} of them within spread` : ''}: ${where.join('; ')}.`,
      );
      push(`  *Cause:* ${CAUSE_TEXT[causeKey(target)] ?? ''}`);
    }
    const byTarget29 = new Map<string, string[]>();
    for (const c of missed29)
      byTarget29.set(c.target, [
        ...(byTarget29.get(c.target) ?? []),
        `${scenarioOf(c.row)}: ${c.ratio}${c.withinSpread ? ' (*within spread*)' : ''}`,
      ]);
    for (const [target, where] of byTarget29) {
      push(`- **${target} (issue 29)** — ${where.length} scenario(s): ${where.join('; ')}.`);
      push(`  *Cause:* ${CAUSE_TEXT[target.startsWith('heap') ? 'heap29' : 'cpu29'] ?? ''}`);
    }
    push('');
  }
  if (input.causes !== undefined) push(...causesMarkdown(input.causes.cpu, input.causes.heap));

  if (input.durable !== undefined) push(...durableMarkdown(input.durable));
  if (input.size !== undefined) push(...sizeMarkdown(input.size));

  // Earlier targets
  push('## Earlier targets (issue 5), in process, warm phase', '');
  push('| target | scenario | measured | met |', '|---|---|---|:---:|');
  for (const c of earlier) push(`| ${c.target} | ${c.scenario} | ${c.measured} | ${c.pass ? 'yes' : '**NO**'} |`);
  push('');

  // Notes
  const noted = rows.filter((r) => r.warnings.length > 0 || r.errors.length > 0 || r.warm.cancelledPerTask > 0);
  if (noted.length > 0) {
    push('## Notes from the run', '');
    for (const r of noted) {
      const parts: string[] = [];
      if (r.warnings.length > 0) parts.push(`process warnings: ${r.warnings.join(', ')}`);
      if (r.warm.cancelledPerTask > 0)
        parts.push(`${fmt(r.warm.cancelledPerTask, 2)} notifications/cancelled per task`);
      if (r.errors.length > 0)
        parts.push(
          `errors: ${r.errors.map((e) => `\`${e.replaceAll('|', '\\|').replaceAll('\n', ' ').slice(0, 160)}\``).join('; ')}`,
        );
      push(
        `- ${label(r.wire, r.contender)}, ${r.wire === 'ext' ? 'extension' : '2025-11-25'}, ${TRANSPORT_NAMES[r.transport]}, ${r.workload}, N=${r.n}: ${parts.join('; ')}`,
      );
    }
    push('');
  }
  return lines.join('\n');
}
