/**
 * Deadlines, AbortSignal, per-waiter signals, detach, dispose and close (issue 3), against the
 * SDK McpServer in process, on fake time: the server's work, the SDK's request timers and the
 * library's scheduler all run on vitest's fake clock.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClient,
  TaskClosedError,
  TaskDetachedError,
  TaskTimeoutError,
  type TaskClientOptions,
} from '../../lib/index.js';
import { connectPair, type Pair } from '../helpers.js';
import { allowSdkServerListeners } from '../support/sdk-server-listeners.js';
import { schemas } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
  // Every test ends with no timer left anywhere: not the library's, not the SDK's, not the server's.
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

/** Records the method of every request and notification the client sends. */
function recordMethods(sent: string[]): (transport: Transport) => Transport {
  return (transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if ('method' in message) sent.push(message.method);
      return send(message, options);
    };
    return transport;
  };
}

async function setup(
  server: ExampleServerOptions = {},
  client: TaskClientOptions = {},
): Promise<{
  tasks: TaskClient;
  pair: Pair;
  remoteStatus: (taskId: string | undefined) => Promise<string>;
  sent: string[];
}> {
  const { server: mcp, store } = createExampleServer(server);
  const sent: string[] = [];
  const pair = await connectPair(mcp, {}, recordMethods(sent));
  const tasks = new TaskClient(pair.client, client);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
    store.cleanup();
    // Let the server's own sleeping work run out.
    await vi.runAllTimersAsync();
  });
  const remoteStatus = async (taskId: string | undefined): Promise<string> =>
    (await pair.client.request({ method: 'tasks/get', params: { taskId } }, schemas.GetTaskResult)).status as string;
  return { tasks, pair, remoteStatus, sent };
}

describe('deadlines', () => {
  it('a passed deadline rejects result() with TaskTimeoutError and cancels the remote task', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { timeoutMs: 5_000 });
    const result = handle.result().catch((e: unknown) => e);
    const iterated = (async () => {
      const seen: string[] = [];
      try {
        for await (const task of handle) seen.push(task.status);
      } catch (error) {
        return { seen, error };
      }
      return { seen, error: undefined };
    })();
    await vi.advanceTimersByTimeAsync(5_000);
    const error = (await result) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('cancelled');
    expect(error.timeoutMs).toBe(5_000);
    expect(error.elapsedMs).toBeGreaterThanOrEqual(5_000);
    expect(error.taskId).toBe(handle.taskId);
    expect(error.message).toContain('the remote task was cancelled');
    // Iterators end by throwing the same error, after the cancelled snapshot.
    const { seen, error: iterError } = await iterated;
    expect(seen).toEqual(['working', 'cancelled']);
    expect(iterError).toBe(error);
    expect(await remoteStatus(handle.taskId)).toBe('cancelled');
  });

  it('with cancelOnTimeout: false the remote task keeps working', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { timeoutMs: 1_000, cancelOnTimeout: false });
    const result = handle.result().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    const error = (await result) as TaskTimeoutError;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error.remoteCancel).toBe('disabled');
    expect(await remoteStatus(handle.taskId)).toBe('working');
  });

  it('a server without tasks.cancel: the error says the remote task could not be cancelled', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000, listAndCancel: false });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { timeoutMs: 1_000 });
    const result = handle.result().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    const error = (await result) as TaskTimeoutError;
    expect(error.remoteCancel).toBe('not-supported');
    expect(await remoteStatus(handle.taskId)).toBe('working');
    await expect(handle.cancel()).resolves.toMatchObject({ status: 'working' });
  });

  it('a client-level timeoutMs applies to every call', async () => {
    const { tasks } = await setup({ stepMs: 60_000 }, { timeoutMs: 2_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    const result = handle.result().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await result).toBeInstanceOf(TaskTimeoutError);
  });

  it('a task that completes before the deadline resolves normally and leaves no deadline timer', async () => {
    const { tasks } = await setup({ stepMs: 500 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { timeoutMs: 10_000 });
    const result = handle.result();
    await vi.advanceTimersByTimeAsync(600);
    await expect(result).resolves.toMatchObject({ content: [{ type: 'text' }] });
  });

  it('a tasks/result that blocks for 3 minutes (input_required) is not cut by the SDK 60 s request timeout', async () => {
    // The in-process SDK server holds this tasks/result for 3 minutes.
    const restoreListeners = allowSdkServerListeners();
    cleanups.push(async () => restoreListeners());
    const { server: mcp, store } = createExampleServer({ pollInterval: 1_000 });
    const pair = await connectPair(mcp, { capabilities: { elicitation: {} } });
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      store.cleanup();
      await vi.runAllTimersAsync();
    });
    const sent: string[] = [];
    const send = pair.client.transport!.send.bind(pair.client.transport);
    pair.client.transport!.send = (message, options) => {
      if ('method' in message) sent.push(message.method);
      return send(message, options);
    };
    const handle = await tasks.callToolAsTask(
      'confirm_delete',
      { path: '/slow' },
      {
        // The user takes three minutes to answer; the blocking tasks/result stays open meanwhile.
        onElicitation: () =>
          new Promise((resolve) =>
            setTimeout(() => resolve({ action: 'accept', content: { confirm: true } }), 180_000),
          ),
      },
    );
    const result = handle.result();
    await vi.advanceTimersByTimeAsync(181_000);
    await expect(result).resolves.toMatchObject({ content: [{ type: 'text', text: 'deleted /slow' }] });
    // One blocking request for the whole wait (a second, short one may join it at the end, D5).
    expect(sent.filter((m) => m === 'tasks/result').length).toBeLessThanOrEqual(2);
    expect(sent).not.toContain('notifications/cancelled');
  });

  it('a 3-minute task on a polling server completes without any request timing out', async () => {
    const { tasks } = await setup({ stepMs: 180_000, notify: false, pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    const result = handle.result();
    await vi.advanceTimersByTimeAsync(181_000);
    await expect(result).resolves.toMatchObject({ content: [{ type: 'text', text: 'analysis of 1 done in 1 steps' }] });
  });
});

describe('AbortSignal', () => {
  it('aborted after creation: cancels the remote task and rejects with an AbortError carrying the reason', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { signal: controller.signal });
    const result = handle.result().catch((e: unknown) => e);
    controller.abort(new Error('user pressed stop'));
    const error = (await result) as TaskAbortError;
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(error.name).toBe('AbortError');
    expect((error.reason as Error).message).toBe('user pressed stop');
    expect(error.remoteCancel).toBe('cancelled');
    expect(await remoteStatus(handle.taskId)).toBe('cancelled');
  });

  it('aborted after creation with cancelOnAbort: false only detaches', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask(
      'analyze',
      { steps: 1 },
      { signal: controller.signal, cancelOnAbort: false },
    );
    const result = handle.result().catch((e: unknown) => e);
    controller.abort();
    expect(((await result) as TaskAbortError).remoteCancel).toBe('disabled');
    expect(await remoteStatus(handle.taskId)).toBe('working');
  });

  it('an already aborted signal rejects at once, sending nothing', async () => {
    const { tasks, pair } = await setup();
    const sent: string[] = [];
    const send = pair.client.transport!.send.bind(pair.client.transport);
    pair.client.transport!.send = (message, options) => {
      if ('method' in message) sent.push(message.method);
      return send(message, options);
    };
    const error = await tasks
      .callToolAsTask('analyze', {}, { signal: AbortSignal.abort('no') })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAbortError);
    expect((error as TaskAbortError).remoteCancel).toBe('no-task');
    expect(sent).toEqual([]);
  });

  it('aborted before the server answered tools/call: rejects at once, then cancels the task created anyway', async () => {
    const { tasks, pair, remoteStatus } = await setup({ stepMs: 60_000 });
    // Hold the server's answer to tools/call until after the abort.
    const transport = pair.client.transport!;
    const deliver = transport.onmessage!.bind(transport);
    const held: Parameters<typeof deliver>[] = [];
    transport.onmessage = (message, extra) => {
      if ('result' in message && message.result && 'task' in message.result) held.push([message, extra]);
      else deliver(message, extra);
    };
    const sent: string[] = [];
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if ('method' in message) sent.push(message.method);
      return send(message, options);
    };
    await tasks.callToolAsTask('echo', {}); // warms the tools/list cache
    const controller = new AbortController();
    const call = tasks.callToolAsTask('analyze', { steps: 1 }, { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    expect(held).toHaveLength(1);
    controller.abort();
    const error = (await call) as TaskAbortError;
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(error.remoteCancel).toBe('pending');
    // [R24]: no notifications/cancelled for the task-augmented request.
    expect(sent).not.toContain('notifications/cancelled');
    // Now the CreateTaskResult arrives: the task is cancelled as soon as its id is known.
    transport.onmessage = deliver;
    for (const [message, extra] of held) deliver(message, extra);
    await vi.advanceTimersByTimeAsync(10);
    expect(sent).toContain('tasks/cancel');
    const taskId = (held[0]![0] as unknown as { result: { task: { taskId: string } } }).result.task.taskId;
    expect(await remoteStatus(taskId)).toBe('cancelled');
  });

  it('a per-waiter signal stops only that waiter, never the task or other waiters', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 1_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 2 });
    const waiter = new AbortController();
    const iteratorStop = new AbortController();
    const stopped = handle.result({ signal: waiter.signal }).catch((e: unknown) => e);
    const other = handle.result();
    const updates = handle.updates({ signal: iteratorStop.signal });
    expect((await updates.next()).value?.status).toBe('working');
    const pending = updates.next().catch((e: unknown) => e);
    waiter.abort('enough');
    iteratorStop.abort('stop iterating');
    expect(await stopped).toBeInstanceOf(TaskAbortError);
    expect(await pending).toBeInstanceOf(TaskAbortError);
    expect(await remoteStatus(handle.taskId)).toBe('working');
    await vi.advanceTimersByTimeAsync(2_100);
    await expect(other).resolves.toMatchObject({ content: [{ type: 'text' }] });
  });

  it('cancel racing completion: the completed result wins over the cancel', async () => {
    const { tasks } = await setup({ stepMs: 100, notify: false, pollInterval: 5_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { timeoutMs: 150 });
    const result = handle.result();
    // At 150 ms the server finished 50 ms ago but the client has not polled yet: the timeout's
    // tasks/cancel gets -32602 ([V23]), the task is re-read, and the result is delivered.
    await vi.advanceTimersByTimeAsync(200);
    await expect(result).resolves.toMatchObject({ content: [{ type: 'text' }] });
  });
});

describe('detach, dispose and close', () => {
  it('detach() stops tracking, leaves the task running and returns a resume reference', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 }, { ttlMs: 600_000 });
    const result = handle.result().catch((e: unknown) => e);
    const reference = handle.detach();
    expect(reference).toMatchObject({
      v: 2,
      taskId: handle.taskId,
      toolName: 'analyze',
      ttl: 600_000,
      server: 'example-task-server@1.0.0',
      wire: '2025-11-25',
      capabilities: { cancel: true, list: true },
    });
    expect(await result).toBeInstanceOf(TaskDetachedError);
    expect(tasks.active).toBe(0);
    expect(await remoteStatus(handle.taskId)).toBe('working');
  });

  it('await using cancels a still-running task on scope exit', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    let taskId: string | undefined;
    {
      await using handle = await tasks.callToolAsTask('analyze', { steps: 1 });
      taskId = handle.taskId;
      expect(tasks.active).toBe(1);
    }
    expect(tasks.active).toBe(0);
    expect(await remoteStatus(taskId)).toBe('cancelled');
  });

  it('disposing a settled handle is free, and detach() before scope exit keeps the task running', async () => {
    const { tasks, remoteStatus, sent } = await setup({ stepMs: 60_000 });
    let taskId: string | undefined;
    {
      await using handle = await tasks.callToolAsTask('analyze', { steps: 1 });
      taskId = handle.taskId;
      handle.detach();
    }
    expect(sent).toContain('tools/call');
    expect(sent.filter((method) => method === 'tasks/cancel')).toEqual([]);
    expect(await remoteStatus(taskId)).toBe('working');
  });

  it('close() settles every handle with TaskClosedError; cancelRunning cancels the remote tasks', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const a = await tasks.callToolAsTask('analyze', { steps: 1 });
    const b = await tasks.callToolAsTask('analyze', { steps: 1 });
    const results = [a.result().catch((e: unknown) => e), b.result().catch((e: unknown) => e)];
    await tasks.close({ cancelRunning: true });
    for (const error of await Promise.all(results)) {
      expect(error).toBeInstanceOf(TaskClosedError);
      expect((error as TaskClosedError).message).toContain('the remote task was cancelled');
    }
    expect(await remoteStatus(a.taskId)).toBe('cancelled');
    expect(await remoteStatus(b.taskId)).toBe('cancelled');
    await expect(tasks.callToolAsTask('analyze')).rejects.toBeInstanceOf(TaskClosedError);
  });

  it('close() without cancelRunning leaves remote tasks running', async () => {
    const { tasks, remoteStatus } = await setup({ stepMs: 60_000 });
    const a = await tasks.callToolAsTask('analyze', { steps: 1 });
    const result = a.result().catch((e: unknown) => e);
    await tasks.close();
    expect(await result).toBeInstanceOf(TaskClosedError);
    expect(await remoteStatus(a.taskId)).toBe('working');
  });

  it('cancel() then result() rejects with TaskCancelledError', async () => {
    const { tasks } = await setup({ stepMs: 60_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    await handle.cancel();
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
  });
});
