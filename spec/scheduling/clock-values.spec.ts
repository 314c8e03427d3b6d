/**
 * Clock times of every kind are kept exactly. Per-task clock times (next poll, timers, when
 * tracking started, when the task was first seen) are stored compactly (lib/util/epoch.ts) as offsets from a fixed instant when that
 * gives them back exactly, and as given otherwise: whatever an injected clock returns (fractions,
 * values near zero, negative or enormous ones, or `Date.now()`-like ones), polls keep the
 * server's interval to the millisecond and metrics show the clock's own times.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, flush } from '../helpers.js';
import { creating, gaps } from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const STARTS: Array<[string, number]> = [
  ['a fraction near zero', 0.1],
  ['negative zero', -0],
  ['a negative fraction', -12_345.678],
  ['now, as Date.now() gives it', Date.now()],
  ['now with a fraction', Date.now() + 0.3],
  ['an enormous value', 2 ** 52],
];

describe('injected clock values are kept exactly', () => {
  for (const [what, start] of STARTS) {
    it(`${what} (${start}): polls follow pollInterval, metrics show the clock's times, the ttl warning comes on time`, async () => {
      const clock = new ManualClock(start);
      const { server, tasks } = await scriptedTaskClient((c) => cleanups.push(c), {}, { ttlWarningMs: 2_000 }, clock);
      creating(server, { taskId: 'exact', pollInterval: 1_000, ttl: 10_000 });
      const expiring: number[] = [];
      tasks.on('expiring', () => expiring.push(clock.now()));
      const handle = await tasks.callToolAsTask('job');
      expect(handle.metrics?.startedAt).toBe(start);
      await clock.advance(3_500);
      // Gaps are differences of the clock's own values: exact up to the float arithmetic of the subtraction.
      const seen = gaps(server, 'tasks/get', start);
      expect(seen).toHaveLength(3);
      for (const gap of seen) expect(gap).toBeCloseTo(1_000, 6);
      await clock.advance(4_600);
      // The ttl (10 s from creation) is near its end 2 s before: at start + 8,000 on this clock.
      expect(expiring).toEqual([start + 8_000]);
      server.tasks.finish('exact', 'completed', { result: textResult('done') });
      await clock.advance(1_000);
      await flush();
      expect((await handle.result()).content).toEqual([{ type: 'text', text: 'done' }]);
      expect(handle.metrics?.startedAt).toBe(start);
      expect(handle.metrics?.completedAt).toBe(start + 9_000);
      expect(handle.metrics?.durationMs).toBe(start + 9_000 - start);
    });
  }
});
