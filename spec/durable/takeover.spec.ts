/**
 * A worker killed with SIGKILL mid-task: BullMQ's stalled-job recovery hands the job to another
 * worker process, which resumes the task from the reference stored in the job instead of calling
 * the tool again. On the tasks-extension example server over Streamable HTTP (no sessions) and on
 * the 2025-11-25 example server over Streamable HTTP (tasks kept per session: the other worker
 * joins the session the reference names). Real redis-server, real BullMQ, workers as processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveExtHttp, type ExtHttpEndpoint } from '../../examples/ext-http-server.js';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { answerJobInput, enqueueToolTask, type ToolJobData } from '../../lib/bullmq/index.js';
import { until } from '../helpers.js';
import {
  questionsOn,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startWorker,
  useRedis,
  type WorkerProcess,
} from './support.js';

skipWithoutRedis('durable queue: takeover after SIGKILL');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: takeover after SIGKILL', () => {
  const { redis } = useRedis();

  /** Starts two workers on `queue`, enqueues one job, and kills the worker that started it. */
  async function killTheStarter(url: string, queueName: string, tool: string, args: Record<string, unknown>) {
    const opened = await openQueue(redis, queueName);
    // A 4 s lock: renewals every 2 s stay on time even while other suites load the machine.
    const settings = { redis: redis.url, url, queue: queueName, lockDuration: 4_000, stalledInterval: 2_000 };
    const workers = [startWorker(settings), startWorker(settings)];
    await Promise.all(workers.map((w) => w.ready));
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool, args });
    const jobId = job.id!;
    const completions: string[] = [];
    opened.events.on('completed', ({ jobId: id }) => completions.push(id));
    const startedBy = (w: WorkerProcess): boolean => w.lines.some((l) => l.event === 'started' && l.jobId === jobId);
    await until(() => workers.some(startedBy), 30_000, 'a worker to start the job');
    const victim = workers.find(startedBy)!;
    const survivor = workers.find((w) => w !== victim)!;
    // The reference is in the job before the worker waits on the task.
    const stored = (await opened.queue.getJob(jobId))!.data as ToolJobData;
    expect(stored.task?.reference.taskId).toBe(victim.lines.find((l) => l.event === 'started')?.taskId);
    expect(stored.calling).toBeUndefined();
    const killedAt = Date.now();
    await victim.kill();
    await until(
      () => survivor.lines.some((l) => l.event === 'resumed' && l.jobId === jobId),
      30_000,
      'the other worker to resume the job',
    );
    const resumedAfterMs = Date.now() - killedAt;
    return {
      ...opened,
      jobId,
      victim,
      survivor,
      completions,
      resumedAfterMs,
      taskId: stored.task!.reference.taskId,
      reference: stored.task!.reference,
    };
  }

  describe('on the tasks-extension example server over Streamable HTTP', () => {
    let server: ExtHttpEndpoint;
    const counter = new MethodCounter();
    beforeAll(async () => {
      server = await serveExtHttp({ stepMs: 1_500, onMessage: counter.onMessage });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('another worker resumes the task (one tools/call), its question is answered from this process, and the job returns the result once', async () => {
      const run = await killTheStarter(server.url.href, 'takeover-ext', 'analyze', { id: 7 });
      try {
        expect(run.reference.wire).toBe('io.modelcontextprotocol/tasks');
        expect(run.reference.sessionId).toBeUndefined();
        // The resumed task asks how detailed the report should be: the job shows the question.
        const questions = await questionsOn(run.queue, run.jobId);
        expect(questions[0]).toMatchObject({
          kind: 'elicitation',
          params: { message: 'How detailed should the report be?' },
        });
        const progress = (await run.queue.getJob(run.jobId))!.progress as { status: string };
        expect(progress.status).toBe('input_required');
        await answerJobInput(run.queue, run.jobId, { action: 'accept', content: { depth: 'full' } });
        await until(() => run.completions.includes(run.jobId), 30_000, 'the job to complete');
        const job = (await run.queue.getJob(run.jobId))!;
        expect(await job.getState()).toBe('completed');
        expect(job.returnvalue).toMatchObject({
          content: [{ type: 'text', text: 'analysis of dataset 7: full report ready' }],
          structuredContent: { id: 7, depth: 'full' },
        });
        expect(counter.count('tools/call')).toBe(1);
        expect(run.completions.filter((id) => id === run.jobId)).toHaveLength(1);
        // Only the worker that called the tool started it; the other resumed it and finished it.
        expect(run.survivor.lines.filter((l) => l.event === 'started')).toHaveLength(0);
        // The worker prints its line after BullMQ marked the job completed: wait for it.
        await until(
          () => run.survivor.lines.some((l) => l.event === 'completed'),
          30_000,
          "the survivor's completed line",
        );
        expect(run.survivor.lines.find((l) => l.event === 'completed')).toMatchObject({
          jobId: run.jobId,
          taskId: run.taskId,
        });
        expect(server.statuses().get(run.taskId)).toBe('completed');
        console.log(
          `ext takeover: resumed ${run.resumedAfterMs} ms after the SIGKILL (lockDuration 4000 ms, stalledInterval 2000 ms)`,
        );
      } finally {
        await run.survivor.stop();
        await run.close();
      }
    }, 120_000);
  });

  describe('on the 2025-11-25 example server over Streamable HTTP, with a session', () => {
    let server: HttpEndpoint;
    const counter = new MethodCounter();
    beforeAll(async () => {
      server = await serveHttp(0, { onMessage: counter.onMessage });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('another worker joins the session the reference names, resumes the task (one tools/call), and the job returns the result once', async () => {
      const run = await killTheStarter(server.url.href, 'takeover-2025', 'analyze', { id: 7, steps: 8, stepMs: 1_000 });
      try {
        expect(run.reference.wire).toBe('2025-11-25');
        expect(typeof run.reference.sessionId).toBe('string');
        await until(() => run.completions.includes(run.jobId), 60_000, 'the job to complete');
        const job = (await run.queue.getJob(run.jobId))!;
        expect(await job.getState()).toBe('completed');
        expect(job.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 7 done in 8 steps' }] });
        expect(counter.count('tools/call')).toBe(1);
        expect(run.completions.filter((id) => id === run.jobId)).toHaveLength(1);
        expect(run.survivor.lines.filter((l) => l.event === 'started')).toHaveLength(0);
        expect((await server.statuses()).get(run.taskId)).toBe('completed');
        console.log(
          `2025 takeover: resumed ${run.resumedAfterMs} ms after the SIGKILL (lockDuration 4000 ms, stalledInterval 2000 ms)`,
        );
      } finally {
        await run.survivor.stop();
        await run.close();
      }
    }, 120_000);
  });
});
