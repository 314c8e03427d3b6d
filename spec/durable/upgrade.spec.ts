/**
 * A server redeployed in another version between two workers (a rolling upgrade): the job holds
 * the reference of a task the old version created, and the worker that takes the job over is
 * connected to the new version. The worker resumes the task there and finishes the job, without
 * calling the tool again; it used to fail the job with a `TaskOptionError` (the reference named
 * another `name@version`) and leave the task running unwatched. The worker runs in this process,
 * on a scripted 2025-11-25 server.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient, type TaskReference } from '../../lib/index.js';
import { enqueueToolTask, taskProcessor } from '../../lib/bullmq/index.js';
import { connectScripted, type Json } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import { finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: a server upgraded between two workers');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a server upgraded between two workers', () => {
  const { redis, cleanups } = useRedis();

  it('the worker on the new version resumes the task the old version created, and the tool is not called again', async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    // The task the old version created, still held by the new one (a task store that outlives a deploy).
    const task = pair.server.tasks.create({ pollInterval: 50 });
    const taskId = String(task.taskId);
    setTimeout(
      () => pair.server.tasks.finish(taskId, 'completed', { result: textResult('done after the upgrade') }),
      100,
    );
    const reference: TaskReference = {
      v: 2,
      taskId,
      toolName: 'job',
      createdAt: String(task.createdAt),
      ttl: 60_000,
      server: 'scripted-server@0.9.0',
      wire: '2025-11-25',
      capabilities: { cancel: true, list: true },
    };
    const name = `upgrade-${String(Math.random()).slice(2, 8)}`;
    const opened = await openQueue(redis, name);
    cleanups.push(() => opened.close());
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
    // As the worker on the old version left it: the reference stored, then the worker gone.
    await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
    });
    const worker = new Worker(name, processor, { connection: redis.connection });
    cleanups.push(() => Promise.all([worker.close(), processor.close()]));
    const done = await finished(opened.queue, job, 10_000);
    expect(done.failedReason).toBeFalsy();
    expect(await done.getState()).toBe('completed');
    expect((done.returnvalue as Json).content).toEqual(textResult('done after the upgrade').content);
    expect(pair.server.count('tools/call')).toBe(0);
    expect(pair.server.count('tasks/get') + pair.server.count('tasks/result')).toBeGreaterThan(0);
  }, 30_000);
});
