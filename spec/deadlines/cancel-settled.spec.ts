/**
 * `cancel()` when the handle settles before the cancel could tell what became of the task (the
 * facade review): a task the server no longer knows, a `close()` during the last look, and a
 * deadline that ran out of grace while the very cancel it reused was still on its way. The
 * promise never resolves with a stale `working` snapshot, nor with a resumed handle's placeholder.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskAbortError,
  TaskClosedError,
  TaskExpiredError,
  TaskNotFoundError,
  TaskTimeoutError,
  type TaskClientOptions,
} from '../../lib/index.js';
import { flush, rejection, within } from '../helpers.js';
import { NO_REPLY, creating, type HandlerContext } from '../support/scripted-server.js';
import { scriptedTaskClient } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), {}, options);
}

/** TaskNotFoundError or TaskExpiredError: a task the server does not know. */
function isGone(error: unknown): boolean {
  return error instanceof TaskNotFoundError || error instanceof TaskExpiredError;
}

describe('cancel() of a task the server no longer knows', () => {
  it('a resumed id the server never had: rejects with the not-found error, sends no tasks/cancel', async () => {
    const { server, tasks } = await setup();
    const handle = tasks.resume('no-such-task', { toolName: 'job' });
    const error = await rejection(handle.cancel());
    expect(isGone(error), String(error)).toBe(true);
    expect(server.count('tasks/cancel')).toBe(0);
    // The handle tells the same story.
    expect(isGone(await rejection(handle.result()))).toBe(true);
  });

  it('a task the server dropped since: the last look finds it gone, and cancel() rejects as result() does', async () => {
    const { server, tasks } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.delete(handle.taskId!);
    const error = await rejection(handle.cancel());
    expect(isGone(error), String(error)).toBe(true);
    expect(await rejection(handle.result())).toBe(error);
    expect(server.count('tasks/cancel')).toBe(0);
  });
});

describe('cancel() when another stop settles the handle while it runs', () => {
  it('close() during its last look: rejects with TaskClosedError, not with the working snapshot', async () => {
    const { server, tasks } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    server.on('tasks/get', () => NO_REPLY);
    const cancel = rejection(handle.cancel());
    await flush();
    expect(server.count('tasks/get')).toBe(1);
    await tasks.close();
    expect(await cancel).toBeInstanceOf(TaskClosedError);
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('a deadline that ran out of grace on the same cancel: cancel() rejects with the deadline’s TaskTimeoutError (remoteCancel unknown), as result() does; the cancel still reaches the server', async () => {
    const { server, tasks, clock } = await setup({ cancelGraceMs: 1_000 });
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 5_000 });
    let answer: ((value: unknown) => void) | undefined;
    server.on('tasks/cancel', (params, ctx: HandlerContext) => {
      void ctx;
      return new Promise((resolve) => {
        answer = () => resolve(server.tasks.update(String(params.taskId), { status: 'cancelled' }));
      });
    });
    const cancel = rejection(handle.cancel(), 30_000);
    await clock.advance(500); // the last look answered; the cancel waits for its answer
    expect(server.count('tasks/cancel')).toBe(1);
    await clock.advance(10_000); // the deadline passes and its stop runs out of grace
    const timeout = await rejection(handle.result());
    expect(timeout).toBeInstanceOf(TaskTimeoutError);
    // Every deadline bounds the whole call, the remote cancel included.
    expect(await cancel).toBe(timeout);
    expect((timeout as TaskTimeoutError).remoteCancel).toBe('unknown');
    answer?.(undefined);
    await flush();
    expect(server.tasks.get(handle.taskId!)?.status).toBe('cancelled');
  });
});

describe('cancel() whose tasks/cancel is not answered gives up within a bound', () => {
  it('without a deadline: TaskTimeoutError (remoteCancel unknown) at requestTimeoutMs + cancelGraceMs, 12 s with the defaults (was about 64 s); the task is still followed', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    server.on('tasks/cancel', () => NO_REPLY);
    let outcome: unknown;
    handle.cancel().then(
      (task) => (outcome = task),
      (error: unknown) => (outcome = error),
    );
    await clock.advance(11_999);
    expect(outcome).toBeUndefined();
    // Each unanswered attempt (a timeout) is retried meanwhile: the retry is kept.
    expect(server.count('tasks/cancel')).toBe(2);
    await clock.advance(1);
    expect(outcome).toBeInstanceOf(TaskTimeoutError);
    const error = outcome as TaskTimeoutError;
    expect(error.remoteCancel).toBe('unknown');
    expect(error.timeoutMs).toBe(12_000);
    expect(error.elapsedMs).toBe(12_000);
    expect(error.message).toBe(
      'cancel() gave up after 12000 ms: a tasks/cancel was sent but not answered in time, the remote task may still be running',
    );
    expect(error.taskId).toBe(handle.taskId);
    expect(clock.now() - start).toBeLessThan(20_000);
    expect(handle.settled).toBe(false);
    // Still followed: the task's end settles the handle as usual.
    const result = rejection(handle.result(), 30_000);
    server.tasks.update(handle.taskId!, { status: 'cancelled' });
    await clock.advance(60_000);
    expect(await result).toMatchObject({ name: 'TaskCancelledError' });
  });

  it('a transient failure within the bound is still retried: an attempt that timed out, then an answer', async () => {
    const { server, tasks, clock } = await setup({ requestTimeoutMs: 2_000 });
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    let attempts = 0;
    server.on('tasks/cancel', (params) => {
      attempts += 1;
      return attempts === 1 ? NO_REPLY : server.tasks.update(String(params.taskId), { status: 'cancelled' });
    });
    const cancel = within(handle.cancel(), 30_000);
    await clock.advance(2_500);
    expect(attempts).toBe(2);
    await expect(cancel).resolves.toMatchObject({ status: 'cancelled' });
  });

  it('with a deadline: rejects at the deadline + cancelGraceMs with the deadline’s TaskTimeoutError, before its own bound', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 3_000 });
    server.on('tasks/cancel', () => NO_REPLY);
    let outcome: unknown;
    handle.cancel().catch((error: unknown) => (outcome = error));
    await clock.advance(4_999);
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    expect(outcome).toBeInstanceOf(TaskTimeoutError);
    expect(outcome).toBe(await rejection(handle.result()));
    expect((outcome as TaskTimeoutError).timeoutMs).toBe(3_000);
    expect((outcome as TaskTimeoutError).remoteCancel).toBe('unknown');
  });

  it('with the call’s signal aborted meanwhile: rejects at the abort + cancelGraceMs with the abort’s TaskAbortError (remoteCancel unknown)', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { pollInterval: 60_000 });
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask('job', {}, { signal: controller.signal });
    server.on('tasks/cancel', () => NO_REPLY);
    let outcome: unknown;
    handle.cancel().catch((error: unknown) => (outcome = error));
    await clock.advance(1_000);
    controller.abort('enough');
    await clock.advance(1_999);
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    expect(outcome).toBeInstanceOf(TaskAbortError);
    expect(outcome).toBe(await rejection(handle.result()));
    expect((outcome as TaskAbortError).reason).toBe('enough');
    expect((outcome as TaskAbortError).remoteCancel).toBe('unknown');
  });
});
