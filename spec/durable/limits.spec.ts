/**
 * What a durable job can and cannot survive, stated and tested:
 * - a worker that closes (SIGTERM) hands its jobs back at once, and another worker resumes them;
 * - a task kept per HTTP session (the 2025-11-25 example server) can only be resumed in that
 *   session: a worker that opens a new one finds no task, and the job fails (or, with
 *   `lostTask: 'call-again'`, calls the tool again);
 * - a stdio server dies with its worker, and its tasks with it: the job fails;
 * - a worker that stopped between sending tools/call and storing the reference leaves a `calling`
 *   mark: the next worker waits for that reference until the calling grace has passed (the other
 *   worker may be alive and still calling), then calls again (default) or fails the job
 *   (`uncertainCall: 'fail'`).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as JoinTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Worker, type Job, type Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { TaskClient } from '../../lib/index.js';
import {
  cancelToolJob,
  enqueueToolTask,
  taskProcessor,
  type TaskProcessorOptions,
  type ToolJobData,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { until } from '../helpers.js';
import {
  eventually,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startWorker,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: limits');

async function finished(queue: Queue, job: Job, timeoutMs = 60_000): Promise<Job> {
  await eventually(
    async () => ['completed', 'failed'].includes(await job.getState()),
    timeoutMs,
    `job ${job.id} to finish`,
  );
  return (await queue.getJob(job.id!))!;
}

describe.skipIf(!REDIS_AVAILABLE)('durable queue: limits', () => {
  let server: HttpEndpoint;
  const counter = new MethodCounter();
  const { redis } = useRedis({
    setup: async () => {
      server = await serveHttp(0, { onMessage: counter.onMessage });
    },
    teardown: () => server?.close(),
  });

  /** A worker in this process; its `connect` opens a new HTTP session, whatever the job's reference says. */
  function sessionBlindWorker(queue: Queue, options: Partial<TaskProcessorOptions> = {}) {
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue,
      connect: () =>
        TaskClient.connect(new StreamableHTTPClientTransport(server.url), {
          sdk: 'v2',
          capabilities: { elicitation: {} },
        }),
      controlPollMs: 100,
      onEvent: (event) => events.push(event),
      ...options,
    });
    const worker = new Worker(queue.name, processor, {
      connection: redis.connection,
      lockDuration: 2_000,
      stalledInterval: 1_000,
      maxStalledCount: 10,
    });
    return { events, close: () => Promise.all([worker.close(), processor.close()]) };
  }

  /** Connects as the example worker does: a new session, or the one a reference names. */
  const joining = (_server: string, { sessionId }: { sessionId: string | undefined }): Promise<TaskClient> =>
    sessionId === undefined
      ? TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' })
      : TaskClient.connect(new JoinTransport(server.url, { sessionId }), { sdk: 'v1' });

  /** A job started by a worker process that is then closed (SIGTERM): it hands the job back. */
  /** A job handed back to the queue by a worker that stopped while its task (`steps` × 600 ms) runs. */
  async function handedBack(queueName: string, steps = 10) {
    const opened = await openQueue(redis, queueName);
    const first = startWorker({
      redis: redis.url,
      url: server.url.href,
      queue: queueName,
      lockDuration: 30_000,
      stalledInterval: 30_000,
    });
    await first.ready;
    const job = await enqueueToolTask(opened.queue, {
      server: 'default',
      tool: 'analyze',
      args: { id: 3, steps, stepMs: 600 },
    });
    await until(() => first.lines.some((l) => l.event === 'started'), 30_000, 'the job to start');
    const stoppedAt = Date.now();
    await first.stop();
    expect(first.stderr.join('\n')).toContain(`job ${job.id}: handed back to the queue`);
    // Back in the queue at once (not after the 30 s lock), with its reference.
    expect(await job.getState()).toBe('waiting');
    const data = (await opened.queue.getJob(job.id!))!.data as ToolJobData;
    expect(data.task?.reference.sessionId).toEqual(expect.any(String));
    return { ...opened, job, stoppedAt };
  }

  it('a worker closed with SIGTERM hands its job back at once; another worker resumes the task in its session', async () => {
    const calls = counter.count('tools/call');
    const { queue, close, job, stoppedAt } = await handedBack('handoff');
    try {
      const second = startWorker({
        redis: redis.url,
        url: server.url.href,
        queue: 'handoff',
        lockDuration: 30_000,
        stalledInterval: 30_000,
      });
      await until(() => second.lines.some((l) => l.event === 'resumed'), 30_000, 'the resume');
      const done = await finished(queue, job);
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 3 done in 10 steps' }] });
      expect(counter.count('tools/call')).toBe(calls + 1);
      // Well within the 30 s lock: no stall detection was needed.
      expect(Date.now() - stoppedAt).toBeLessThan(25_000);
      await second.stop();
    } finally {
      await close();
    }
  }, 120_000);

  it('a job cancelled while it waits in the queue with its task running: the worker that takes it cancels the task (tasks/cancel)', async () => {
    const cancels = counter.count('tasks/cancel');
    // A task long enough (60 s) to be still running when the next worker takes the job, however
    // slow the machine: one that completed first would rightly complete the job (the last look).
    const { queue, close, job } = await handedBack('cancel-waiting', 100);
    const taskId = ((await queue.getJob(job.id!))!.data as ToolJobData).task!.reference.taskId;
    try {
      expect(await cancelToolJob(queue, job.id!, 'no longer needed')).toBe(true);
      const second = startWorker({ redis: redis.url, url: server.url.href, queue: 'cancel-waiting' });
      const done = await finished(queue, job);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toBe(
        'Job cancelled (no longer needed): Call to "analyze" was aborted; the remote task was cancelled',
      );
      expect(counter.count('tasks/cancel')).toBe(cancels + 1);
      expect((await server.statuses()).get(taskId)).toBe('cancelled');
      await second.stop();
    } finally {
      await close();
    }
  }, 120_000);

  it('a task kept per session cannot be resumed in another session: the job fails, the tool is not called again', async () => {
    const calls = counter.count('tools/call');
    const { queue, close, job } = await handedBack('session-blind');
    const blind = sessionBlindWorker(queue);
    try {
      const done = await finished(queue, job);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toMatch(/may belong to another session/);
      expect(done.failedReason).toContain('The task cannot be resumed: the server no longer knows it');
      expect(counter.count('tools/call')).toBe(calls + 1);
      expect(blind.events.some((e) => e.type === 'resumed')).toBe(true);
    } finally {
      await blind.close();
      await close();
    }
  }, 120_000);

  it("with lostTask: 'call-again', a task that cannot be resumed is called again (at least once)", async () => {
    const calls = counter.count('tools/call');
    const { queue, close, job } = await handedBack('session-blind-again');
    const blind = sessionBlindWorker(queue, { lostTask: 'call-again' });
    try {
      const done = await finished(queue, job);
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(counter.count('tools/call')).toBe(calls + 2);
      expect(blind.events.filter((e) => e.type === 'started')).toHaveLength(1);
    } finally {
      await blind.close();
      await close();
    }
  }, 120_000);

  it("calling again after a lost task counts as a retry: with lostTask 'call-again' and no retries left, the attempt fails instead", async () => {
    const calls = counter.count('tools/call');
    const { queue, close, job } = await handedBack('session-blind-bounded');
    const blind = sessionBlindWorker(queue, { lostTask: 'call-again', retry: { attempts: 0 } });
    try {
      const done = await finished(queue, job);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toMatch(
        /^Gave up after 0 retries: .*The task cannot be resumed: the server no longer knows it/,
      );
      expect(counter.count('tools/call')).toBe(calls + 1);
    } finally {
      await blind.close();
      await close();
    }
  }, 120_000);

  it('a stdio server dies with its worker: the job taken over fails, saying so, and the tool is not called again', async () => {
    const opened = await openQueue(redis, 'stdio');
    const command = `${process.execPath} --import tsx examples/server.ts`;
    const first = startWorker({ redis: redis.url, stdio: command, queue: 'stdio' });
    await first.ready;
    const job = await enqueueToolTask(opened.queue, {
      server: 'default',
      tool: 'analyze',
      args: { id: 4, steps: 30, stepMs: 300 },
    });
    try {
      await until(() => first.lines.some((l) => l.event === 'started'), 30_000, 'the job to start');
      await first.kill();
      const second = startWorker({ redis: redis.url, stdio: command, queue: 'stdio' });
      const done = await finished(opened.queue, job);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toContain(
        'The task cannot be resumed: the server no longer knows it (a stdio server dies with its worker, and its tasks with it;',
      );
      expect(second.lines.some((l) => l.event === 'resumed')).toBe(true);
      expect(second.lines.some((l) => l.event === 'started')).toBe(false);
      await second.stop();
    } finally {
      await opened.close();
    }
  }, 120_000);

  it('a connection that declares neither elicitation nor sampling: 20 jobs starting on it at once all run (without input callbacks)', async () => {
    const opened = await openQueue(redis, 'no-input');
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' }),
      controlPollMs: 100,
    });
    const worker = new Worker('no-input', processor, { connection: redis.connection, concurrency: 20 });
    try {
      const jobs = await Promise.all(
        Array.from({ length: 20 }, (_, id) =>
          enqueueToolTask(opened.queue, { server: 'default', tool: 'analyze', args: { id, steps: 1, stepMs: 200 } }),
        ),
      );
      const done = await Promise.all(jobs.map((job) => finished(opened.queue, job)));
      expect(await Promise.all(done.map(async (job) => [await job.getState(), job.failedReason]))).toEqual(
        jobs.map(() => ['completed', undefined]),
      );
    } finally {
      await Promise.all([worker.close(), processor.close()]);
      await opened.close();
    }
  }, 60_000);

  describe("a job with another worker's calling mark and no reference (that worker called the tool, then died or lost the job)", () => {
    /** A job as a worker leaves it when it stops `agoMs` after marking it, before storing the reference. */
    async function marked(queue: Queue, agoMs: number): Promise<Job> {
      const job = await enqueueToolTask(
        queue,
        { server: 'default', tool: 'analyze', args: { steps: 1, stepMs: 100 } },
        { delay: 60_000 },
      );
      await job.updateData({ ...job.data, calling: { at: Date.now() - agoMs } });
      await job.promote();
      return job;
    }

    it('is called again by default once the calling grace has passed (at least once)', async () => {
      const opened = await openQueue(redis, 'uncertain-again');
      const calls = counter.count('tools/call');
      const worker = sessionBlindWorker(opened.queue);
      try {
        const done = await finished(opened.queue, await marked(opened.queue, 120_000));
        expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
        expect(counter.count('tools/call')).toBe(calls + 1);
        expect((done.data as ToolJobData).calling).toBeUndefined();
      } finally {
        await worker.close();
        await opened.close();
      }
    }, 60_000);

    it("fails without calling with uncertainCall: 'fail' (at most once)", async () => {
      const opened = await openQueue(redis, 'uncertain-fail');
      const calls = counter.count('tools/call');
      const worker = sessionBlindWorker(opened.queue, { uncertainCall: 'fail', callingGraceMs: 1_000 });
      try {
        const started = Date.now();
        const done = await finished(opened.queue, await marked(opened.queue, 0));
        expect(await done.getState()).toBe('failed');
        expect(done.failedReason).toBe(
          'The tool "analyze" may have been called already (a worker stopped after calling it and before storing its task), and uncertainCall is \'fail\'',
        );
        // It waited out the grace for the other worker's reference first.
        expect(Date.now() - started).toBeGreaterThanOrEqual(900);
        expect(counter.count('tools/call')).toBe(calls);
      } finally {
        await worker.close();
        await opened.close();
      }
    }, 60_000);

    it('waits for the reference of a worker that is still calling, and resumes its task instead of calling again', async () => {
      const opened = await openQueue(redis, 'uncertain-alive');
      const events: ToolJobEvent[] = [];
      const processor = taskProcessor({
        queue: opened.queue,
        connect: joining,
        controlPollMs: 100,
        onEvent: (event) => events.push(event),
      });
      const worker = new Worker('uncertain-alive', processor, { connection: redis.connection });
      // The slow worker: it marked the job, and its task is created only now.
      const slow = await TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' });
      try {
        const job = await marked(opened.queue, 0);
        // The worker holds the job and waits for the reference.
        await eventually(async () => (await job.getState()) === 'active', 10_000, 'the job to be taken');
        await new Promise((resolve) => setTimeout(resolve, 700));
        const handle = await slow.callToolAsTask('analyze', { id: 8, steps: 2, stepMs: 500 });
        const calls = counter.count('tools/call');
        const reference = handle.detach()!;
        await job.updateData({
          ...(job.data as ToolJobData),
          calling: undefined,
          task: { reference, storedAt: Date.now() },
        });
        const done = await finished(opened.queue, job);
        expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
        expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 8 done in 2 steps' }] });
        expect(counter.count('tools/call')).toBe(calls);
        expect(events.filter((e) => e.type === 'started')).toEqual([]);
        expect(events.find((e) => e.type === 'resumed')).toMatchObject({ taskId: reference.taskId });
      } finally {
        await Promise.all([worker.close(), processor.close()]);
        await slow.close();
        await opened.close();
      }
    }, 60_000);
  });
});
