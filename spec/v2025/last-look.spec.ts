/**
 * A last look before cancelling (issue 23), on the 2025-11-25 wire: when a stop is due and the
 * latest snapshot still shows the task running, the task is read once (`tasks/get`, bounded by half
 * the stop's grace) before any `tasks/cancel`. A task found ended settles with its real outcome and
 * is never cancelled. The scripted server here breaks [V23] as a real server was seen to: it ends
 * a task without a notification, and a `tasks/cancel` of a completed task rewrites it to
 * `cancelled` and drops its result. Without the look, every stop below would lose the result.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskFailedError, TaskTimeoutError, type CallToolResult, type TaskClientOptions } from '../../lib/index.js';
import { flush, within } from '../helpers.js';
import {
  NO_REPLY,
  creating,
  rpcError,
  type HandlerContext,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: ScriptedServerOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), options, taskOptions);
}

/**
 * Makes `server` the deviant one: `tasks/cancel` cancels whatever it is asked to, a completed task
 * included (breaking [V23]), and a cancelled task has no result any more.
 */
function rewriteOnCancel(server: ScriptedServer): void {
  server.on('tasks/cancel', (params) => {
    expect(params.taskId).toEqual(expect.any(String));
    return server.tasks.update(String(params.taskId), {
      status: 'cancelled',
      statusMessage: 'Client cancelled task execution.',
    });
  });
  const board = server.tasks.handlers['tasks/result']!;
  server.on('tasks/result', (params, ctx) => {
    if (server.tasks.get(String(params.taskId)).status === 'cancelled')
      throw rpcError(-32603, `Task ${String(params.taskId)} has no result stored`);
    return board(params, ctx);
  });
}

/** A task that polls every 5 s, on the deviant server; it completes 1 s in, without a notification. */
async function finishedUnseen(taskOptions: TaskClientOptions = {}) {
  const rig = await setup({}, taskOptions);
  creating(rig.server, { taskId: 'unseen', pollInterval: 5_000 });
  rewriteOnCancel(rig.server);
  const complete = async (): Promise<void> => {
    await rig.clock.advance(1_000);
    rig.server.tasks.finish('unseen', 'completed', { result: textResult('the work') });
  };
  return { ...rig, complete };
}

/** The `tasks/*` requests the server received, in order. */
function taskRequests(server: ScriptedServer): string[] {
  return server.log.filter((e) => e.kind === 'request' && e.method?.startsWith('tasks/')).map((e) => e.method!);
}

/** Settles `promise` into its value or the error it rejected with. */
function outcomeOf(promise: Promise<CallToolResult>): Promise<CallToolResult | Error> {
  return promise.catch((error: unknown) => error as Error);
}

const THE_WORK = { content: [{ type: 'text', text: 'the work' }] };

describe('a stop reads the task once before it cancels: a task that ended unseen keeps its outcome, and gets no tasks/cancel', () => {
  it('a deadline: result() resolves with the result (the work was done)', async () => {
    const { server, tasks, clock, complete } = await finishedUnseen();
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 4_000 });
    const result = outcomeOf(handle.result());
    await complete();
    await clock.advance(3_000);
    expect(await within(result)).toMatchObject(THE_WORK);
    expect(server.count('tasks/cancel')).toBe(0);
    expect(taskRequests(server)).toEqual(['tasks/get', 'tasks/result']);
    expect(server.tasks.get('unseen').status).toBe('completed');
  });

  it('a deadline that finds the task failed: TaskFailedError with the server’s error', async () => {
    const { server, tasks, clock } = await finishedUnseen();
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 4_000 });
    const result = outcomeOf(handle.result());
    await clock.advance(1_000);
    server.tasks.finish('unseen', 'failed', { error: rpcError(-32603, 'disk full') });
    await clock.advance(3_000);
    const error = await within(result);
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).rpcError).toMatchObject({ message: 'disk full' });
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('an abort: result() resolves with the result', async () => {
    const { server, tasks, complete } = await finishedUnseen();
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask('job', {}, { signal: controller.signal });
    const result = outcomeOf(handle.result());
    await complete();
    controller.abort(new Error('user pressed stop'));
    expect(await within(result)).toMatchObject(THE_WORK);
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('handle.cancel(): returns the completed snapshot, and result() resolves with the result', async () => {
    const { server, tasks, complete } = await finishedUnseen();
    const handle = await tasks.callToolAsTask('job');
    const result = outcomeOf(handle.result());
    await complete();
    const snapshot = await within(handle.cancel());
    expect(snapshot).toMatchObject({ taskId: 'unseen', status: 'completed' });
    expect(await within(result)).toMatchObject(THE_WORK);
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('close({ cancelRunning: true }): the finished task settles with its result, the running one is cancelled', async () => {
    const { server, tasks, complete } = await finishedUnseen();
    const done = await tasks.callToolAsTask('job');
    creating(server, { taskId: 'running', pollInterval: 5_000 });
    const running = await tasks.callToolAsTask('job');
    const results = [outcomeOf(done.result()), outcomeOf(running.result())];
    await complete();
    await within(tasks.close({ cancelRunning: true }));
    expect(await within(results[0]!)).toMatchObject(THE_WORK);
    const error = await within(results[1]!);
    expect(error).toMatchObject({
      name: 'TaskClosedError',
      message: expect.stringContaining('the remote task was cancelled'),
    });
    expect(server.params('tasks/cancel').map((p) => p.taskId)).toEqual(['running']);
    expect(server.tasks.get('unseen').status).toBe('completed');
  });

  it('dispose() (await using): result() resolves with the result, iterators end normally', async () => {
    const { server, tasks, complete } = await finishedUnseen();
    let result: Promise<CallToolResult | Error> | undefined;
    let seen: Promise<string[]> | undefined;
    {
      await using handle = await tasks.callToolAsTask('job');
      result = outcomeOf(handle.result());
      seen = (async () => {
        const statuses: string[] = [];
        for await (const task of handle) statuses.push(task.status);
        return statuses;
      })();
      await complete();
    }
    expect(await within(result)).toMatchObject(THE_WORK);
    expect(await within(seen)).toEqual(['working', 'completed']);
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('a look that still shows the task running is followed by the cancel, as before', async () => {
    const { server, tasks, clock } = await finishedUnseen();
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 4_000 });
    const result = outcomeOf(handle.result());
    await clock.advance(4_000);
    const error = await within(result);
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error).toMatchObject({ remoteCancel: 'cancelled' });
    expect(taskRequests(server)).toEqual(['tasks/get', 'tasks/cancel']);
  });
});

describe('the look is bounded by the grace, and the cancel still goes out', () => {
  it('a look that hangs: the cancel goes out after half the grace, and the stop settles with its answer', async () => {
    const { server, tasks, clock, start } = await setup({}, { cancelGraceMs: 2_000 });
    creating(server, { taskId: 'slow', pollInterval: 5_000 });
    server.on('tasks/get', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const result = outcomeOf(handle.result());
    await clock.advance(1_000);
    expect(taskRequests(server)).toEqual(['tasks/get']);
    await clock.advance(999);
    expect(server.count('tasks/cancel')).toBe(0);
    await clock.advance(1);
    expect(server.count('tasks/cancel')).toBe(1);
    const error = await within(result);
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error).toMatchObject({ remoteCancel: 'cancelled' });
    expect(clock.now() - start).toBe(2_000);
    expect(server.tasks.get('slow').status).toBe('cancelled');
  });

  it('a look and a cancel that both hang: the stop settles at the deadline + cancelGraceMs, remoteCancel "unknown"', async () => {
    const { server, tasks, clock, start } = await setup({}, { cancelGraceMs: 2_000 });
    creating(server, { taskId: 'mute', pollInterval: 5_000 });
    server.on('tasks/get', () => NO_REPLY);
    server.on('tasks/cancel', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    let settledAt: number | undefined;
    const result = outcomeOf(handle.result()).then((value) => {
      settledAt = clock.now();
      return value;
    });
    await clock.advance(2_999);
    expect(settledAt).toBeUndefined();
    await clock.advance(1);
    await flush();
    const error = await within(result);
    expect(error).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'unknown' });
    expect(settledAt! - start).toBe(3_000);
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('dispose() with a look that hangs settles within cancelGraceMs, its cancel sent', async () => {
    const { server, tasks, clock, start } = await setup({}, { cancelGraceMs: 600 });
    creating(server, { taskId: 'mute', pollInterval: 5_000 });
    server.on('tasks/get', () => NO_REPLY);
    server.on('tasks/cancel', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    let done = false;
    const disposed = handle.dispose().then(() => (done = true));
    await clock.advance(599);
    expect(done).toBe(false);
    expect(server.count('tasks/cancel')).toBe(1);
    await clock.advance(1);
    await within(disposed);
    expect(clock.now() - start).toBe(600);
    expect(handle.settled).toBe(true);
  });

  it('handle.cancel() with a look that hangs sends the cancel after half of cancelGraceMs', async () => {
    const { server, tasks, clock } = await setup({}, { cancelGraceMs: 2_000 });
    creating(server, { taskId: 'slow', pollInterval: 5_000 });
    server.on('tasks/get', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    const cancel = handle.cancel();
    await clock.advance(999);
    expect(server.count('tasks/cancel')).toBe(0);
    await clock.advance(1);
    expect(await within(cancel)).toMatchObject({ status: 'cancelled' });
  });
});

describe('close({ cancelRunning: true }) and a task already seen ended, its payload still on the way', () => {
  it('waits for the payload within closeTimeoutMs: result() resolves with it; nothing is read or cancelled', async () => {
    const { server, tasks, clock } = await setup({}, { closeTimeoutMs: 3_000 });
    creating(server, { taskId: 'ended', pollInterval: 5_000 });
    let held: HandlerContext | undefined;
    server.on('tasks/result', (params, ctx) => {
      expect(params.taskId).toBe('ended');
      held = ctx;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const result = outcomeOf(handle.result());
    server.tasks.finish('ended', 'completed', { result: textResult('kept') }, {}, true);
    await clock.advance(10);
    let closed = false;
    const closing = tasks.close({ cancelRunning: true }).then(() => (closed = true));
    await clock.advance(1_000);
    expect(closed).toBe(false);
    held?.reply(textResult('kept'));
    await within(closing);
    expect(await within(result)).toMatchObject({ content: [{ type: 'text', text: 'kept' }] });
    expect(taskRequests(server)).toEqual(['tasks/result']);
  });

  it('a payload that never comes: TaskClosedError saying the task had finished, at closeTimeoutMs', async () => {
    const { server, tasks, clock, start } = await setup({}, { closeTimeoutMs: 3_000 });
    creating(server, { taskId: 'ended', pollInterval: 5_000 });
    server.on('tasks/result', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    const result = outcomeOf(handle.result());
    server.tasks.finish('ended', 'completed', { result: textResult('lost') }, {}, true);
    await clock.advance(10);
    const closing = tasks.close({ cancelRunning: true });
    await clock.advance(2_999);
    expect(handle.settled).toBe(false);
    await clock.advance(1);
    await within(closing);
    expect(await within(result)).toMatchObject({
      name: 'TaskClosedError',
      message: expect.stringContaining('had already finished'),
    });
    expect(clock.now() - start).toBe(10 + 3_000);
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('plain close() does not wait for it: TaskClosedError at once', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'ended', pollInterval: 5_000 });
    server.on('tasks/result', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    const result = outcomeOf(handle.result());
    server.tasks.finish('ended', 'completed', { result: textResult('lost') }, {}, true);
    await clock.advance(10);
    await within(tasks.close());
    expect(await within(result)).toMatchObject({ name: 'TaskClosedError' });
  });
});

describe('close() during a stop that is still taking its last look', () => {
  it('close({ cancelRunning: true }) sends the cancel the stop had not sent yet, and settles at once', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'looked', pollInterval: 5_000 });
    server.on('tasks/get', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const result = outcomeOf(handle.result());
    await clock.advance(1_000);
    expect(taskRequests(server)).toEqual(['tasks/get']);
    await within(tasks.close({ cancelRunning: true }));
    const error = await within(result);
    expect(error).toMatchObject({
      name: 'TaskClosedError',
      message: expect.stringContaining('a tasks/cancel was sent'),
    });
    await flush();
    expect(server.params('tasks/cancel').map((p) => p.taskId)).toEqual(['looked']);
  });

  it('plain close() leaves the task running, and says so', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'looked', pollInterval: 5_000 });
    server.on('tasks/get', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const result = outcomeOf(handle.result());
    await clock.advance(1_000);
    await within(tasks.close());
    const error = await within(result);
    expect(error).toMatchObject({
      name: 'TaskClosedError',
      message: expect.stringContaining('the remote task was left running'),
    });
    await clock.advance(5_000);
    expect(server.count('tasks/cancel')).toBe(0);
    expect(server.tasks.get('looked').status).toBe('working');
  });
});

describe('no look where none is needed', () => {
  it('cancelOnTimeout: false and cancelOnAbort: false: no read and no cancel at the stop', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { pollInterval: 5_000 });
    const timed = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000, cancelOnTimeout: false });
    const controller = new AbortController();
    const aborted = await tasks.callToolAsTask('job', {}, { signal: controller.signal, cancelOnAbort: false });
    const results = [outcomeOf(timed.result()), outcomeOf(aborted.result())];
    controller.abort();
    await clock.advance(1_000);
    for (const error of await Promise.all(results)) expect(error).toMatchObject({ remoteCancel: 'disabled' });
    expect(taskRequests(server)).toEqual([]);
  });

  it('a server without tasks.cancel: no read at the stop', async () => {
    const { server, tasks, clock } = await setup({
      capabilities: { tools: {}, tasks: { list: {}, requests: { tools: { call: {} } } } },
    });
    creating(server, { pollInterval: 5_000 });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const result = outcomeOf(handle.result());
    await clock.advance(1_000);
    expect(await within(result)).toMatchObject({ remoteCancel: 'not-supported' });
    expect(taskRequests(server)).toEqual([]);
  });

  it('a task already seen terminal (its payload still on the way): no read, no cancel', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'known', pollInterval: 5_000 });
    server.on('tasks/result', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const result = outcomeOf(handle.result());
    server.tasks.finish('known', 'completed', { result: textResult('late') }, {}, true);
    await clock.advance(10);
    expect(taskRequests(server)).toEqual(['tasks/result']);
    await clock.advance(3_000);
    expect(await within(result)).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'finished' });
    expect(taskRequests(server)).toEqual(['tasks/result']);
  });
});
