/**
 * `close()` ends every wait, also those the final review found it could leave hanging or tracked:
 * a deadline's `tasks/cancel` unanswered on a connection that then dropped, a task whose payload is
 * still on the way, a `tools()` still listing, a call cut off on a client `TaskClient.connect`
 * made, and a task created while `close()` runs. After it, `list()` and `listPage()` refuse.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskClosedError, type TaskClientOptions } from '../../lib/index.js';
import { flush, rejection, within } from '../helpers.js';
import {
  NO_REPLY,
  ScriptedServer,
  connectScripted,
  creating,
  type HandlerContext,
} from '../support/scripted-server.js';
import { scriptedTaskClient } from '../support/scripted-task-client.js';
import { connectOptions, createLinkedPair } from '../support/sdk.js';

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

describe('close()', () => {
  it('does not hang when a deadline’s tasks/cancel is unanswered and the connection drops', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'c', pollInterval: 60_000 });
    server.on('tasks/cancel', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    const result = rejection(handle.result());
    await clock.advance(1_000);
    expect(server.count('tasks/cancel')).toBe(1);
    await server.close();
    await within(tasks.close(), 2_000, 'close()');
    expect(handle.settled).toBe(true);
    expect(await result).toBeInstanceOf(TaskClosedError);
  });

  it('settles a task whose terminal status is known while its payload is still being fetched', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'done', pollInterval: 60_000 });
    server.on('tasks/result', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job');
    server.tasks.update('done', { status: 'completed' }, true);
    await flush();
    await within(tasks.close(), 2_000, 'close()');
    expect(handle.settled).toBe(true);
    expect(tasks.active).toBe(0);
    expect(await rejection(handle.result())).toBeInstanceOf(TaskClosedError);
  });

  it('rejects a tools() still waiting for tools/list with TaskClosedError, and cancels that request ([R27])', async () => {
    const { server, tasks } = await setup();
    server.on('tools/list', () => NO_REPLY);
    const listing = rejection(tasks.tools());
    await flush();
    expect(server.count('tools/list')).toBe(1);
    await tasks.close();
    // Before the fix close() stopped the request's timeout with the engine's timers, and nothing
    // else ever settled the promise.
    const error = await listing;
    expect(error).toBeInstanceOf(TaskClosedError);
    expect((error as Error).message).toMatch(/closed during tools\(\)/);
    await flush();
    const cancelled = server.received('notifications/cancelled').map((entry) => entry.params.requestId);
    expect(cancelled).toEqual([server.received('tools/list')[0]?.id]);
    await expect(tasks.tools()).rejects.toBeInstanceOf(TaskClosedError);
  });

  it('turns a call cut off by close() into TaskClosedError, also for a client made by connect()', async () => {
    const scripted = new ScriptedServer({ tools: [{ name: 'job', taskSupport: 'required' }] });
    const [clientSide, serverSide] = createLinkedPair();
    await scripted.connect(serverSide);
    cleanups.push(() => scripted.close());
    scripted.on('tools/call', () => NO_REPLY);
    // closeTimeoutMs bounds how long close() waits for the unanswered creation's follow-up.
    const tasks = await TaskClient.connect(clientSide, { ...connectOptions(), closeTimeoutMs: 200 });
    const call = rejection(tasks.callToolAsTask('job'));
    await flush();
    const began = Date.now();
    await tasks.close();
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(await call).toBeInstanceOf(TaskClosedError);
  });

  it('a call whose task is created while close() runs is not left tracked', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client);
    let answer: HandlerContext | undefined;
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { name: 'job' });
      answer = ctx;
      return NO_REPLY;
    });
    const call = tasks.callToolAsTask('job').catch((e: unknown) => e);
    await flush();
    const closing = tasks.close();
    answer?.reply(server.tasks.createResult({ taskId: 'late' }));
    await closing;
    expect(await call).toBeInstanceOf(TaskClosedError);
    expect(tasks.active).toBe(0);
    await flush();
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('cuts off every call still waiting for its reply, task and plain alike; each task created later gets one tasks/cancel', async () => {
    const { server, client } = await scripted({
      tools: [
        { name: 'job', taskSupport: 'required' },
        { name: 'plain', taskSupport: 'forbidden' },
      ],
    });
    const tasks = new TaskClient(client);
    const answers = new Map<string, HandlerContext>();
    let n = 0;
    server.on('tools/call', (params, ctx) => {
      answers.set(params.name === 'plain' ? 'plain' : `job-${n++}`, ctx);
      return NO_REPLY;
    });
    // No signal and no deadline: nothing but close() races their replies.
    const calls = [tasks.callToolAsTask('job'), tasks.callToolAsTask('job'), tasks.callToolAsTask('plain')].map(
      (call) => call.catch((e: unknown) => e),
    );
    await flush();
    expect([...answers.keys()].sort()).toEqual(['job-0', 'job-1', 'plain']);
    const closing = tasks.close();
    for (const error of await Promise.all(calls)) expect(error).toBeInstanceOf(TaskClosedError);
    answers.get('job-0')?.reply(server.tasks.createResult({ taskId: 'late-0' }));
    answers.get('job-1')?.reply(server.tasks.createResult({ taskId: 'late-1' }));
    answers.get('plain')?.reply({ content: [] });
    await closing;
    await flush();
    expect(tasks.active).toBe(0);
    expect(
      server
        .received('tasks/cancel')
        .map((entry) => entry.params.taskId)
        .sort(),
    ).toEqual(['late-0', 'late-1']);
  });

  it('list() and listPage() after close() throw TaskClosedError', async () => {
    const { tasks } = await setup();
    await tasks.close();
    expect(() => tasks.list()).toThrow(TaskClosedError);
    await expect(tasks.listPage()).rejects.toBeInstanceOf(TaskClosedError);
  });

  it('a listing under way asks for no page after close(): its next page rejects with TaskClosedError', async () => {
    const { server, tasks } = await setup();
    server.on('tasks/list', (params) =>
      params.cursor === undefined
        ? { tasks: [server.tasks.create({ taskId: 'first' })], nextCursor: 'page-2' }
        : { tasks: [server.tasks.create({ taskId: 'second' })] },
    );
    const listing = tasks.list();
    expect((await within(listing.next())).value).toMatchObject({ taskId: 'first' });
    await tasks.close();
    expect(await rejection(listing.next())).toBeInstanceOf(TaskClosedError);
    expect(server.count('tasks/list')).toBe(1);
  });
});
