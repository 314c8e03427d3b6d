/**
 * The processor's `input` event comes once the job's progress shows the question, so a listener
 * can answer with `answerJobInput` at once. The worker runs in this process; its job's progress
 * writes are slowed down (each waits before it reaches Redis), which is what a busy Redis or a
 * write queued behind a status write looks like. Before, the event came before the write, and an
 * answer from the listener was refused: "waits on no question" (seen as a flaky takeover test).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Worker, type Job, type Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { TaskClient } from '../../lib/index.js';
import {
  answerJobInput,
  cancelToolJob,
  enqueueToolTask,
  pendingQuestions,
  taskProcessor,
  type PendingQuestion,
  type ToolJobEvent,
  type ToolJobProgress,
} from '../../lib/bullmq/index.js';
import { eventually, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: the input event');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `job`, with each `updateProgress` held for `delayMs` before it is written (and noted in `sent`). */
function slowProgress(job: Job, delayMs: number, sent: ToolJobProgress[] = []): Job {
  return new Proxy(job, {
    get(target, key, receiver) {
      if (key === 'updateProgress')
        return async (progress: unknown) => {
          sent.push(progress as ToolJobProgress);
          await pause(delayMs);
          return target.updateProgress(progress as never);
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

describe.skipIf(!REDIS_AVAILABLE)('durable queue: the input event', () => {
  let server: HttpEndpoint;
  const { redis } = useRedis({
    setup: async () => {
      server = await serveHttp(0);
    },
    teardown: () => server?.close(),
  });

  /**
   * A worker in this process whose job's progress writes take `delayMs` each (noted in `sent`),
   * connected with the elicitation capability; `close()` stops it and its processor.
   */
  function slowWorker(queue: Queue, delayMs: number, onEvent: (event: ToolJobEvent) => void, sent?: ToolJobProgress[]) {
    const processor = taskProcessor({
      queue,
      connect: () =>
        TaskClient.connect(new StreamableHTTPClientTransport(server.url), {
          sdk: 'v2',
          capabilities: { elicitation: {} },
        }),
      controlPollMs: 100,
      onEvent,
    });
    const worker = new Worker(queue.name, (job, token) => processor(slowProgress(job, delayMs, sent), token), {
      connection: redis.connection,
    });
    return {
      processor,
      close: () => Promise.all([worker.close(true), processor.close()]),
    };
  }

  it('comes once the question is on the job: answerJobInput from the listener is accepted and completes the job', async () => {
    const opened = await openQueue(redis, 'input-event');
    const events: ToolJobEvent[] = [];
    /** What the job showed when each `input` event came, and what answering from the listener gave. */
    const seen: { onJob: PendingQuestion[]; answered: Promise<unknown> }[] = [];
    const worker = slowWorker(opened.queue, 300, (event) => {
      events.push(event);
      if (event.type !== 'input') return;
      const entry: (typeof seen)[number] = { onJob: [], answered: Promise.resolve() };
      seen.push(entry);
      const read = opened.queue.getJob(event.jobId).then((job) => (entry.onJob = pendingQuestions(job!)));
      entry.answered = read.then(() =>
        answerJobInput(opened.queue, event.jobId, { action: 'accept', content: { confirm: true } }),
      );
      entry.answered.catch(() => {});
    });
    try {
      const job = await enqueueToolTask(opened.queue, {
        server: 'default',
        tool: 'confirm_delete',
        args: { path: '/data/e' },
      });
      await eventually(async () => seen.length > 0, 30_000, 'the input event');
      const [entry] = seen;
      const answered = await entry!.answered.then(
        (value) => ({ value }),
        (error: unknown) => ({ error: String(error) }),
      );
      const inputs = events.flatMap((e) => (e.type === 'input' ? [e.question] : []));
      expect(entry!.onJob.map((q) => q.id)).toEqual([inputs[0]!.id]);
      expect(answered).toMatchObject({ value: { id: inputs[0]!.id } });
      await eventually(async () => ['completed', 'failed'].includes(await job.getState()), 30_000, 'the job');
      const done = (await opened.queue.getJob(job.id!))!;
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'deleted /data/e' }] });
      expect(events.filter((e) => e.type === 'input')).toHaveLength(1);
    } finally {
      await worker.close();
      await opened.close();
    }
  }, 60_000);

  it('is not told for a question withdrawn before the job showed it (the job was cancelled meanwhile)', async () => {
    const opened = await openQueue(redis, 'input-event-withdrawn');
    const events: ToolJobEvent[] = [];
    const sent: ToolJobProgress[] = [];
    // Writes take 3 s: the cancel below withdraws the question well before its write lands.
    const worker = slowWorker(opened.queue, 3_000, (event) => events.push(event), sent);
    try {
      const job = await enqueueToolTask(opened.queue, {
        server: 'default',
        tool: 'confirm_delete',
        args: { path: '/data/w' },
      });
      await eventually(async () => sent.some((p) => p.questions.length > 0), 30_000, 'the question to be written');
      expect(await cancelToolJob(opened.queue, job.id!, 'changed my mind')).toBe(true);
      await eventually(async () => (await job.getState()) === 'failed', 30_000, 'the job to fail');
      await worker.processor.close();
      expect(events.filter((e) => e.type === 'input')).toEqual([]);
      expect(sent.at(-1)?.questions).toEqual([]);
    } finally {
      await worker.close();
      await opened.close();
    }
  }, 60_000);
});
