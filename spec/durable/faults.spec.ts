/**
 * Faults inside one run of a tool job, with a worker in this process on a scripted server (tasks
 * created, failed and finished on demand) and a queue whose Redis client a test can make fail:
 * a reference write that fails transiently is made again (the task runs on, the tool runs once);
 * an error while following the task is not taken for the server refusing the call; a `connect`
 * that says the job can never run ends it at once; a job that fails on its last attempt cancels
 * its task; a calling mark refused because of the run's own (the script sent twice) is taken; a
 * read of the control channel that fails is made again; the wait for that read leaves no timer;
 * another worker's calling mark written in the same millisecond is not taken for the run's own;
 * `processor.active` counts the jobs running; a run that gives up after another worker took its job's
 * lock leaves the task to that worker.
 */
import { Worker, UnrecoverableError, type Queue, type RedisClient as Redis } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { TaskConnectError } from '../../lib/doctor.js';
import {
  enqueueToolTask,
  taskProcessor,
  type TaskProcessorOptions,
  type ToolJobData,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { ControlWatch } from '../../lib/bullmq/control.js';
import { instanceOf, writeControl } from '../../lib/bullmq/control-store.js';
import { writeJobData } from '../../lib/bullmq/job-write.js';
import { connectScripted, rpcError, type Json, type ScriptedPair } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import { eventually, finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: faults in a run');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What a wrapped client method does instead: `run()` makes the real call. */
type Intercept = (method: 'runCommand' | 'hmget', args: unknown[], run: () => Promise<unknown>) => Promise<unknown>;

/** `queue`, whose Redis client (as the library gets it) passes its script runs and HMGETs through `intercept`. */
function intercepted(queue: Queue, intercept: Intercept): Queue {
  const backend = queue.getBackend() as unknown as { client: Promise<object> };
  const client = backend.client.then(
    (real) =>
      new Proxy(real, {
        get(target, property) {
          const value: unknown = Reflect.get(target, property, target);
          if (typeof value !== 'function') return value;
          const method = value as (...args: unknown[]) => Promise<unknown>;
          if (property !== 'runCommand' && property !== 'hmget') return method.bind(target);
          return (...args: unknown[]) => intercept(property, args, () => method.apply(target, args));
        },
      }),
  );
  const wrappedBackend = new Proxy(backend, {
    get: (target, property) => (property === 'client' ? client : (Reflect.get(target, property, target) as unknown)),
  });
  return new Proxy(queue, {
    get(target, property) {
      if (property === 'getBackend') return () => wrappedBackend;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The guarded write's mode (`mark`, `reference`, `forget`) of a `runCommand`, or undefined for another script. */
const writeMode = (args: unknown[]): string | undefined =>
  args[0] === 'mcpTaskClientJobWrite' ? String((args[1] as unknown[])[2]) : undefined;

describe.skipIf(!REDIS_AVAILABLE)('durable queue: faults in a run', () => {
  const { redis, cleanups } = useRedis();

  /**
   * A scripted server whose `tools/call` creates a task (polled every 50 ms) that completes with
   * "done" after `afterMs` (or never).
   */
  async function scripted(afterMs: number | 'never' = 300): Promise<ScriptedPair> {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    pair.server.on('tools/call', () => {
      const created = pair.server.tasks.createResult({ pollInterval: 50 });
      const taskId = String((created.task as Json).taskId);
      if (afterMs !== 'never') {
        setTimeout(() => pair.server.tasks.finish(taskId, 'completed', { result: textResult('done') }), afterMs);
      }
      return created;
    });
    cleanups.push(() => pair.close());
    return pair;
  }

  /** A queue with a fresh name (its client wrapped with `intercept`, when given) and a worker on `pair`. */
  async function rig(
    name: string,
    pair: ScriptedPair,
    options: Partial<TaskProcessorOptions> & { intercept?: Intercept } = {},
  ) {
    const opened = await openQueue(redis, name);
    const { intercept, ...processorOptions } = options;
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: intercept === undefined ? opened.queue : intercepted(opened.queue, intercept),
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      retry: { minDelayMs: 20, maxDelayMs: 100 },
      onEvent: (event) => events.push(event),
      ...processorOptions,
    });
    const worker = new Worker(name, processor, { connection: redis.connection });
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      await Promise.all([worker.close(), processor.close()]);
    };
    cleanups.push(() => opened.close(), close);
    const enqueue = (options: { attempts?: number } = {}) =>
      enqueueToolTask(opened.queue, { server: 'default', tool: 'job' }, options);
    return { queue: opened.queue, events, close, enqueue, worker, processor };
  }

  it('a reference write that fails (once after it was made, once before) is made again: the task runs on, one tools/call, the job completes', async () => {
    const pair = await scripted();
    let failures = 0;
    const { queue, events, enqueue } = await rig('faults-reference', pair, {
      intercept: async (method, args, run) => {
        if (method !== 'runCommand' || writeMode(args) !== 'reference' || failures >= 2) return run();
        failures += 1;
        // The first write is made and its reply lost; the second never reaches Redis.
        if (failures === 1) await run();
        throw new Error(failures === 1 ? 'Connection is closed.' : 'Command timed out');
      },
    });
    const job = await enqueue();
    const done = await finished(queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(done.returnvalue).toMatchObject(textResult('done'));
    expect(failures).toBe(2);
    expect(pair.server.count('tools/call')).toBe(1);
    expect(pair.server.count('tasks/cancel')).toBe(0);
    const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.error.message] : []));
    expect(warnings).toEqual([
      "The task's reference could not be stored in the job (retried): Connection is closed.",
      "The task's reference could not be stored in the job (retried): Command timed out",
    ]);
    expect((done.data as ToolJobData).task?.reference.taskId).toBe('task-1');
  }, 60_000);

  it('a worker that closes while its reference write keeps failing (never made) cancels the task the job knows nothing of, and hands the job back with its calling mark', async () => {
    const pair = await scripted('never');
    const { queue, events, enqueue, close } = await rig('faults-reference-close', pair, {
      intercept: async (method, args, run) => {
        if (method !== 'runCommand' || writeMode(args) !== 'reference') return run();
        throw new Error('Command timed out');
      },
    });
    const job = await enqueue();
    await eventually(async () => events.some((e) => e.type === 'warning'), 10_000, 'a failed reference write');
    await close();
    // The next worker will call the tool again (the job holds only the mark): this task, which
    // nobody could resume, would have run on beside that one.
    expect(pair.server.count('tasks/cancel')).toBe(1);
    expect(pair.server.tasks.get('task-1').status).toBe('cancelled');
    const back = (await queue.getJob(job.id!))!;
    expect(await back.getState()).toBe('waiting');
    expect((back.data as ToolJobData).task).toBeUndefined();
    expect((back.data as ToolJobData).calling).toBeDefined();
  }, 60_000);

  it('the guarded write writes nothing to a job that finished or was removed: gone', async () => {
    const opened = await openQueue(redis, 'faults-finished');
    cleanups.push(() => opened.close());
    const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'job' }, { delay: 60_000 });
    const data = job.data;
    const withTask = { ...data, task: { reference: { taskId: 'task-a', toolName: 'job' } as never, storedAt: 1 } };
    // Finished (as a run that lost its lock finds the job another worker completed): nothing is written.
    const client = await (opened.queue.getBackend() as unknown as { client: Promise<Redis> }).client;
    await client.hset(opened.queue.toKey(job.id!), { finishedOn: Date.now() });
    expect(await writeJobData(opened.queue, job.id!, { ...data, calling: { at: 1 } }, { mark: undefined })).toEqual({
      kind: 'gone',
    });
    expect(await writeJobData(opened.queue, job.id!, withTask, { taskId: 'task-a' })).toEqual({ kind: 'gone' });
    expect((await opened.queue.getJob(job.id!))!.data).toEqual(data);
    await job.remove();
    expect(await writeJobData(opened.queue, job.id!, withTask, { taskId: 'task-a' })).toEqual({ kind: 'gone' });
  }, 30_000);

  it('an error while following the task (tasks/get refused until the tracking gives up) is not the server refusing the call: the task is resumed, one tools/call', async () => {
    const pair = await scripted(1_000);
    const reads = pair.server.tasks.handlers['tasks/get']!;
    let refused = 0;
    // Five refused reads in a row: the tracking gives up with a TaskRpcError that is not transient.
    pair.server.on('tasks/get', (params, ctx) => {
      if (refused < 5) {
        refused += 1;
        throw rpcError(-32603, 'task store unavailable');
      }
      return reads(params, ctx);
    });
    const { queue, events, enqueue } = await rig('faults-following', pair);
    const job = await enqueue();
    const done = await finished(queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(done.returnvalue).toMatchObject(textResult('done'));
    expect(refused).toBe(5);
    expect(pair.server.count('tools/call')).toBe(1);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ taskId: 'task-1' });
  }, 60_000);

  it("a connect that throws BullMQ's UnrecoverableError, or finds a peer that does not speak MCP, fails the job at once", async () => {
    for (const [name, error] of [
      ['faults-unrecoverable', new UnrecoverableError('no server "default" in this deployment')],
      ['faults-not-mcp', new TaskConnectError('The target does not speak MCP', { reason: 'not-mcp' })],
    ] as const) {
      let connects = 0;
      const { queue, events, enqueue } = await rig(name, await scripted(), {
        connect: () => {
          connects += 1;
          return Promise.reject(error);
        },
      });
      const job = await enqueue({ attempts: 3 });
      const done = await finished(queue, job);
      expect([await done.getState(), done.failedReason, done.attemptsMade]).toEqual(['failed', error.message, 1]);
      expect(connects).toBe(1);
      expect(events.filter((e) => e.type === 'retry')).toEqual([]);
    }
    // A target that cannot be reached is still retried.
    let connects = 0;
    const { queue, events, enqueue } = await rig('faults-unreachable', await scripted(), {
      retry: { attempts: 2, minDelayMs: 10, maxDelayMs: 10 },
      connect: () => {
        connects += 1;
        return Promise.reject(new TaskConnectError('connect ECONNREFUSED', { reason: 'unreachable' }));
      },
    });
    const done = await finished(queue, await enqueue());
    expect([await done.getState(), done.failedReason]).toEqual([
      'failed',
      'Gave up after 2 retries: connect ECONNREFUSED',
    ]);
    expect(connects).toBe(3);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(2);
  }, 60_000);

  it('a job that gives up on its last attempt cancels its task; an earlier attempt leaves it to the next, which resumes it', async () => {
    // The task never ends and cannot be read: each attempt gives up following it.
    const pair = await scripted('never');
    pair.server.on('tasks/get', () => {
      throw rpcError(-32603, 'task store unavailable');
    });
    const { queue, events, enqueue } = await rig('faults-last-attempt', pair, { retry: { attempts: 0 } });
    const job = await enqueue({ attempts: 2 });
    const done = await finished(queue, job);
    expect(await done.getState()).toBe('failed');
    expect(done.attemptsMade).toBe(2);
    expect(done.failedReason).toMatch(/^Gave up after 0 retries: tasks\/get failed/);
    expect(pair.server.count('tools/call')).toBe(1);
    expect(events.filter((e) => e.type === 'resumed')).toHaveLength(1);
    expect(pair.server.count('tasks/cancel')).toBe(1);
    expect(pair.server.tasks.get('task-1').status).toBe('cancelled');
  }, 60_000);

  it('processor.active counts the jobs running now', async () => {
    const pair = await scripted(1_000);
    const { queue, events, enqueue, processor } = await rig('faults-active', pair);
    expect(processor.active).toBe(0);
    const job = await enqueue();
    await eventually(async () => events.some((e) => e.type === 'started'), 20_000, 'the task');
    expect(processor.active).toBe(1);
    expect(await (await finished(queue, job)).getState()).toBe('completed');
    await eventually(async () => processor.active === 0, 5_000, 'no job running');
  }, 60_000);

  it('a run that gives up on the job’s last attempt after another worker took its lock does not cancel the task, which that worker follows', async () => {
    // The task never ends; its reads fail, so that the run gives up following it (no retries).
    const pair = await scripted('never');
    const { queue, events, enqueue, worker, processor } = await rig('faults-lost-lock', pair, {
      retry: { attempts: 0 },
    });
    // BullMQ reports the lock it can no longer renew, and the failure it can no longer record.
    const errors: Error[] = [];
    worker.on('error', (error) => errors.push(error));
    const client = await (queue.getBackend() as unknown as { client: Promise<Redis> }).client;
    let jobId = '';
    pair.server.on('tasks/get', async () => {
      // Meanwhile another worker took the job: this worker's lock expired (a stalled event loop,
      // Redis away for a while), and the lock is now that worker's.
      await client.set(`${queue.toKey(jobId)}:lock`, 'another-worker');
      throw rpcError(-32603, 'task store unavailable');
    });
    const job = await enqueue();
    jobId = job.id!;
    await eventually(async () => events.some((e) => e.type === 'started'), 20_000, 'the task to start');
    await eventually(async () => processor.active === 0, 20_000, 'the run to give up');
    expect(pair.server.count('tasks/cancel')).toBe(0);
    expect(pair.server.tasks.get('task-1').status).toBe('working');
    const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.error.message] : []));
    expect(warnings).toEqual([
      'The job failed for good here, but its lock is no longer this worker’s (another worker holds the job, or it is back in the queue): its task is left running for the worker that resumes it, not cancelled',
    ]);
    // The job is not failed by this worker: it is the other worker's.
    expect(await job.getState()).toBe('active');
    expect(errors.length).toBeGreaterThan(0);
  }, 60_000);

  it("a calling mark refused because of the run's own (the script ran twice, as a client sends it again after a reconnect) is taken: no wait for the calling grace", async () => {
    const pair = await scripted();
    let marks = 0;
    const { queue, events, enqueue } = await rig('faults-own-mark', pair, {
      callingGraceMs: 30_000,
      intercept: async (method, args, run) => {
        if (method !== 'runCommand' || writeMode(args) !== 'mark' || marks > 0) return run();
        marks += 1;
        await run();
        return run();
      },
    });
    const started = Date.now();
    const done = await finished(queue, await enqueue());
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(marks).toBe(1);
    expect(pair.server.count('tools/call')).toBe(1);
    expect(events.filter((e) => e.type === 'resumed')).toEqual([]);
  }, 60_000);

  it("with uncertainCall 'fail', a calling mark whose write was made but whose answer was lost is the run's own, with no call sent: the run calls (one tools/call), the job completes", async () => {
    const pair = await scripted();
    let marks = 0;
    const { queue, enqueue } = await rig('faults-own-mark-fail', pair, {
      uncertainCall: 'fail',
      intercept: async (method, args, run) => {
        if (method !== 'runCommand' || writeMode(args) !== 'mark' || marks > 0) return run();
        marks += 1;
        await run();
        throw new Error('Command timed out');
      },
    });
    const done = await finished(queue, await enqueue());
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(marks).toBe(1);
    expect(pair.server.count('tools/call')).toBe(1);
  }, 60_000);

  it('another worker’s calling mark written in the same millisecond as this run’s is not taken for its own: the run does not call, it waits for that worker’s reference', async () => {
    const pair = await scripted();
    let raced = false;
    const held: { queue?: Queue } = {};
    const { queue, events, enqueue } = await rig('faults-same-ms-mark', pair, {
      callingGraceMs: 3_000,
      intercept: async (method, args, run) => {
        if (method !== 'runCommand' || writeMode(args) !== 'mark' || raced) return run();
        raced = true;
        // Just before this run's mark lands, another worker (which took the job after this one
        // lost its lock) marks it, in the same millisecond.
        const [key, json] = args[1] as [string, string];
        const mine = JSON.parse(json) as ToolJobData;
        const { by: _by, ...sameTime } = mine.calling as { at: number; by?: string };
        const client = await (held.queue!.getBackend() as unknown as { client: Promise<Redis> }).client;
        await client.hset(key, { data: JSON.stringify({ ...mine, calling: sameTime }) });
        return run();
      },
    });
    held.queue = queue;
    const job = await enqueue();
    await eventually(async () => raced, 10_000, 'the mark');
    await pause(1_000);
    // Within the other worker's grace this run has not called: it waits for that worker's reference.
    expect(pair.server.count('tools/call')).toBe(0);
    expect(events.filter((e) => e.type === 'started')).toEqual([]);
    // That worker never stores one (it died): after the grace the run calls (uncertainCall 'call-again').
    const done = await finished(queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(pair.server.count('tools/call')).toBe(1);
  }, 60_000);

  it('a read of the control channel that fails is made again at the next poll: a cancel stored before the job was watched is seen', async () => {
    const opened = await openQueue(redis, 'faults-control');
    cleanups.push(() => opened.close());
    let reads = 0;
    let failNext = false;
    const watch = new ControlWatch(
      intercepted(opened.queue, (_method, _args, run) => {
        reads += 1;
        if (!failNext) return run();
        failNext = false;
        return Promise.reject(new Error('Connection is closed.'));
      }),
      50,
      () => {},
    );
    cleanups.push(async () => watch.stop());
    // Two jobs no worker takes (the watches stand for their runs).
    const a = instanceOf(await opened.queue.add('a', {}));
    const b = instanceOf(await opened.queue.add('b', {}));
    const first = watch.watch(a, undefined);
    await first.ready;
    // The revision moves, the watch reads it (for job a): from now on it reads the fields only when it moves again.
    await writeControl(opened.queue, b, { kind: 'cancel' }, { reason: 'no longer needed' }, false);
    await pause(300);
    const before = reads;
    await eventually(async () => reads >= before + 2, 5_000, 'the watch to poll');
    failNext = true;
    const second = watch.watch(b, undefined);
    const seen = await Promise.race([second.cancelled, pause(3_000).then(() => 'not seen')]);
    expect(seen).toBe('no longer needed');
    expect(failNext).toBe(false);
    await first.release('done');
    await second.release('done');
  }, 30_000);

  it('the wait for the first read of the control channel leaves no timer behind once the channel was read', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const pair = await scripted(50);
    const before = timers();
    const { queue, close, enqueue } = await rig('faults-timer', pair);
    const jobs = await Promise.all(Array.from({ length: 5 }, () => enqueue()));
    for (const job of jobs) expect(await (await finished(queue, job)).getState()).toBe('completed');
    await close();
    await pause(100);
    expect(timers() - before).toBeLessThan(5);
  }, 60_000);
});
