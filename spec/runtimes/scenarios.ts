/**
 * The checks every non-browser runtime passes, on both task wires: a task run to its result (the
 * extension server's task asks a question on the way, answered by the callback), and a deadline
 * that cancels the task on the server. `run(server, deadlineMs?)` runs spec/runtimes/web/scenario.ts
 * in the runtime and returns its report.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Report } from './web/scenario.js';
import { exampleServers, type RecordingServer } from './support.js';

export function runtimeScenarios(run: (server: URL, deadlineMs?: number) => Promise<Report>): void {
  let servers: { legacy: RecordingServer; extension: RecordingServer };
  beforeAll(async () => {
    servers = await exampleServers(250);
  });
  afterAll(async () => {
    await servers?.legacy.close();
    await servers?.extension.close();
  });

  it(
    '2025-11-25: a task to its result, then a deadline that cancels it on the server',
    { timeout: 60_000 },
    async () => {
      const done = await run(servers.legacy.url);
      expect(done).toMatchObject({ wire: '2025-11-25', result: 'analysis of 7 done in 3 steps' });
      expect(done.statuses.at(0)).toBe('working');
      expect(done.statuses.at(-1)).toBe('completed');
      const late = await run(servers.legacy.url, 500);
      expect(late.error).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'cancelled' });
      expect(servers.legacy.cancelled).toEqual([late.taskId]);
    },
  );

  it(
    'tasks extension: a task that asks a question to its result, then a deadline that cancels it on the server',
    { timeout: 60_000 },
    async () => {
      const done = await run(servers.extension.url);
      expect(done).toMatchObject({
        wire: 'io.modelcontextprotocol/tasks',
        result: 'analysis of dataset 7: full report ready',
        questions: ['How detailed should the report be?'],
      });
      expect(done.statuses).toContain('input_required');
      expect(done.statuses.at(-1)).toBe('completed');
      const late = await run(servers.extension.url, 500);
      expect(late.error).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'cancelled' });
      expect(servers.extension.cancelled).toEqual([late.taskId]);
    },
  );
}
