/**
 * `cancel()` when the handle settles before the cancel could tell what became of the task (the
 * facade review): a task the server no longer knows, a `close()` during the last look, and a
 * deadline that ran out of grace while the very cancel it reused was still on its way. The
 * promise never resolves with a stale `working` snapshot, nor with a resumed handle's placeholder.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
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

  it("a deadline that ran out of grace on the same cancel: the server's later cancelled answer is what cancel() returns", async () => {
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
    const cancel = within(handle.cancel(), 30_000);
    await clock.advance(500); // the last look answered; the cancel waits for its answer
    expect(server.count('tasks/cancel')).toBe(1);
    await clock.advance(10_000); // the deadline passes and its stop runs out of grace
    const timeout = await rejection(handle.result());
    expect(timeout).toBeInstanceOf(TaskTimeoutError);
    answer?.(undefined);
    await expect(cancel).resolves.toMatchObject({ status: 'cancelled' });
  });
});
