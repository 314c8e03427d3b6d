/**
 * The ttl warning ([V11]) comes at its time however the task's reads go: its timer may wait for
 * the first poll's read (most tasks are ended by then and never need one), and that read may be
 * answered, fail, hang until its request timeout, or be cut by a lost connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers.js';
import { NO_REPLY, creating } from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A task with a 60 s ttl, warned about 10 s before its end, polled every second, reads timing out after 5 s. */
async function rig() {
  const clock = new ManualClock();
  const start = clock.now();
  const { server, tasks, errors } = await scriptedTaskClient(
    (c) => cleanups.push(c),
    {},
    { ttlWarningMs: 10_000, requestTimeoutMs: 5_000 },
    clock,
  );
  creating(server, { taskId: 'long', pollInterval: 1_000, ttl: 60_000 });
  const expiring: number[] = [];
  tasks.on('expiring', () => expiring.push(clock.now() - start));
  const handle = await tasks.callToolAsTask('job');
  return { clock, server, tasks, errors, handle, expiring };
}

describe('the ttl warning', () => {
  it('comes on time when every read is answered', async () => {
    const { clock, server, handle, expiring } = await rig();
    await clock.advance(49_900);
    expect(expiring).toEqual([]);
    await clock.advance(200);
    expect(expiring).toEqual([50_000]);
    server.tasks.finish('long', 'completed', { result: textResult('done') });
    await clock.advance(1_000);
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'done' }]);
    expect(clock.pending).toBe(0);
  });

  it('comes on time when the reads hang until they time out', async () => {
    const { clock, server, expiring } = await rig();
    server.on('tasks/get', () => NO_REPLY);
    await clock.advance(49_900);
    expect(expiring).toEqual([]);
    await clock.advance(200);
    expect(expiring).toEqual([50_000]);
  });

  it('comes on time when the connection is lost while the first read is under way', async () => {
    const { clock, server, expiring } = await rig();
    server.on('tasks/get', () => NO_REPLY);
    await clock.advance(1_500);
    expect(server.count('tasks/get')).toBe(1);
    await server.close();
    await clock.advance(48_400);
    expect(expiring).toEqual([]);
    await clock.advance(200);
    expect(expiring).toEqual([50_000]);
  });
});
