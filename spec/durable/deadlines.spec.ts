/**
 * The job's deadline bounds the whole run, and no wait of a worker hangs: a `connect` that never
 * settles ends the job at its deadline and leaves `close()` free, the wait before a retry ends at
 * the deadline, and a retry delay longer than a Node timer holds (2^31-1 ms) is waited for rather
 * than fired at once; a cancelled job whose server cannot be reached still cancels its task over the
 * next connection. A worker in this process on a scripted server, a real Redis.
 */
import { Worker, type Job, type Queue } from 'bullmq';
import { describe, expect, it, vi } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import {
  cancelToolJob,
  enqueueToolTask,
  taskProcessor,
  type TaskProcessorOptions,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { connectScripted, type ScriptedPair } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import { eventually, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: deadlines');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_AVAILABLE)('durable queue: deadlines', () => {
  const { redis, cleanups } = useRedis();

  /** A scripted server whose tasks complete with "done" at once. */
  async function scripted(): Promise<ScriptedPair> {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    pair.server.on('tools/call', () => {
      const created = pair.server.tasks.createResult({ pollInterval: 50 });
      const taskId = String((created.task as { taskId: string }).taskId);
      pair.server.tasks.finish(taskId, 'completed', { result: textResult('done') });
      return created;
    });
    cleanups.push(() => pair.close());
    return pair;
  }

  /** A queue with a fresh name and a worker whose processor has `options`. */
  async function rig(name: string, options: Partial<TaskProcessorOptions>) {
    const pair = await scripted();
    const opened = await openQueue(redis, name);
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      onEvent: (event) => events.push(event),
      ...options,
    });
    const worker = new Worker(name, processor, { connection: redis.connection });
    let closing: Promise<unknown> | undefined;
    const close = (): Promise<unknown> => (closing ??= Promise.all([processor.close(), worker.close()]));
    cleanups.push(() => opened.close(), close);
    const enqueue = (timeoutMs?: number, delay?: number) =>
      enqueueToolTask(
        opened.queue,
        { server: 'default', tool: 'job', ...(timeoutMs === undefined ? {} : { timeoutMs }) },
        delay === undefined ? {} : { delay },
      );
    return { pair, queue: opened.queue, events, close, enqueue };
  }

  async function finished(queue: Queue, job: Job, timeoutMs: number): Promise<Job> {
    await eventually(async () => ['completed', 'failed'].includes(await job.getState()), timeoutMs, `job ${job.id}`);
    return (await queue.getJob(job.id!))!;
  }

  it('a connect that never settles: the job fails at its deadline, and close() resolves with a job still connecting', async () => {
    const { queue, enqueue, close } = await rig('deadlines-connect', { connect: () => new Promise(() => {}) });
    const started = Date.now();
    const done = await finished(queue, await enqueue(300), 5_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'The job\'s deadline passed while connecting to the server "default"',
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
    // No deadline: only close() stops the wait, and the job goes back to the queue.
    const waiting = await enqueue();
    await eventually(async () => (await waiting.getState()) === 'active', 5_000, 'the job to start');
    await expect(Promise.race([close().then(() => 'closed'), pause(3_000).then(() => 'still closing')])).resolves.toBe(
      'closed',
    );
    expect(await waiting.getState()).toBe('waiting');
  }, 20_000);

  it("the job's deadline counts the time spent connecting: a connect of 1.5 s leaves the task 0.5 s of a 2 s deadline, then it is cancelled", async () => {
    const held: { pair?: ScriptedPair } = {};
    const { pair, queue, enqueue } = await rig('deadlines-slow-connect', {
      connect: async () => {
        await pause(1_500);
        return new TaskClient(held.pair!.client);
      },
    });
    held.pair = pair;
    // The task runs on until it is cancelled.
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ pollInterval: 50 }));
    const done = await finished(queue, await enqueue(2_000), 10_000);
    expect(await done.getState()).toBe('failed');
    expect(pair.server.count('tasks/cancel')).toBe(1);
    // The deadline (2 s from the enqueue) bounds the run, the remote cancel included; it used to
    // count 2 s from the end of connecting (3.5 s, and the cancel after it).
    expect(done.finishedOn! - done.timestamp).toBeLessThan(3_000);
  }, 20_000);

  it('a job cancelled with its task stored, whose connect never settles and that has no deadline: close() resolves at once, and the task is cancelled once the connection comes', async () => {
    let connected!: (tasks: TaskClient) => void;
    let connects = 0;
    const { pair, queue, enqueue, close } = await rig('deadlines-cancelled-connect', {
      connect: () => {
        connects += 1;
        return new Promise<TaskClient>((resolve) => (connected = resolve));
      },
    });
    // The task runs on: the connection that comes late finds it working and cancels it.
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ pollInterval: 50 }));
    const reference = (await new TaskClient(pair.client).callToolAsTask('job', {})).detach()!;
    // Taken over after a cancel: delayed so that its task is stored first; the cancel promotes it.
    const job = await enqueue(undefined, 60_000);
    await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
    expect(await cancelToolJob(queue, job.id!, 'no longer needed')).toBe(true);
    await eventually(() => Promise.resolve(connects === 1), 5_000, 'the worker to connect');
    // Only close() stops the wait of a run already cancelled that has no deadline.
    await expect(Promise.race([close().then(() => 'closed'), pause(3_000).then(() => 'still closing')])).resolves.toBe(
      'closed',
    );
    const done = (await queue.getJob(job.id!))!;
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Job cancelled (no longer needed): before the tool was called',
    ]);
    expect(pair.server.count('tasks/cancel')).toBe(0);
    const late = new TaskClient(pair.client);
    const closed = vi.spyOn(late, 'close');
    connected(late);
    await eventually(() => Promise.resolve(pair.server.count('tasks/cancel') === 1), 5_000, 'the task to be cancelled');
    expect(pair.server.tasks.get(reference.taskId).status).toBe('cancelled');
    // The connection that came after close() is closed once the cancel let it go.
    await eventually(() => Promise.resolve(closed.mock.calls.length === 1), 5_000, 'the late connection to close');
  }, 20_000);

  /**
   * A job on its last attempt (no retry left) whose stored task runs in the HTTP session
   * "session-1": its first connect is refused, so it fails for good and cancels its task; the
   * connect of that cancel never settles until `connect(late)` gives it a connection. Joined for
   * that session alone, the connection is closed by the pool once its lease is released.
   */
  async function lastAttemptWhoseCancelNeverConnects(
    name: string,
    options: Partial<TaskProcessorOptions>,
    timeoutMs?: number,
  ) {
    let connects = 0;
    let connected: ((tasks: TaskClient) => void) | undefined;
    const rigged = await rig(name, {
      retry: { attempts: 0 },
      connect: () => {
        connects += 1;
        if (connects === 1) return Promise.reject(new Error('connect ECONNREFUSED'));
        return new Promise<TaskClient>((resolve) => (connected = resolve));
      },
      ...options,
    });
    const { pair, enqueue } = rigged;
    // The task runs on: only the cancel over the late connection stops it.
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ pollInterval: 50 }));
    const reference = {
      ...(await new TaskClient(pair.client).callToolAsTask('job', {})).detach()!,
      sessionId: 'session-1',
    };
    // Delayed, so that its task is stored before a worker takes it.
    const job = await enqueue(timeoutMs, 60_000);
    await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
    await job.promote();
    await eventually(() => Promise.resolve(connects === 2), 5_000, 'the cancel to connect');
    /** Gives the cancel its connection now; resolves once the pool closed it. */
    const connect = async (): Promise<void> => {
      const late = new TaskClient(pair.client);
      const closed = vi.spyOn(late, 'close');
      connected!(late);
      await eventually(
        () => Promise.resolve(pair.server.count('tasks/cancel') === 1),
        5_000,
        'the task to be cancelled',
      );
      expect(pair.server.tasks.get(reference.taskId).status).toBe('cancelled');
      await eventually(() => Promise.resolve(closed.mock.calls.length === 1), 5_000, 'the late connection to close');
    };
    return { ...rigged, job, connect };
  }

  const cancelWarnings = (events: ToolJobEvent[]): string[] =>
    events.flatMap((event) =>
      event.type === 'warning' && event.error.message.includes('cancel of its task') ? [event.error.message] : [],
    );

  it('a job cancelled with its task stored, whose connect fails: the task is still cancelled over the next connection, within reconnectGraceMs', async () => {
    let connects = 0;
    const late: { pair?: ScriptedPair } = {};
    const { pair, queue, events, enqueue } = await rig('deadlines-cancelled-refused', {
      reconnectGraceMs: 5_000,
      connect: () => {
        connects += 1;
        // The server cannot be reached at first (a redeploy, a network blip), then can.
        if (connects === 1) return Promise.reject(new Error('connect ECONNREFUSED'));
        return Promise.resolve(new TaskClient(late.pair!.client));
      },
    });
    late.pair = pair;
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ pollInterval: 50 }));
    const reference = (await new TaskClient(pair.client).callToolAsTask('job', {})).detach()!;
    // Taken after a cancel: delayed so that its task is stored first; the cancel promotes it.
    const job = await enqueue(undefined, 60_000);
    await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
    expect(await cancelToolJob(queue, job.id!, 'no longer needed')).toBe(true);
    const done = await finished(queue, job, 10_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Job cancelled (no longer needed): connect ECONNREFUSED',
    ]);
    await eventually(() => Promise.resolve(pair.server.count('tasks/cancel') === 1), 5_000, 'the task to be cancelled');
    expect(pair.server.tasks.get(reference.taskId).status).toBe('cancelled');
    expect(connects).toBe(2);
    expect(events.filter((e) => e.type === 'warning')).toEqual([]);
  }, 20_000);

  it('a job that fails for good on its last attempt does not wait for a connect that never settles to cancel its task: it fails after reconnectGraceMs, and a connection that comes later cancels the task and is released', async () => {
    const started = Date.now();
    const { pair, queue, job, events, connect } = await lastAttemptWhoseCancelNeverConnects('deadlines-final-cancel', {
      reconnectGraceMs: 300,
    });
    const done = await finished(queue, job, 5_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Gave up after 0 retries: connect ECONNREFUSED',
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(cancelWarnings(events)).toEqual([
      'The job failed for good and the cancel of its task was given up after 300 ms: no connection to the server "default" came in time; a connection that still comes cancels it then',
    ]);
    expect(pair.server.count('tasks/cancel')).toBe(0);
    // Released by the cancel, before any close(): a connection joined for one session is closed then.
    await connect();
  }, 20_000);

  it('the wait of that cancel for its connection ends at the job’s deadline when it comes before reconnectGraceMs', async () => {
    const started = Date.now();
    const { queue, job, events, connect } = await lastAttemptWhoseCancelNeverConnects(
      'deadlines-final-cancel-deadline',
      { reconnectGraceMs: 60_000 },
      2_000,
    );
    const done = await finished(queue, job, 6_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Gave up after 0 retries: connect ECONNREFUSED',
    ]);
    // The deadline, counted from the enqueue, and generous margins; well short of reconnectGraceMs.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(cancelWarnings(events)).toEqual([
      expect.stringMatching(
        /^The job failed for good and the cancel of its task was given up after \d+ ms: no connection to the server "default" came in time; a connection that still comes cancels it then$/,
      ),
    ]);
    await connect();
  }, 20_000);

  it('close() does not wait for the connect of a job that fails for good to cancel its task: the job fails, and the connection that comes after close() cancels the task and is closed', async () => {
    const { pair, queue, job, events, close, connect } = await lastAttemptWhoseCancelNeverConnects(
      'deadlines-final-cancel-close',
      { reconnectGraceMs: 60_000 },
    );
    await expect(Promise.race([close().then(() => 'closed'), pause(3_000).then(() => 'still closing')])).resolves.toBe(
      'closed',
    );
    const done = (await queue.getJob(job.id!))!;
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Gave up after 0 retries: connect ECONNREFUSED',
    ]);
    expect(cancelWarnings(events)).toEqual([
      expect.stringMatching(
        /^The job failed for good and the cancel of its task was given up after \d+ ms: the processor closed; a connection that still comes cancels it then$/,
      ),
    ]);
    expect(pair.server.count('tasks/cancel')).toBe(0);
    await connect();
  }, 20_000);

  it('a job that fails for good after its deadline passed still cancels its task over a connection handed over at once: the 0 ms left do not give the cancel up, and no warning says so', async () => {
    let connects = 0;
    const { pair, queue, events, enqueue } = await rig('deadlines-final-cancel-passed', {
      retry: { attempts: 0 },
      reconnectGraceMs: 60_000,
      connect: () => {
        connects += 1;
        if (connects === 1) return Promise.reject(new Error('connect ECONNREFUSED'));
        return Promise.resolve(new TaskClient(pair.client));
      },
    });
    // The task runs on: only the cancel stops it.
    pair.server.on('tools/call', () => pair.server.tasks.createResult({ pollInterval: 50 }));
    const reference = (await new TaskClient(pair.client).callToolAsTask('job', {})).detach()!;
    // A deadline of 1 ms, passed by the time its task is stored and the job promoted.
    const job = await enqueue(1, 60_000);
    await job.updateData({ ...job.data, task: { reference, storedAt: Date.now() } });
    await pause(5);
    await job.promote();
    const done = await finished(queue, job, 5_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Gave up after 0 retries: connect ECONNREFUSED',
    ]);
    await eventually(() => Promise.resolve(pair.server.count('tasks/cancel') === 1), 5_000, 'the task to be cancelled');
    expect(pair.server.tasks.get(reference.taskId).status).toBe('cancelled');
    expect(cancelWarnings(events)).toEqual([]);
  }, 20_000);

  it('the wait before a retry ends at the job’s deadline, not after the backoff', async () => {
    let connects = 0;
    const { queue, enqueue } = await rig('deadlines-backoff', {
      retry: { attempts: 5, minDelayMs: 20_000, maxDelayMs: 20_000 },
      connect: () => {
        connects += 1;
        return Promise.reject(new Error('connect ECONNREFUSED'));
      },
    });
    const done = await finished(queue, await enqueue(500), 6_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'The job\'s deadline passed before the tool "job" was called',
    ]);
    expect(connects).toBe(1);
  }, 20_000);

  it('the wait for another worker’s reference (its calling mark) ends at the job’s deadline, not after callingGraceMs', async () => {
    const { queue, enqueue } = await rig('deadlines-calling', { callingGraceMs: 20_000 });
    // Delayed, so that the mark of a worker that died after calling is stored before a worker takes the job.
    const job = await enqueue(1_000, 300);
    await job.updateData({ ...job.data, calling: { at: Date.now() } });
    const done = await finished(queue, job, 6_000);
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'The job\'s deadline passed before the tool "job" was called',
    ]);
  }, 20_000);

  it('a retry delay beyond what a Node timer holds (2^31-1 ms) is waited for, not fired at once', async () => {
    let connects = 0;
    const { events, enqueue, close } = await rig('deadlines-overflow', {
      // 2^32 ms with its ±20% jitter: always above 2^31-1.
      retry: { attempts: 5, minDelayMs: 2 ** 32, maxDelayMs: 2 ** 32 },
      connect: () => {
        connects += 1;
        return Promise.reject(new Error('connect ECONNREFUSED'));
      },
    });
    const job = await enqueue();
    await eventually(() => Promise.resolve(events.some((e) => e.type === 'retry')), 5_000, 'the first retry');
    await pause(500);
    expect(connects).toBe(1);
    await close();
    expect(await job.getState()).toBe('waiting');
  }, 20_000);
});
