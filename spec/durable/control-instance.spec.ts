/**
 * What the control channel keeps for a job belongs to that job, not to its id. All answers and
 * cancels lived in one hash per queue, by job id, that never expired; a run cleared only a cancel
 * it had seen and the answers it had asked for. So a job given a custom `jobId` inherited what an
 * earlier job of that id left: a cancel stored while the earlier job ran but too late for it to
 * see failed the new job before it called anything, and an answer given to an earlier job that
 * was handed back and removed answered the new job's question without anyone seeing it. Each job
 * (its id and its `timestamp`) now has its own hash, deleted when the job ends, or (the job
 * removed while it waited) when a worker next looks at the queue's hashes. The workers run in
 * this process, on scripted 2025-11-25 servers.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { TaskClient, type ElicitResult } from '../../lib/index.js';
import {
  answerJobInput,
  cancelToolJob,
  enqueueToolTask,
  taskProcessor,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { connectScripted, type Json, type ScriptedPair } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import {
  eventually,
  finished,
  openQueue,
  PUBLISH_QUESTION,
  REDIS_AVAILABLE,
  RELATED,
  skipWithoutRedis,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: what the control channel keeps belongs to one job');

const QUESTION: Json = PUBLISH_QUESTION;

describe.skipIf(!REDIS_AVAILABLE)('durable queue: what the control channel keeps belongs to one job', () => {
  const { redis, cleanups } = useRedis();

  /** A raw Redis client, to look at the channel's keys. */
  async function raw(): Promise<Redis> {
    const client = new Redis(redis.url);
    cleanups.push(() => client.quit());
    return client;
  }

  /** A worker in this process on its own scripted server, whose tasks `script` runs. */
  async function worker(
    name: string,
    options: { readonly controlPollMs: number; readonly script: (pair: ScriptedPair) => void },
  ) {
    const pair = await connectScripted({
      tools: [{ name: 'report', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    cleanups.push(() => pair.close());
    options.script(pair);
    const opened = await openQueue(redis, name);
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: options.controlPollMs,
      onEvent: (event) => events.push(event),
    });
    const bull = new Worker(name, processor, { connection: redis.connection });
    let closed: Promise<unknown> | undefined;
    const close = () => (closed ??= Promise.all([bull.close(), processor.close()]));
    cleanups.push(close);
    return { pair, queue: opened.queue, events, close };
  }

  it('a cancel stored too late for a job does not cancel the next job given its id; nothing is left once the job ends', async () => {
    const keys = await raw();
    // The worker reads the channel when a job starts, and then only every minute: the cancel below
    // comes after that first read, and the task completes long before the next.
    const first = await worker('control-instance-cancel', {
      controlPollMs: 60_000,
      script: ({ server }) =>
        server.on('tools/call', () => {
          const created = server.tasks.createResult({ pollInterval: 50 });
          const taskId = String((created.task as Json).taskId);
          setTimeout(() => server.tasks.finish(taskId, 'completed', { result: textResult('published') }), 500);
          return created;
        }),
    });
    const request = { server: 'default', tool: 'report' };
    const options = { jobId: 'report-42', removeOnComplete: true };
    const job = await enqueueToolTask(first.queue, request, options);
    await eventually(async () => first.events.some((e) => e.type === 'started'), 10_000, 'the task');
    expect(await cancelToolJob(first.queue, 'report-42', 'too late')).toBe(true);
    const [key] = await keys.keys('*mcp-task-client:control:*');
    expect(key).toBe(first.queue.toKey(`mcp-task-client:control:${job.timestamp}:report-42`));
    // No expiry while the job exists (see spec/durable/waiting-job.spec.ts).
    expect(await keys.pttl(key!)).toBe(-1);
    // The job completes (removed on completion): its run never saw the cancel.
    await eventually(async () => (await first.queue.getJob('report-42')) === undefined, 10_000, 'the job to end');
    await eventually(async () => (await keys.keys('*mcp-task-client:control:*')).length === 0, 5_000, 'no key left');

    const again = await enqueueToolTask(first.queue, request, options);
    const events = first.events.length;
    await eventually(
      async () => first.events.slice(events).some((e) => e.type === 'started'),
      10_000,
      'the second job to call the tool',
    );
    await eventually(async () => (await first.queue.getJob('report-42')) === undefined, 10_000, 'the job to end');
    expect(again.id).toBe('report-42');
    expect(first.pair.server.count('tools/call')).toBe(2);
    expect(first.events.filter((e) => e.type === 'warning')).toEqual([]);
  }, 60_000);

  it('an answer given to a job that went back to the queue and was removed does not answer the next job given its id', async () => {
    const keys = await raw();
    /** Each task asks QUESTION once, and completes with the answer's `who`. */
    const asking = ({ server }: ScriptedPair): void => {
      server.on('tools/call', () => server.tasks.createResult({ status: 'input_required', pollInterval: 50 }));
      const asked = new Set<string>();
      server.on('tasks/result', async (params) => {
        const taskId = String(params.taskId);
        if (!asked.has(taskId)) {
          asked.add(taskId);
          const reply = await server.request('elicitation/create', { ...QUESTION, _meta: { [RELATED]: { taskId } } });
          const who = ((reply.result as ElicitResult).content as { who?: unknown } | undefined)?.who;
          server.tasks.finish(taskId, 'completed', { result: textResult(`published by ${String(who)}`) });
        }
        return server.tasks.handlers['tasks/result']!(params, undefined as never);
      });
    };
    const name = 'control-instance-answer';
    // The first worker reads the channel only every minute: it never takes the answer.
    const first = await worker(name, { controlPollMs: 60_000, script: asking });
    const request = { server: 'default', tool: 'report' };
    await enqueueToolTask(first.queue, request, { jobId: 'report-7' });
    await eventually(async () => first.events.some((e) => e.type === 'input'), 10_000, 'the question');
    await answerJobInput(first.queue, 'report-7', { action: 'accept', content: { who: 'alice' } });
    // A redeploy hands the job back with the answer; the waiting job is then removed.
    await first.close();
    const waiting = await first.queue.getJob('report-7');
    expect(await waiting!.getState()).toBe('waiting');
    await waiting!.remove();
    expect(await keys.keys('*mcp-task-client:control:*')).toHaveLength(1);

    const second = await worker(name, { controlPollMs: 50, script: asking });
    const job = await enqueueToolTask(second.queue, request, { jobId: 'report-7' });
    // The new job's question waits for an answer of its own.
    await eventually(async () => second.events.some((e) => e.type === 'input'), 10_000, 'the question asked again');
    await answerJobInput(second.queue, 'report-7', { action: 'accept', content: { who: 'bob' } });
    const done = await finished(second.queue, job, 10_000);
    expect(done.returnvalue).toMatchObject(textResult('published by bob'));
    // The job's own hash went with it; the removed job's went at the second worker's first look
    // at the queue's hashes.
    await eventually(async () => (await keys.keys('*mcp-task-client:control:*')).length === 0, 5_000, 'no key left');
  }, 60_000);
});
