/**
 * Who closes which SDK client. Ownership goes with each client, not with the TaskClient: `close()`
 * closes the client `TaskClient.connect` made (also after a `reconnect` replaced it), a `reconnect`
 * closes that client once its connection is lost, and a client of the user's (the first one, one
 * handed to `reconnect(client)`, one the `reconnect` factory returns) is never closed.
 */
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';
import { TaskClient, TaskError, type McpClient, type TaskClientOptions } from '../../lib/index.js';
import { connectPair, flush, within } from '../helpers.js';
import { FaultTransport } from '../support/fault-transport.js';
import { connectOptions, createLinkedPair, type SpecClient } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Counts the calls of `client.close()`: after a lost connection, nothing else shows it. */
function countCloses(client: McpClient): () => number {
  let count = 0;
  const close = client.close.bind(client);
  client.close = () => {
    count += 1;
    return close();
  };
  return () => count;
}

/**
 * A TaskClient made by `TaskClient.connect` over a connection to a fresh example server that the
 * test can drop; `made` is the SDK client the library made.
 */
async function libraryMade(server: ExampleServerOptions = {}, options: TaskClientOptions = {}) {
  const { server: mcp, store } = createExampleServer(server);
  const [clientSide, serverSide] = createLinkedPair();
  await mcp.connect(serverSide);
  const faulty = new FaultTransport(clientSide);
  const tasks = await TaskClient.connect(faulty, { ...connectOptions(), ...options });
  cleanups.push(async () => {
    await tasks.close();
    await mcp.close();
    store.cleanup();
  });
  const made = tasks.client;
  return { tasks, made, closes: countCloses(made), drop: () => faulty.close() };
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

/** A client of the user's, connected to a new example server (on `store` when given). */
async function usersClient(store?: InMemoryTaskStore): Promise<SpecClient> {
  const { server } = createExampleServer({
    ...(store === undefined ? {} : { store }),
    notify: false,
    pollInterval: 50,
  });
  const pair = await connectPair(server);
  cleanups.push(() => pair.close());
  return pair.client;
}

describe('the client TaskClient.connect made, and reconnect()', () => {
  it('reconnect(client) after the connection was lost closes the client the library made; the tasks move over, and the new client stays open after close()', async () => {
    const store = new InMemoryTaskStore();
    const { tasks, made, closes, drop } = await libraryMade({ store, notify: false, pollInterval: 50, stepMs: 150 });
    const handle = await tasks.callToolAsTask('analyze', { id: 1, steps: 2 });
    await drop();
    expect(closes()).toBe(0);
    const mine = await usersClient(store);
    tasks.reconnect(mine);
    expect(closes()).toBe(1);
    expect(tasks.client).toBe(mine);
    expect((await within(handle.result(), 5_000)).content).toEqual([
      { type: 'text', text: 'analysis of 1 done in 2 steps' },
    ]);
    await tasks.close();
    expect(mine.transport).toBeDefined();
    expect(closes()).toBe(1);
    expect(made.transport).toBeUndefined();
  });

  it('reconnect(client) while the connection the library made is still open: that client stays open until close(), which closes it and leaves the new one open', async () => {
    const { tasks, made, closes } = await libraryMade();
    const mine = await usersClient();
    tasks.reconnect(mine);
    await flush();
    // Requests still open on the old connection stay there: it is not closed yet.
    expect(closes()).toBe(0);
    expect(made.transport).toBeDefined();
    await tasks.close();
    expect(closes()).toBe(1);
    expect(made.transport).toBeUndefined();
    expect(mine.transport).toBeDefined();
  });

  it('switching back to the client the library made keeps it the library’s: close() closes it and not the user’s', async () => {
    const { tasks, made, closes } = await libraryMade();
    const mine = await usersClient();
    tasks.reconnect(mine);
    tasks.reconnect(made);
    expect(tasks.client).toBe(made);
    await tasks.close();
    expect(closes()).toBe(1);
    expect(made.transport).toBeUndefined();
    expect(mine.transport).toBeDefined();
  });

  it('with a reconnect factory, a factory client that replaces the lost one closes the client the library made, and is closed by close() (the factory made it for the library)', async () => {
    const store = new InMemoryTaskStore();
    const fromFactory: SpecClient[] = [];
    const { tasks, made, closes, drop } = await libraryMade(
      { store, notify: false, pollInterval: 50, stepMs: 150 },
      {
        reconnect: async () => {
          const client = await usersClient(store);
          fromFactory.push(client);
          return client;
        },
      },
    );
    const handle = await tasks.callToolAsTask('analyze', { id: 2, steps: 2 });
    await drop();
    expect((await within(handle.result(), 5_000)).content).toEqual([
      { type: 'text', text: 'analysis of 2 done in 2 steps' },
    ]);
    expect(fromFactory).toHaveLength(1);
    expect(tasks.client).toBe(fromFactory[0]);
    expect(closes()).toBe(1);
    await tasks.close();
    expect(closes()).toBe(1);
    expect(made.transport).toBeUndefined();
    expect(fromFactory[0]!.transport).toBeUndefined();
  });

  it('a client another TaskClient.connect made, handed to reconnect(), is closed by its maker only', async () => {
    const first = await libraryMade();
    const second = await libraryMade();
    second.tasks.reconnect(first.made);
    await second.tasks.close();
    expect(second.made.transport).toBeUndefined();
    expect(first.made.transport).toBeDefined();
    expect(first.closes()).toBe(0);
    await first.tasks.close();
    expect(first.made.transport).toBeUndefined();
  });

  it('a second TaskClient on the client TaskClient.connect made does not close it', async () => {
    const { tasks, made } = await libraryMade();
    const other = new TaskClient(made);
    await other.close();
    expect(made.transport).toBeDefined();
    await tasks.close();
    expect(made.transport).toBeUndefined();
  });

  it('a replaced client whose close fails: reported on error, the reconnection stands', async () => {
    const { tasks, made, drop } = await libraryMade();
    const errors: TaskError[] = [];
    tasks.on('error', (error) => errors.push(error));
    await drop();
    made.close = () => Promise.reject(new Error('close failed'));
    const mine = await usersClient();
    expect(() => tasks.reconnect(mine)).not.toThrow();
    await flush();
    expect(tasks.client).toBe(mine);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TaskError);
    expect(errors[0]!.message).toContain('Closing the replaced SDK client failed');
    expect((errors[0]!.cause as Error).message).toBe('close failed');
    await expect(tasks.close()).resolves.toBeUndefined();
    expect(mine.transport).toBeDefined();
  });
});

describe('a TaskClient on a client of the user’s', () => {
  it('closes none: neither its first client nor one handed to reconnect()', async () => {
    const first = await usersClient();
    const tasks = new TaskClient(first);
    const next = await usersClient();
    tasks.reconnect(next);
    await tasks.close();
    expect(first.transport).toBeDefined();
    expect(next.transport).toBeDefined();
  });
});

describe('a client the reconnect factory makes too late', () => {
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
