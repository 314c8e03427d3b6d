/**
 * Stops against the scripted 2025-11-25 server: a deadline, an abort, `detach()` and `dispose()`
 * each settle the handle as they should and send what they must (a `tasks/cancel`, a
 * `notifications/cancelled` for a blocking `tasks/result`), and nothing after. Among them, defects
 * the final review found: a stop that lost the result the terminal grace was fetching, a deadline
 * reported as the cancel's error, an aborted signal given to `resume()`, and a late task cancelled
 * although the caller opted out. Time is a ManualClock where it matters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClient,
  TaskTimeoutError,
  type TaskClientOptions,
} from '../../lib/index.js';
import { flush, rejection, within } from '../helpers.js';
import {
  NO_REPLY,
  connectScripted,
  creating,
  type HandlerContext,
  type ScriptedServer,
} from '../support/scripted-server.js';
import { scriptedTaskClient } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), {}, options);
}

/** A scripted server with one required task tool `job` and an SDK client on it (no TaskClient yet). */
async function scripted(options: Parameters<typeof connectScripted>[0] = {}) {
  const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }], ...options });
  cleanups.push(() => pair.close());
  return pair;
}

/** Withholds the first `tasks/result` for `taskId` (a blocking request that never answers); later ones are served. */
function withholdFirstResult(server: ScriptedServer, taskId: string): { held: () => HandlerContext | undefined } {
  let held: HandlerContext | undefined;
  const serve = server.tasks.handlers['tasks/result']!;
  server.on('tasks/result', (params, ctx) => {
    server.assertRequest('tasks/result', params, { taskId });
    if (held === undefined) {
      held = ctx;
      return NO_REPLY;
    }
    return serve(params, ctx);
  });
  return { held: () => held };
}

describe('nothing is sent for a settled handle', () => {
  it('detach() while a blocking tasks/result is open: it is cancelled and never sent again', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'in', pollInterval: 1_000 });
    server.on('tasks/result', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    server.tasks.update('in', { status: 'input_required' }, true);
    await flush();
    expect(server.count('tasks/result')).toBe(1);
    handle.detach();
    await clock.advance(5_000);
    expect(server.count('tasks/result')).toBe(1);
    expect(server.count('notifications/cancelled')).toBe(1);
  });
});

describe('stops and the terminal grace', () => {
  it('a deadline right after the terminal status still delivers the result (the grace request is kept)', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'g', pollInterval: 60_000 });
    withholdFirstResult(server, 'g');
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_010 });
    server.tasks.update('g', { status: 'input_required' }, true);
    await flush();
    await clock.advance(1_000);
    server.tasks.finish('g', 'completed', { result: { content: [{ type: 'text', text: 'made it' }] } }, {}, true);
    await clock.advance(5_000);
    expect(await within(handle.result())).toMatchObject({ content: [{ type: 'text', text: 'made it' }] });
    expect(server.count('tasks/result')).toBe(2);
  });

  it('a deadline while input_required settles with TaskTimeoutError, not the cancel’s TaskCancelledError', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'ask', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_500 });
    server.tasks.update('ask', { status: 'input_required' }, true);
    await flush();
    const result = rejection(handle.result());
    await clock.advance(1_600);
    const error = (await result) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('cancelled');
  });

  it('resume() with an already aborted signal stops at once (and with cancelOnAbort: false sends nothing)', async () => {
    const { server, tasks } = await setup();
    const handle = tasks.resume('r1', { signal: AbortSignal.abort('no'), cancelOnAbort: false });
    const error = (await rejection(handle.result())) as TaskAbortError;
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(error.remoteCancel).toBe('disabled');
    await flush();
    expect(server.count('tasks/get')).toBe(0);
    expect(server.count('tasks/cancel')).toBe(0);
  });
});

describe('dispose(), and an abort before the CreateTaskResult', () => {
  it('dispose() after a successful remote cancel settles result() with TaskCancelledError', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'd' }));
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((e: unknown) => e);
    await handle.dispose();
    expect(await result).toBeInstanceOf(TaskCancelledError);
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('an abort before the CreateTaskResult with cancelOnAbort: false leaves a late task alone', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    let answer: HandlerContext | undefined;
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { name: 'job' });
      answer = ctx;
      return NO_REPLY;
    });
    const controller = new AbortController();
    const call = tasks
      .callToolAsTask('job', {}, { signal: controller.signal, cancelOnAbort: false })
      .catch((e: unknown) => e);
    await flush();
    controller.abort();
    const error = (await call) as TaskAbortError;
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(error.remoteCancel).toBe('disabled');
    answer?.reply(server.tasks.createResult({ taskId: 'kept' }));
    await flush();
    expect(server.count('tasks/cancel')).toBe(0);
  });
});
