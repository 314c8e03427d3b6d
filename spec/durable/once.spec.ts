/**
 * The tool is called once even when a worker loses its job's lock before it marks the job
 * `calling` (a stalled event loop): another worker took the job meanwhile, and the late worker
 * finds that worker's reference (it resumes the task) or its mark (it waits for the reference),
 * and does not call. Workers run in this process, with their `connect` held on a gate while the
 * test plays the other worker. Also: the guarded write of the mark and the reference itself, and
 * two runs of one job in one worker each getting their own watch of the control channel.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as JoinTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Worker, type Job, type Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { TaskClient } from '../../lib/index.js';
import { enqueueToolTask, taskProcessor, type ToolJobData, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { ControlWatch } from '../../lib/bullmq/control.js';
import { instanceOf, writeControl } from '../../lib/bullmq/control-store.js';
import { writeJobData } from '../../lib/bullmq/job-write.js';
import { eventually, MethodCounter, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: once');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with `promise`'s value, or with `fallback` after `ms`. */
const within = <T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> =>
  Promise.race([promise, pause(ms).then(() => fallback)]);

describe.skipIf(!REDIS_AVAILABLE)('durable queue: once', () => {
  let server: HttpEndpoint;
  const counter = new MethodCounter();
  const { redis } = useRedis({
    setup: async () => {
      server = await serveHttp(0, { onMessage: counter.onMessage });
    },
    teardown: () => server?.close(),
  });

  async function finished(queue: Queue, job: Job): Promise<Job> {
    await eventually(
      async () => ['completed', 'failed'].includes(await job.getState()),
      30_000,
      `job ${job.id} to finish`,
    );
    return (await queue.getJob(job.id!))!;
  }

  /**
   * A worker whose first connection waits on a gate: its run has read the job's data and holds
   * the job, as a worker does whose event loop stalls before it marks the job `calling`.
   */
  function gatedWorker(queue: Queue, options: { lostTask?: 'fail' | 'call-again'; retryFailedTasks?: boolean } = {}) {
    const events: ToolJobEvent[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let waiting = false;
    const processor = taskProcessor({
      queue,
      connect: async (_server, { sessionId }) => {
        waiting = true;
        await gate;
        return sessionId === undefined
          ? TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' })
          : TaskClient.connect(new JoinTransport(server.url, { sessionId }), { sdk: 'v1' });
      },
      controlPollMs: 100,
      onEvent: (event) => events.push(event),
      ...options,
    });
    const worker = new Worker(queue.name, processor, { connection: redis.connection });
    return {
      events,
      open,
      connecting: () => waiting,
      close: () => Promise.all([worker.close(), processor.close()]),
    };
  }

  /** Plays the other worker: calls the tool and stores the task's reference in the job. */
  async function storeOthersTask(job: Job, other: TaskClient, id: number) {
    const handle = await other.callToolAsTask('analyze', { id, steps: 2, stepMs: 300 });
    const reference = handle.detach()!;
    const { calling: _calling, ...rest } = job.data as ToolJobData;
    await job.updateData({ ...rest, task: { reference, storedAt: Date.now() } });
    return reference;
  }

  /**
   * A job whose stored task the server does not know (lost), taken by a gated worker with
   * `lostTask: 'call-again'` that has read it and waits to connect.
   */
  async function lostTaskJob(queue: Queue, other: TaskClient, id: number) {
    const sample = (await other.callToolAsTask('analyze', { id: id * 10, steps: 1, stepMs: 50 })).detach()!;
    const job = await enqueueToolTask(queue, { server: 'default', tool: 'analyze', args: { id } });
    await job.updateData({ ...job.data, task: { reference: { ...sample, taskId: 'no-such-task' }, storedAt: 1 } });
    const gated = gatedWorker(queue, { lostTask: 'call-again' });
    await eventually(async () => gated.connecting(), 10_000, 'the worker to connect');
    return { job, gated };
  }

  it("a worker that lost the job before marking it finds the other worker's reference: it resumes that task and does not call", async () => {
    const opened = await openQueue(redis, 'once-reference');
    const gated = gatedWorker(opened.queue);
    const other = await TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' });
    try {
      const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'analyze', args: { id: 1 } });
      await eventually(async () => gated.connecting(), 10_000, 'the worker to connect');
      const reference = await storeOthersTask(job, other, 11);
      const calls = counter.count('tools/call');
      gated.open();
      const done = await finished(opened.queue, job);
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 11 done in 2 steps' }] });
      expect(counter.count('tools/call')).toBe(calls);
      expect(gated.events.filter((e) => e.type === 'started')).toEqual([]);
      expect(gated.events.find((e) => e.type === 'resumed')).toMatchObject({ taskId: reference.taskId });
      expect((done.data as ToolJobData).task?.reference.taskId).toBe(reference.taskId);
    } finally {
      await gated.close();
      await other.close();
      await opened.close();
    }
  }, 60_000);

  it("a worker that lost the job before marking it finds the other worker's mark: it waits for the reference and does not call", async () => {
    const opened = await openQueue(redis, 'once-mark');
    const gated = gatedWorker(opened.queue);
    const other = await TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' });
    try {
      const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'analyze', args: { id: 2 } });
      await eventually(async () => gated.connecting(), 10_000, 'the worker to connect');
      await job.updateData({ ...job.data, calling: { at: Date.now() } });
      const calls = counter.count('tools/call');
      gated.open();
      // The worker is connected and waits: it neither calls nor touches the mark.
      await pause(800);
      expect(counter.count('tools/call')).toBe(calls);
      expect(gated.events.filter((e) => e.type === 'started')).toEqual([]);
      const reference = await storeOthersTask((await opened.queue.getJob(job.id!))!, other, 12);
      const done = await finished(opened.queue, job);
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 12 done in 2 steps' }] });
      expect(counter.count('tools/call')).toBe(calls + 1);
      expect(gated.events.filter((e) => e.type === 'started')).toEqual([]);
      expect(gated.events.find((e) => e.type === 'resumed')).toMatchObject({ taskId: reference.taskId });
    } finally {
      await gated.close();
      await other.close();
      await opened.close();
    }
  }, 60_000);

  it("a worker whose task the server lost does not forget the task another worker stored meanwhile: it resumes that one and does not call (lostTask 'call-again')", async () => {
    const opened = await openQueue(redis, 'once-lost');
    const other = await TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' });
    let gated: ReturnType<typeof gatedWorker> | undefined;
    try {
      const lost = await lostTaskJob(opened.queue, other, 3);
      const { job } = lost;
      gated = lost.gated;
      // Meanwhile another worker found the task lost, forgot it and called again.
      const reference = await storeOthersTask(job, other, 31);
      const calls = counter.count('tools/call');
      gated.open();
      const done = await finished(opened.queue, job);
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 31 done in 2 steps' }] });
      expect(counter.count('tools/call')).toBe(calls);
      expect(gated.events.filter((e) => e.type === 'started')).toEqual([]);
      expect(gated.events.filter((e) => e.type === 'resumed').map((e) => (e as { taskId: string }).taskId)).toEqual([
        'no-such-task',
        reference.taskId,
      ]);
      expect((done.data as ToolJobData).task?.reference.taskId).toBe(reference.taskId);
    } finally {
      await gated?.close();
      await other.close();
      await opened.close();
    }
  }, 60_000);

  it("a worker whose task the server lost, finding another worker's calling mark where the task was, waits for that worker's reference and resumes it", async () => {
    const opened = await openQueue(redis, 'once-lost-mark');
    const other = await TaskClient.connect(new StreamableHTTPClientTransport(server.url), { sdk: 'v2' });
    let gated: ReturnType<typeof gatedWorker> | undefined;
    try {
      const lost = await lostTaskJob(opened.queue, other, 4);
      const { job } = lost;
      gated = lost.gated;
      // Meanwhile another worker found the task lost, forgot it, and is calling the tool.
      const { task: _lost, ...rest } = job.data;
      await job.updateData({ ...rest, calling: { at: Date.now() } });
      const calls = counter.count('tools/call');
      gated.open();
      await pause(800);
      expect(counter.count('tools/call')).toBe(calls);
      const reference = await storeOthersTask((await opened.queue.getJob(job.id!))!, other, 41);
      const done = await finished(opened.queue, job);
      expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
      expect(done.returnvalue).toMatchObject({ content: [{ type: 'text', text: 'analysis of 41 done in 2 steps' }] });
      expect(counter.count('tools/call')).toBe(calls + 1);
      expect(gated.events.filter((e) => e.type === 'started')).toEqual([]);
      expect(gated.events.filter((e) => e.type === 'resumed').map((e) => (e as { taskId: string }).taskId)).toEqual([
        'no-such-task',
        reference.taskId,
      ]);
    } finally {
      await gated?.close();
      await other.close();
      await opened.close();
    }
  }, 60_000);

  it('retryFailedTasks: a task that failed on the server is forgotten and the next attempt calls the tool again; without it, one call', async () => {
    const opened = await openQueue(redis, 'once-retry-failed');
    const retrying = gatedWorker(opened.queue, { retryFailedTasks: true });
    retrying.open();
    try {
      const calls = counter.count('tools/call');
      const job = await enqueueToolTask(
        opened.queue,
        { server: 'default', tool: 'flaky', args: { afterMs: 100, reason: 'disk full' } },
        { attempts: 2 },
      );
      const done = await finished(opened.queue, job);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toContain('disk full');
      expect(done.attemptsMade).toBe(2);
      expect(counter.count('tools/call')).toBe(calls + 2);
      // Each attempt started a task of its own: the failed one was forgotten, not resumed.
      const started = retrying.events.flatMap((e) => (e.type === 'started' ? [e.taskId] : []));
      expect(started).toHaveLength(2);
      expect(new Set(started).size).toBe(2);
      expect(retrying.events.filter((e) => e.type === 'resumed')).toEqual([]);
      expect((done.data as ToolJobData).task).toBeUndefined();
      expect((done.data as ToolJobData).calling).toBeUndefined();
    } finally {
      await retrying.close();
    }
    const plain = gatedWorker(opened.queue);
    plain.open();
    try {
      const calls = counter.count('tools/call');
      const job = await enqueueToolTask(
        opened.queue,
        { server: 'default', tool: 'flaky', args: { afterMs: 100, reason: 'disk full' } },
        { attempts: 2 },
      );
      const done = await finished(opened.queue, job);
      expect([await done.getState(), done.attemptsMade]).toEqual(['failed', 1]);
      expect(counter.count('tools/call')).toBe(calls + 1);
    } finally {
      await plain.close();
      await opened.close();
    }
  }, 60_000);

  it('the guarded write: a mark only over the mark the run read, a reference only where no other task is stored', async () => {
    const opened = await openQueue(redis, 'once-write');
    try {
      const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'analyze' }, { delay: 60_000 });
      const data = job.data;
      const read = async () => (await opened.queue.getJob(job.id!))!.data as ToolJobData;
      const other = { ...data, calling: { at: 1 } };
      expect(await writeJobData(opened.queue, job.id!, other, { mark: undefined })).toEqual({ kind: 'ok' });
      // A run that read no mark cannot write over one; the one that read it (its own, or one it outwaited) can.
      expect(await writeJobData(opened.queue, job.id!, { ...data, calling: { at: 2 } }, { mark: undefined })).toEqual({
        kind: 'refused',
        stored: other,
      });
      expect(await writeJobData(opened.queue, job.id!, { ...data, calling: { at: 3 } }, { mark: 2 })).toMatchObject({
        kind: 'refused',
      });
      expect(await writeJobData(opened.queue, job.id!, { ...data, calling: { at: 4 } }, { mark: 1 })).toEqual({
        kind: 'ok',
      });
      const reference = { taskId: 'task-a', toolName: 'analyze' } as never;
      const withTask = { ...data, task: { reference, storedAt: 5 } };
      expect(await writeJobData(opened.queue, job.id!, withTask, { taskId: 'task-a' })).toEqual({ kind: 'ok' });
      // Neither a mark nor another task's reference goes over a stored reference; the same one may be stored again.
      expect(await writeJobData(opened.queue, job.id!, { ...data, calling: { at: 6 } }, { mark: 4 })).toEqual({
        kind: 'refused',
        stored: withTask,
      });
      const otherTask = {
        ...data,
        task: { reference: { taskId: 'task-b', toolName: 'analyze' } as never, storedAt: 7 },
      };
      expect(await writeJobData(opened.queue, job.id!, otherTask, { taskId: 'task-b' })).toMatchObject({
        kind: 'refused',
      });
      expect(await writeJobData(opened.queue, job.id!, withTask, { taskId: 'task-a' })).toEqual({ kind: 'ok' });
      expect(await read()).toEqual(withTask);
      // A task is forgotten only by a run that knew it: not over another task, nor over a mark.
      expect(await writeJobData(opened.queue, job.id!, data, { forget: 'task-b' })).toEqual({
        kind: 'refused',
        stored: withTask,
      });
      expect(await writeJobData(opened.queue, job.id!, data, { forget: 'task-a' })).toEqual({ kind: 'ok' });
      expect(await writeJobData(opened.queue, job.id!, data, { forget: 'task-a' })).toEqual({ kind: 'ok' });
      const marked = { ...data, calling: { at: 8 } };
      expect(await writeJobData(opened.queue, job.id!, marked, { mark: undefined })).toEqual({ kind: 'ok' });
      expect(await writeJobData(opened.queue, job.id!, data, { forget: 'task-a' })).toEqual({
        kind: 'refused',
        stored: marked,
      });
      await writeJobData(opened.queue, job.id!, withTask, { taskId: 'task-a' });
      await job.remove();
      expect(await writeJobData(opened.queue, job.id!, withTask, { taskId: 'task-a' })).toEqual({ kind: 'gone' });
    } finally {
      await opened.close();
    }
  }, 30_000);

  it('two runs of one job in one worker each get their watch: both are ready, and releasing one leaves the other', async () => {
    const opened = await openQueue(redis, 'once-watch');
    const watch = new ControlWatch(opened.queue, 50, () => {});
    try {
      // A job no worker takes (the watches stand for two runs of it).
      const job = instanceOf(await opened.queue.add('job', {}));
      const first = watch.watch(job, undefined);
      const second = watch.watch(job, undefined);
      expect(await within(Promise.all([first.ready, second.ready]), 3_000, 'not ready')).toEqual([
        undefined,
        undefined,
      ]);
      await first.release('done');
      await writeControl(opened.queue, job, { kind: 'cancel' }, { reason: 'no longer needed' }, false);
      expect(await within(second.cancelled, 3_000, 'not cancelled')).toBe('no longer needed');
      await second.release('done');
    } finally {
      watch.stop();
      await opened.close();
    }
  }, 30_000);
});
