/**
 * Resilience (issue 6): faults on the wire, a connection that dies and comes back, retries,
 * expiry, and resuming a task in a fresh TaskClient over a fresh connection to the same server.
 */
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';
import {
  TaskClient,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskOptionError,
  TaskTimeoutError,
  type TaskClientOptions,
  type TaskMetrics,
} from '../../lib/index.js';
import { connectPair, until, within, type Pair } from '../helpers.js';
import { FaultTransport } from '../support/fault-transport.js';
import { PipeClientTransport } from '../support/pipe-transport.js';
import { connectScripted } from '../support/scripted-server.js';
import { makeClient, type SpecClient } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The example server in process over a FaultTransport on the client's end. */
async function faultyPair(
  server: ExampleServerOptions,
  options: TaskClientOptions,
): Promise<{ tasks: TaskClient; faulty: FaultTransport; pair: Pair; store: InMemoryTaskStore }> {
  const { server: mcp, store } = createExampleServer(server);
  let faulty: FaultTransport | undefined;
  const pair = await connectPair(mcp, {}, (transport) => (faulty = new FaultTransport(transport, { seed: 2026 })));
  const tasks = new TaskClient(pair.client, options);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
    store.cleanup();
  });
  return { tasks, faulty: faulty!, pair, store };
}

describe('faults on the wire', () => {
  it('500 tasks, 10% of responses dropped and 5% of notifications duplicated: all end correctly', async () => {
    const { tasks, faulty } = await faultyPair(
      { pollInterval: 100, stepMs: 40 },
      { requestTimeoutMs: 150, retry: { minDelayMs: 20, maxDelayMs: 200 } },
    );
    // A lost tools/call answer cannot be recovered (no task id to ask about), so drops apply to
    // the task operations; that loss is a precise TaskRpcError, tested in spec/v2025/hostile.spec.ts.
    faulty.configure({
      serverToClient: [
        { kinds: ['response', 'error'], methods: /^tasks\//, drop: 0.1 },
        { kinds: 'notification', duplicate: 0.05 },
      ],
    });
    const calls = Array.from({ length: 500 }, (_, i) =>
      i % 10 === 9
        ? tasks.callToolAsTask('flaky', { afterMs: 40, reason: `reason ${i}` })
        : tasks.callToolAsTask('analyze', { id: i, steps: 2 }),
    );
    const outcomes = await Promise.all(
      calls.map((call) =>
        call.then((handle) =>
          handle.result().then(
            (result) => ({ ok: true as const, result }),
            (error: unknown) => ({ ok: false as const, error }),
          ),
        ),
      ),
    );
    outcomes.forEach((outcome, i) => {
      if (i % 10 === 9) {
        expect(outcome.ok).toBe(false);
        expect((outcome as { error: unknown }).error).toBeInstanceOf(TaskFailedError);
        expect((outcome as { error: TaskFailedError }).error.message).toContain(`reason ${i}`);
      } else {
        expect(outcome).toMatchObject({
          ok: true,
          result: { content: [{ text: `analysis of ${i} done in 2 steps` }] },
        });
      }
    });
    const stats = faulty.stats('serverToClient');
    expect(stats.drop).toBeGreaterThan(20);
    expect(stats.duplicate).toBeGreaterThan(20);
    expect(tasks.active).toBe(0);
  }, 60_000);

  it('a result whose first answer was lost arrives after a retry, and is fetched only once more', async () => {
    const { tasks, faulty } = await faultyPair(
      { pollInterval: 100, stepMs: 20 },
      { requestTimeoutMs: 100, retry: { minDelayMs: 10 } },
    );
    faulty.configure({ serverToClient: [{ kinds: 'response', methods: 'tasks/result', drop: 1, limit: 1 }] });
    let metrics: TaskMetrics | undefined;
    tasks.on('settled', (m) => (metrics = m));
    const handle = await tasks.callToolAsTask('analyze', { id: 3, steps: 1 });
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'analysis of 3 done in 1 steps' }]);
    expect(metrics?.retries).toBe(1);
    const results = faulty.events.filter((e) => e.flow === 'clientToServer' && e.method === 'tasks/result');
    expect(results).toHaveLength(2);
  });
});

describe('a connection that dies mid-task', () => {
  /** A factory of fresh connections to "the same server": new McpServer instances on one store. */
  function sameServer(store: InMemoryTaskStore): () => Promise<SpecClient> {
    return async () => {
      const { server } = createExampleServer({ store, notify: false, pollInterval: 50 });
      const pair = await connectPair(server);
      cleanups.push(() => pair.close());
      return pair.client;
    };
  }

  it('pauses, reconnects through the reconnect factory, and delivers the result', async () => {
    const store = new InMemoryTaskStore();
    const { tasks, faulty } = await faultyPair(
      { store, notify: false, pollInterval: 50, stepMs: 150 },
      { reconnect: sameServer(store) },
    );
    const lifecycle: string[] = [];
    tasks.on('connectionLost', () => lifecycle.push('lost'));
    tasks.on('connectionRestored', () => lifecycle.push('restored'));
    const handle = await tasks.callToolAsTask('analyze', { id: 9, steps: 2 });
    await faulty.close();
    expect(lifecycle).toEqual(['lost']);
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'analysis of 9 done in 2 steps' }]);
    expect(lifecycle).toEqual(['lost', 'restored']);
    expect(tasks.client).not.toBeUndefined();
  });

  it('pauses until reconnect(client) is called by hand, then resumes every handle', async () => {
    const store = new InMemoryTaskStore();
    const { tasks, faulty } = await faultyPair({ store, notify: false, pollInterval: 50, stepMs: 100 }, {});
    const handles = await Promise.all([1, 2, 3].map((id) => tasks.callToolAsTask('analyze', { id, steps: 2 })));
    await faulty.close();
    // The work finishes while nobody can poll: the server's store says so.
    const done = async (): Promise<boolean> => {
      const remote = await Promise.all(handles.map((h) => store.getTask(h.taskId!)));
      return remote.every((task) => task?.status === 'completed');
    };
    await until(done, 5_000, 'the three tasks to complete on the server');
    expect(handles.every((h) => !h.settled)).toBe(true);
    tasks.reconnect(await sameServer(store)());
    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.map((r) => r.content)).toEqual(
      [1, 2, 3].map((id) => [{ type: 'text', text: `analysis of ${id} done in 2 steps` }]),
    );
  });

  it('a deadline that passes while the connection is lost says so', async () => {
    const { tasks, faulty } = await faultyPair({ notify: false, pollInterval: 50, stepMs: 5_000 }, {});
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { timeoutMs: 200 });
    await faulty.close();
    const error = (await handle.result().catch((e: unknown) => e)) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.connectionLost).toBe(true);
    expect(error.remoteCancel).toBe('failed');
    expect(error.message).toContain('connection to the server was lost');
  });
});

describe('expiry', () => {
  it('a task the server drops when its ttl elapses while working ends with TaskExpiredError (D9)', async () => {
    const { server, store } = createExampleServer({ notify: false, pollInterval: 50 });
    const pair = await connectPair(server);
    const tasks = new TaskClient(pair.client, { ttlWarningMs: 100 });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      store.cleanup();
    });
    const warnings: number[] = [];
    tasks.on('expiring', (_m, expiry) => warnings.push(expiry.remainingMs));
    const handle = await tasks.callToolAsTask('analyze', { steps: 1, stepMs: 5_000 }, { ttlMs: 300 });
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect((error as TaskExpiredError).taskId).toBe(handle.taskId);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toBeLessThanOrEqual(100);
  });

  it('a task that vanishes before its ttl ends with TaskNotFoundError', async () => {
    const scripted = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    const server = scripted.server;
    const tasks = new TaskClient(scripted.client, { minPollIntervalMs: 10 });
    cleanups.push(async () => {
      await tasks.close();
      await scripted.close();
    });
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'gone', ttl: 3_600_000, pollInterval: 20 }));
    const handle = await tasks.callToolAsTask('job');
    server.tasks.delete('gone');
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });
});

describe('resume', () => {
  it('resumes in a fresh TaskClient over a fresh connection to the same stdio server process', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../../examples/server.ts', import.meta.url))],
      {
        env: { ...process.env, POLL_INTERVAL: '100' },
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    cleanups.push(async () => {
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
    });
    // First connection: start a task, persist its reference, go away.
    const first = makeClient({ name: 'first', version: '1' });
    await first.connect(new PipeClientTransport(child));
    const before = new TaskClient(first);
    const handle = await before.callToolAsTask('analyze', { id: 42, steps: 3, stepMs: 300 }, { ttlMs: 60_000 });
    const saved = JSON.stringify(handle.toJSON());
    handle.detach();
    await before.close();
    await first.close();
    // Second connection to the same process, a fresh TaskClient, the saved reference.
    const second = makeClient({ name: 'second', version: '1' });
    await second.connect(new PipeClientTransport(child));
    const after = new TaskClient(second);
    cleanups.push(async () => {
      await after.close();
      await second.close();
    });
    const resumed = after.resume(JSON.parse(saved) as never);
    expect(resumed.taskId).toBe(handle.taskId);
    expect(resumed.task).toBeUndefined(); // nothing read yet
    expect((await resumed.result()).content).toEqual([{ type: 'text', text: 'analysis of 42 done in 3 steps' }]);
    expect(resumed.task?.status).toBe('completed');
  }, 30_000);

  it('sends nothing until observed, refuses another server’s reference, and knows an expired one', async () => {
    const { server, store } = createExampleServer({ pollInterval: 50, stepMs: 20 });
    const pair = await connectPair(server);
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      store.cleanup();
    });
    const original = await tasks.callToolAsTask('analyze', { steps: 1 }, { ttlMs: 60_000 });
    const reference = original.detach()!;
    const resumed = tasks.resume(reference);
    expect(tasks.active).toBe(1);
    expect(resumed.settled).toBe(false);
    expect((await resumed.result()).content).toEqual([{ type: 'text', text: 'analysis of 1 done in 1 steps' }]);
    expect(() => tasks.resume({ ...reference, server: 'someone-else@1' })).toThrow(TaskOptionError);
    // Another version of the same server (a rolling upgrade) is resumed: the server answers for it.
    expect(reference.server).toBe('example-task-server@1.0.0');
    const upgraded = await tasks.callToolAsTask('analyze', { steps: 1 }, { ttlMs: 60_000 });
    const fromOldVersion = tasks.resume({ ...upgraded.detach()!, server: 'example-task-server@0.9.0' });
    expect((await fromOldVersion.result()).content).toEqual([{ type: 'text', text: 'analysis of 1 done in 1 steps' }]);
    expect(() => tasks.resume({ ...reference, v: 3 } as never)).toThrow(TaskOptionError);
    expect(() => tasks.resume({ ...reference, wire: 'io.modelcontextprotocol/tasks' })).toThrow(TaskOptionError);
    const old = tasks.resume({ ...reference, taskId: 'long-gone', createdAt: '2020-01-01T00:00:00.000Z', ttl: 1_000 });
    await expect(old.result()).rejects.toBeInstanceOf(TaskExpiredError);
    // A createdAt that looks long past (a server clock far behind ours) is not an expiry the
    // server reported: the task it still runs is followed to its result ([V11]).
    const live = await tasks.callToolAsTask('analyze', { steps: 1 }, { ttlMs: 60_000 });
    const skewed = tasks.resume({ ...live.detach()!, createdAt: '2020-01-01T00:00:00.000Z' });
    expect((await skewed.result()).content).toEqual([{ type: 'text', text: 'analysis of 1 done in 1 steps' }]);
    const byId = tasks.resume('no-such-task', { toolName: 'analyze' });
    await expect(byId.result()).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});

describe('the reconnect factory and reconnect(client)', () => {
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

  it('after a manual reconnect(client), a request that fails on the old connection is sent again over the new one', async () => {
    const store = new InMemoryTaskStore();
    cleanups.push(async () => store.cleanup());
    // The first server notifies (one poll a minute otherwise): its completion notification is what
    // makes the client ask for the payload, over the old connection.
    const { server: first } = createExampleServer({ store, pollInterval: 60_000, stepMs: 20 });
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
    // The task completes, the client asks for its payload and the answer is lost.
    const lost = (): boolean =>
      faulty!.events.some((e) => e.flow === 'serverToClient' && e.method === 'tasks/result' && e.action === 'drop');
    await until(lost, 5_000, 'the tasks/result answer lost on the old connection');
    expect(handle.settled).toBe(false);
    tasks.reconnect(fresh.client);
    await faulty!.close(); // the old request fails now
    expect(await within(handle.result(), 5_000)).toMatchObject({
      content: [{ text: 'analysis of 4 done in 1 steps' }],
    });
  });
});
