/**
 * Keeps the benchmark harness (bench/) from rotting: every contender and floor of both wires runs
 * N=10 tasks (cold, warm-up, warm) on one small workload in process, and the report, the targets
 * and the chart render. Writes nothing: bench/run.ts alone writes bench/results.json and
 * docs/performance.md.
 */
import { describe, expect, it } from 'vitest';
import { svgChart } from '../../bench/chart.js';
import { CONTENDERS } from '../../bench/contenders/index.js';
import type { CauseProfile } from '../../bench/causes.js';
import { aggregate, consoleTable, markdown, shortfalls, targetRows } from '../../bench/report.js';
import { runScenario, type ScenarioResult, type Workload } from '../../bench/scenario.js';

const workload: Workload = { id: 'smoke', duration: { kind: 'fixed', ms: 30 }, notify: true, pollInterval: 200 };

describe('benchmark harness (smoke, N=10)', () => {
  const results: ScenarioResult[] = [];

  for (const info of CONTENDERS) {
    it(`${info.label} (${info.wire === 'ext' ? 'extension' : '2025-11-25'} wire): all tasks complete with sane figures`, async () => {
      const result = await runScenario({
        wire: info.wire,
        contender: info.id,
        workload,
        n: 10,
        transport: 'memory',
        pace: undefined,
        seed: 1,
        warmup: 5,
        timeoutMs: 10_000,
      });
      results.push(result);
      expect(result.errors).toEqual([]);
      expect(result.ok).toBe(true);
      for (const phase of [result.cold!, result.warm!]) {
        expect(phase.completed).toBe(10);
        expect(phase.lag).not.toBeNull();
        expect(Number.isFinite(phase.lag!.median)).toBe(true);
        expect(Number.isFinite(phase.lag!.p99)).toBe(true);
        expect(phase.lag!.min).toBeGreaterThanOrEqual(0);
        expect(phase.requestsByMethod['tools/call']).toBe(10);
        expect(phase.requestsPerTask).toBeGreaterThanOrEqual(1);
        expect(phase.cpuPerTaskMs).toBeGreaterThan(0);
        expect(Number.isFinite(phase.eventLoopDelayP99Ms)).toBe(true);
      }
      if (info.wire === '2025') {
        expect(result.warm!.tasksResultPerTask).toBeGreaterThanOrEqual(1);
        expect(result.warm!.serverNotifications['notifications/tasks/status']).toBe(10);
      }
    });
  }

  it('a notified mcp-task-client never polls more than the SDK helper, and the report renders', () => {
    expect(results).toHaveLength(CONTENDERS.length);
    const ours = results.find((r) => r.spec.wire === '2025' && r.spec.contender === 'mcp-task-client')!;
    const sdk = results.find((r) => r.spec.contender === 'sdk-stream')!;
    expect(ours.warm!.tasksGetPerTask).toBeLessThanOrEqual(sdk.warm!.tasksGetPerTask);
    const rows = aggregate(results);
    expect(rows).toHaveLength(CONTENDERS.length);
    expect(consoleTable(rows)).toContain('mcp-task-client');
    expect(Array.isArray(shortfalls(rows))).toBe(true);
    // Targets apply from N = 1,000: relabel the rows to see them evaluated.
    const big = rows.map((r) => ({ ...r, n: 1000 }));
    expect(targetRows(big, [workload]).length).toBe(3);
    const input = {
      generatedAt: 'now',
      versions: { 'mcp-task-client': 'test' },
      machine: 'test',
      command: 'vitest',
      workloads: [workload],
      chartFile: 'chart.svg',
      elapsedS: 1,
      load: undefined,
    };
    const page = markdown({
      ...input,
      rows: big,
      soak: { tasks: 100, readingsMiB: [10, 10.2], growth: 0.02, passed: true, output: '' },
    });
    expect(page).toContain('## Targets (issue 15)');
    expect(page).toContain('## Where another contender is ahead');
    expect(svgChart(rows, [workload])).toMatch(/^<svg[\s\S]*<\/svg>$/);

    // A miss names its cause, and the profiles of the run are printed side by side.
    const slow = { median: 50, min: 50, max: 50 };
    const missing = big.map((r) =>
      r.wire === '2025' && r.contender === 'mcp-task-client' ? { ...r, warm: { ...r.warm, cpuPerTaskMs: slow } } : r,
    );
    const profile = (
      contender: 'mcp-task-client' | 'floor',
      libUs: number,
      heapBytes: Record<string, number>,
    ): CauseProfile => ({
      wire: '2025' as const,
      transport: 'stdio' as const,
      workload: workload.id,
      n: 1000,
      contender,
      cpuPerTaskMs: libUs / 1000,
      ownerUs: { 'library under test (lib)': libUs, 'garbage collection': 7 },
      moduleUs: contender === 'floor' ? {} : { 'lib/port/session.js': libUs / 2 },
      heapBytes,
      heapTotalBytes: Object.values(heapBytes).reduce((a, b) => a + b, 0),
    });
    const explained = markdown({
      ...input,
      rows: missing,
      soak: undefined,
      causes: {
        cpu: [profile('mcp-task-client', 40, {}), profile('floor', 0, {})],
        heap: [
          profile('mcp-task-client', 40, { 'object TaskRecord': 248 }),
          profile('floor', 0, { 'object Timeout': 24 }),
        ],
      },
    });
    const missed = explained.slice(explained.indexOf('## Targets missed'));
    expect(missed).toMatch(/- \*\*CPU ≤ 1\.15× floor\*\* — \d+ scenario\(s\)/);
    expect(missed).toMatch(/\n {2}\*Cause:\* the library's own code per task/);
    expect(missed).toContain('## Measured causes');
    expect(missed).toContain('| library under test (lib) | 40.0 | 0.0 |');
    expect(missed).toContain('lib/port/session.js 20.0');
    expect(missed).toContain('| object TaskRecord | 248 | – |');
  });
});
