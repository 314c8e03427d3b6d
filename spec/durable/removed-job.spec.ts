/**
 * A job removed from the queue while a worker runs it (`queue.obliterate({ force: true })`, its
 * keys deleted): nobody can see its result any more, and the worker cancels its task. It went on
 * following the task, which ran until its ttl, unseen. The worker notices at its next poll of the
 * control channel (which checks that each job it holds is still there). A job that waits in the
 * queue has no worker to notice: the guide's way to remove one that holds a task (cancel it, wait
 * for it to fail, remove it) is followed here too. The workers run in this process, on a scripted
 * 2025-11-25 server.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { cancelToolJob, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { connectScripted } from '../support/scripted-server.js';
import {
  eventually,
  finished,
  openQueue,
  REDIS_AVAILABLE,
  scriptedReference,
  skipWithoutRedis,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: a job removed while it runs');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a job removed while it runs', () => {
  const { redis, cleanups } = useRedis();

  it('the worker cancels its task (tasks/cancel) and says so; the other jobs run on', async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    const { server } = pair;
    // Tasks that run until cancelled.
    server.on('tools/call', () => server.tasks.createResult({ pollInterval: 50 }));
    const removed = await openQueue(redis, 'removed-job');
    const kept = await openQueue(redis, 'removed-job-kept');
    cleanups.push(
      () => removed.close(),
      () => kept.close(),
    );
    const events: ToolJobEvent[] = [];
    const errors: Error[] = [];
    const start = (queue: typeof removed.queue) => {
      const processor = taskProcessor({
        queue,
        connect: () => Promise.resolve(new TaskClient(pair.client)),
        controlPollMs: 50,
        onEvent: (event) => events.push(event),
      });
      const worker = new Worker(queue.name, processor, { connection: redis.connection });
      // BullMQ cannot fail a job that is gone: it says so on the worker.
      worker.on('error', (error) => errors.push(error));
      cleanups.push(() => Promise.all([worker.close(), processor.close()]));
    };
    start(removed.queue);
    start(kept.queue);
    await enqueueToolTask(removed.queue, { server: 'default', tool: 'job' });
    const other = await enqueueToolTask(kept.queue, { server: 'default', tool: 'job' });
    await eventually(async () => events.filter((e) => e.type === 'started').length === 2, 10_000, 'the tasks');

    await removed.queue.obliterate({ force: true });
    await eventually(async () => server.count('tasks/cancel') === 1, 10_000, 'the task to be cancelled');
    const statuses = ['task-1', 'task-2'].map((taskId) => String(server.tasks.get(taskId).status)).sort();
    expect(statuses).toEqual(['cancelled', 'working']);
    expect(events.filter((e) => e.type === 'warning').map((e) => (e as { error: Error }).error.message)).toContain(
      'Job 1 was removed from the queue while it ran: its task is cancelled',
    );
    expect(await other.getState()).toBe('active');
  }, 30_000);

  it('a waiting job that holds a task, cancelled before it is removed: the next worker cancels the task and fails the job, which is then removed', async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    const { server } = pair;
    const opened = await openQueue(redis, 'removed-job-waiting');
    cleanups.push(() => opened.close());
    // As a worker handed it back: the job waits with its task's reference, the task running.
    const task = server.tasks.create({ pollInterval: 50 });
    const reference = scriptedReference(task);
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
    await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
    expect(await cancelToolJob(opened.queue, job.id!, 'queue drained')).toBe(true);

    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
    });
    const worker = new Worker(opened.queue.name, processor, { connection: redis.connection });
    cleanups.push(() => Promise.all([worker.close(), processor.close()]));
    const done = await finished(opened.queue, job, 10_000);
    expect(done.failedReason).toMatch(/^Job cancelled \(queue drained\)/);
    expect(String(server.tasks.get(String(task.taskId)).status)).toBe('cancelled');
    await done.remove();
    expect(await opened.queue.getJob(job.id!)).toBeUndefined();
  }, 30_000);
});
