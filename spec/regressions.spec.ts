/**
 * Regressions from the final review: each test pins a defect that was found and fixed (requests
 * re-sent after settling, close() hanging or leaving a task tracked, a stop lost inside the
 * terminal grace, a reconnect factory never used, stop errors replaced, server error codes taken
 * for local ones, aborted signals ignored, once/off).
 */
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer } from '../examples/server.js';
import {
  TaskAbortError,
  TaskClient,
  TaskClosedError,
  TaskFailedError,
  TaskTimeoutError,
  type TaskClientOptions,
} from '../lib/index.js';
import { connectPair, flush, rejection, within } from './helpers.js';
import { FaultTransport } from './support/fault-transport.js';
import { NO_REPLY, ScriptedServer, creating, rpcError, type HandlerContext } from './support/scripted-server.js';
import { scriptedTaskClient } from './support/scripted-task-client.js';
import { connectOptions, createLinkedPair, type SpecClient } from './support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), {}, options);
}

/**
 * A TaskClient on a connection the test can drop, whose `reconnect` factory waits until the test
 * calls `release()`, then returns a client connected to a fresh example server (`late()`).
 */
async function slowFactoryClient() {
  const { server } = createExampleServer();
  let faulty: FaultTransport | undefined;
  const first = await connectPair(server, {}, (t) => (faulty = new FaultTransport(t)));
  cleanups.push(() => first.close());
  let release: (() => void) | undefined;
  let late: SpecClient | undefined;
  const tasks = new TaskClient(first.client, {
    reconnect: async () => {
      await new Promise<void>((resolve) => (release = resolve));
      const pair = await connectPair(createExampleServer().server);
      cleanups.push(() => pair.close());
      late = pair.client;
      return pair.client;
    },
  });
  cleanups.push(() => tasks.close());
  return { tasks, drop: () => faulty!.close(), release: () => release?.(), late: () => late };
}

/** Withholds the first `tasks/result` (a blocking request that never answers); later ones are served. */
function withholdFirstResult(server: ScriptedServer): { held: () => HandlerContext | undefined } {
  let held: HandlerContext | undefined;
  const serve = server.tasks.handlers['tasks/result']!;
  server.on('tasks/result', (params, ctx) => {
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
});

describe('stops and the terminal grace', () => {
  it('a deadline right after the terminal status still delivers the result (the grace request is kept)', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'g', pollInterval: 60_000 });
    withholdFirstResult(server);
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

describe('server error codes', () => {
  it('a -32000 the server sends for tasks/result is the task’s error, not a lost connection', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f', pollInterval: 60_000 });
    server.on('tasks/result', () => {
      throw rpcError(-32000, 'tool blew up');
    });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.update('f', { status: 'failed' }, true);
    const error = (await rejection(handle.result())) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({ code: -32000, message: 'tool blew up' });
    expect(server.count('tasks/result')).toBe(1);
  });
});

describe('the reconnect factory', () => {
  it('is used when the connection drops with no task tracked, and later calls go out over it', async () => {
    const store = new InMemoryTaskStore();
    cleanups.push(async () => store.cleanup());
    const made: SpecClient[] = [];
    const factory = async (): Promise<SpecClient> => {
      const { server } = createExampleServer({ store, stepMs: 10 });
      const pair = await connectPair(server);
      cleanups.push(() => pair.close());
      made.push(pair.client);
      return pair.client;
    };
    const { server } = createExampleServer({ store });
    let faulty: FaultTransport | undefined;
    const first = await connectPair(server, {}, (t) => (faulty = new FaultTransport(t)));
    cleanups.push(() => first.close());
    const tasks = new TaskClient(first.client, { reconnect: factory });
    cleanups.push(() => tasks.close());
    await faulty!.close();
    const handle = await within(tasks.callToolAsTask('analyze', { steps: 1 }), 5_000, 'call after reconnect');
    expect(made).toHaveLength(1);
    expect(tasks.client).toBe(made[0]);
    await expect(within(handle.result(), 5_000)).resolves.toMatchObject({ content: [{ type: 'text' }] });
  });

  it('closes a client it made after close() started', async () => {
    const { tasks, drop, release, late } = await slowFactoryClient();
    await drop();
    await flush();
    await tasks.close();
    release();
    await flush(10);
    expect(late()).toBeDefined();
    expect(late()?.transport).toBeUndefined();
  });

});

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

describe('more edges of the final review', () => {
  it('a failed terminal tasks/result is final even while the blocking one is still open', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't', pollInterval: 60_000 });
    let n = 0;
    server.on('tasks/result', () => {
      n += 1;
      if (n === 1) return NO_REPLY; // the blocking one never answers
      throw rpcError(-32602, 'Task not found');
    });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.update('t', { status: 'input_required' }, true);
    await flush();
    server.tasks.update('t', { status: 'completed' }, true);
    await clock.advance(100);
    const error = await rejection(handle.result());
    expect((error as Error).name).toMatch(/TaskNotFoundError|TaskExpiredError/);
    expect(n).toBe(2);
  });

  it('a resumed task that nobody observes sends nothing, even when notifications about it arrive', async () => {
    const { server, tasks, clock } = await setup();
    const handle = tasks.resume('quiet', { toolName: 'job' });
    const at = new Date(clock.now()).toISOString();
    server.notify('notifications/tasks/status', { taskId: 'quiet', status: 'input_required', createdAt: at, lastUpdatedAt: at, ttl: null });
    server.notify('notifications/tasks/status', { taskId: 'quiet', status: 'completed', createdAt: at, lastUpdatedAt: at, ttl: null });
    await clock.advance(10_000);
    expect(server.count('tasks/get') + server.count('tasks/result')).toBe(0);
    expect(handle.task?.status).toBe('completed');
    // Observing it now fetches the payload once.
    server.on('tasks/result', () => ({ content: [{ type: 'text', text: 'late' }] }));
    expect(await within(handle.result())).toMatchObject({ content: [{ type: 'text', text: 'late' }] });
    expect(server.count('tasks/result')).toBe(1);
  });

  it('list() and listPage() after close() throw TaskClosedError', async () => {
    const { tasks } = await setup();
    await tasks.close();
    expect(() => tasks.list()).toThrow(TaskClosedError);
    await expect(tasks.listPage()).rejects.toBeInstanceOf(TaskClosedError);
  });

  it('after a manual reconnect(client), a request that fails on the old connection is sent again over the new one', async () => {
    const store = new InMemoryTaskStore();
    cleanups.push(async () => store.cleanup());
    const { server: first } = createExampleServer({ store, notify: false, pollInterval: 60_000, stepMs: 200 });
    let faulty: FaultTransport | undefined;
    const old = await connectPair(first, {}, (t) => (faulty = new FaultTransport(t)));
    cleanups.push(() => old.close());
    // The answer to the terminal tasks/result is lost on the old connection.
    faulty!.configure({ serverToClient: [{ kinds: 'response', methods: 'tasks/result', drop: 1 }] });
    const tasks = new TaskClient(old.client, { requestTimeoutMs: 60_000, retry: { retries: 0 } });
    cleanups.push(() => tasks.close());
    const handle = await tasks.callToolAsTask('analyze', { id: 4, steps: 1 });
    const { server: second } = createExampleServer({ store, notify: false, pollInterval: 60_000 });
    const fresh = await connectPair(second);
    cleanups.push(() => fresh.close());
    // The task completes and the client asks for its payload (over the old connection).
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The engine hands out read-only views; this white-box step takes the record behind one.
    const record = tasks['engine'].get(handle.taskId!)! as Parameters<TaskClient['engine']['observe']>[0];
    const snapshot = await tasks['engine'].readTask(record, new AbortController().signal);
    tasks['engine'].observe(record, snapshot, 'poll');
    tasks.reconnect(fresh.client);
    await faulty!.close(); // the old request fails now
    expect(await within(handle.result(), 5_000)).toMatchObject({ content: [{ text: 'analysis of 4 done in 1 steps' }] });
  });

  it('a client the reconnect factory makes after a manual reconnect(client) is closed', async () => {
    const { tasks, drop, release, late } = await slowFactoryClient();
    await drop();
    await flush();
    const manual = await connectPair(createExampleServer().server);
    cleanups.push(() => manual.close());
    tasks.reconnect(manual.client);
    release();
    await flush(10);
    expect(tasks.client).toBe(manual.client);
    expect(late()?.transport).toBeUndefined();
  });

});
