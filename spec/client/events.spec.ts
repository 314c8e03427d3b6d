/**
 * The events of a TaskClient and of its handles: each `on()` and `once()` is a registration of its
 * own, `off()` and the remover they return take exactly what they should, and a task settled before
 * its `CreateTaskResult` arrived emits each event once (defects of the final review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskCancelledError, TaskClient, type TaskClientOptions } from '../../lib/index.js';
import { ManualClock, flush } from '../helpers.js';
import { connectScripted, creating } from '../support/scripted-server.js';
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

describe('events', () => {
  it('off() removes a listener added with once()', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'o', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    let calls = 0;
    const listener = (): void => {
      calls += 1;
    };
    handle.once('status', listener);
    handle.off('status', listener);
    tasks.once('status', listener);
    tasks.off('status', listener);
    server.tasks.update('o', { statusMessage: 'step 1' }, true);
    await flush();
    expect(calls).toBe(0);
    handle.detach();
  });
});

describe('events: every on()/once() is a registration of its own', () => {
  it('the same function added twice with once() on the client runs once per registration, then never', async () => {
    const { server, tasks } = await setup();
    creating(server, { pollInterval: 60_000 });
    let calls = 0;
    const listener = (): void => {
      calls += 1;
    };
    tasks.once('created', listener);
    tasks.once('created', listener);
    await tasks.callToolAsTask('job');
    expect(calls).toBe(2);
    for (let i = 0; i < 3; i += 1) await tasks.callToolAsTask('job');
    expect(calls).toBe(2);
  });

  it('off() removes every registration of a function added twice with once(), on the client and a handle', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'o2', pollInterval: 60_000 });
    let calls = 0;
    const listener = (): void => {
      calls += 1;
    };
    tasks.once('created', listener);
    tasks.once('created', listener);
    tasks.off('created', listener);
    const handle = await tasks.callToolAsTask('job');
    handle.once('status', listener);
    handle.once('status', listener);
    handle.on('status', listener);
    handle.off('status', listener);
    tasks.on('status', listener);
    tasks.once('status', listener);
    tasks.off('status', listener);
    for (let i = 1; i <= 3; i += 1) {
      server.tasks.update('o2', { statusMessage: `step ${i}` }, true);
      await flush();
    }
    expect(calls).toBe(0);
    handle.detach();
  });

  it('the remover returned by on() or once() removes exactly its own registration', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'r2', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const heard = { client: 0, handle: 0 };
    const onClient = (): void => {
      heard.client += 1;
    };
    const onHandle = (): void => {
      heard.handle += 1;
    };
    // Client: on + once of one function; removing the once leaves the on.
    tasks.on('status', onClient);
    const removeOnce = tasks.once('status', onClient);
    removeOnce();
    removeOnce(); // harmless twice
    // Handle: two on() of one function plus a once(); removing one on() leaves the other two.
    const removeFirst = handle.on('status', onHandle);
    handle.on('status', onHandle);
    handle.once('status', onHandle);
    removeFirst();
    server.tasks.update('r2', { statusMessage: 'step 1' }, true);
    await flush();
    expect(heard).toEqual({ client: 1, handle: 2 });
    server.tasks.update('r2', { statusMessage: 'step 2' }, true);
    await flush();
    expect(heard).toEqual({ client: 2, handle: 3 });
    tasks.off('status', onClient);
    handle.off('status', onHandle);
    server.tasks.update('r2', { statusMessage: 'step 3' }, true);
    await flush();
    expect(heard).toEqual({ client: 2, handle: 3 });
    handle.detach();
  });
});

describe('a task settled before its CreateTaskResult arrived', () => {
  it('emits each event once and arms no deadline timer', async () => {
    const clock = new ManualClock();
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { clock });
    cleanups.push(() => tasks.close());
    const events: string[] = [];
    for (const name of ['created', 'status', 'cancelled', 'settled'] as const) tasks.on(name, () => events.push(name));
    let notified = 0;
    tasks.on('settled', (m) => (notified = m.notifications));
    server.on('tools/call', () => {
      const created = server.tasks.createResult({ taskId: 'early' });
      server.tasks.update('early', { status: 'cancelled', statusMessage: 'gone already' }, true);
      return created;
    });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 60_000 });
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
    // created (the handle listed), status for its first snapshot (here already terminal), then the end.
    expect(events).toEqual(['created', 'status', 'cancelled', 'settled']);
    expect(notified).toBe(1);
    expect(clock.pending).toBe(0);
    expect(tasks.active).toBe(0);
  });
});
