/**
 * A `connect` whose TaskClient leaves tasks running on a deadline or an abort (`cancelOnTimeout:
 * false`, `cancelOnAbort: false`, good defaults for an interactive client) must not change what a
 * durable job promises: its deadline cancels the remote task, and so does `cancelToolJob`, whether
 * the worker called the tool or resumed a task another run stored. The processor took the
 * client's defaults, and left those tasks running. The worker runs in this process, on a scripted
 * 2025-11-25 server.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { cancelToolJob, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { connectScripted, type ScriptedPair } from '../support/scripted-server.js';
import {
  eventually,
  finished,
  openQueue,
  REDIS_AVAILABLE,
  scriptedReference,
  skipWithoutRedis,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: a client that leaves tasks running on a stop');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a client that leaves tasks running on a stop', () => {
  const { redis, cleanups } = useRedis();

  /** A scripted server whose tasks run until cancelled, and a worker whose TaskClient cancels nothing by itself. */
  async function setUp(name: string) {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ pollInterval: 50 }));
    const opened = await openQueue(redis, `cancel-options-${name}`);
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client, { cancelOnTimeout: false, cancelOnAbort: false })),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
    });
    return {
      pair,
      events,
      opened,
      run: () => {
        const worker = new Worker(opened.queue.name, processor, { connection: redis.connection, concurrency: 5 });
        cleanups.push(() => Promise.all([worker.close(), processor.close()]));
      },
    };
  }

  const statusOf = (pair: ScriptedPair, taskId: string): string => String(pair.server.tasks.get(taskId).status);

  it("the job's deadline cancels the task it started", async () => {
    const { pair, opened, run } = await setUp('deadline');
    run();
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job', timeoutMs: 1_500 });
    const done = await finished(opened.queue, job, 15_000);
    expect(await done.getState()).toBe('failed');
    expect(pair.server.count('tasks/cancel')).toBe(1);
    expect(statusOf(pair, 'task-1')).toBe('cancelled');
  }, 30_000);

  it('cancelToolJob cancels the task the worker started', async () => {
    const { pair, events, opened, run } = await setUp('cancel');
    run();
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
    await eventually(async () => events.some((e) => e.type === 'started'), 10_000, 'the task');
    expect(await cancelToolJob(opened.queue, job.id!, 'no longer needed')).toBe(true);
    const done = await finished(opened.queue, job, 15_000);
    expect(done.failedReason).toMatch(/^Job cancelled \(no longer needed\)/);
    expect(pair.server.count('tasks/cancel')).toBe(1);
    expect(statusOf(pair, 'task-1')).toBe('cancelled');
  }, 30_000);

  it('cancelToolJob and the deadline cancel a task the worker resumed', async () => {
    const { pair, events, opened, run } = await setUp('resumed');
    const stored = async (timeoutMs?: number) => {
      const task = pair.server.tasks.create({ pollInterval: 50 });
      const reference = scriptedReference(task);
      const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job', timeoutMs });
      // As a worker that died left it: the reference stored.
      await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
      return { job, taskId: String(task.taskId) };
    };
    const cancelled = await stored();
    const late = await stored(2_000);
    run();
    await eventually(
      async () => events.filter((e) => e.type === 'resumed').length === 2,
      10_000,
      'the two tasks to be resumed',
    );
    expect(await cancelToolJob(opened.queue, cancelled.job.id!)).toBe(true);
    for (const { job, taskId } of [cancelled, late]) {
      const done = await finished(opened.queue, job, 15_000);
      expect(await done.getState()).toBe('failed');
      expect(statusOf(pair, taskId)).toBe('cancelled');
    }
    expect(pair.server.count('tools/call')).toBe(0);
    expect(pair.server.count('tasks/cancel')).toBe(2);
  }, 30_000);
});
