/**
 * Questions that ask the same thing at once, in one task: a tool that samples one prompt twice (a
 * vote), or asks the same confirmation for two items. A question's id is derived from what it asks
 * (so a takeover asks it again under the same id), so two such questions had one id: the job showed
 * one question, its answer reached one of them, and the other waited for good, with nothing left on
 * the job to answer. Each question waiting now has an id of its own, and each is answered.
 * The worker runs in this process, on a scripted 2025-11-25 server that sends both requests while
 * `tasks/result` is open ([R29], [R31]).
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient, type CreateMessageResult } from '../../lib/index.js';
import {
  answerJobInput,
  enqueueToolTask,
  pendingQuestions,
  taskProcessor,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { connectScripted, type Json } from '../support/scripted-server.js';
import { eventually, finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: questions that ask the same thing');

const RELATED = 'io.modelcontextprotocol/related-task';
const PROMPT: Json = { messages: [{ role: 'user', content: { type: 'text', text: 'Pick a colour' } }], maxTokens: 5 };

describe.skipIf(!REDIS_AVAILABLE)('durable queue: questions that ask the same thing', () => {
  const { redis, cleanups } = useRedis();

  it('two identical sampling requests of one task wait on the job as two questions, each answered once, and the job completes', async () => {
    const pair = await connectScripted({
      tools: [{ name: 'vote', taskSupport: 'required' }],
      clientOptions: { capabilities: { sampling: {} } },
    });
    cleanups.push(() => pair.close());
    const { server } = pair;
    server.on('tools/call', () => server.tasks.createResult({ status: 'input_required', pollInterval: 50 }));
    let asked = false;
    server.on('tasks/result', async (params) => {
      const taskId = String(params.taskId);
      if (!asked && server.tasks.get(taskId).status === 'input_required') {
        asked = true;
        const sample = () => server.request('sampling/createMessage', { ...PROMPT, _meta: { [RELATED]: { taskId } } });
        const replies = await Promise.all([sample(), sample()]);
        const picks = replies.map((reply) => ((reply.result as CreateMessageResult).content as { text: string }).text);
        server.tasks.finish(taskId, 'completed', {
          result: { content: [{ type: 'text', text: picks.sort().join('+') }] },
        });
      }
      return server.tasks.handlers['tasks/result']!(params, undefined as never);
    });

    const opened = await openQueue(redis, 'twin-questions');
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
    });
    const worker = new Worker(opened.queue.name, processor, { connection: redis.connection });
    cleanups.push(
      () => opened.close(),
      () => Promise.all([worker.close(), processor.close()]),
    );

    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'vote' });
    // Each question is told once the job's progress shows it.
    await eventually(async () => events.filter((e) => e.type === 'input').length === 2, 20_000, 'two questions');
    const questions = pendingQuestions((await opened.queue.getJob(job.id!))!);
    expect(questions).toHaveLength(2);
    expect(new Set(questions.map((q) => q.id)).size).toBe(2);
    expect(questions.map((q) => q.params)).toEqual([expect.objectContaining(PROMPT), expect.objectContaining(PROMPT)]);

    for (const [index, question] of questions.entries()) {
      const answer = { role: 'assistant', model: 'm', content: { type: 'text', text: index === 0 ? 'red' : 'blue' } };
      await answerJobInput(opened.queue, job.id!, answer as CreateMessageResult, { question: question.id });
    }
    const done = await finished(opened.queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'blue+red' }] });
    expect(server.count('tools/call')).toBe(1);
  }, 60_000);
});
