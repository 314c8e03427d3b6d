/**
 * A run whose job's lock expired (a stalled event loop, Redis away for a while) goes on until its
 * task ends, while the job is back in the queue for its next run, or held by another worker: what
 * it does as it ends must not take from that run what the control channel keeps for the job. Its
 * end deleted the job's control hash whenever the job had no lock at that moment (back in the
 * queue), so a cancel stored meanwhile was lost, and the next run followed the task it was to
 * cancel; and its end of one BullMQ attempt cleared the answers to the questions it had asked,
 * with no lock check at all, so an answer given to the job meanwhile was lost, and the next run
 * waited for it for good. The lock expires here as it does on its own (its key goes); BullMQ's own
 * stalled-job check puts the job back in the queue. The worker runs in this process, on a scripted
 * 2025-11-25 server.
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
  type TaskProcessorOptions,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { connectScripted, rpcError, type Json, type ScriptedPair } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import {
  eventually,
  finished,
  openQueue,
  questionsOn,
  PUBLISH_QUESTION,
  REDIS_AVAILABLE,
  RELATED,
  skipWithoutRedis,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: the end of a run that lost its lock');

const QUESTION: Json = PUBLISH_QUESTION;

describe.skipIf(!REDIS_AVAILABLE)('durable queue: the end of a run that lost its lock', () => {
  const { redis, cleanups } = useRedis();

  /**
   * A queue and one worker of concurrency 1 on `pair`: busy with the run that lost its lock, it
   * leaves the job in the queue until that run ends, then takes it (the job's next run). Its
   * stalled-job check runs every 300 ms. It reads the control channel when a run starts, when a
   * question is asked, and then once a minute: the run that lost its lock never reads what is
   * stored for the job after that.
   */
  async function rig(name: string, pair: ScriptedPair, options: Partial<TaskProcessorOptions> = {}) {
    const opened = await openQueue(redis, name);
    cleanups.push(() => opened.close());
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 60_000,
      onEvent: (event) => events.push(event),
      ...options,
    });
    const worker = new Worker(name, processor, {
      connection: redis.connection,
      concurrency: 1,
      stalledInterval: 300,
      maxStalledCount: 10,
    });
    // BullMQ says on the worker that it could not complete or fail a job whose lock is gone.
    const errors: Error[] = [];
    worker.on('error', (error) => errors.push(error));
    cleanups.push(() => Promise.all([worker.close(), processor.close()]));
    // A client of its own, to look at the queue's keys.
    const client = new Redis(redis.url);
    cleanups.push(() => client.quit());
    /** The run's lock expires, and BullMQ's stalled-job check puts the job back in the queue. */
    const expireLock = async (jobId: string): Promise<void> => {
      await client.del(`${opened.queue.toKey(jobId)}:lock`);
      const job = await opened.queue.getJob(jobId);
      await eventually(async () => (await job!.getState()) === 'waiting', 10_000, 'the job to go back to the queue');
    };
    /** The keys of the control hashes of the queue. */
    const controlKeys = () => client.keys(opened.queue.toKey('mcp-task-client:control:*'));
    return { ...opened, events, errors, expireLock, controlKeys };
  }

  it('a cancel stored for the job after a run lost its lock is not deleted as that run ends: the next run cancels the task', async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    const { server } = pair;
    // Tasks that run until cancelled. Their reads fail from when the test says so until a run gives up.
    server.on('tools/call', () => server.tasks.createResult({ pollInterval: 50 }));
    let failing = false;
    const gaveUp = (): boolean =>
      events.some((e) => e.type === 'warning' && e.error.message.includes('its lock is no longer'));
    server.on('tasks/get', (params, context) => {
      if (failing && !gaveUp()) throw rpcError(-32603, 'task store unavailable');
      return server.tasks.handlers['tasks/get']!(params, context);
    });
    // No retries: a failed read ends the run, on the job's last attempt.
    const { queue, events, errors, expireLock, controlKeys } = await rig('stale-run-cancel', pair, {
      retry: { attempts: 0 },
    });
    const job = await enqueueToolTask(queue, { server: 'default', tool: 'job' });
    await eventually(async () => events.some((e) => e.type === 'started'), 10_000, 'the task');
    await expireLock(job.id!);
    expect(await cancelToolJob(queue, job.id!, 'stopped while it waited')).toBe(true);
    // The run that lost its lock gives up on the task: the job is no longer its, so it leaves the
    // task running for the job's next run (and BullMQ refuses to fail the job).
    failing = true;
    await eventually(async () => gaveUp(), 10_000, 'the run to give up');
    // The job's next run finds the cancel: it cancels the task and fails the job.
    const done = await finished(queue, job, 15_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      expect.stringMatching(/^Job cancelled \(stopped while it waited\)/) as unknown,
    ]);
    expect(server.tasks.get('task-1').status).toBe('cancelled');
    expect(server.count('tools/call')).toBe(1);
    expect(errors.length).toBeGreaterThan(0);
    // The run that ended the job deleted its hash.
    await eventually(async () => (await controlKeys()).length === 0, 5_000, 'no control hash left');
  }, 60_000);
  it('an answer given to the job after a run lost its lock is not cleared as that run ends its attempt: the next run gets it', async () => {
    const pair = await connectScripted({
      tools: [{ name: 'report', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    cleanups.push(() => pair.close());
    const { server } = pair;
    // The task asks QUESTION at each tasks/result until it is answered, and completes with the
    // answer's `who`. Its reads fail from when the test says so until the run that lost its lock
    // has ended (BullMQ then says it cannot fail the job).
    server.on('tools/call', () => server.tasks.createResult({ status: 'input_required', pollInterval: 50 }));
    server.on('tasks/result', async (params, context) => {
      const taskId = String(params.taskId);
      const reply = await server.request('elicitation/create', { ...QUESTION, _meta: { [RELATED]: { taskId } } });
      const answer = reply.result as ElicitResult | undefined;
      if (answer?.action === 'accept') {
        const who = (answer.content as { who?: unknown } | undefined)?.who;
        server.tasks.finish(taskId, 'completed', { result: textResult(`published by ${String(who)}`) });
      }
      return server.tasks.handlers['tasks/result']!(params, context);
    });
    let failing = false;
    const ended = (): boolean => errors.some((error) => error.message.startsWith('Missing lock'));
    server.on('tasks/get', (params, context) => {
      if (failing && !ended()) throw rpcError(-32603, 'task store unavailable');
      return server.tasks.handlers['tasks/get']!(params, context);
    });
    // No retries: a failed read ends the run's attempt; the job has another.
    const { queue, events, errors, expireLock, controlKeys } = await rig('stale-run-answer', pair, {
      retry: { attempts: 0 },
    });
    const job = await enqueueToolTask(queue, { server: 'default', tool: 'report' }, { attempts: 2 });
    const [question] = await questionsOn(queue, job.id!);
    await expireLock(job.id!);
    // The question still shows on the job, which waits for its next run: it is answered.
    expect(await answerJobInput(queue, job.id!, { action: 'accept', content: { who: 'alice' } })).toEqual(question);
    failing = true;
    // The run that lost its lock gives up its attempt; the job's next run resumes the task, which
    // asks the same question, and gets the answer.
    const done = await finished(queue, job, 15_000);
    expect(await done.getState()).toBe('completed');
    expect(done.returnvalue).toMatchObject(textResult('published by alice'));
    expect(events.filter((e) => e.type === 'resumed')).toHaveLength(1);
    expect(server.count('tools/call')).toBe(1);
    await eventually(async () => (await controlKeys()).length === 0, 5_000, 'no control hash left');
  }, 60_000);
});
