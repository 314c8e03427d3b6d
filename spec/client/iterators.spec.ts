/**
 * How a handle's iterators end when the server no longer knows the task: with TaskNotFoundError,
 * never quietly, and never as an expiry when the task's ttl was 0 (edge cases found in review);
 * and how calls of `next()` made before the previous one settled queue, as an async generator's do.
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

describe('next() calls that overlap', () => {
  it('queue and settle in order, each with its own snapshot, then done', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'q', pollInterval: 60_000, ttl: 3_600_000 }));
    const handle = await tasks.callToolAsTask('job');
    const updates = handle.updates();
    // The current snapshot is queued at once; the next three calls wait for the server.
    const calls = [updates.next(), updates.next(), updates.next(), updates.next()];
    server.tasks.update('q', { statusMessage: 'half way' }, true);
    server.tasks.finish('q', 'completed', { result: { content: [] } }, {}, true);
    const results = await Promise.all(calls);
    expect(results.map((r) => (r.done ? 'done' : `${r.value.status}:${r.value.statusMessage ?? ''}`))).toEqual([
      'working:',
      'working:half way',
      'completed:half way',
      'done',
    ]);
  });

  it('a failure goes to the oldest waiting call, and the others end done', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'f', pollInterval: 20, ttl: 3_600_000 }));
    const handle = await tasks.callToolAsTask('job');
    const updates = handle.updates();
    await updates.next();
    const first = updates.next().catch((error: unknown) => error);
    const second = updates.next();
    server.tasks.delete('f');
    expect(await first).toBeInstanceOf(TaskNotFoundError);
    expect(await second).toEqual({ value: undefined, done: true });
    expect(await updates.next()).toEqual({ value: undefined, done: true });
  });

  it('return() while calls wait ends every one of them done', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'r', pollInterval: 60_000, ttl: 3_600_000 }));
    const handle = await tasks.callToolAsTask('job');
    const updates = handle.updates();
    await updates.next();
    const waiting = [updates.next(), updates.next()];
    await updates.return?.();
    expect(await Promise.all(waiting)).toEqual([
      { value: undefined, done: true },
      { value: undefined, done: true },
    ]);
  });
});
