/**
 * `processor.close()` without `worker.close()`: the Worker goes on fetching jobs and handing them
 * to the closed processor. Each was handed back to the queue at once (`moveToWait`), and BullMQ
 * fetches the next job as soon as one is handed back: the same job, round and round, as fast as
 * Redis answers. A job handed back once after close() and coming back now waits 5 s in the delayed
 * set, with a warning that says to close the Worker; nothing is called. (Once is at once: a Worker
 * that is closing may fetch one more job, which the next worker should get without delay; the
 * limits suite's hand-backs on SIGTERM check that.) The worker runs in this process; no server is
 * reached.
 */
import { Worker, type Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { eventually, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: a processor closed before its Worker');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a processor closed before its Worker', () => {
  const { redis, cleanups } = useRedis();

  it('a job the Worker hands to the closed processor goes back at once, and coming back is held back 5 s with a warning; it is not run', async () => {
    const opened = await openQueue(redis, 'closed-processor');
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    let connects = 0;
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => {
        connects += 1;
        return Promise.reject(new Error('no server in this test'));
      },
      onEvent: (event) => events.push(event),
    });
    let handed = 0;
    const worker = new Worker(
      opened.queue.name,
      (job: Job, token?: string, signal?: AbortSignal) => {
        handed += 1;
        return processor(job, token, signal);
      },
      { connection: redis.connection },
    );
    cleanups.push(() => worker.close());
    await worker.waitUntilReady();
    await processor.close();

    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
    await eventually(() => Promise.resolve(handed > 0), 10_000, 'the Worker to fetch the job');
    // Time for a loop to show: the job went round hundreds of times in this second.
    await pause(1_000);
    expect(handed).toBe(2);
    expect(connects).toBe(0);
    expect(await job.getState()).toBe('delayed');
    expect(events).toEqual([
      { type: 'released', jobId: job.id, taskId: undefined },
      {
        type: 'warning',
        jobId: job.id,
        error: new Error(
          `The processor is closed but its Worker is not: job ${job.id} came back to it, and goes back to the queue in 5000 ms (close the Worker with the processor: worker.close())`,
        ),
      },
    ]);
    const fresh = (await opened.queue.getJob(job.id!))!;
    expect(fresh.attemptsMade).toBe(0);
    expect(fresh.data).toEqual(job.data);
    expect(fresh.delay).toBeGreaterThan(4_000);
    expect(fresh.delay).toBeLessThanOrEqual(5_000);
  }, 30_000);
});
