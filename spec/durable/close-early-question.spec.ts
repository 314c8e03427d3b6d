/**
 * `processor.close()` while a question waits on the job before the call's task exists: the server
 * asks while `tools/call` is under way (on 2025-11-25 a request during the call, [R31] names no
 * task; on the tasks extension, input before the task exists, [E17]), and answers the call only
 * once it has the answer. close() waited for that answer, for as long as nobody gave it: a worker
 * told to stop (SIGTERM) did not. The call is now abandoned and the job handed back at once, with
 * its calling mark, as the guide promises for a closing worker.
 * The worker runs in this process, on a scripted 2025-11-25 server.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { enqueueToolTask, taskProcessor, type ToolJobData, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { connectScripted } from '../support/scripted-server.js';
import { eventually, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: closing while a question waits before the task exists');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_AVAILABLE)('durable queue: closing while a question waits before the task exists', () => {
  const { redis, cleanups } = useRedis();

  it('close() does not wait for the answer: the call is abandoned and the job goes back to the queue with its calling mark', async () => {
    const pair = await connectScripted({
      tools: [{ name: 'job', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    cleanups.push(() => pair.close());
    const { server } = pair;
    // The call is answered once the question is.
    server.on('tools/call', async () => {
      await server.request('elicitation/create', {
        message: 'Go?',
        requestedSchema: { type: 'object', properties: {} },
      });
      return server.tasks.createResult({ pollInterval: 50 });
    });
    const opened = await openQueue(redis, 'close-early-question');
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
    });
    const worker = new Worker(opened.queue.name, processor, { connection: redis.connection });
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
    await eventually(async () => events.some((e) => e.type === 'input'), 20_000, 'the question');

    const closing = Promise.all([worker.close(), processor.close()]).then(() => 'closed');
    cleanups.push(() => closing);
    expect(await Promise.race([closing, pause(5_000).then(() => 'still closing')])).toBe('closed');
    expect(events.filter((e) => e.type === 'released')).toEqual([
      { type: 'released', jobId: job.id, taskId: undefined },
    ]);
    const back = (await opened.queue.getJob(job.id!))!;
    expect(await back.getState()).toBe('waiting');
    expect((back.data as ToolJobData).calling).toBeDefined();
    expect((back.data as ToolJobData).task).toBeUndefined();
    expect(server.count('tools/call')).toBe(1);
  }, 30_000);
});
