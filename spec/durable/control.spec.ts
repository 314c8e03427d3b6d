/**
 * Controlling tool jobs from another process, with the example worker as a separate process on
 * each example server over Streamable HTTP: cancelling a job cancels its remote task; a task that
 * fails on the server fails the job with the server's message and no retry; a deadline cancels
 * the task; a question of a 2025-11-25 task (delivered through tasks/result) is answered with
 * answerJobInput; answerJobInput and cancelToolJob refuse what they cannot do.
 */
import type { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveExtHttp, type ExtHttpEndpoint } from '../../examples/ext-http-server.js';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { TaskOptionError } from '../../lib/index.js';
import {
  answerJobInput,
  cancelToolJob,
  enqueueToolTask,
  pendingQuestions,
  type ToolJobData,
} from '../../lib/bullmq/index.js';
import { rejection, until } from '../helpers.js';
import {
  eventually,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startWorker,
  useRedis,
  type WorkerProcess,
} from './support.js';

skipWithoutRedis('durable queue: control from another process');

/** Waits for the job to finish; its state and failed reason or return value. */
async function finished(
  queue: Queue,
  job: Job,
  timeoutMs = 60_000,
): Promise<{ state: string; failedReason: string | undefined; returnvalue: unknown; attemptsMade: number }> {
  let state = '';
  await eventually(
    async () => {
      state = await job.getState();
      return state === 'completed' || state === 'failed';
    },
    timeoutMs,
    `job ${job.id} to finish`,
  );
  const fresh = (await queue.getJob(job.id!))!;
  return { state, failedReason: fresh.failedReason, returnvalue: fresh.returnvalue, attemptsMade: fresh.attemptsMade };
}

describe.skipIf(!REDIS_AVAILABLE)('durable queue: control from another process', () => {
  const { redis } = useRedis();

  describe.each(['2025-11-25', 'extension'] as const)('on the %s example server', (kind) => {
    let server: HttpEndpoint | ExtHttpEndpoint;
    let worker: WorkerProcess;
    let opened: Awaited<ReturnType<typeof openQueue>>;
    const counter = new MethodCounter();
    const queueName = `control-${kind}`;
    /** A long task, a failing one, on this server. */
    const long =
      kind === 'extension'
        ? { tool: 'analyze', args: { id: 1 } }
        : { tool: 'analyze', args: { id: 1, steps: 60, stepMs: 500 } };
    const failing =
      kind === 'extension'
        ? { tool: 'flaky', args: { reason: 'disk full' } }
        : { tool: 'flaky', args: { afterMs: 300, reason: 'disk full' } };
    const status = async (taskId: string): Promise<string | undefined> =>
      (await Promise.resolve(server.statuses())).get(taskId);

    beforeAll(async () => {
      server =
        kind === 'extension'
          ? await serveExtHttp({ stepMs: 3_000, onMessage: counter.onMessage })
          : await serveHttp(0, { onMessage: counter.onMessage });
      opened = await openQueue(redis, queueName);
      worker = startWorker({ redis: redis.url, url: server.url.href, queue: queueName });
      await worker.ready;
    }, 60_000);
    afterAll(async () => {
      await worker?.stop();
      await opened?.close();
      await server?.close();
    });

    const startedTask = async (jobId: string): Promise<string> => {
      await until(
        () => worker.lines.some((l) => l.event === 'started' && l.jobId === jobId),
        30_000,
        `job ${jobId} to start`,
      );
      return String(worker.lines.find((l) => l.event === 'started' && l.jobId === jobId)!.taskId);
    };

    it('cancelToolJob from another process: the worker cancels the remote task (tasks/cancel) and the job fails without a retry', async () => {
      const job = await enqueueToolTask(opened.queue, { server: 'default', ...long }, { attempts: 3 });
      const taskId = await startedTask(job.id!);
      const cancels = counter.count('tasks/cancel');
      expect(await cancelToolJob(opened.queue, job.id!, 'the user gave up')).toBe(true);
      const end = await finished(opened.queue, job);
      expect(end.state).toBe('failed');
      expect(end.failedReason).toMatch(
        /^Job cancelled \(the user gave up\): Call to "analyze" was aborted; the (remote task was cancelled|server acknowledged the cancel)/,
      );
      expect(end.attemptsMade).toBe(1);
      expect(counter.count('tasks/cancel')).toBe(cancels + 1);
      expect(await status(taskId)).toBe('cancelled');
      // A finished job has nothing left to cancel.
      expect(await cancelToolJob(opened.queue, job.id!)).toBe(false);
      expect(await cancelToolJob(opened.queue, 'no-such-job')).toBe(false);
    }, 90_000);

    it('a job cancelled while it waits in the queue fails when a worker takes it, without calling the tool', async () => {
      const calls = counter.count('tools/call');
      const job = await enqueueToolTask(opened.queue, { server: 'default', ...long }, { delay: 600_000 });
      expect(await job.getState()).toBe('delayed');
      expect(await cancelToolJob(opened.queue, job.id!)).toBe(true);
      const end = await finished(opened.queue, job);
      expect(end.state).toBe('failed');
      expect(end.failedReason).toBe('Job cancelled (cancelled on request): before the tool was called');
      expect(counter.count('tools/call')).toBe(calls);
      expect(((await opened.queue.getJob(job.id!))!.data as ToolJobData).calling).toBeUndefined();
    }, 90_000);

    it("a task that fails on the server fails the job with the server's message, and the job is not retried", async () => {
      const calls = counter.count('tools/call');
      const job = await enqueueToolTask(opened.queue, { server: 'default', ...failing }, { attempts: 3 });
      const end = await finished(opened.queue, job);
      expect(end).toMatchObject({ state: 'failed', failedReason: 'Tool "flaky" failed: disk full', attemptsMade: 1 });
      expect(counter.count('tools/call')).toBe(calls + 1);
      // The worker prints its line after BullMQ has marked the job failed: wait for it.
      const failedLine = () => worker.lines.find((l) => l.event === 'failed' && l.jobId === job.id);
      await until(() => failedLine() !== undefined, 10_000, "the worker's failed line");
      expect(failedLine()).toMatchObject({
        error: 'Tool "flaky" failed: disk full',
      });
    }, 90_000);

    it("the job's deadline cancels the remote task and fails the job", async () => {
      const job = await enqueueToolTask(
        opened.queue,
        { server: 'default', ...long, timeoutMs: 4_000 },
        { attempts: 3 },
      );
      const taskId = await startedTask(job.id!);
      const end = await finished(opened.queue, job);
      expect(end.state).toBe('failed');
      expect(end.failedReason).toMatch(/timed out|deadline/i);
      expect(end.attemptsMade).toBe(1);
      await eventually(async () => (await status(taskId)) === 'cancelled', 10_000, 'the task to be cancelled');
    }, 90_000);
  });

  describe('answers', () => {
    let server: HttpEndpoint;
    let worker: WorkerProcess;
    let opened: Awaited<ReturnType<typeof openQueue>>;
    beforeAll(async () => {
      server = await serveHttp(0);
      opened = await openQueue(redis, 'answers');
      worker = startWorker({ redis: redis.url, url: server.url.href, queue: 'answers' });
      await worker.ready;
    }, 60_000);
    afterAll(async () => {
      await worker?.stop();
      await opened?.close();
      await server?.close();
    });

    it("a 2025-11-25 task's elicitation (delivered through tasks/result) waits on the job and is answered with answerJobInput; wrong answers are refused", async () => {
      const job = await enqueueToolTask(opened.queue, {
        server: 'default',
        tool: 'confirm_delete',
        args: { path: '/data/a' },
      });
      let fresh = job;
      await eventually(
        async () => {
          fresh = (await opened.queue.getJob(job.id!))!;
          return pendingQuestions(fresh).length === 1;
        },
        30_000,
        'the question',
      );
      const [question] = pendingQuestions(fresh);
      expect(question).toMatchObject({ kind: 'elicitation', params: { message: 'Delete /data/a?' } });
      expect(fresh.progress).toMatchObject({
        status: 'input_required',
        task: expect.stringMatching(/^sha256:[0-9a-f]{12}$/),
      });
      const wrongShape = await rejection(answerJobInput(opened.queue, job.id!, { action: 'maybe' } as never));
      expect(wrongShape).toBeInstanceOf(TaskOptionError);
      expect((wrongShape as Error).message).toContain('"action": "accept", "decline" or "cancel"');
      expect(
        await rejection(answerJobInput(opened.queue, job.id!, { action: 'accept' }, { question: 'e-nope' })),
      ).toBeInstanceOf(TaskOptionError);
      expect(
        await answerJobInput(opened.queue, job.id!, { action: 'accept', content: { confirm: true } }),
      ).toMatchObject({ id: question!.id });
      const end = await finished(opened.queue, job);
      expect(end).toMatchObject({
        state: 'completed',
        returnvalue: { content: [{ type: 'text', text: 'deleted /data/a' }] },
      });
      // The job is over: there is nothing to answer.
      const late = await rejection(answerJobInput(opened.queue, job.id!, { action: 'accept' }));
      expect(late).toBeInstanceOf(TaskOptionError);
      expect((late as Error).message).toBe(`Job ${job.id} has completed: there is nothing to answer`);
      expect(await rejection(answerJobInput(opened.queue, 'no-such-job', { action: 'accept' }))).toBeInstanceOf(
        TaskOptionError,
      );
    }, 90_000);

    it('a job that waits on no question refuses an answer; enqueueToolTask refuses a malformed request before enqueueing', async () => {
      const job = await enqueueToolTask(opened.queue, {
        server: 'default',
        tool: 'analyze',
        args: { steps: 1, stepMs: 100 },
      });
      const none = await rejection(answerJobInput(opened.queue, job.id!, { action: 'accept' }));
      expect((none as Error).message).toBe(`Cannot answer: job ${job.id} waits on no question`);
      await finished(opened.queue, job);
      const counts = await opened.queue.getJobCounts();
      for (const bad of [
        { server: '', tool: 'x' },
        { server: 'default', tool: 42 },
        { server: 'default', tool: 'x', args: [] },
        { server: 'default', tool: 'x', timeoutMs: -1 },
      ]) {
        await expect(enqueueToolTask(opened.queue, bad as never)).rejects.toBeInstanceOf(TaskOptionError);
      }
      expect(await opened.queue.getJobCounts()).toEqual(counts);
    }, 60_000);
  });
});
