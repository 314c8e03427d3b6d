/**
 * Keeps the benchmark harness (bench/) from rotting: every contender runs N=10 tasks on one small
 * workload in-process, and the report renders. Writes nothing: bench/run.ts alone writes
 * bench/results.json and docs/performance.md.
 */
import { describe, expect, it } from 'vitest';
import { CONTENDER_IDS } from '../bench/contenders/index.js';
import { aggregate, checkTargets, consoleTable, markdown, svgChart } from '../bench/report.js';
import { runScenario, type ScenarioResult, type Workload } from '../bench/scenario.js';

const workload: Workload = { id: 'smoke', duration: { kind: 'fixed', ms: 30 }, notify: true, pollInterval: 200 };

describe('benchmark harness (smoke, N=10)', () => {
  const results: ScenarioResult[] = [];

  for (const contender of CONTENDER_IDS) {
    it(`${contender}: all tasks complete with sane figures`, async () => {
      const result = await runScenario({ contender, workload, n: 10, transport: 'memory', seed: 1, warmup: 2, timeoutMs: 10_000 });
      results.push(result);
      expect(result.errors).toEqual([]);
      expect(result.ok).toBe(true);
      expect(result.completed).toBe(10);
      expect(result.lag).not.toBeNull();
      expect(Number.isFinite(result.lag!.median)).toBe(true);
      expect(Number.isFinite(result.lag!.p99)).toBe(true);
      expect(result.lag!.min).toBeGreaterThanOrEqual(0);
      expect(result.requestsByMethod['tools/call']).toBe(10);
      expect(result.tasksResultPerTask).toBeGreaterThanOrEqual(1);
      expect(result.requestsTotal).toBeGreaterThan(0);
      expect(result.cpuPerTaskMs).toBeGreaterThan(0);
      expect(Number.isFinite(result.eventLoopDelayP99Ms)).toBe(true);
      expect(result.serverNotifications['notifications/tasks/status']).toBe(10);
    });
  }

  it('a notified mcp-task-client never polls more than the SDK helper, and the report renders', () => {
    expect(results).toHaveLength(CONTENDER_IDS.length);
    const ours = results.find((r) => r.spec.contender === 'mcp-task-client')!;
    const sdk = results.find((r) => r.spec.contender === 'sdk-stream')!;
    expect(ours.tasksGetPerTask).toBeLessThanOrEqual(sdk.tasksGetPerTask);
    const rows = aggregate(results);
    expect(rows).toHaveLength(CONTENDER_IDS.length);
    expect(consoleTable(rows)).toContain('mcp-task-client');
    expect(checkTargets(rows, [workload]).length).toBeGreaterThan(0);
    const page = markdown({
      generatedAt: 'now',
      versions: { 'mcp-task-client': 'test' },
      machine: 'test',
      command: 'vitest',
      workloads: [workload],
      rows,
      chartFile: 'chart.svg',
      elapsedS: 1,
    });
    expect(page).toContain('## Targets');
    expect(svgChart(rows, [workload])).toMatch(/^<svg[\s\S]*<\/svg>$/);
  });
});
