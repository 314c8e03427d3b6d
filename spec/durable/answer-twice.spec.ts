/**
 * Two answers to one question (two people answering at once, a retried request): the first wins,
 * and the second is refused as "answered already". It was refused only while the first waited in
 * Redis: once a worker had taken it (and before the job's progress dropped the question), a second
 * answer was stored and stayed, and the next time the task asked the same thing, that old answer
 * answered it at once, with nobody having seen the question. The worker runs in this process, on a
 * scripted 2025-11-25 server that asks the same question twice, the second time a while after the
 * first was answered; the job's progress writes are slowed, as on a busy Redis.
 */
import { Worker, type Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient, TaskOptionError, type ElicitResult } from '../../lib/index.js';
import { answerJobInput, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { connectScripted, type Json } from '../support/scripted-server.js';
import { eventually, finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: a question answered twice');

const RELATED = 'io.modelcontextprotocol/related-task';
const QUESTION: Json = {
  message: 'Continue?',
  requestedSchema: { type: 'object', properties: { who: { type: 'string' } } },
};
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `job`, with each `updateProgress` held for `delayMs` before it is written. */
function slowProgress(job: Job, delayMs: number): Job {
  return new Proxy(job, {
    get(target, key, receiver) {
      if (key === 'updateProgress')
        return async (progress: unknown) => {
          await pause(delayMs);
          return target.updateProgress(progress as never);
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a question answered twice', () => {
  const { redis, cleanups } = useRedis();

  it('a second answer given after a worker took the first is refused, and does not answer the same question asked later', async () => {
    const pair = await connectScripted({
      tools: [{ name: 'job', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    cleanups.push(() => pair.close());
    const { server } = pair;
    server.on('tools/call', () => server.tasks.createResult({ status: 'input_required', pollInterval: 50 }));
    let asking = false;
    let askedAgain = false;
    server.on('tasks/result', async (params) => {
      const taskId = String(params.taskId);
      if (!asking) {
        asking = true;
        const ask = async (): Promise<string> => {
          const reply = await server.request('elicitation/create', { ...QUESTION, _meta: { [RELATED]: { taskId } } });
          return String(((reply.result as ElicitResult).content as { who?: unknown } | undefined)?.who);
        };
        const first = await ask();
        await pause(2_000);
        askedAgain = true;
        const second = await ask();
        server.tasks.finish(taskId, 'completed', {
          result: { content: [{ type: 'text', text: `${first}/${second}` }] },
        });
      }
      return server.tasks.handlers['tasks/result']!(params, undefined as never);
    });

    const opened = await openQueue(redis, 'answer-twice');
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
    });
    const worker = new Worker(
      opened.queue.name,
      (job: Job, token?: string, signal?: AbortSignal) => processor(slowProgress(job, 1_000), token, signal),
      { connection: redis.connection },
    );
    cleanups.push(() => Promise.all([worker.close(), processor.close()]));
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' });
    const inputs = () => events.filter((e) => e.type === 'input').length;
    await eventually(async () => inputs() === 1, 20_000, 'the question');

    await answerJobInput(opened.queue, job.id!, { action: 'accept', content: { who: 'first' } });
    // The worker took the answer and sent it; the job's progress still shows the question.
    await eventually(
      async () => server.log.filter((entry) => entry.kind === 'response').length === 1,
      10_000,
      'the answer to reach the server',
    );
    const late = await answerJobInput(opened.queue, job.id!, { action: 'accept', content: { who: 'late' } }).catch(
      (error: unknown) => error,
    );
    expect(late).toBeInstanceOf(TaskOptionError);
    expect((late as Error).message).toMatch(/was answered already$/);

    // The same question, asked again: it waits on the job for an answer of its own.
    await eventually(async () => askedAgain && inputs() === 2, 20_000, 'the question asked again');
    await answerJobInput(opened.queue, job.id!, { action: 'accept', content: { who: 'second' } });
    const done = await finished(opened.queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'first/second' }] });
  }, 60_000);
});
