/**
 * A worker killed while its task waits for an answer. On the tasks extension the question is part
 * of the task (tasks/get lists it): the worker that takes over is asked again, under the same
 * question id, and an answer given through answerJobInput completes the job. On the 2025-11-25
 * example server the question was sent to the dead worker's connection: it is lost with it, and
 * the job stays input_required without a question until it is cancelled (a stated limit).
 */
import { describe, expect, it } from 'vitest';
import { serveExtHttp, type ExtHttpEndpoint } from '../../examples/ext-http-server.js';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { answerJobInput, cancelToolJob, enqueueToolTask, type ToolJobProgress } from '../../lib/bullmq/index.js';
import { until } from '../helpers.js';
import { allowSdkServerListeners } from '../support/sdk-server-listeners.js';
import {
  questionsOn,
  eventually,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startWorker,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: a worker killed while its task asks a question');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a worker killed while its task asks a question', () => {
  const { redis } = useRedis();

  /** Starts a job on a first worker, waits for its question, starts a second worker and kills the first. */
  async function killWhileAsking(url: string, queueName: string, tool: string, args: Record<string, unknown>) {
    const opened = await openQueue(redis, queueName);
    const first = startWorker({ redis: redis.url, url, queue: queueName, lockDuration: 4_000, stalledInterval: 2_000 });
    await first.ready;
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool, args });
    const asked = await questionsOn(opened.queue, job.id!, 'the question');
    const second = startWorker({
      redis: redis.url,
      url,
      queue: queueName,
      lockDuration: 4_000,
      stalledInterval: 2_000,
    });
    await second.ready;
    await first.kill();
    await until(() => second.lines.some((l) => l.event === 'resumed'), 30_000, 'the takeover');
    return { ...opened, job, asked: asked[0]!, second };
  }

  it('on the tasks extension the question is asked again under the same id, and its answer completes the job (one tools/call)', async () => {
    const counter = new MethodCounter();
    const server: ExtHttpEndpoint = await serveExtHttp({ stepMs: 300, onMessage: counter.onMessage });
    const run = await killWhileAsking(server.url.href, 'ask-ext', 'analyze', { id: 5 });
    try {
      await until(
        () =>
          run.second.lines.some(
            (l) => l.event === 'progress' && (l.question as { id?: string } | undefined)?.id === run.asked.id,
          ),
        30_000,
        'the question again',
      );
      const again = await questionsOn(run.queue, run.job.id!, 'the question on the job', 1, 10_000);
      expect(again.map((q) => q.id)).toEqual([run.asked.id]);
      await answerJobInput(run.queue, run.job.id!, { action: 'accept', content: { depth: 'summary' } });
      await eventually(async () => (await run.job.getState()) === 'completed', 30_000, 'the job to complete');
      expect((await run.queue.getJob(run.job.id!))!.returnvalue).toMatchObject({
        structuredContent: { id: 5, depth: 'summary' },
      });
      expect(counter.count('tools/call')).toBe(1);
    } finally {
      await run.second.stop();
      await run.close();
      await server.close();
    }
  }, 120_000);

  it('on the 2025-11-25 example server the question went down with the worker: the job stays input_required with no question, until cancelled', async () => {
    // The SDK's server runs in this process, and the second worker holds its tasks/result until the cancel.
    const restoreListeners = allowSdkServerListeners();
    const server: HttpEndpoint = await serveHttp(0);
    const run = await killWhileAsking(server.url.href, 'ask-2025', 'confirm_delete', { path: '/data/b' });
    try {
      // The resumed task is input_required; nothing asks again (the server sent its request to the dead connection).
      await until(
        () => run.second.lines.some((l) => l.event === 'progress' && l.status === 'input_required'),
        30_000,
        'the resumed status',
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const progress = (await run.queue.getJob(run.job.id!))!.progress as ToolJobProgress;
      expect(progress).toMatchObject({ status: 'input_required', questions: [] });
      expect(await run.job.getState()).toBe('active');
      await expect(
        answerJobInput(run.queue, run.job.id!, { action: 'accept', content: { confirm: true } }),
      ).rejects.toThrow('waits on no question');
      expect(await cancelToolJob(run.queue, run.job.id!, 'nobody can answer')).toBe(true);
      await eventually(async () => (await run.job.getState()) === 'failed', 30_000, 'the job to fail');
      expect((await run.queue.getJob(run.job.id!))!.failedReason).toMatch(/^Job cancelled \(nobody can answer\)/);
    } finally {
      await run.second.stop();
      await run.close();
      await server.close();
      restoreListeners();
    }
  }, 120_000);
});
