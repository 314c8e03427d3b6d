/**
 * How a handle's iterators end when the server no longer knows the task: with TaskNotFoundError,
 * never quietly, and never as an expiry when the task's ttl was 0 (edge cases found in review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskNotFoundError } from '../../lib/index.js';
import { connectScripted } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A scripted server with one required task tool `job` and an SDK client on it (no TaskClient yet). */
async function scripted(options: Parameters<typeof connectScripted>[0] = {}) {
  const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }], ...options });
  cleanups.push(() => pair.close());
  return pair;
}

describe('ending iterators', () => {
  it('an iterator throws TaskNotFoundError when the task vanishes, instead of ending quietly', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'v', pollInterval: 20, ttl: 3_600_000 }));
    const handle = await tasks.callToolAsTask('job');
    const seen: string[] = [];
    const iterated = (async () => {
      for await (const task of handle) seen.push(task.status);
    })();
    server.tasks.delete('v');
    await expect(iterated).rejects.toBeInstanceOf(TaskNotFoundError);
    expect(seen).toEqual(['working']);
  });

  it('a task with ttl 0 that vanishes is not found, not "expired after 0 ms" (a ttl of 0 is no usable ttl)', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'zero', pollInterval: 20, ttl: 0 }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.task?.ttl).toBe(0);
    server.tasks.delete('zero');
    const error = await handle.result().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });
});
