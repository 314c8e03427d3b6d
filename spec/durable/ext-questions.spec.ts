/**
 * A durable job's questions on the tasks extension ([E35]): a worker whose SDK client declares no
 * elicitation (or sampling) still gets its task's questions there, since each request declares the
 * input the job answers (its callbacks take every question to `answerJobInput`), whatever the SDK
 * client declared when it connected. On 2025-11-25 such a connection refuses the callbacks, and the
 * calls are made without them (limits.spec.ts). The worker runs in this process, on an in-memory
 * link to the scripted extension server.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { answerJobInput, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { connectInMemory, ExtServer, fixtureTools } from '../support/ext-server/index.js';
import { declared } from '../ext/support.js';
import { eventually, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: questions on the tasks extension');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: questions on the tasks extension', () => {
  const { redis, cleanups } = useRedis();

  it('reach the job from a connection whose SDK client declared neither elicitation nor sampling, and the answer completes the job', async () => {
    const server = new ExtServer({ tools: fixtureTools(), pollIntervalMs: 50 });
    const opened = await openQueue(redis, 'ext-questions');
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    const answered: Array<Promise<unknown>> = [];
    const processor = taskProcessor({
      queue: opened.queue,
      // No capabilities and no TaskClient-level callbacks: the SDK client declares no input.
      connect: async () => TaskClient.connect((await connectInMemory(server)).clientTransport, { sdk: 'v2' }),
      controlPollMs: 100,
      onEvent: (event) => {
        events.push(event);
        if (event.type === 'input')
          answered.push(answerJobInput(opened.queue, event.jobId, { action: 'accept', content: { confirm: true } }));
      },
    });
    const worker = new Worker(opened.queue.name, processor, { connection: redis.connection });
    cleanups.push(() => Promise.all([worker.close(true), processor.close()]));
    const job = await enqueueToolTask(opened.queue, {
      server: 'default',
      tool: 'confirm_delete',
      args: { filename: 'a.txt' },
    });
    await eventually(async () => ['completed', 'failed'].includes(await job.getState()), 30_000, 'the job');
    const done = (await opened.queue.getJob(job.id!))!;
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'deleted a.txt' }] });
    expect(events.filter((event) => event.type === 'input')).toHaveLength(1);
    await Promise.all(answered);
    // The job answers both kinds: its call's requests declare both.
    const [call] = server.received('tools/call');
    expect(declared(call!)).toMatchObject({ elicitation: {}, sampling: {} });
  }, 60_000);
});
