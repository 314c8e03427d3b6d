/**
 * Observability and control (issue 7): lifecycle events with metrics, logging, tasks/list paging,
 * the client-side concurrency limit, the live handle list.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListTasksRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer, type ExampleServerOptions } from '../examples/server.js';
import {
  TaskAbortError,
  TaskClient,
  TaskNotSupportedError,
  TaskQueueFullError,
  TaskTimeoutError,
  consoleLogger,
  type Task,
  type TaskClientOptions,
} from '../lib/index.js';
import { connectPair } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Records every message the client sends and receives. */
function recording(sent: JSONRPCMessage[], received: JSONRPCMessage[]): (transport: Transport) => Transport {
  return (transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      sent.push(message);
      return send(message, options);
    };
    const started = transport.start.bind(transport);
    transport.start = async () => {
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        received.push(message);
        deliver?.(message, extra);
      };
      await started();
    };
    return transport;
  };
}

async function setup(server: ExampleServerOptions = {}, options: TaskClientOptions = {}) {
  const { server: mcp, store } = createExampleServer({ pollInterval: 40, ...server });
  const sent: JSONRPCMessage[] = [];
  const received: JSONRPCMessage[] = [];
  const pair = await connectPair(mcp, { capabilities: { elicitation: {} } }, recording(sent, received));
  const tasks = new TaskClient(pair.client, options);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
    store.cleanup();
  });
  return { tasks, sent, received, client: pair.client };
}

/** Every event name the client emits, in order. */
function recordEvents(tasks: TaskClient): string[] {
  const events: string[] = [];
  const names = ['created', 'status', 'inputRequired', 'completed', 'failed', 'cancelled', 'timeout', 'expired', 'settled'] as const;
  for (const name of names) {
    tasks.on(name, ((metrics: { status: string; outcome?: string }) => {
      events.push(name === 'settled' ? `settled:${metrics.outcome}` : name === 'status' ? `status:${metrics.status}` : name);
    }) as never);
  }
  return events;
}

describe('lifecycle events', () => {
  it('a full lifecycle with input_required emits events in order, with metrics', async () => {
    const { tasks } = await setup({}, { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) });
    const events = recordEvents(tasks);
    let completedMetrics: { durationMs: number; polls: number; notifications: number; result: unknown } | undefined;
    tasks.on('completed', (metrics) => (completedMetrics = metrics));
    const handle = await tasks.callToolAsTask('confirm_delete', {});
    await handle.result();
    // created, then the wait for input, the return to work, completion and settlement.
    expect(events[0]).toBe('created');
    expect(events).toContain('inputRequired');
    expect(events.slice(events.lastIndexOf('inputRequired'))).toEqual([
      'inputRequired',
      ...events.slice(events.lastIndexOf('inputRequired') + 1, -2),
      'completed',
      'settled:completed',
    ]);
    expect(events.filter((e) => e.startsWith('status')).at(-1)).toBe('status:completed');
    expect(completedMetrics?.durationMs).toBeGreaterThanOrEqual(0);
    expect(completedMetrics?.notifications).toBeGreaterThan(0);
    expect(completedMetrics?.result).toMatchObject({ content: [{ text: 'deleted /tmp/demo.txt' }] });
  });

  it('a failing task: created, status:failed, failed (with the error), settled:failed', async () => {
    const { tasks } = await setup();
    const events = recordEvents(tasks);
    let failure: string | undefined;
    tasks.on('failed', (metrics) => (failure = metrics.error.message));
    const handle = await tasks.callToolAsTask('flaky', { afterMs: 10, reason: 'boom' });
    await handle.result().catch(() => undefined);
    expect(events).toEqual(['created', 'status:failed', 'failed', 'settled:failed']);
    expect(failure).toContain('boom');
  });

  it('metrics count the requests and notifications actually exchanged', async () => {
    const { tasks, sent, received } = await setup({ notify: false, stepMs: 30 });
    let metrics: { polls: number; notifications: number; taskId: string } | undefined;
    tasks.on('settled', (m) => (metrics = m));
    const handle = await tasks.callToolAsTask('analyze', { steps: 4 });
    await handle.result();
    const gets = sent.filter((m) => 'method' in m && m.method === 'tasks/get').length;
    expect(gets).toBeGreaterThan(0);
    expect(metrics?.polls).toBe(gets);
    const pushes = received.filter((m) => 'method' in m && m.method === 'notifications/tasks/status').length;
    expect(metrics?.notifications).toBe(pushes);

    const notifying = await setup({ notify: true, stepMs: 10, pollInterval: 5_000 });
    let pushed: { polls: number; notifications: number } | undefined;
    notifying.tasks.on('settled', (m) => (pushed = m));
    await (await notifying.tasks.callToolAsTask('analyze', { steps: 3 })).result();
    const got = notifying.received.filter((m) => 'method' in m && m.method === 'notifications/tasks/status').length;
    expect(pushed?.notifications).toBe(got);
    expect(pushed?.polls).toBe(0);
  });

  it('a throwing listener is reported on error and never breaks tracking', async () => {
    const { tasks } = await setup({ stepMs: 10 });
    const errors: string[] = [];
    tasks.on('error', (error) => errors.push(error.message));
    tasks.on('status', () => {
      throw new Error('listener bug');
    });
    const after: string[] = [];
    tasks.on('status', (_m, task) => after.push(task.status));
    const handle = await tasks.callToolAsTask('analyze', { steps: 2 });
    handle.on('settled', () => {
      throw new Error('handle listener bug');
    });
    await expect(handle.result()).resolves.toMatchObject({ content: [{ type: 'text' }] });
    expect(after.at(-1)).toBe('completed');
    expect(errors.some((e) => e.includes('listener bug'))).toBe(true);
    expect(errors.some((e) => e.includes('handle listener bug'))).toBe(true);
  });

  it('logs the lifecycle as structured entries, with task ids fingerprinted unless opted in', async () => {
    const lines: string[] = [];
    const sink = { debug: (l: string) => lines.push(l), info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
    const { tasks } = await setup({ stepMs: 10 }, { logger: consoleLogger({ console: sink }) });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    await handle.result();
    expect(lines.some((l) => l.startsWith('task created'))).toBe(true);
    expect(lines.some((l) => l.startsWith('task completed') && l.includes('"polls":'))).toBe(true);
    expect(lines.every((l) => !l.startsWith('task ') || l.includes('"role":"requestor"'))).toBe(true);
    expect(lines.join('\n')).not.toContain(handle.taskId!);
    expect(lines.join('\n')).toMatch(/sha256:[0-9a-f]{12}/);

    const open: string[] = [];
    const { tasks: verbose } = await setup({ stepMs: 10 }, { logger: { log: (e) => open.push(JSON.stringify(e)) }, logTaskIds: true });
    const visible = await verbose.callToolAsTask('analyze', { steps: 1 });
    await visible.result();
    expect(open.join('\n')).toContain(visible.taskId!);
  });
});

describe('tasks/list', () => {
  it('follows nextCursor over 3 pages of the SDK server (pages of 10)', async () => {
    const { tasks, sent } = await setup({ stepMs: 60_000 });
    const handles = await Promise.all(Array.from({ length: 25 }, () => tasks.callToolAsTask('analyze', { steps: 1 })));
    const listed: Task[] = [];
    for await (const task of tasks.list()) listed.push(task);
    expect(listed).toHaveLength(25);
    expect(new Set(listed.map((t) => t.taskId))).toEqual(new Set(handles.map((h) => h.taskId)));
    expect(sent.filter((m) => 'method' in m && m.method === 'tasks/list')).toHaveLength(3);
    const first = await tasks.listPage();
    expect(first.tasks).toHaveLength(10);
    expect(typeof first.nextCursor).toBe('string');
    const second = await tasks.listPage(first.nextCursor);
    expect(second.tasks.map((t) => t.taskId)).not.toContain(first.tasks[0]?.taskId);
    for (const handle of handles) handle.detach();
  });

  it('reads a one-page server without a cursor, skipping malformed entries (D13)', async () => {
    const server = new Server({ name: 'one-page', version: '1' }, { capabilities: { tasks: { list: {} } } });
    const at = '2026-01-01T00:00:00Z';
    server.setRequestHandler(ListTasksRequestSchema, () => ({
      tasks: [
        { taskId: 'a:1', status: 'working', createdAt: at, lastUpdatedAt: at },
        { taskId: 'b:2', status: 'completed', createdAt: at, lastUpdatedAt: at, ttl: 60_000 },
        { status: 'working' },
      ] as never,
      _meta: {},
    }));
    const pair = await connectPair(server);
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const listed: Task[] = [];
    for await (const task of tasks.list()) listed.push(task);
    expect(listed.map((t) => [t.taskId, t.status, t.ttl])).toEqual([
      ['a:1', 'working', null],
      ['b:2', 'completed', 60_000],
    ]);
  });

  it('refuses with TaskNotSupportedError when the server did not declare tasks.list', async () => {
    const { tasks } = await setup({ listAndCancel: false });
    await expect(tasks.listPage()).rejects.toBeInstanceOf(TaskNotSupportedError);
    await expect(tasks.list().next()).rejects.toBeInstanceOf(TaskNotSupportedError);
  });
});

describe('maxConcurrentTasks', () => {
  it('50 calls with a limit of 5: never more than 5 at once, all complete, in FIFO order', async () => {
    const { tasks } = await setup({ stepMs: 15 }, { maxConcurrentTasks: 5 });
    let running = 0;
    let peak = 0;
    const created: number[] = [];
    tasks.on('created', () => {
      running += 1;
      peak = Math.max(peak, running);
    });
    tasks.on('settled', () => (running -= 1));
    const calls = Array.from({ length: 50 }, (_, i) =>
      tasks.callToolAsTask('analyze', { id: i, steps: 1 }).then((handle) => {
        created.push(i);
        return handle.result();
      }),
    );
    expect(tasks.pending).toBeGreaterThan(0);
    const results = await Promise.all(calls);
    expect(results).toHaveLength(50);
    results.forEach((r, i) => expect(r.content).toEqual([{ type: 'text', text: `analysis of ${i} done in 1 steps` }]));
    expect(peak).toBe(5);
    expect(created).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(tasks.pending).toBe(0);
    expect(tasks.active).toBe(0);
  });

  it('a queued call is abortable and bounded by its deadline; whenFull: reject rejects at once', async () => {
    const { tasks } = await setup({ stepMs: 60_000 }, { maxConcurrentTasks: 1 });
    const running = await tasks.callToolAsTask('analyze', { steps: 1 });
    const controller = new AbortController();
    const aborted = tasks.callToolAsTask('analyze', {}, { signal: controller.signal }).catch((e: unknown) => e);
    const timed = tasks.callToolAsTask('analyze', {}, { timeoutMs: 30 }).catch((e: unknown) => e);
    expect(tasks.pending).toBe(2);
    controller.abort('changed my mind');
    const abortError = (await aborted) as TaskAbortError;
    expect(abortError).toBeInstanceOf(TaskAbortError);
    expect(abortError.remoteCancel).toBe('no-task');
    expect(await timed).toBeInstanceOf(TaskTimeoutError);
    expect(tasks.pending).toBe(0);
    expect(tasks.handles()).toEqual([running]);
    running.detach();

    const { tasks: strict } = await setup({ stepMs: 60_000 }, { maxConcurrentTasks: 1, whenFull: 'reject' });
    const only = await strict.callToolAsTask('analyze', { steps: 1 });
    await expect(strict.callToolAsTask('analyze')).rejects.toBeInstanceOf(TaskQueueFullError);
    only.detach();
    // The slot is free again once the task settles.
    const next = await strict.callToolAsTask('analyze', { steps: 1 });
    next.detach();
  });
});
