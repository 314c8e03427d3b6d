/**
 * Every deadline and close() holds (reliability review, items 4-9, 14): a stop waits at most
 * `cancelGraceMs` for an unresponsive server, `close({ cancelRunning })` is bounded as a whole,
 * nothing the library hands out stays pending after `close()`, and a signal shared by many calls
 * carries one listener. Time is a ManualClock throughout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClosedError, TaskTimeoutError, TaskAbortError, type TaskClientOptions } from '../../lib/index.js';
import { ManualClock, flush, rejection, unhandledDuring, within } from '../helpers.js';
import { FaultTransport } from '../support/fault-transport.js';
import {
  NO_REPLY,
  connectScripted,
  creating,
  type HandlerContext,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';
import { TaskClient } from '../../lib/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: ScriptedServerOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), options, taskOptions);
}

/** The clock time at which `promise` settled, advancing `clock` in `step` ms steps up to `limit`. */
async function settledAt(clock: ManualClock, promise: Promise<unknown>, step = 100, limit = 200_000): Promise<number> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  const start = clock.now();
  while (!done && clock.now() - start < limit) await clock.advance(step);
  await flush();
  return clock.now();
}

describe('a stop waits at most cancelGraceMs for the server ([R24])', () => {
  it('timeoutMs 500 against a server that never answers tasks/cancel: TaskTimeoutError at 500 + 2000 ms, remoteCancel "unknown"', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server);
    server.on('tasks/cancel', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 500 });
    const failure = rejection(handle.result(), 10_000);
    const at = await settledAt(clock, failure);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('unknown');
    expect(at - start).toBeLessThanOrEqual(500 + 2_000 + 100);
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('cancelGraceMs is an option, and an abort is bounded the same way', async () => {
    const { server, tasks, clock, start } = await setup({}, { cancelGraceMs: 300 });
    creating(server);
    server.on('tasks/cancel', () => NO_REPLY);
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask('job', {}, { signal: controller.signal });
    const failure = rejection(handle.result(), 10_000);
    controller.abort();
    const at = await settledAt(clock, failure, 50);
    expect(((await failure) as TaskAbortError).remoteCancel).toBe('unknown');
    expect(at - start).toBeLessThanOrEqual(350);
  });

  it('dispose() (await using) is bounded by the grace too', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server);
    server.on('tasks/cancel', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    const disposed = handle.dispose();
    const at = await settledAt(clock, disposed);
    await disposed;
    expect(at - start).toBeLessThanOrEqual(2_100);
    expect(handle.settled).toBe(true);
  });

  it('a cancel that is answered within the grace gives "cancelled"', async () => {
    const { server, tasks, clock } = await setup();
    creating(server);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 500 });
    const failure = rejection(handle.result());
    await clock.advance(600);
    expect(((await failure) as TaskTimeoutError).remoteCancel).toBe('cancelled');
  });

  it('a deadline while the terminal payload is being fetched: TaskTimeoutError with the terminal snapshot after the grace', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'p1' });
    server.on('tasks/result', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 500 });
    server.tasks.update('p1', { status: 'completed' }, true);
    await clock.advance(10);
    const failure = rejection(handle.result(), 10_000);
    const at = await settledAt(clock, failure);
    const error = (await failure) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.task?.status).toBe('completed');
    expect(error.remoteCancel).toBe('finished');
    expect(at - start).toBeLessThanOrEqual(500 + 2_000 + 100);
  });

  it('the truth still wins within the grace: a payload arriving in time settles the handle with it', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'p2' });
    let held: HandlerContext | undefined;
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 'p2' });
      held = ctx;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 500 });
    server.tasks.update('p2', { status: 'completed' }, true);
    await clock.advance(600);
    held?.reply(textResult('made it'));
    await clock.advance(10);
    await expect(within(handle.result())).resolves.toMatchObject({ content: [{ text: 'made it' }] });
  });
});

describe('close() is bounded and leaves nothing pending', () => {
  it('close({ cancelRunning }) with 100 tasks and a silent server: one tasks/cancel each, resolved within requestTimeoutMs', async () => {
    const { server, tasks, clock, start } = await setup({}, { requestTimeoutMs: 5_000 });
    creating(server);
    server.on('tasks/cancel', () => NO_REPLY);
    const handles = await Promise.all(Array.from({ length: 100 }, () => tasks.callToolAsTask('job')));
    const ends = handles.map((handle) => handle.result().catch((error: unknown) => error));
    const closing = tasks.close({ cancelRunning: true });
    const at = await settledAt(clock, closing);
    await closing;
    expect(at - start).toBeLessThanOrEqual(5_100);
    expect(server.count('tasks/cancel')).toBe(100);
    for (const end of await Promise.all(ends)) expect(end).toBeInstanceOf(TaskClosedError);
    await clock.advance(120_000);
    expect(server.count('tasks/cancel')).toBe(100);
    expect(clock.pending).toBe(0);
  });

  it('closeTimeoutMs shortens the bound', async () => {
    const { server, tasks, clock, start } = await setup({}, { closeTimeoutMs: 200 });
    creating(server);
    server.on('tasks/cancel', () => NO_REPLY);
    await Promise.all([1, 2, 3].map(() => tasks.callToolAsTask('job')));
    const closing = tasks.close({ cancelRunning: true });
    const at = await settledAt(clock, closing, 50);
    expect(at - start).toBeLessThanOrEqual(250);
  });

  it('without cancelRunning close() resolves at once and no timer of the library outlives it', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { status: 'input_required' });
    await Promise.all([1, 2, 3].map(() => tasks.callToolAsTask('job', {}, { timeoutMs: 60_000 })));
    await clock.advance(1_500);
    await within(tasks.close());
    expect(clock.pending).toBe(0);
  });

  it('calls started during or after close() reject at once; a task created after close() began is cancelled once', async () => {
    const { server, tasks, clock } = await setup();
    const held: HandlerContext[] = [];
    server.on('tasks/cancel', (p) => server.tasks.handlers['tasks/cancel']!(p, held[0]!));
    server.on('tasks/result', () => NO_REPLY);
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { name: 'job' });
      held.push(ctx);
      return NO_REPLY;
    });
    const inFlight = tasks.callToolAsTask('job').catch((error: unknown) => error);
    await clock.advance(0);
    const closing = tasks.close();
    await expect(within(tasks.callToolAsTask('job'))).rejects.toBeInstanceOf(TaskClosedError);
    expect(await within(inFlight)).toBeInstanceOf(TaskClosedError);
    await within(closing);
    // The server answers the old tools/call now: that task is cancelled once, never tracked.
    held[0]!.reply(server.tasks.createResult({ taskId: 'late' }));
    await flush();
    await clock.advance(60_000);
    expect(server.params('tasks/cancel')).toEqual([{ taskId: 'late' }]);
    expect(tasks.active).toBe(0);
  });

  it('handle.cancel() after close() on a task left running rejects with TaskClosedError; a settled handle keeps its snapshot', async () => {
    const { server, tasks, clock } = await setup();
    creating(server);
    const running = await tasks.callToolAsTask('job');
    const done = await tasks.callToolAsTask('job');
    void running.result().catch(() => {});
    server.tasks.finish(done.taskId!, 'completed', { result: textResult('ok') }, {}, true);
    await clock.advance(10);
    await within(done.result());
    await tasks.close();
    await expect(within(running.cancel())).rejects.toBeInstanceOf(TaskClosedError);
    await expect(within(done.cancel())).resolves.toMatchObject({ status: 'completed' });
    expect(server.count('tasks/cancel')).toBe(0);
  });
});

/** A client whose connection is lost and whose reconnect factory keeps failing. */
async function lostConnection() {
  const clock = new ManualClock();
  let faulty: FaultTransport | undefined;
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    now: clock.now,
    wrap: (t) => (faulty = new FaultTransport(t)),
  });
  creating(pair.server);
  let factoryCalls = 0;
  const tasks = new TaskClient(pair.client, {
    clock,
    maxConcurrentTasks: 1,
    reconnect: () => {
      factoryCalls += 1;
      return Promise.reject(new Error('server still down'));
    },
  });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { tasks, clock, pair, drop: () => faulty!.close(), factoryCalls: () => factoryCalls };
}

describe('waiters on a lost connection settle when close() runs', () => {
  it('a call waiting for the reconnect factory, list(), listPage(), a queued call and a resumed handle all end with TaskClosedError', async () => {
    const { tasks, clock, drop, factoryCalls } = await lostConnection();
    const first = await tasks.callToolAsTask('job');
    const firstEnd = first.result().catch((error: unknown) => error);
    await drop();
    await clock.advance(10);
    expect(factoryCalls()).toBeGreaterThan(0);
    const queued = tasks.callToolAsTask('job').catch((error: unknown) => error);
    const page = tasks.listPage().catch((error: unknown) => error);
    const all = (async () => {
      for await (const _ of tasks.list()) void _;
    })().catch((error: unknown) => error);
    const resumed = tasks
      .resume('other-task')
      .result()
      .catch((error: unknown) => error);
    await clock.advance(1_000);
    await tasks.close();
    for (const end of await within(Promise.all([firstEnd, queued, page, all, resumed]))) {
      expect(end).toBeInstanceOf(TaskClosedError);
    }
  });
});

describe('a call made while the connection is lost, given up in the same tick', () => {
  it('close() right after the call: TaskClosedError, and no unhandled rejection when the wait for the reconnection ends', async () => {
    const { tasks, clock, drop } = await lostConnection();
    await drop();
    await clock.advance(10);
    const unhandled = await unhandledDuring(async () => {
      const call = tasks.callToolAsTask('job');
      const closing = tasks.close();
      expect(await rejection(call)).toBeInstanceOf(TaskClosedError);
      await closing;
    });
    expect(unhandled).toEqual([]);
  });

  it('an abort right after the call: TaskAbortError with no-task, and no unhandled rejection at close()', async () => {
    const { tasks, clock, drop } = await lostConnection();
    await drop();
    await clock.advance(10);
    const controller = new AbortController();
    const unhandled = await unhandledDuring(async () => {
      const call = tasks.callToolAsTask('job', {}, { signal: controller.signal });
      controller.abort('changed my mind');
      const error = await rejection(call);
      expect(error).toBeInstanceOf(TaskAbortError);
      expect((error as TaskAbortError).remoteCancel).toBe('no-task');
      await tasks.close();
    });
    expect(unhandled).toEqual([]);
  });
});

describe('a call that gives up while it waits for the reconnection', () => {
  it('no longer keeps the reconnect factory going: with no task tracked, retries stop', async () => {
    const { tasks, clock, drop, factoryCalls } = await lostConnection();
    await drop();
    await clock.advance(10);
    const controller = new AbortController();
    const call = tasks.callToolAsTask('job', {}, { signal: controller.signal });
    // While the call waits, the factory is retried (with backoff).
    await clock.advance(30_000);
    const whileWaiting = factoryCalls();
    expect(whileWaiting).toBeGreaterThan(1);
    controller.abort('gave up');
    expect(await rejection(call)).toBeInstanceOf(TaskAbortError);
    // At most the attempt already scheduled runs; then nothing wants the connection back.
    await clock.advance(600_000);
    expect(factoryCalls()).toBeLessThanOrEqual(whileWaiting + 1);
  });

  it('with a deadline: once it passed, retries stop too', async () => {
    const { tasks, clock, drop, factoryCalls } = await lostConnection();
    await drop();
    await clock.advance(10);
    const failure = rejection(tasks.callToolAsTask('job', {}, { timeoutMs: 20_000 }));
    await clock.advance(20_000);
    expect(await failure).toBeInstanceOf(TaskTimeoutError);
    const atDeadline = factoryCalls();
    await clock.advance(600_000);
    expect(factoryCalls()).toBeLessThanOrEqual(atDeadline + 1);
  });
});

describe('one abort listener per signal', () => {
  it('50 calls, waits and iterators sharing one AbortSignal print no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const { server, tasks, clock } = await setup();
      creating(server);
      const controller = new AbortController();
      const handles = await Promise.all(
        Array.from({ length: 50 }, () => tasks.callToolAsTask('job', {}, { signal: controller.signal })),
      );
      const waits = handles.map((h) => h.result({ signal: controller.signal }).catch(() => 'aborted'));
      const iterators = handles.map((h) => h.updates({ signal: controller.signal }));
      await clock.advance(10);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      controller.abort();
      await clock.advance(3_000);
      expect(await Promise.all(waits)).toEqual(Array(50).fill('aborted'));
      for (const iterator of iterators) await iterator.return?.();
    } finally {
      process.off('warning', onWarning);
    }
  });
});
