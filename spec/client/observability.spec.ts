/**
 * Observability and control (issue 7): lifecycle events with metrics, logging, tasks/list paging,
 * the client-side concurrency limit, the live handle list.
 */
import { createHash } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListTasksRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';
import {
  TaskAbortError,
  TaskClient,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskQueueFullError,
  TaskTimeoutError,
  consoleLogger,
  type Task,
  type TaskClientOptions,
} from '../../lib/index.js';
import { connectPair } from '../helpers.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

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
  const names = [
    'created',
    'status',
    'inputRequired',
    'completed',
    'failed',
    'cancelled',
    'timeout',
    'expired',
    'settled',
  ] as const;
  for (const name of names) {
    tasks.on(name, ((metrics: { status: string; outcome?: string }) => {
      events.push(
        name === 'settled' ? `settled:${metrics.outcome}` : name === 'status' ? `status:${metrics.status}` : name,
      );
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

  it('a failing task: created, status:working (its first snapshot), status:failed, failed (with the error), settled:failed', async () => {
    const { tasks } = await setup();
    const events = recordEvents(tasks);
    let failure: string | undefined;
    tasks.on('failed', (metrics) => (failure = metrics.error.message));
    const handle = await tasks.callToolAsTask('flaky', { afterMs: 10, reason: 'boom' });
    await handle.result().catch(() => undefined);
    expect(events).toEqual(['created', 'status:working', 'status:failed', 'failed', 'settled:failed']);
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
    const sink = {
      debug: (l: string) => lines.push(l),
      info: (l: string) => lines.push(l),
      warn: (l: string) => lines.push(l),
      error: (l: string) => lines.push(l),
    };
    const { tasks } = await setup({ stepMs: 10 }, { logger: consoleLogger({ console: sink }) });
    const handle = await tasks.callToolAsTask('analyze', { steps: 1 });
    await handle.result();
    expect(lines.some((l) => l.startsWith('task created'))).toBe(true);
    expect(lines.some((l) => l.startsWith('task completed') && l.includes('"polls":'))).toBe(true);
    expect(lines.every((l) => !l.startsWith('task ') || l.includes('"role":"requestor"'))).toBe(true);
    expect(lines.join('\n')).not.toContain(handle.taskId!);
    expect(lines.join('\n')).toMatch(/sha256:[0-9a-f]{12}/);

    const open: string[] = [];
    const { tasks: verbose } = await setup(
      { stepMs: 10 },
      { logger: { log: (e) => open.push(JSON.stringify(e)) }, logTaskIds: true },
    );
    const visible = await verbose.callToolAsTask('analyze', { steps: 1 });
    await visible.result();
    expect(open.join('\n')).toContain(visible.taskId!);
  });
});

describe('created means tracked, and the first snapshot fires status', () => {
  /** A scripted server whose tool `job` makes task `t1` (working, polled every second). */
  async function scripted(taskOptions: TaskClientOptions = {}) {
    const rig = await scriptedTaskClient((cleanup) => cleanups.push(cleanup), {}, taskOptions);
    rig.server.on('tools/call', () => rig.server.tasks.createResult({ taskId: 't1', pollInterval: 1_000 }));
    return rig;
  }

  it("the fingerprint in logs is sha256: and the first 12 hex digits of the id's SHA-256, for any id (as docs/observability.md says)", async () => {
    const entries: Array<Record<string, unknown>> = [];
    const { tasks, server } = await scripted({ logger: { log: (entry) => entries.push({ ...entry.fields }) } });
    // UTF-8 lengths 9, 55 (the most one block holds), 56 and 60 (the length spills into a second
    // block) and 204 (four blocks), with characters of one to four bytes.
    const ids = ['t-0000001', 'x'.repeat(55), 'y'.repeat(56), `é✓🚀-${'z'.repeat(50)}`, `${'id/ü'.repeat(40)}🚀`];
    for (const taskId of ids) {
      server.on('tools/call', () => server.tasks.createResult({ taskId, pollInterval: 1_000 }));
      await tasks.callToolAsTask('job');
    }
    const expected = ids.map((taskId) => `sha256:${createHash('sha256').update(taskId).digest('hex').slice(0, 12)}`);
    expect([...new Set(entries.map((fields) => fields.task))]).toEqual(expected);
  });

  it('a created listener finds the handle in handles() and counted in active, showing its first snapshot', async () => {
    const { tasks } = await scripted();
    const seen: Array<{ listed: string[]; active: number; status: string | undefined }> = [];
    tasks.on('created', (metrics) => {
      seen.push({
        listed: tasks.handles().map((h) => h.taskId ?? ''),
        active: tasks.active,
        status: tasks.handles().find((h) => h.taskId === metrics.taskId)?.task?.status,
      });
    });
    const handle = await tasks.callToolAsTask('job');
    expect(seen).toEqual([{ listed: ['t1'], active: 1, status: 'working' }]);
    expect(tasks.handles()).toEqual([handle]);
  });

  it('a task that goes from creation straight to its end (no status in between, as mcp-go) shows as running once: status for the first snapshot, as the iterator yields it', async () => {
    const { tasks, server, clock } = await scripted();
    const events = recordEvents(tasks);
    // The UI recipe of docs/observability.md: redraw the live handles on created, status and settled.
    const frames: string[][] = [];
    const refresh = (): void =>
      void frames.push(tasks.handles().map((h) => `${h.toolName}:${h.task?.status ?? 'starting'}`));
    for (const event of ['created', 'status', 'settled'] as const) tasks.on(event, refresh);
    const handle = await tasks.callToolAsTask('job');
    const iterated: string[] = [];
    const iterating = (async () => {
      for await (const task of handle) iterated.push(task.status);
    })();
    server.tasks.finish('t1', 'completed', { result: textResult('done') });
    await clock.advance(1_000);
    expect(await handle.result()).toMatchObject(textResult('done'));
    await iterating;
    expect(events).toEqual(['created', 'status:working', 'status:completed', 'completed', 'settled:completed']);
    expect(iterated).toEqual(['working', 'completed']);
    expect(events.filter((e) => e.startsWith('status:')).map((e) => e.slice('status:'.length))).toEqual(iterated);
    expect(frames).toEqual([['job:working'], ['job:working'], ['job:completed'], []]);
  });

  it('a task created waiting for input: created, status:input_required, then inputRequired', async () => {
    const { tasks, server } = await scripted();
    server.on('tools/call', () =>
      server.tasks.createResult({ taskId: 't1', status: 'input_required', pollInterval: 1_000 }),
    );
    const events = recordEvents(tasks);
    await tasks.callToolAsTask('job');
    expect(events).toEqual(['created', 'status:input_required', 'inputRequired']);
  });

  it('a created listener that detaches the task: settled follows, and no status for a task no longer tracked', async () => {
    const { tasks } = await scripted();
    const events = recordEvents(tasks);
    tasks.once('created', (metrics) =>
      tasks
        .handles()
        .find((h) => h.taskId === metrics.taskId)
        ?.detach(),
    );
    const handle = await tasks.callToolAsTask('job');
    expect(handle.settled).toBe(true);
    expect(events).toEqual(['created', 'settled:detached']);
    expect(tasks.active).toBe(0);
    expect(tasks.handles()).toEqual([]);
  });

  it('a resumed task fires no status for its placeholder: its first real snapshot is its first status', async () => {
    const { tasks, server, clock } = await scripted();
    server.tasks.createResult({ taskId: 'r1', pollInterval: 1_000 });
    const events = recordEvents(tasks);
    const handle = tasks.resume('r1', { toolName: 'job' });
    expect(events).toEqual(['created']);
    const result = handle.result();
    await clock.advance(0);
    server.tasks.finish('r1', 'completed', { result: textResult('resumed') });
    await clock.advance(1_000);
    expect(await result).toMatchObject(textResult('resumed'));
    expect(events).toEqual(['created', 'status:working', 'status:completed', 'completed', 'settled:completed']);
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

  it('reads a one-page server without a cursor, skipping malformed entries, each told on `error` (D13)', async () => {
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
    const errors: unknown[] = [];
    tasks.on('error', (error) => errors.push(error));
    const listed: Task[] = [];
    for await (const task of tasks.list()) listed.push(task);
    expect(listed.map((t) => [t.taskId, t.status, t.ttl])).toEqual([
      ['a:1', 'working', null],
      ['b:2', 'completed', 60_000],
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TaskProtocolError);
    expect(errors[0]).toMatchObject({ method: 'tasks/list' });
    expect((errors[0] as Error).message).toMatch(/taskId is missing/);
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
