/**
 * An answer a worker took is sent again by the worker that takes the job over only for the same
 * request: on the tasks extension, the same key in the task's `inputRequests`, which names one
 * request over the task's life ([E4]). A question's id is derived from what it asks, and the
 * stored answer was sent again for any question of that id: a task that asked the same thing a
 * second time, after the first worker had taken and sent the first answer and then gone, got the
 * first answer again, without anyone seeing the second question. The same request (the first
 * worker's answer never reached the server) is still answered from the stored answer. The workers
 * run in this process (each closes, handing the job back with what it took, as a redeploy does),
 * on a scripted extension server over in-memory connections.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient, type ElicitResult } from '../../lib/index.js';
import { answerJobInput, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import {
  connectInMemory,
  elicitation,
  ExtServer,
  NO_REPLY,
  taskTool,
  type Handler,
  type InputResponses,
  type Json,
} from '../support/ext-server/index.js';
import { textResult } from '../support/scripted-task-client.js';
import { eventually, finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: a stored answer is sent again for the same request only');

const QUESTION = elicitation('Publish the report?', { confirm: { type: 'boolean' } });
const YES: ElicitResult = { action: 'accept', content: { confirm: true } };
const NO: ElicitResult = { action: 'accept', content: { confirm: false } };

describe.skipIf(!REDIS_AVAILABLE)('durable queue: a stored answer is sent again for the same request only', () => {
  const { redis, cleanups } = useRedis();

  /** An extension server whose `manual` tasks move only as the test says; `tasks/update` is held while `hold.on`. */
  function extServer(hold: { on: boolean }): ExtServer {
    const update: Handler = (params) => {
      if (hold.on) return NO_REPLY;
      server.tasks.respond(String(params.taskId), params.inputResponses as InputResponses);
      return { resultType: 'complete' };
    };
    const server = new ExtServer({
      pollIntervalMs: 50,
      notifications: 'off',
      tools: [taskTool('manual', { advance: 'manual' })],
      handlers: { 'tasks/update': update },
    });
    return server;
  }

  /** A worker in this process on its own connection to `server`. */
  function worker(server: ExtServer, queue: Parameters<typeof taskProcessor>[0]['queue']) {
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue,
      connect: async () => TaskClient.connect((await connectInMemory(server)).clientTransport, { sdk: 'v2' }),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
    });
    const bull = new Worker(queue.name, processor, { connection: redis.connection });
    let closed: Promise<unknown> | undefined;
    const close = () => (closed ??= Promise.all([bull.close(), processor.close()]));
    cleanups.push(close);
    return { events, close };
  }

  const updates = (server: ExtServer, taskId: string): Json[] => server.tasks.inspect(taskId).updates as Json[];

  /** A job on queue `name` whose task asks QUESTION under the key `first`, answered YES by the user. */
  async function answeredOnce(server: ExtServer, name: string) {
    const opened = await openQueue(redis, name);
    cleanups.push(() => opened.close());
    const first = worker(server, opened.queue);
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'manual' });
    await eventually(async () => first.events.some((e) => e.type === 'started'), 10_000, 'the task');
    const taskId = String((first.events.find((e) => e.type === 'started') as { taskId: string }).taskId);
    server.tasks.requestInput(taskId, { first: QUESTION });
    await eventually(async () => first.events.some((e) => e.type === 'input'), 10_000, 'the question');
    await answerJobInput(opened.queue, job.id!, YES);
    return { opened, first, job, taskId };
  }

  it('the same question asked again (a new key) after the worker that answered it went: it waits for an answer of its own', async () => {
    const hold = { on: false };
    const server = extServer(hold);
    const { opened, first, job, taskId } = await answeredOnce(server, 'answer-round-new');
    await eventually(async () => updates(server, taskId).length === 1, 10_000, 'the answer to reach the server');
    await first.close();

    // The task asks the same thing again, under a new key; the next worker resumes it.
    server.tasks.requestInput(taskId, { second: QUESTION });
    const second = worker(server, opened.queue);
    await eventually(async () => second.events.some((e) => e.type === 'input'), 10_000, 'the question asked again');
    expect(updates(server, taskId)).toEqual([{ first: YES }]);
    await answerJobInput(opened.queue, job.id!, NO);
    await eventually(async () => updates(server, taskId).length === 2, 10_000, 'the second answer');
    expect(updates(server, taskId)).toEqual([{ first: YES }, { second: NO }]);
    server.tasks.complete(taskId, textResult('not published'));
    expect(await (await finished(opened.queue, job, 10_000)).getState()).toBe('completed');
  }, 60_000);

  it('the same request (its key still listed: the answer never reached the server) is answered from the stored answer', async () => {
    const hold = { on: true };
    const server = extServer(hold);
    const { opened, first, job, taskId } = await answeredOnce(server, 'answer-round-same');
    await eventually(
      async () => server.log.some((entry) => entry.method === 'tasks/update'),
      10_000,
      'the answer to be sent',
    );
    await first.close();
    hold.on = false;

    const second = worker(server, opened.queue);
    await eventually(async () => updates(server, taskId).length === 1, 10_000, 'the stored answer');
    expect(updates(server, taskId)).toEqual([{ first: YES }]);
    expect(second.events.some((e) => e.type === 'input')).toBe(false);
    server.tasks.complete(taskId, textResult('published'));
    expect(await (await finished(opened.queue, job, 10_000)).getState()).toBe('completed');
  }, 60_000);
});
