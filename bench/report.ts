/**
 * Turns scenario results into rows (medians over repetitions), the console table, the
 * docs/performance.md page (targets next to measured numbers, and every figure where another
 * contender is ahead) and the SVG chart. Pure functions: nothing here measures or writes files.
 */
import { CONTENDER_LABELS, type ContenderId } from './contenders/index.js';
import type { ScenarioResult, Workload } from './scenario.js';
import { median } from './stats.js';

/** One contender × workload × N × transport, aggregated over repetitions. */
export interface Row {
  readonly contender: ContenderId;
  readonly workload: string;
  readonly transport: 'memory' | 'stdio';
  readonly n: number;
  readonly reps: number;
  /** Every repetition completed all N tasks without failure. */
  readonly ok: boolean;
  readonly completed: number;
  readonly lagMedianMs: number;
  readonly lagP99Ms: number;
  readonly tasksGetPerTask: number;
  readonly requestsTotal: number;
  readonly cpuPerTaskMs: number;
  readonly heapPerTaskBytes: number | null;
  readonly rssPerTaskBytes: number | null;
  /** Heap still held per task after all results arrived (forced GC). */
  readonly retainedPerTaskBytes: number | null;
  readonly eventLoopDelayP99Ms: number;
  /** Shortest poll gap over all repetitions. */
  readonly minPollGapMs: number | null;
  /** `notifications/cancelled` the client sent, per task. */
  readonly cancelledPerTask: number;
  readonly scope: string;
  readonly clockUncertaintyMs: number | null;
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
}

/** The figures compared between contenders; lower is better for all. */
export const FIGURES = [
  { key: 'lagMedianMs', label: 'lag median (ms)' },
  { key: 'lagP99Ms', label: 'lag p99 (ms)' },
  { key: 'tasksGetPerTask', label: 'tasks/get per task' },
  { key: 'requestsTotal', label: 'total requests' },
  { key: 'cpuPerTaskMs', label: 'CPU per task (ms)' },
  { key: 'heapPerTaskBytes', label: 'heap per task' },
  { key: 'rssPerTaskBytes', label: 'RSS per task' },
  { key: 'retainedPerTaskBytes', label: 'heap retained per task after completion' },
  { key: 'eventLoopDelayP99Ms', label: 'loop delay p99 (ms)' },
] as const satisfies ReadonlyArray<{ key: keyof Row; label: string }>;


function medianOf(values: ReadonlyArray<number | null | undefined>): number {
  const finite = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return median(finite);
}

/** Groups raw results by scenario (minus seed/repetition) and takes the median of every figure. */
export function aggregate(results: readonly ScenarioResult[]): Row[] {
  const groups = new Map<string, ScenarioResult[]>();
  for (const result of results) {
    const s = result.spec;
    const key = `${s.transport}|${s.workload.id}|${s.n}|${s.contender}`;
    const list = groups.get(key) ?? [];
    list.push(result);
    groups.set(key, list);
  }
  const rows: Row[] = [];
  for (const list of groups.values()) {
    const spec = list[0]!.spec;
    const heap = list.map((r) => r.heapPerTaskBytes);
    const rss = list.map((r) => r.rssPerTaskBytes);
    const retained = list.map((r) => r.retainedPerTaskBytes);
    const gaps = list.map((r) => r.minPollGapMs).filter((g): g is number => g !== null);
    const warnings = new Set<string>();
    for (const r of list) for (const [name, count] of Object.entries(r.warnings)) warnings.add(`${name} ×${count}`);
    rows.push({
      contender: spec.contender,
      workload: spec.workload.id,
      transport: spec.transport,
      n: spec.n,
      reps: list.length,
      ok: list.every((r) => r.ok),
      completed: Math.min(...list.map((r) => r.completed)),
      lagMedianMs: medianOf(list.map((r) => r.lag?.median)),
      lagP99Ms: medianOf(list.map((r) => r.lag?.p99)),
      tasksGetPerTask: medianOf(list.map((r) => r.tasksGetPerTask)),
      requestsTotal: medianOf(list.map((r) => r.requestsTotal)),
      cpuPerTaskMs: medianOf(list.map((r) => r.cpuPerTaskMs)),
      heapPerTaskBytes: heap.some((h) => h === null) ? null : medianOf(heap),
      rssPerTaskBytes: rss.some((h) => h === null) ? null : medianOf(rss),
      retainedPerTaskBytes: retained.some((h) => h === null) ? null : medianOf(retained),
      eventLoopDelayP99Ms: medianOf(list.map((r) => r.eventLoopDelayP99Ms)),
      minPollGapMs: gaps.length === 0 ? null : Math.min(...gaps),
      cancelledPerTask: medianOf(list.map((r) => (r.clientNotifications['notifications/cancelled'] ?? 0) / r.spec.n)),
      scope: list[0]!.scope,
      clockUncertaintyMs: list[0]!.clock === null ? null : Math.max(...list.map((r) => r.clock?.uncertaintyMs ?? 0)),
      warnings: [...warnings],
      errors: [...new Set(list.flatMap((r) => r.errors))].slice(0, 3),
    });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Formatting

function fmt(value: number | null, digits = 1): string {
  if (value === null || !Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  if (abs !== 0 && abs < 0.1 && digits <= 2) return value.toFixed(3);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
}

function kib(bytes: number | null): string {
  return bytes === null || !Number.isFinite(bytes) ? '–' : (bytes / 1024).toFixed(1);
}

const COLUMNS = [
  'workload',
  'N',
  'contender',
  'lag median ms',
  'lag p99 ms',
  'tasks/get per task',
  'total requests',
  'CPU ms per task',
  'heap KiB per task',
  'RSS KiB per task',
  'retained KiB per task',
  'loop delay p99 ms',
  'done',
] as const;

function cells(row: Row): string[] {
  return [
    row.workload,
    String(row.n),
    CONTENDER_LABELS[row.contender],
    fmt(row.lagMedianMs, 2),
    fmt(row.lagP99Ms, 2),
    fmt(row.tasksGetPerTask, 2),
    fmt(row.requestsTotal, 0),
    fmt(row.cpuPerTaskMs, 3),
    kib(row.heapPerTaskBytes),
    kib(row.rssPerTaskBytes),
    kib(row.retainedPerTaskBytes),
    fmt(row.eventLoopDelayP99Ms, 1),
    row.ok ? `${row.completed}/${row.n}` : `**${row.completed}/${row.n}**`,
  ];
}

const CONTENDER_ORDER: Record<ContenderId, number> = { 'mcp-task-client': 0, 'sdk-stream': 1, 'ext-tasks': 2, floor: 3 };

/** Rows in report order: transport, workload (as given), N, contender. */
export function sortRows(rows: readonly Row[], workloads: readonly Workload[]): Row[] {
  const order = new Map(workloads.map((w, i) => [w.id, i]));
  return [...rows].sort(
    (a, b) =>
      (a.transport === b.transport ? 0 : a.transport === 'memory' ? -1 : 1) ||
      (order.get(a.workload) ?? 99) - (order.get(b.workload) ?? 99) ||
      a.n - b.n ||
      CONTENDER_ORDER[a.contender] - CONTENDER_ORDER[b.contender],
  );
}

/** A plain-text table for the terminal. */
export function consoleTable(rows: readonly Row[]): string {
  const body = rows.map((row) => cells(row).map((c) => c.replaceAll('**', '')));
  const header = [...COLUMNS] as string[];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string => r.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  let last = '';
  for (const [i, r] of body.entries()) {
    const row = rows[i]!;
    const group = `${row.transport}|${row.workload}|${row.n}`;
    if (last !== '' && group !== last) out.push('');
    last = group;
    out.push(line(r));
  }
  return out.join('\n');
}

function markdownTable(rows: readonly Row[]): string {
  const out = [`| ${COLUMNS.join(' | ')} |`, `|${COLUMNS.map((_, i) => (i < 3 ? '---' : '---:')).join('|')}|`];
  for (const row of rows) {
    const c = cells(row);
    if (row.contender === 'mcp-task-client') c[2] = `**${c[2]}**`;
    out.push(`| ${c.join(' | ')} |`);
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Targets and comparisons

/** A target check: what was required, what was measured, and whether it held. */
export interface TargetCheck {
  readonly target: string;
  readonly scenario: string;
  readonly measured: string;
  readonly pass: boolean;
}

/** "A few milliseconds" of median lag in-process. */
export const FEW_MS = 5;
/** Required lag ratio against the SDK helper with notifications. */
export const LAG_RATIO = 50;
/** Timer granularity tolerated when checking "never faster than pollInterval" (Date.now() is whole ms). */
export const GAP_TOLERANCE_MS = 1;

function find(rows: readonly Row[], contender: ContenderId, workload: string, n: number, transport = 'memory'): Row | undefined {
  return rows.find((r) => r.contender === contender && r.workload === workload && r.n === n && r.transport === transport);
}

/** Evaluates the issue's targets on the measured rows. */
export function checkTargets(rows: readonly Row[], workloads: readonly Workload[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const ns = [...new Set(rows.filter((r) => r.transport === 'memory').map((r) => r.n))].sort((a, b) => a - b);
  for (const w of workloads) {
    for (const n of ns) {
      const ours = find(rows, 'mcp-task-client', w.id, n);
      const sdk = find(rows, 'sdk-stream', w.id, n);
      if (ours === undefined) continue;
      const scenario = `${w.id}, N=${n}`;
      if (w.notify) {
        checks.push({
          target: `median lag ≤ ${FEW_MS} ms in-process (with notifications)`,
          scenario,
          measured: `${fmt(ours.lagMedianMs, 2)} ms`,
          pass: ours.lagMedianMs <= FEW_MS,
        });
        if (sdk !== undefined) {
          const ratio = sdk.lagMedianMs / ours.lagMedianMs;
          checks.push({
            target: `median lag ≥ ${LAG_RATIO}× lower than the SDK helper (pollInterval ${w.pollInterval})`,
            scenario,
            measured: `${fmt(sdk.lagMedianMs, 1)} / ${fmt(ours.lagMedianMs, 2)} ms = ${fmt(ratio, 0)}×`,
            pass: ratio >= LAG_RATIO,
          });
        }
      } else {
        if (sdk !== undefined) {
          checks.push({
            target: 'tasks/get per task ≤ the SDK helper (no notifications)',
            scenario,
            measured: `${fmt(ours.tasksGetPerTask, 2)} vs ${fmt(sdk.tasksGetPerTask, 2)}`,
            pass: ours.tasksGetPerTask <= sdk.tasksGetPerTask,
          });
        }
        checks.push({
          target: `never polls faster than pollInterval (${w.pollInterval} ms, ${GAP_TOLERANCE_MS} ms timer tolerance)`,
          scenario,
          measured: ours.minPollGapMs === null ? 'no poll' : `shortest gap ${fmt(ours.minPollGapMs, 1)} ms`,
          pass: ours.minPollGapMs === null || ours.minPollGapMs >= w.pollInterval - GAP_TOLERANCE_MS,
        });
      }
    }
  }
  const top = ns.at(-1);
  if (top !== undefined) {
    for (const w of workloads) {
      const ours = find(rows, 'mcp-task-client', w.id, top);
      if (ours === undefined) continue;
      const others = (['sdk-stream', 'ext-tasks'] as const).map((c) => find(rows, c, w.id, top)).filter((r): r is Row => r !== undefined);
      const scenario = `${w.id}, N=${top}`;
      checks.push({
        target: `${top.toLocaleString('en-US')} concurrent tasks on one client all complete`,
        scenario,
        measured: `${ours.completed}/${top}`,
        pass: ours.ok,
      });
      for (const [key, label, unit] of [
        ['cpuPerTaskMs', 'CPU per task', (v: number) => `${fmt(v, 3)} ms`],
        ['heapPerTaskBytes', 'heap per in-flight task', (v: number) => `${kib(v)} KiB`],
        ['rssPerTaskBytes', 'RSS per in-flight task', (v: number) => `${kib(v)} KiB`],
      ] as const) {
        const mine = ours[key];
        if (mine === null) continue;
        const theirs = others.map((o) => `${CONTENDER_LABELS[o.contender]} ${o[key] === null ? '–' : unit(o[key])}`);
        checks.push({
          target: `${label} lower than both other contenders`,
          scenario,
          measured: `${unit(mine)} vs ${theirs.join(', ')}`,
          pass: others.every((o) => o[key] !== null && mine < o[key]),
        });
      }
    }
  }
  return checks;
}

/** A figure on which another contender did better than mcp-task-client. */
export interface Shortfall {
  readonly figure: string;
  readonly scenario: string;
  readonly ours: number;
  readonly theirs: number;
  readonly contender: ContenderId;
}

/** Below this N, per-task memory figures are GC noise (one task is a few KiB) and are not compared. */
export const MEMORY_MIN_N = 100;

const MEMORY_KEYS: ReadonlySet<string> = new Set(['heapPerTaskBytes', 'rssPerTaskBytes', 'retainedPerTaskBytes']);

/**
 * Every figure, in every scenario, where a contender (or the floor) measured strictly better than
 * mcp-task-client. Nothing is filtered out as noise (except per-task memory below
 * {@link MEMORY_MIN_N}); the page shows the margins.
 */
export function shortfalls(rows: readonly Row[]): Shortfall[] {
  const out: Shortfall[] = [];
  for (const ours of rows.filter((r) => r.contender === 'mcp-task-client')) {
    for (const other of rows) {
      if (other.contender === 'mcp-task-client' || other.workload !== ours.workload || other.n !== ours.n || other.transport !== ours.transport) continue;
      for (const { key, label } of FIGURES) {
        if (MEMORY_KEYS.has(key) && ours.n < MEMORY_MIN_N) continue;
        const mine = ours[key];
        const theirs = other[key];
        if (mine === null || theirs === null || !Number.isFinite(mine) || !Number.isFinite(theirs)) continue;
        if (theirs < mine) {
          out.push({
            figure: label,
            scenario: `${other.transport === 'stdio' ? 'stdio ' : ''}${ours.workload}, N=${ours.n}`,
            ours: mine,
            theirs,
            contender: other.contender,
          });
        }
      }
    }
  }
  return out;
}

function figureValue(figure: string, value: number): string {
  if (figure.startsWith('heap') || figure.startsWith('RSS')) return `${kib(value)} KiB`;
  if (figure === 'total requests') return fmt(value, 0);
  return fmt(value, figure.startsWith('CPU') ? 3 : 2);
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
}

function describe(w: Workload): string {
  const d = w.duration.kind === 'fixed' ? `fixed ${w.duration.ms} ms` : `random ${w.duration.minMs}-${w.duration.maxMs} ms`;
  return `${d}, pollInterval ${w.pollInterval} ms, ${w.notify ? 'with' : 'without'} notifications/tasks/status`;
}

/** docs/performance.md. */
export function markdown(input: ReportInput): string {
  const rows = sortRows(input.rows, input.workloads);
  const checks = checkTargets(rows, input.workloads);
  const misses = shortfalls(rows);
  const lines: string[] = [];
  lines.push('# Performance');
  lines.push('');
  lines.push(
    `<!-- Generated by \`${input.command}\` (bench/run.ts) on ${input.generatedAt}. Do not edit by hand: every number below comes from that run. -->`,
  );
  lines.push('');
  lines.push(
    'mcp-task-client side by side with what a user would pick instead, on the same SDK task server and the same workloads. ' +
      'Every figure below was measured by `npm run bench` in one run; how each is measured is in [bench/README.md](../bench/README.md).',
  );
  lines.push('');
  lines.push(`Generated ${input.generatedAt} on ${input.machine}; the run took ${Math.round(input.elapsedS)} s.`);
  lines.push('');
  lines.push('| package | version |');
  lines.push('|---|---|');
  for (const [name, version] of Object.entries(input.versions)) lines.push(`| ${name} | ${version} |`);
  lines.push('');
  lines.push('Contenders: **mcp-task-client** (`TaskClient.callToolAsTask` + `result()`); the SDK\'s own ');
  lines.push('`client.experimental.tasks.callToolStream`; `@modelcontextprotocol/ext-tasks` in 2025-11-25 mode through a');
  lines.push('small port over the SDK v1 `Client` (bench/contenders/ext-tasks-port.ts); and, for reference only, a hand-written');
  lines.push('*floor* (raw requests, one timer per task, no validation, retries, deadlines or cancellation) that shows what the server');
  lines.push('and the SDK client cost on their own.');
  lines.push('');
  lines.push(
    'Workloads (N tasks started at once on one client; each task\'s clock starts when the server creates it; ' +
      'memory is read in a separate phase while all N tasks are held in flight, see bench/README.md):',
  );
  lines.push('');
  for (const w of input.workloads) lines.push(`- \`${w.id}\`: ${describe(w)}`);
  lines.push('');
  lines.push(`![Benchmark chart](${input.chartFile})`);
  lines.push('');
  lines.push('## Targets');
  lines.push('');
  lines.push('| target | scenario | measured | met |');
  lines.push('|---|---|---|:---:|');
  for (const c of checks) lines.push(`| ${c.target} | ${c.scenario} | ${c.measured} | ${c.pass ? 'yes' : '**NO**'} |`);
  lines.push('');
  const failed = checks.filter((c) => !c.pass);
  lines.push(failed.length === 0 ? 'All targets met in this run.' : `**${failed.length} of ${checks.length} target checks not met in this run.**`);
  lines.push('');
  lines.push('## Where another contender is ahead');
  lines.push('');
  lines.push(
    'Every figure, in every scenario, on which another contender (or the reference floor) measured better than mcp-task-client ' +
      `in this run, with no noise filter (except per-task memory below N=${MEMORY_MIN_N}, where one task's few KiB are GC noise): ` +
      'small margins on N=1 rows are mostly noise, large ones are real.',
  );
  lines.push('');
  const real = misses.filter((m) => m.contender !== 'floor');
  const floor = misses.filter((m) => m.contender === 'floor');
  if (real.length === 0) lines.push('None: mcp-task-client measured best or equal on every figure against both contenders.');
  else {
    lines.push('| figure | scenario | contender | theirs | mcp-task-client |');
    lines.push('|---|---|---|---:|---:|');
    for (const m of real) {
      lines.push(`| ${m.figure} | ${m.scenario} | ${CONTENDER_LABELS[m.contender]} | ${figureValue(m.figure, m.theirs)} | ${figureValue(m.figure, m.ours)} |`);
    }
  }
  lines.push('');
  lines.push(
    `Against the reference floor, mcp-task-client is behind on ${floor.length} figure(s) across all scenarios ` +
      '(expected: the floor does no validation, no merging, no retries and keeps no state for iterators). They are in the tables below.',
  );
  lines.push('');
  for (const transport of ['memory', 'stdio'] as const) {
    const subset = rows.filter((r) => r.transport === transport);
    if (subset.length === 0) continue;
    lines.push(transport === 'memory' ? '## In-process (InMemoryTransport)' : '## Over stdio (server in a child process)');
    lines.push('');
    lines.push(
      transport === 'memory'
        ? 'CPU, heap and RSS are those of the whole process, client and server together: the server\'s share is the same work for every contender except the requests it answers (see the floor). Lag is measured on one monotonic clock.'
        : 'CPU, heap and RSS are those of the client process only. Lag compares the server\'s and the client\'s wall-aligned monotonic clocks, corrected by an offset estimated with ping exchanges; ' +
            `the estimate's uncertainty was at most ${fmt(Math.max(...subset.map((r) => r.clockUncertaintyMs ?? 0)), 3)} ms.`,
    );
    lines.push('');
    lines.push(markdownTable(subset));
    lines.push('');
  }
  const warned = rows.filter((r) => r.warnings.length > 0 || r.errors.length > 0 || r.cancelledPerTask > 0);
  if (warned.length > 0) {
    lines.push('## Notes from the run');
    lines.push('');
    for (const r of warned) {
      const parts: string[] = [];
      if (r.warnings.length > 0) parts.push(`process warnings: ${r.warnings.join(', ')}`);
      if (r.cancelledPerTask > 0) parts.push(`${fmt(r.cancelledPerTask, 2)} notifications/cancelled per task`);
      if (r.errors.length > 0) parts.push(`errors: ${r.errors.map((e) => `\`${e.replaceAll('|', '\\|').replaceAll('\n', ' ').slice(0, 160)}\``).join('; ')}`);
      lines.push(`- ${CONTENDER_LABELS[r.contender]}, ${r.transport === 'stdio' ? 'stdio ' : ''}${r.workload}, N=${r.n}: ${parts.join('; ')}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The chart (hand-written SVG)

const COLORS: Record<ContenderId, string> = {
  'mcp-task-client': '#1f6feb',
  'sdk-stream': '#d1242f',
  'ext-tasks': '#bf8700',
  floor: '#8c959f',
};

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function tickLabel(value: number): string {
  if (value === 0) return '0';
  if (Math.abs(value) >= 1000) return `${value / 1000}k`;
  if (Math.abs(value) < 1) return String(Number(value.toPrecision(2)));
  return String(Number(value.toPrecision(3)));
}

/** "Nice" linear ticks from 0 to at least `max`. */
function linearTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(6)));
  return ticks;
}

interface Panel {
  readonly title: string;
  readonly value: (row: Row) => number | null;
  readonly log?: boolean;
}

/**
 * A grid of grouped bar charts: one panel per figure, one group per workload, one bar per
 * contender, all at the largest in-process N (and a note of which N that is).
 */
export function svgChart(rows: readonly Row[], workloads: readonly Workload[]): string {
  const memory = rows.filter((r) => r.transport === 'memory');
  const n = Math.max(...memory.map((r) => r.n));
  const at = memory.filter((r) => r.n === n);
  const contenders = (['mcp-task-client', 'sdk-stream', 'ext-tasks', 'floor'] as const).filter((c) => at.some((r) => r.contender === c));
  const panels: Panel[] = [
    { title: 'Median result lag after completion (ms, log scale)', value: (r) => r.lagMedianMs, log: true },
    { title: 'p99 result lag (ms, log scale)', value: (r) => r.lagP99Ms, log: true },
    { title: 'tasks/get requests per task', value: (r) => r.tasksGetPerTask },
    { title: 'CPU per task (ms, whole process)', value: (r) => r.cpuPerTaskMs },
    { title: 'Heap per in-flight task (KiB, whole process)', value: (r) => (r.heapPerTaskBytes === null ? null : r.heapPerTaskBytes / 1024) },
    { title: 'Event-loop delay p99 (ms, how late a 5 ms timer fired)', value: (r) => r.eventLoopDelayP99Ms },
  ];
  const cols = 2;
  const pw = 520;
  const ph = 250;
  const margin = { top: 34, right: 16, bottom: 46, left: 58 };
  const headerH = 64;
  const width = cols * pw;
  const height = headerH + Math.ceil(panels.length / cols) * ph;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="16" y="24" font-size="16" font-weight="bold">mcp-task-client vs the SDK helper and ext-tasks: ${n.toLocaleString('en-US')} concurrent tasks, in-process</text>`,
  );
  let lx = 16;
  for (const c of contenders) {
    out.push(`<rect x="${lx}" y="38" width="12" height="12" fill="${COLORS[c]}"/>`);
    out.push(`<text x="${lx + 16}" y="48">${esc(CONTENDER_LABELS[c])}</text>`);
    lx += 28 + CONTENDER_LABELS[c].length * 6.5;
  }
  for (const [index, panel] of panels.entries()) {
    const ox = (index % cols) * pw;
    const oy = headerH + Math.floor(index / cols) * ph;
    const plotW = pw - margin.left - margin.right;
    const plotH = ph - margin.top - margin.bottom;
    const x0 = ox + margin.left;
    const y0 = oy + margin.top;
    out.push(`<text x="${x0}" y="${oy + 20}" font-size="12" font-weight="bold">${esc(panel.title)}</text>`);
    const values = at.map((r) => panel.value(r)).filter((v): v is number => v !== null && Number.isFinite(v));
    const max = Math.max(...values, 0);
    let scale: (v: number) => number;
    let ticks: number[];
    if (panel.log === true) {
      const positive = values.filter((v) => v > 0);
      const lo = 10 ** Math.floor(Math.log10(Math.min(...positive, 1)));
      const hi = 10 ** Math.ceil(Math.log10(Math.max(...positive, lo * 10)));
      ticks = [];
      for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
      scale = (v) => plotH * (1 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
    } else {
      ticks = linearTicks(max);
      const top = ticks.at(-1)!;
      scale = (v) => plotH * (1 - v / top);
    }
    for (const t of ticks) {
      const y = y0 + scale(t);
      out.push(`<line x1="${x0}" y1="${y.toFixed(1)}" x2="${x0 + plotW}" y2="${y.toFixed(1)}" stroke="#e6e8eb"/>`);
      out.push(`<text x="${x0 - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#57606a">${tickLabel(t)}</text>`);
    }
    out.push(`<line x1="${x0}" y1="${y0 + plotH}" x2="${x0 + plotW}" y2="${y0 + plotH}" stroke="#57606a"/>`);
    const groupW = plotW / workloads.length;
    const barW = Math.min(22, (groupW - 16) / contenders.length);
    for (const [gi, w] of workloads.entries()) {
      const gx = x0 + gi * groupW + (groupW - barW * contenders.length) / 2;
      for (const [ci, c] of contenders.entries()) {
        const row = at.find((r) => r.workload === w.id && r.contender === c);
        const v = row === undefined ? null : panel.value(row);
        if (v === null || !Number.isFinite(v)) continue;
        const y = y0 + scale(Math.max(v, 0));
        const h = y0 + plotH - y;
        const x = gx + ci * barW;
        out.push(
          `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${Math.max(h, 0.5).toFixed(1)}" fill="${COLORS[c]}"><title>${esc(`${CONTENDER_LABELS[c]}, ${w.id}: ${fmt(v, 3)}`)}</title></rect>`,
        );
      }
      out.push(`<text x="${(x0 + gi * groupW + groupW / 2).toFixed(1)}" y="${y0 + plotH + 16}" text-anchor="middle">${esc(w.id)}</text>`);
    }
  }
  out.push('</svg>');
  return out.join('\n');
}
