/**
 * What the control channel keeps for a job that waits in the queue stays until a worker takes the
 * job, however long it waits (a paused queue, a backlog, no worker running): each job's hash
 * expired 7 days after its last write, and only a worker holding the job renewed it, so a job
 * that waited longer lost its cancel (and its answers), and ran as if nobody had cancelled it.
 * The hash now has no expiry while its job exists; a job that ends without a run of the library
 * ending it (removed while it waited) leaves a hash that a worker's look at the queue's hashes
 * deletes. The worker runs in this process, on a scripted 2025-11-25 server.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { cancelToolJob, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { connectScripted } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import { eventually, finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: what is kept for a job that waits');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: what is kept for a job that waits', () => {
  const { redis, cleanups } = useRedis();

  it('a cancel stored for a waiting job has no expiry; a removed waiting job leaves nothing once a worker looks', async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    const { server } = pair;
    // Tasks that run until the test ends them.
    server.on('tools/call', () => server.tasks.createResult({ pollInterval: 50 }));
    const { queue, close } = await openQueue(redis, 'waiting-job');
    cleanups.push(close);
    const client = new Redis(redis.url);
    cleanups.push(() => client.quit());
    /** The channel's keys of the queue that belong to jobs (the revision counter aside). */
    const channelKeys = () => client.keys(queue.toKey('mcp-task-client:control*'));
    const hashOf = (job: { id?: string; timestamp: number }) =>
      queue.toKey(`mcp-task-client:control:${job.timestamp}:${job.id}`);

    // Three jobs wait, no worker running: the first keeps the worker busy once it runs, the other
    // two are cancelled while they wait, and one of them is then removed.
    const request = { server: 'default', tool: 'job' };
    const busy = await enqueueToolTask(queue, request);
    const waiting = await enqueueToolTask(queue, request);
    const removed = await enqueueToolTask(queue, request);
    expect(await cancelToolJob(queue, waiting.id!, 'no longer wanted')).toBe(true);
    expect(await cancelToolJob(queue, removed.id!, 'removed')).toBe(true);
    expect((await channelKeys()).sort()).toEqual(expect.arrayContaining([hashOf(waiting), hashOf(removed)]));
    // Nothing makes them expire while their jobs exist, however long they wait.
    expect(await client.pttl(hashOf(waiting))).toBe(-1);
    expect(await client.pttl(hashOf(removed))).toBe(-1);
    await removed.remove();
    expect(await client.exists(hashOf(removed))).toBe(1);

    // A worker of concurrency 1 takes the first job; the cancelled one waits behind it.
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
    });
    const worker = new Worker(queue.name, processor, { connection: redis.connection, concurrency: 1 });
    cleanups.push(() => Promise.all([worker.close(), processor.close()]));
    await eventually(async () => events.some((e) => e.type === 'started'), 10_000, 'the first job to start');
    // Its look at the queue's hashes deleted the removed job's, and kept the waiting job's.
    await eventually(async () => (await client.exists(hashOf(removed))) === 0, 10_000, "the removed job's hash to go");
    expect(await waiting.getState()).toBe('waiting');
    expect(await client.hget(hashOf(waiting), 'cancel')).toContain('no longer wanted');
    expect(await client.pttl(hashOf(waiting))).toBe(-1);

    // The first job completes; the worker takes the cancelled one, which fails without a call.
    server.tasks.finish('task-1', 'completed', { result: textResult('done') });
    expect(await (await finished(queue, busy, 10_000)).getState()).toBe('completed');
    const done = await finished(queue, waiting, 10_000);
    expect(done.failedReason).toMatch(/^Job cancelled \(no longer wanted\)/);
    expect(server.count('tools/call')).toBe(1);
    // Nothing of the channel is left for these jobs.
    await eventually(async () => (await channelKeys()).length === 0, 5_000, 'no key of the channel left');
  }, 60_000);
});
