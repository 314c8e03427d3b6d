/**
 * Core behaviour against the SDK's own McpServer with its experimental task store, in process
 * over InMemoryTransport (issue 2). On SDK v2 the client negotiates the era automatically
 * (`server/discover` probe, then the fallback to `initialize`): this is the in-memory suite that
 * proves the fallback against a legacy server.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';
import { TaskCancelledError, TaskClient, TaskFailedError, type Task } from '../../lib/index.js';
import { connectPair, statuses, until, type Pair } from '../helpers.js';
import { negotiatedEra, schemas } from '../support/sdk.js';

/** Counts the requests the client sends, by method. */
function counting(counts: Map<string, number>): (transport: Transport) => Transport {
  return (transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message: JSONRPCMessage, options) => {
      if ('method' in message && 'id' in message) counts.set(message.method, (counts.get(message.method) ?? 0) + 1);
      return send(message, options);
    };
    return transport;
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup(
  options: ExampleServerOptions = {},
): Promise<{ tasks: TaskClient; pair: Pair; counts: Map<string, number>; completions: Map<string, number> }> {
  const { server, store } = createExampleServer(options);
  // Record when the server stores each task's result: the moment of completion.
  const completions = new Map<string, number>();
  const storeResult = store.storeTaskResult.bind(store);
  store.storeTaskResult = async (taskId, status, result, sessionId) => {
    await storeResult(taskId, status, result, sessionId);
    completions.set(taskId, performance.now());
  };
  const counts = new Map<string, number>();
  const pair = await connectPair(server, { negotiation: 'auto' }, counting(counts));
  expect(negotiatedEra(pair.client)).toBe('legacy');
  const tasks = new TaskClient(pair.client);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
    store.cleanup();
  });
  return { tasks, pair, counts, completions };
}

describe('TaskClient against the SDK McpServer (InMemoryTransport)', () => {
  it('runs a tool as a task: statuses stream in order and result() gives the tool result', async () => {
    const { tasks, counts } = await setup({ stepMs: 30 });
    const handle = await tasks.callToolAsTask('analyze', { id: 7, steps: 3 });
    expect(handle.kind).toBe('task');
    expect(handle.taskId).toMatch(/^[0-9a-f]{32}$/);
    expect(handle.toolName).toBe('analyze');
    expect(handle.task?.status).toBe('working');
    const seen: Task[] = [];
    for await (const task of handle) seen.push(task);
    expect(seen.map((t) => `${t.status}:${t.statusMessage ?? ''}`)).toEqual([
      'working:',
      'working:step 1/3',
      'working:step 2/3',
      'completed:step 2/3',
    ]);
    const result = await handle.result();
    expect(result.content).toEqual([{ type: 'text', text: 'analysis of 7 done in 3 steps' }]);
    // The first tasks/get waits one pollInterval (1000 ms), so a notifying server is never polled here.
    expect(counts.get('tasks/get') ?? 0).toBe(0);
    expect(counts.get('tasks/result')).toBe(1);
    expect(tasks.active).toBe(0);
  });

  it('sends tools/call with params.task = {ttl} only and reads every tools/list page once', async () => {
    const { tasks, counts } = await setup({ stepMs: 10 });
    await (await tasks.callToolAsTask('analyze', { steps: 1 }, { ttlMs: 60_000 })).result();
    await (await tasks.callToolAsTask('batch', { items: ['x'], itemMs: 5 })).result();
    expect(counts.get('tools/list')).toBe(1);
    expect(counts.get('tools/call')).toBe(2);
  });

  it('memoizes result(): many awaiters share one tasks/result', async () => {
    const { tasks, counts } = await setup({ stepMs: 20 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 2 });
    const all = await Promise.all([handle.result(), handle.result(), handle.result()]);
    expect(all[0]).toBe(all[1]);
    expect(all[1]).toBe(all[2]);
    expect(await handle.result()).toBe(all[0]);
    expect(counts.get('tasks/result')).toBe(1);
  });

  it('runs 100 concurrent handles to completion with one tasks/result each', async () => {
    const { tasks, counts } = await setup({ stepMs: 20 });
    const handles = await Promise.all(
      Array.from({ length: 100 }, (_, i) => tasks.callToolAsTask('analyze', { id: i, steps: 2 })),
    );
    expect(new Set(handles.map((h) => h.taskId)).size).toBe(100);
    const results = await Promise.all(handles.map((h) => h.result()));
    results.forEach((result, i) => {
      expect(result.content).toEqual([{ type: 'text', text: `analysis of ${i} done in 2 steps` }]);
    });
    expect(counts.get('tasks/result')).toBe(100);
    expect(tasks.active).toBe(0);
  });

  it('gives several consumers of one handle every change, independently of each other', async () => {
    const { tasks } = await setup({ stepMs: 30 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 3 });
    const full = statuses(handle);
    const second = statuses(handle.updates());
    // A loop that breaks after the first snapshot affects no other loop and no awaiter.
    const early: string[] = [];
    for await (const task of handle) {
      early.push(task.status);
      break;
    }
    expect(early).toEqual(['working']);
    expect(await full).toEqual(['working', 'working', 'working', 'completed']);
    expect(await second).toEqual(['working', 'working', 'working', 'completed']);
    await expect(handle.result()).resolves.toMatchObject({ content: [{ type: 'text' }] });
  });

  it('gives a consumer that starts after the task finished the terminal snapshot, then ends', async () => {
    const { tasks } = await setup({ stepMs: 10 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    await handle.result();
    const late: Task[] = [];
    for await (const task of handle) late.push(task);
    expect(late).toHaveLength(1);
    expect(late[0]?.status).toBe('completed');
  });

  it('with a notifying server and pollInterval 5000, result() arrives within 50 ms of completion', async () => {
    const { tasks, counts, completions } = await setup({ pollInterval: 5_000, stepMs: 300 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    await handle.result();
    const resolvedAt = performance.now();
    const completedAt = completions.get(handle.taskId ?? '');
    expect(completedAt).toBeDefined();
    expect(resolvedAt - (completedAt ?? 0)).toBeLessThan(50);
    expect(counts.get('tasks/get') ?? 0).toBe(0);
  });

  it('without notifications it completes by polling, at most duration/pollInterval + 2 tasks/get', async () => {
    const { tasks, counts } = await setup({ notify: false, pollInterval: 100, stepMs: 250 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 2 });
    const seen = await statuses(handle);
    expect(seen[0]).toBe('working');
    expect(seen.at(-1)).toBe('completed');
    await expect(handle.result()).resolves.toMatchObject({ content: [{ text: 'analysis of 1 done in 2 steps' }] });
    const gets = counts.get('tasks/get') ?? 0;
    expect(gets).toBeGreaterThan(0);
    expect(gets).toBeLessThanOrEqual(500 / 100 + 2);
  });

  it('a failed task rejects with TaskFailedError carrying the isError result and its text', async () => {
    const { tasks } = await setup();
    const handle = await tasks.callToolAsTask('flaky', { afterMs: 20, reason: 'disk full' });
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskFailedError);
    const failed = error as TaskFailedError;
    expect(failed.message).toContain('disk full');
    expect(failed.result?.isError).toBe(true);
    expect(failed.result?.content).toEqual([{ type: 'text', text: 'disk full' }]);
    expect(failed.taskId).toBe(handle.taskId);
    expect(failed.task?.status).toBe('failed');
    const seen = await statuses(handle);
    expect(seen).toEqual(['failed']);
  });

  it('cancel() cancels the remote task and result() rejects with TaskCancelledError', async () => {
    const { tasks, pair } = await setup({ stepMs: 5_000 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    const iterated = statuses(handle);
    const final = await handle.cancel();
    expect(final?.status).toBe('cancelled');
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
    expect(await iterated).toEqual(['working', 'cancelled']);
    const remote = await pair.client.request(
      { method: 'tasks/get', params: { taskId: handle.taskId } },
      schemas.GetTaskResult,
    );
    expect(remote.status).toBe('cancelled');
  });

  it('cancel() racing completion reports the truth ([V23]): the result, not an error', async () => {
    const { tasks, completions } = await setup({ stepMs: 10 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    // Let the server finish, but cancel before the client could have learned of it by polling.
    await until(() => completions.has(handle.taskId!), 5_000, 'the server to complete the task');
    const final = await handle.cancel();
    expect(final?.status).toBe('completed');
    await expect(handle.result()).resolves.toMatchObject({ content: [{ type: 'text' }] });
  });

  it('calls a tool without task support plainly and gives an immediate handle', async () => {
    const { tasks, counts } = await setup();
    const handle = await tasks.callToolAsTask('echo', { text: 'plain' });
    expect(handle.kind).toBe('immediate');
    expect(handle.taskId).toBeUndefined();
    expect(handle.task).toBeUndefined();
    expect(await handle.result()).toEqual({ content: [{ type: 'text', text: 'plain' }] });
    expect(await statuses(handle)).toEqual([]);
    expect(counts.get('tasks/get') ?? 0).toBe(0);
  });

  it('a required tool runs as a task with structured content intact', async () => {
    const { tasks } = await setup();
    const handle = await tasks.callToolAsTask('batch', { items: ['a', 'b', 'c'], itemMs: 10 });
    const result = await handle.result();
    expect(result.structuredContent).toEqual({ processed: ['a', 'b', 'c'] });
  });

  it('does not break the SDK client: plain client.callTool still works alongside', async () => {
    const { tasks, pair } = await setup({ stepMs: 10 });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    const plain = await pair.client.callTool({ name: 'echo', arguments: { text: 'side' } });
    expect(plain.content).toEqual([{ type: 'text', text: 'side' }]);
    await handle.result();
  });
});
