/**
 * Job data that a worker cannot read (a corrupted field, another version's format) fails the job
 * with a typed error, without calling the tool. A `task` or `calling` field that is there but not
 * what this version writes was taken for no task and no mark: the tool was called again beside a
 * task the job may hold, and a `task` that is an array (which the guarded write's Lua reads as a
 * task, and the worker as none) sent the run round and round for good, a Redis script each turn.
 * The worker runs in this process, on a scripted 2025-11-25 server.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { enqueueToolTask, taskProcessor } from '../../lib/bullmq/index.js';
import { connectScripted, type Json } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import { finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: job data a worker cannot read');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: job data a worker cannot read', () => {
  const { redis, cleanups } = useRedis();

  it.each([
    ['task', 'an array', []],
    ['task', 'an array with an item', [{ taskId: 'task-9', toolName: 'job' }]],
    ['task', 'a string', 'task-9'],
    ['calling', 'a number', 1796173681792],
    ['calling', 'a mark without its time', { at: '1796173681792' }],
  ])(
    'a "%s" field that is %s fails the job with a typed error, and the tool is not called',
    async (field, _what, value) => {
      const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
      cleanups.push(() => pair.close());
      pair.server.on('tools/call', () => {
        const created = pair.server.tasks.createResult({ pollInterval: 50 });
        const taskId = String((created.task as Json).taskId);
        setTimeout(() => pair.server.tasks.finish(taskId, 'completed', { result: textResult('done') }), 100);
        return created;
      });
      const name = `bad-data-${field}-${String(Math.random()).slice(2, 8)}`;
      const opened = await openQueue(redis, name);
      cleanups.push(() => opened.close());
      // The job's data is corrupted before any worker takes it.
      const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
      await job.updateData({ ...job.data, [field]: value });
      const processor = taskProcessor({
        queue: opened.queue,
        connect: () => Promise.resolve(new TaskClient(pair.client)),
        controlPollMs: 50,
      });
      const worker = new Worker(name, processor, { connection: redis.connection });
      cleanups.push(() => Promise.all([worker.close(), processor.close()]));
      const done = await finished(opened.queue, job, 10_000);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toBe(
        field === 'task'
          ? 'The job holds a "task" that is not an object: it may name a task the tool already started'
          : 'The job holds a "calling" mark without its time: another worker may be calling the tool',
      );
      expect(done.attemptsMade).toBe(1);
      expect(pair.server.count('tools/call')).toBe(0);
    },
    30_000,
  );
});
