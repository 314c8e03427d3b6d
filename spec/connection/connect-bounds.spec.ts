/**
 * `TaskClient.connect` is bounded: `connectTimeoutMs` and `signal` stop a connection attempt
 * whose server never finishes the handshake, with a typed error, and close its transport; a bound
 * that did not run out leaves the connection working. The silent transport takes every message
 * and answers none (a server that accepted the connection and hangs). The SDK is MCP_SDK's.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer } from '../../examples/server.js';
import { TaskAbortError, TaskClient, TaskConnectError, TaskOptionError } from '../../lib/index.js';
import { rejection, within } from '../helpers.js';
import { silentTransport } from '../support/fake-transport.js';
import { connectOptions, createLinkedPair, SDK } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('TaskClient.connect, bounded', () => {
  it('a server that never answers the handshake: TaskConnectError (no-answer) after connectTimeoutMs, the transport closed', async () => {
    const transport = silentTransport();
    const started = Date.now();
    const error = await rejection(
      TaskClient.connect(transport, { ...connectOptions(), connectTimeoutMs: 150 }),
      10_000,
    );
    expect(error).toBeInstanceOf(TaskConnectError);
    expect(error).toMatchObject({ reason: 'no-answer', message: expect.stringContaining('150 ms') as unknown });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(transport.sent.length).toBeGreaterThan(0); // the handshake was sent, and never answered
    expect(transport.closes).toBeGreaterThanOrEqual(1);
  });

  it('given up while the SDK still loads (a fresh process): the closed transport is never started, and the process exits at once', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const started = Date.now();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'spec/fixtures/connect-while-loading.ts'],
      { cwd: root, env: { ...process.env, MCP_SDK: SDK }, timeout: 30_000 },
    );
    // Before, an initialize sent on the closed transport held the process for the SDK's 60 s.
    expect(Date.now() - started).toBeLessThan(30_000);
    const line = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { error?: string; seen?: string[] };
    expect(line.error).toBe('TaskConnectError');
    expect(line.seen).toEqual(['close']);
  });

  it('a transport whose close() throws, or never settles, still gets the TaskConnectError, in bounded time', async () => {
    for (const close of [
      () => {
        throw new Error('close exploded');
      },
      () => new Promise<void>(() => {}),
    ]) {
      const transport = silentTransport();
      transport.close = close;
      const error = await rejection(
        TaskClient.connect(transport, { ...connectOptions(), connectTimeoutMs: 100 }),
        10_000,
      );
      expect(error).toBeInstanceOf(TaskConnectError);
    }
  });

  it('its signal aborting while it waits: TaskAbortError with the reason, the transport closed', async () => {
    const transport = silentTransport();
    const stop = new AbortController();
    const connecting = TaskClient.connect(transport, { ...connectOptions(), signal: stop.signal });
    setTimeout(() => stop.abort('user left'), 50);
    const error = await rejection(connecting, 10_000);
    expect(error).toBeInstanceOf(TaskAbortError);
    expect((error as TaskAbortError).reason).toBe('user left');
    expect(transport.closes).toBeGreaterThanOrEqual(1);
  });

  it('a signal aborted before: TaskAbortError, and the transport is never started', async () => {
    const transport = silentTransport();
    const error = await rejection(
      TaskClient.connect(transport, { ...connectOptions(), signal: AbortSignal.abort('too late') }),
    );
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(transport.starts).toBe(0);
  });

  it('bad bounds are refused before anything starts (TaskOptionError)', async () => {
    for (const options of [{ connectTimeoutMs: -1 }, { connectTimeoutMs: Number.NaN }, { signal: 'stop' }]) {
      const transport = silentTransport();
      const error = await rejection(TaskClient.connect(transport, { ...connectOptions(), ...(options as object) }));
      expect(error).toBeInstanceOf(TaskOptionError);
      expect(transport.starts).toBe(0);
    }
  });

  it('a bound that did not run out leaves the connection working past it, and its signal aborting later changes nothing', async () => {
    const { server, store } = createExampleServer();
    const [clientSide, serverSide] = createLinkedPair();
    await server.connect(serverSide);
    const stop = new AbortController();
    const tasks = await within(
      TaskClient.connect(clientSide, { ...connectOptions(), connectTimeoutMs: 200, signal: stop.signal }),
      10_000,
    );
    cleanups.push(async () => {
      await tasks.close();
      await server.close();
      store.cleanup();
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort();
    const handle = await tasks.callToolAsTask('analyze', { id: 1, steps: 1, stepMs: 10 });
    expect((await within(handle.result(), 10_000)).content).toBeDefined();
  });
});
