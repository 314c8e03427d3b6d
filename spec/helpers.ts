/**
 * Test helpers: an SDK client (of the SDK chosen by `MCP_SDK`, see spec/support/sdk.ts) connected
 * in-process to the example task server, a manual clock, and small waiting utilities.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createExampleServer, type ExampleServerOptions } from '../examples/server.js';
import type { Clock, TaskHandle } from '../lib/index.js';
import {
  createLinkedPair,
  makeClient,
  type SpecClient,
  type SpecClientOptions,
  type SpecTransport,
} from './support/sdk.js';

/** A connected client/server pair. */
export interface Pair {
  readonly client: SpecClient;
  /** Closes both ends and the server's store timers. */
  close(): Promise<void>;
}

/**
 * Connects a fresh SDK client (the chosen major) to `server` (the v1 `McpServer`) over an
 * in-memory transport pair.
 */
export async function connectPair(
  server: McpServer | Server,
  clientOptions: SpecClientOptions = {},
  wrap: (transport: SpecTransport) => SpecTransport = (t) => t,
): Promise<Pair> {
  const [clientSide, serverSide] = createLinkedPair();
  await server.connect(serverSide);
  const client = makeClient({ name: 'spec-client', version: '1.0.0' }, clientOptions);
  await client.connect(wrap(clientSide));
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** The example server, in process, with a connected client. */
export async function exampleServerPair(
  options: ExampleServerOptions = {},
  clientOptions: SpecClientOptions = {},
): Promise<Pair & { store: ReturnType<typeof createExampleServer>['store'] }> {
  const { server, store } = createExampleServer(options);
  const pair = await connectPair(server, clientOptions);
  return {
    ...pair,
    store,
    close: async () => {
      await pair.close();
      store.cleanup();
    },
  };
}

/** A clock moved by hand; timers run in due order as time advances. */
export class ManualClock implements Clock {
  private time: number;
  private timers: Array<{ at: number; seq: number; fn: () => void }> = [];
  private seq = 0;

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.time = start;
  }

  now = (): number => this.time;

  setTimeout = (fn: () => void, ms: number): unknown => {
    const timer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return timer;
  };

  clearTimeout = (token: unknown): void => {
    this.timers = this.timers.filter((t) => t !== token);
  };

  /** Number of pending timers. */
  get pending(): number {
    return this.timers.length;
  }

  /** Advances time by `ms`, running due timers (and letting promises settle between them). */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await flush();
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (next === undefined || next.at > end) break;
      this.timers.shift();
      this.time = Math.max(this.time, next.at);
      next.fn();
    }
    this.time = end;
    await flush();
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** The unhandled rejections raised while `run` and a few turns after it run. */
export async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => {
    seen.push(reason);
  };
  process.on('unhandledRejection', listener);
  try {
    await run();
    await flush(10);
  } finally {
    process.off('unhandledRejection', listener);
  }
  return seen;
}

/**
 * Resolves when `predicate` holds, checking it every few ms (it may be async, e.g. to read a
 * server's task store); rejects after `timeoutMs`. The way to wait for something to happen in real
 * time, instead of sleeping for a guess.
 */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
): Promise<void> {
  const started = Date.now();
  while (!(await predicate())) {
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Collects every snapshot status an iterable yields. */
export async function statuses(iterable: AsyncIterable<{ status: string }>): Promise<string[]> {
  const seen: string[] = [];
  for await (const task of iterable) seen.push(task.status);
  return seen;
}

/** Resolves or rejects like `promise`, but fails the test after `ms` of real time (no hangs). */
export function within<T>(promise: Promise<T>, ms = 3_000, what = 'promise'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The rejection of `promise` (fails if it resolves, or if it does not settle within `ms`). */
export function rejection(promise: Promise<unknown>, ms = 3_000): Promise<unknown> {
  return within(
    promise.then(
      (value) => {
        throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
      },
      (error: unknown) => error,
    ),
    ms,
    'rejection',
  );
}

/** Every snapshot an iterator over `handle` yields, as `status:statusMessage` (within 5 s). */
export function collectSnapshots(handle: TaskHandle): Promise<string[]> {
  const iterator = handle.updates();
  return within(
    (async () => {
      const seen: string[] = [];
      for await (const task of iterator) seen.push(`${task.status}:${task.statusMessage ?? ''}`);
      return seen;
    })(),
    5_000,
    'iterator',
  );
}
