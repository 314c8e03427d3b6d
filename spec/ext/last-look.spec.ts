/**
 * A last look before cancelling (issue 23), on the tasks extension wire: when a stop is due and
 * the latest snapshot still shows the task running, `tasks/get` is sent once before any
 * `tasks/cancel`; on this wire it carries the result inline ([E3]), so a task found completed
 * settles with its result at once and is never cancelled. The scripted server ends a task without
 * a notification and, asked to cancel a completed task, rewrites it to `cancelled` and drops its
 * result (as a real server was seen to do); without the look every stop below would lose it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskTimeoutError, type CallToolResult, type TaskClientConnectOptions } from '../../lib/index.js';
import { NO_REPLY, taskTool, textResult, type ExtServer } from '../support/ext-server/index.js';
import { closeRigs, extRig, type ExtRig } from './support.js';

afterEach(closeRigs);

/** A rig whose tasks poll every 5 s, never notify, and move only when the test moves them. */
function rig(client: TaskClientConnectOptions = {}): Promise<ExtRig> {
  return extRig({
    server: { notifications: 'off', pollIntervalMs: 5_000, tools: [taskTool('manual', { advance: 'manual' })] },
    client,
  });
}

/** `tasks/cancel` cancels whatever it is asked to, a completed task included, whose result is then gone. */
function rewriteOnCancel(server: ExtServer): void {
  server.on('tasks/cancel', (params) => {
    expect(params.taskId).toEqual(expect.any(String));
    server.tasks.update(params.taskId as string, {
      status: 'cancelled',
      statusMessage: "Cancelled at the client's request.",
    });
    return { resultType: 'complete' };
  });
}

/** The `tasks/*` requests the server received, in order. */
function taskRequests(server: ExtServer): string[] {
  return server.log.filter((e) => e.kind === 'request' && e.method?.startsWith('tasks/')).map((e) => e.method!);
}

/** Settles `promise` into its value or the error it rejected with. */
function outcomeOf(promise: Promise<CallToolResult>): Promise<CallToolResult | Error> {
  return promise.catch((error: unknown) => error as Error);
}

const THE_WORK = { content: [{ type: 'text', text: 'the work' }] };

/** Completes `taskId` on the server 1 s from now, telling nobody. */
async function completeUnseen(r: ExtRig, taskId: string): Promise<void> {
  await r.clock.advance(1_000);
  r.server.tasks.complete(taskId, textResult('the work'));
}

describe('a stop reads the task once before it cancels: a task that ended unseen keeps its result, and gets no tasks/cancel', () => {
  it('a deadline: result() resolves with the result', async () => {
    const r = await rig();
    rewriteOnCancel(r.server);
    const handle = await r.tasks.callToolAsTask('manual', {}, { timeoutMs: 4_000 });
    const result = outcomeOf(handle.result());
    await completeUnseen(r, handle.taskId!);
    await r.clock.advance(3_000);
    expect(await result).toMatchObject(THE_WORK);
    expect(taskRequests(r.server)).toEqual(['tasks/get']);
    expect(r.server.tasks.detailed(handle.taskId!).status).toBe('completed');
  });

  it('an abort: result() resolves with the result', async () => {
    const r = await rig();
    rewriteOnCancel(r.server);
    const controller = new AbortController();
    const handle = await r.tasks.callToolAsTask('manual', {}, { signal: controller.signal });
    const result = outcomeOf(handle.result());
    await completeUnseen(r, handle.taskId!);
    controller.abort(new Error('user pressed stop'));
    expect(await result).toMatchObject(THE_WORK);
    expect(r.server.count('tasks/cancel')).toBe(0);
  });

  it('handle.cancel(): returns the completed snapshot, and result() resolves with the result', async () => {
    const r = await rig();
    rewriteOnCancel(r.server);
    const handle = await r.tasks.callToolAsTask('manual');
    const result = outcomeOf(handle.result());
    await completeUnseen(r, handle.taskId!);
    expect(await handle.cancel()).toMatchObject({ taskId: handle.taskId, status: 'completed' });
    expect(await result).toMatchObject(THE_WORK);
    expect(r.server.count('tasks/cancel')).toBe(0);
  });

  it('close({ cancelRunning: true }): the finished task settles with its result, the running one is cancelled', async () => {
    const r = await rig();
    rewriteOnCancel(r.server);
    const done = await r.tasks.callToolAsTask('manual');
    const running = await r.tasks.callToolAsTask('manual');
    const results = [outcomeOf(done.result()), outcomeOf(running.result())];
    await completeUnseen(r, done.taskId!);
    await r.tasks.close({ cancelRunning: true });
    expect(await results[0]).toMatchObject(THE_WORK);
    expect(await results[1]).toMatchObject({
      name: 'TaskClosedError',
      message: expect.stringContaining('the remote task was cancelled'),
    });
    expect(r.server.params('tasks/cancel').map((p) => p.taskId)).toEqual([running.taskId]);
    expect(r.server.tasks.detailed(done.taskId!).status).toBe('completed');
  });

  it('dispose() (await using): result() resolves with the result', async () => {
    const r = await rig();
    rewriteOnCancel(r.server);
    let result: Promise<CallToolResult | Error> | undefined;
    {
      await using handle = await r.tasks.callToolAsTask('manual');
      result = outcomeOf(handle.result());
      await completeUnseen(r, handle.taskId!);
    }
    expect(await result).toMatchObject(THE_WORK);
    expect(r.server.count('tasks/cancel')).toBe(0);
  });
});

describe('the look is bounded by the grace, and the cancel still goes out', () => {
  it('a look that hangs: the cancel goes out after half the grace, and the stop settles with what became of the task', async () => {
    const r = await rig({ cancelGraceMs: 2_000 });
    const handle = await r.tasks.callToolAsTask('manual', {}, { timeoutMs: 1_000 });
    r.server.on('tasks/get', () => NO_REPLY);
    const result = outcomeOf(handle.result());
    await r.clock.advance(1_000);
    expect(taskRequests(r.server)).toEqual(['tasks/get']);
    await r.clock.advance(999);
    expect(r.server.count('tasks/cancel')).toBe(0);
    await r.clock.advance(1);
    expect(r.server.count('tasks/cancel')).toBe(1);
    // The confirming read hangs too: the cancel was accepted, its effect unconfirmed.
    await r.clock.advance(1_000);
    const error = await result;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error).toMatchObject({ remoteCancel: 'acknowledged' });
    expect(r.server.tasks.detailed(handle.taskId!).status).toBe('cancelled');
  });
});
