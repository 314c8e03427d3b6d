/**
 * The library against a scripted server (spec/support/scripted-server.ts): the behaviours of real
 * servers (D1-D18) and the protocol corner cases (rules [R#]/[V#]; every id is in docs/spec-rules.md)
 * that real servers won't produce on demand. Time is a ManualClock wherever
 * timing matters, so every poll count and delay is exact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskCancelledError,
  TaskClient,
  TaskFailedError,
  TaskNotSupportedError,
  TaskRpcError,
  type TaskClientOptions,
} from '../../lib/index.js';
import { ManualClock, collectSnapshots as collect, flush, until, within, rejection } from '../helpers.js';
import {
  FULL_TASK_CAPS,
  NO_REPLY,
  connectScripted,
  creating,
  gaps,
  raw,
  rpcError,
  type HandlerContext,
  type Json,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';
import { schemas, setUserNotificationHandler } from '../support/sdk.js';

const TOOLS = [
  { name: 'slow', taskSupport: 'optional' as const },
  { name: 'job', taskSupport: 'required' as const },
  { name: 'never', taskSupport: 'forbidden' as const },
  { name: 'plain' },
];
const text = textResult;
const STATUS = 'notifications/tasks/status';
const FIVE_MINUTES = 300_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The scripted rig (see spec/support/scripted-task-client.ts). */
function setup(options: ScriptedServerOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), { tools: TOOLS, ...options }, taskOptions);
}

describe('failed tasks: all three D6 shapes give TaskFailedError with the best message and the payload ([V17], [V18])', () => {
  it('tasks/result returns an isError CallToolResult (TS SDK): message from the result text, payload in .result', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f1' });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    const payload = { content: [{ type: 'text', text: 'disk full' }], isError: true };
    server.tasks.finish('f1', 'failed', { result: payload }, { statusMessage: 'Tool failed' }, true);
    const error = (await failure) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.message).toContain('disk full');
    expect(error.result).toMatchObject(payload);
    expect(error.rpcError).toBeUndefined();
    expect(error.statusMessage).toBe('Tool failed');
    expect(error.taskId).toBe('f1');
    expect(server.count('tasks/result')).toBe(1);
  });

  it('tasks/result returns a bare {_meta} (Python SDK): message from statusMessage, payload in .result', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f2' });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    const bare = { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'f2' } } };
    server.tasks.finish('f2', 'failed', { result: bare }, { statusMessage: 'quota exceeded' }, true);
    const error = (await failure) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.message).toContain('quota exceeded');
    expect(error.statusMessage).toBe('quota exceeded');
    expect(error.result).toMatchObject({ _meta: bare._meta });
    expect(error.result?.content ?? []).toEqual([]);
    expect(error.rpcError).toBeUndefined();
  });

  it('tasks/result answers JSON-RPC -32603 (mcp-go): message from the JSON-RPC error, payload in .rpcError', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f3' });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    const error0 = rpcError(-32603, 'handler exploded: out of memory', { where: 'step 3' });
    server.tasks.finish('f3', 'failed', { error: error0 }, { statusMessage: 'Task failed' }, true);
    const error = (await failure) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.message).toContain('handler exploded: out of memory');
    expect(error.rpcError).toEqual({
      code: -32603,
      message: 'handler exploded: out of memory',
      data: { where: 'step 3' },
    });
    expect(error.result).toBeUndefined();
    expect(error.statusMessage).toBe('Task failed');
  });
  it('the message is the first non-empty text: an image or an empty text block before it is skipped', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f4' });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    const payload = {
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: '' },
        { type: 'text', text: 'disk full' },
        { type: 'text', text: 'details follow' },
      ],
      isError: true,
    };
    server.tasks.finish('f4', 'failed', { result: payload }, { statusMessage: 'Tool failed' }, true);
    const error = (await failure) as TaskFailedError;
    expect(error.message).toBe('Tool "job" failed: disk full');
    expect(error.result).toMatchObject(payload);
  });

  it('an empty JSON-RPC message, empty texts and an empty statusMessage each give way to the next source', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f5' });
    const first = await tasks.callToolAsTask('job');
    creating(server, { taskId: 'f6' });
    const second = await tasks.callToolAsTask('job');
    const failures = [rejection(first.result()), rejection(second.result())];
    server.tasks.finish('f5', 'failed', { error: rpcError(-32603, '') }, { statusMessage: 'quota exceeded' }, true);
    server.tasks.finish(
      'f6',
      'failed',
      { result: { content: [{ type: 'text', text: '' }], isError: true } },
      { statusMessage: '' },
      true,
    );
    const [byStatus, byNothing] = (await Promise.all(failures)) as TaskFailedError[];
    expect(byStatus!.message).toBe('Tool "job" failed: quota exceeded');
    expect(byStatus!.rpcError).toEqual({ code: -32603, message: '' });
    expect(byNothing!.message).toBe('Tool "job" failed: the task failed without a message');
  });

  it('a "completed" task whose tasks/result has isError: true is still a failure ([V18])', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f4' });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    const payload = { content: [{ type: 'text', text: 'validation failed' }], isError: true };
    server.tasks.finish('f4', 'completed', { result: payload }, {}, true);
    const error = (await failure) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.message).toContain('validation failed');
    expect(error.result).toMatchObject(payload);
    expect(tasks.active).toBe(0);
  });
});

describe('cancelled tasks (D7)', () => {
  it('a cancelled notification rejects result() with TaskCancelledError and never calls tasks/result', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'c1' });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    server.tasks.update('c1', { status: 'cancelled', statusMessage: 'Stopped by operator' }, true);
    const error = (await failure) as TaskCancelledError;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error.statusMessage).toBe('Stopped by operator');
    await flush();
    expect(server.count('tasks/result')).toBe(0);
  });

  it('a cancelled status seen by polling also settles without tasks/result', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'c2', pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    server.tasks.update('c2', { status: 'cancelled' });
    await clock.advance(1_000);
    expect(await failure).toBeInstanceOf(TaskCancelledError);
    expect(server.count('tasks/get')).toBe(1);
    expect(server.count('tasks/result')).toBe(0);
  });
});

describe('notifications (R20-R22, A11)', () => {
  it('a terminal notification that arrives BEFORE the CreateTaskResult is not lost: no tasks/get needed', async () => {
    const { server, tasks } = await setup();
    let call: HandlerContext | undefined;
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { name: 'job' });
      call = ctx;
      return NO_REPLY;
    });
    const pending = tasks.callToolAsTask('job');
    await within(until(() => call !== undefined, 2_000, 'tools/call'));
    const created = server.tasks.create({ taskId: 'early' });
    server.tasks.finish('early', 'completed', { result: text('done early') }, { statusMessage: 'all done' }, true);
    await flush(); // the client has handled the notification before the answer even leaves the server
    call?.reply({ task: created });
    const handle = await within(pending);
    expect(handle.task?.status).toBe('completed');
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'done early' }]);
    expect(server.count('tasks/get')).toBe(0);
    expect(server.sent.findIndex((m) => m.method === STATUS)).toBeLessThan(
      server.sent.findIndex((m) => 'result' in m && 'task' in (m.result as Json)),
    );
  });

  it('duplicate and out-of-order snapshots: older dropped, identical yields nothing, terminal sticky ([V5], [V6], A11)', async () => {
    const { server, tasks, start } = await setup();
    creating(server, { taskId: 'ord', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    const base = server.tasks.get('ord');
    const at = (s: number): string => new Date(start + s * 1_000).toISOString();
    const push = (patch: Json): void => server.notify(STATUS, { ...base, ...patch });
    server.tasks.finish('ord', 'completed', { result: text('ok') }, { statusMessage: 'done', lastUpdatedAt: at(4) });
    push({ statusMessage: 'step 1', lastUpdatedAt: at(2) });
    push({ statusMessage: 'step 1', lastUpdatedAt: at(2) }); // identical: nothing new
    push({ statusMessage: 'stale', lastUpdatedAt: at(1) }); // older: dropped
    push({ statusMessage: 'step 2', lastUpdatedAt: at(3) });
    push({ status: 'completed', statusMessage: 'done', lastUpdatedAt: at(4) });
    push({ status: 'completed', statusMessage: 'done', lastUpdatedAt: at(4) }); // duplicate terminal
    push({ status: 'working', statusMessage: 'zombie', lastUpdatedAt: at(5) }); // after terminal: ignored
    push({ status: 'failed', statusMessage: 'late failure', lastUpdatedAt: at(6) }); // terminal is sticky
    expect(await seen).toEqual(['working:', 'working:step 1', 'working:step 2', 'completed:done']);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(handle.task).toMatchObject({ status: 'completed', statusMessage: 'done' });
  });

  it('orders snapshots by lastUpdatedAt in any ISO 8601 form a server writes: offsets, long fractions, whole seconds (A11, D4)', async () => {
    const { server, tasks, start } = await setup();
    creating(server, { taskId: 'forms', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    const base = server.tasks.get('forms');
    const iso = (ms: number): string => new Date(start + ms).toISOString();
    const push = (statusMessage: string, lastUpdatedAt: string): void =>
      server.notify(STATUS, { ...base, statusMessage, lastUpdatedAt });
    server.tasks.finish(
      'forms',
      'completed',
      { result: text('ok') },
      { statusMessage: 'done', lastUpdatedAt: iso(9_000) },
    );
    push('micro', iso(2_000).replace('Z', '456Z')); // .000456: still the same millisecond as 2,000
    push('same ms, longer fraction', iso(2_000).replace('Z', '999Z')); // not older: a tie goes to the later arrival
    push(
      'offset, older',
      iso(1_500)
        .replace(/T(\d\d)/, (_m, h: string) => `T${String((Number(h) + 1) % 24).padStart(2, '0')}`)
        .replace('Z', '+01:00'),
    );
    push('whole seconds, newer', iso(3_000).replace(/\.\d+Z$/, 'Z'));
    push('lower case, newer', iso(4_000).toLowerCase());
    push('done', iso(9_000));
    server.notify(STATUS, { ...base, status: 'completed', statusMessage: 'done', lastUpdatedAt: iso(9_000) });
    const statuses = await seen;
    expect(statuses).toEqual([
      'working:',
      'working:micro',
      'working:same ms, longer fraction',
      'working:whole seconds, newer',
      'working:lower case, newer',
      'working:done',
      'completed:done',
    ]);
  });

  it('timestamps without a UTC offset are read as UTC, not local time: on the day clocks spring forward no update is dropped as stale (D4, D22)', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York'; // 2026-03-08 02:00-02:59 does not exist there
    try {
      const { server, tasks } = await setup();
      // The server's writer drops the offset (a LocalDateTime, a naive isoformat()), microseconds kept.
      const stamp = (time: string): string => `2026-03-08T${time}.123456`;
      creating(server, {
        taskId: 'naive',
        pollInterval: 60_000,
        createdAt: stamp('02:10:00'),
        lastUpdatedAt: stamp('02:10:00'),
      });
      const handle = await tasks.callToolAsTask('job');
      const seen = collect(handle);
      const base = server.tasks.get('naive');
      const push = (statusMessage: string, time: string, status = 'working'): void =>
        server.notify(STATUS, { ...base, status, statusMessage, lastUpdatedAt: stamp(time) });
      push('step 1', '02:30:00');
      push('step 2', '03:10:00'); // an hour before step 1 if read as New York time
      push('stale', '02:20:00'); // truly older: still dropped
      server.tasks.finish('naive', 'completed', { result: text('ok') }, { lastUpdatedAt: stamp('03:20:00') });
      push('done', '03:20:00', 'completed');
      expect(await seen).toEqual(['working:', 'working:step 1', 'working:step 2', 'completed:done']);
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('notifications for unknown task ids are ignored, also during a creation (mcp-go broadcasts, D8)', async () => {
    const { server, tasks } = await setup();
    const stranger = (status: string): void =>
      server.notify(STATUS, { ...server.tasks.get('mine'), taskId: 'stranger', status, statusMessage: 'not yours' });
    server.on('tools/call', () => {
      const result = server.tasks.createResult({ taskId: 'mine', pollInterval: 60_000 });
      stranger('working'); // while the creation is under way
      return result;
    });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    stranger('completed');
    stranger('failed');
    await flush();
    expect(handle.task).toMatchObject({ taskId: 'mine', status: 'working' });
    expect(tasks.active).toBe(1);
    server.tasks.finish('mine', 'completed', { result: text('mine') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'mine' }]);
    expect(await seen).toEqual(['working:', 'completed:']);
    expect(server.params('tasks/result')).toEqual([{ taskId: 'mine' }]);
    expect(server.params('tasks/get').filter((p) => p.taskId === 'stranger')).toEqual([]);
  });
});

describe('negotiation ([R6]-[R9], [V1])', () => {
  it('a server answering a task-augmented call with a plain CallToolResult gives an immediate handle (D16)', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', () => text('ran synchronously'));
    const handle = await tasks.callToolAsTask('slow');
    expect(server.params('tools/call')[0]).toHaveProperty('task');
    expect(handle.kind).toBe('immediate');
    expect(handle.taskId).toBeUndefined();
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ran synchronously' }]);
    expect(await handle.cancel()).toBeUndefined();
    expect(server.count('tasks/get') + server.count('tasks/result') + server.count('tasks/cancel')).toBe(0);
  });

  it.each(['never', 'plain'])(
    'tool "%s" (forbidden / no execution) is called without `task` and gives an immediate handle ([R7])',
    async (tool) => {
      const { server, tasks } = await setup();
      server.on('tools/call', (params) => text(`plain ${String(params.name)}`));
      const handle = await tasks.callToolAsTask(tool, { x: 1 });
      const params = server.params('tools/call')[0]!;
      expect(params).not.toHaveProperty('task');
      expect(params).toMatchObject({ name: tool, arguments: { x: 1 } });
      expect(handle.kind).toBe('immediate');
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: `plain ${tool}` }]);
    },
  );

  it('a server without the tasks capability gets a plain call, even for a "required" tool ([R3], [R6])', async () => {
    const { server, tasks } = await setup({ capabilities: { tools: {} } });
    server.on('tools/call', () => text('plain answer'));
    const handle = await tasks.callToolAsTask('job');
    expect(server.params('tools/call')[0]).not.toHaveProperty('task');
    expect(handle.kind).toBe('immediate');
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'plain answer' }]);
  });

  it('a plain call refused with -32021 naming elicitation: the server’s TaskRpcError naming it, not "runs only as a task" ([E11])', async () => {
    // -32021 is generic: data.requiredCapabilities says which client capability is missing.
    const { server, tasks } = await setup({ capabilities: { tools: {} } });
    server.on('tools/call', () => {
      throw rpcError(-32021, 'Missing required client capability', { requiredCapabilities: { elicitation: {} } });
    });
    const error = await rejection(tasks.callToolAsTask('plain'));
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ code: -32021, method: 'tools/call', kind: 'server', transient: false });
    expect((error as Error).message).toMatch(
      /Missing required client capability \(the server requires a client capability the request did not declare: elicitation\)$/,
    );
    expect((error as Error).message).not.toMatch(/extension|only as a task/);
  });

  it('requireTask: true throws TaskNotSupportedError instead of a plain call', async () => {
    const noTasks = await setup({ capabilities: { tools: {} } });
    const e1 = await rejection(noTasks.tasks.callToolAsTask('job', {}, { requireTask: true }));
    expect(e1).toBeInstanceOf(TaskNotSupportedError);
    expect((e1 as TaskNotSupportedError).feature).toBe('tasks');
    expect(noTasks.server.count('tools/call')).toBe(0);

    const strict = await setup({}, { requireTask: true });
    const e2 = await rejection(strict.tasks.callToolAsTask('never'));
    expect(e2).toBeInstanceOf(TaskNotSupportedError);
    expect((e2 as TaskNotSupportedError).feature).toBe('tool');
    expect(strict.server.count('tools/call')).toBe(0);
  });

  it('reads taskSupport from every tools/list page (the SDK cache keeps only the last page, [S9])', async () => {
    const tools = [
      ...Array.from({ length: 5 }, (_, i) => ({ name: `t${i}` })),
      { name: 'deep', taskSupport: 'required' as const },
    ];
    const { server, tasks } = await setup({ tools, toolsPageSize: 2 });
    creating(server, { taskId: 'deep-1' });
    const handle = await tasks.callToolAsTask('deep');
    expect(server.count('tools/list')).toBe(3);
    expect(server.params('tools/list').map((p) => p.cursor)).toEqual([undefined, 'page-2', 'page-4']);
    expect(handle.kind).toBe('task');
    expect(server.params('tools/call')[0]).toHaveProperty('task');
  });
});

describe('lenient parsing of real servers (D1-D4)', () => {
  it('D1: a Task without ttl is accepted (ttl null)', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'no-ttl', ttl: undefined });
    const handle = await tasks.callToolAsTask('job');
    const reply = server.sent.find((m) => 'result' in m && 'task' in (m.result as Json));
    expect((reply?.result as { task: Json }).task).not.toHaveProperty('ttl');
    expect(handle.kind).toBe('task');
    expect(handle.task?.ttl).toBeNull();
    server.tasks.finish('no-ttl', 'completed', { result: text('fine') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'fine' }]);
  });

  it('D2: without pollInterval, polls back off gently from 500 ms by 1.5x to the 5000 ms cap ([R13])', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'hintless', pollInterval: undefined });
    const handle = await tasks.callToolAsTask('job');
    expect(handle.task?.pollInterval).toBeUndefined();
    await clock.advance(25_000);
    const expected = [500, 750, 1125, 1687.5, 2531.25, 3796.875, 5000, 5000];
    const seen = gaps(server, 'tasks/get', start);
    expect(seen).toHaveLength(expected.length);
    seen.forEach((gap, i) => expect(gap).toBeCloseTo(expected[i]!, 3));
    server.tasks.finish('hintless', 'completed', { result: text('eventually') });
    await clock.advance(5_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'eventually' }]);
  });

  it('pollInterval: 0 is clamped to the 100 ms floor: no request storm ([R16], [V13])', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'zero', pollInterval: 0 });
    await tasks.callToolAsTask('job');
    await clock.advance(2_000);
    const seen = gaps(server, 'tasks/get', start);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThanOrEqual(2_000 / 100 + 1);
    for (const gap of seen) expect(gap).toBeGreaterThanOrEqual(100);
  });

  it('D3: task ids with colons round-trip unchanged', async () => {
    const id = '0f1e2d3c4b5a69788796a5b4c3d2e1f0:6b1c0e2a-5d4f-4a3b-9c8d-7e6f5a4b3c2d';
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: id, pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    expect(handle.taskId).toBe(id);
    await clock.advance(1_000);
    server.tasks.finish(id, 'completed', { result: text('colon ok') });
    await clock.advance(1_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'colon ok' }]);
    expect(server.params('tasks/get')).toEqual([{ taskId: id }, { taskId: id }]);
    expect(server.params('tasks/result')).toEqual([{ taskId: id }]);
  });

  it('D4: whole-second timestamps (createdAt == lastUpdatedAt) still deliver every change', async () => {
    const { server, tasks, clock } = await setup({ wholeSeconds: true });
    creating(server, { taskId: 'secs', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    expect(handle.task?.createdAt).toBe('2026-01-01T00:00:00Z');
    expect(handle.task?.lastUpdatedAt).toBe(handle.task?.createdAt);
    const seen = collect(handle);
    for (const message of ['step 1', 'step 2']) {
      await clock.advance(200);
      server.tasks.update('secs', { statusMessage: message }, true);
      await flush();
    }
    await clock.advance(200);
    server.tasks.finish('secs', 'completed', { result: text('same second') }, { statusMessage: 'done' }, true);
    expect(await seen).toEqual(['working:', 'working:step 1', 'working:step 2', 'completed:done']);
    expect(handle.task?.lastUpdatedAt).toBe('2026-01-01T00:00:00Z');
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'same second' }]);
  });
});

describe('polling budget and wire shape', () => {
  it('tasks/get count over a 10 s task with pollInterval 1000 is at most duration/pollInterval + 2 ([R13], [R21])', async () => {
    const { server, tasks, clock } = await setup();
    server.on('tools/call', () => {
      const result = server.tasks.createResult({ taskId: 'budget', pollInterval: 1_000 });
      clock.setTimeout(() => server.tasks.finish('budget', 'completed', { result: text('10 s of work') }), 10_000);
      return result;
    });
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(15_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: '10 s of work' }]);
    expect(server.count('tasks/get')).toBeGreaterThanOrEqual(9);
    expect(server.count('tasks/get')).toBeLessThanOrEqual(10_000 / 1_000 + 2);
    expect(server.count('tasks/result')).toBe(1);
    expect(tasks.active).toBe(0);
    expect(clock.pending).toBe(0); // no timer left once the last handle settled
  });

  it('tools/call `task` carries only ttl ([S3]); tasks/get and tasks/result params are exactly {taskId} ([S2], [R33], [A15])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { pollInterval: 1_000 });
    const withTtl = await tasks.callToolAsTask('job', { a: 1 }, { ttlMs: 30_000 });
    const noTtl = await tasks.callToolAsTask('slow');
    const [first, second] = server.params('tools/call');
    expect(first!.task).toEqual({ ttl: 30_000 });
    expect(second!.task).toEqual({});
    expect(first).not.toHaveProperty('_meta');
    await clock.advance(1_000);
    server.tasks.finish(withTtl.taskId!, 'completed', { result: text('a') });
    server.tasks.finish(noTtl.taskId!, 'completed', { result: text('b') });
    await clock.advance(1_000);
    await within(Promise.all([withTtl.result(), noTtl.result()]));
    const ids = [withTtl.taskId, noTtl.taskId];
    expect(server.count('tasks/get')).toBeGreaterThanOrEqual(2);
    for (const params of [...server.params('tasks/get'), ...server.params('tasks/result')]) {
      expect(Object.keys(params)).toEqual(['taskId']);
      expect(ids).toContain(params.taskId);
    }
    // The schema's ttl is an integer: a fraction of a millisecond asked for is rounded up.
    const fraction = await tasks.callToolAsTask('slow', {}, { ttlMs: 1_500.25 });
    expect(server.params('tools/call')[2]!.task).toEqual({ ttl: 1_501 });
    await fraction.dispose();
  });
});

describe('poll scheduling ([R13], [R16], [A16])', () => {
  it('a notification counts as a fresh observation: the next poll moves a full pollInterval after it', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'fresh', pollInterval: 1_000 });
    await tasks.callToolAsTask('job');
    await clock.advance(900);
    server.tasks.update('fresh', { statusMessage: 'pushed' }, true);
    await flush();
    await clock.advance(1_500);
    expect(server.received('tasks/get').map((entry) => entry.at - start)).toEqual([1_900]);
  });

  it("follows the server's latest pollInterval, and clamps an enormous one to maxPollIntervalMs (1 hour)", async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'hinted', pollInterval: 1_000, ttl: null });
    await tasks.callToolAsTask('job');
    server.tasks.update('hinted', { pollInterval: 3_000 });
    await clock.advance(10_000);
    expect(gaps(server, 'tasks/get', start)).toEqual([1_000, 3_000, 3_000, 3_000]);
    server.tasks.update('hinted', { pollInterval: 1e12 });
    await clock.advance(2 * 3_600_000 + 10_000);
    expect(gaps(server, 'tasks/get', start).slice(4)).toEqual([3_000, 3_600_000, 3_600_000]);
  });

  it('a server stating 5 minutes is polled every 5 minutes by default: no poll is refused, and the task completes ([R16])', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'slow', pollInterval: FIVE_MINUTES, ttl: null });
    // Polls sooner than the interval are refused, as a rate-limiting server may ([E14]).
    let last = clock.now();
    let refused = 0;
    server.on('tasks/get', (params) => {
      if (clock.now() - last < FIVE_MINUTES) {
        refused += 1;
        throw rpcError(-32000, `Too many requests: poll every ${FIVE_MINUTES} ms`);
      }
      last = clock.now();
      return server.tasks.get(String(params.taskId));
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    await clock.advance(3 * FIVE_MINUTES);
    server.tasks.finish('slow', 'completed', { result: text('slow and steady') });
    await clock.advance(FIVE_MINUTES);
    expect((await within(result)).content).toEqual([{ type: 'text', text: 'slow and steady' }]);
    expect(gaps(server, 'tasks/get', start)).toEqual([FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES]);
    expect(refused).toBe(0);
  });

  it('a maxPollIntervalMs the host set (30 s) still caps a 5-minute interval', async () => {
    const { server, tasks, clock, start } = await setup({}, { maxPollIntervalMs: 30_000 });
    creating(server, { taskId: 'capped', pollInterval: FIVE_MINUTES, ttl: null });
    await tasks.callToolAsTask('job');
    await clock.advance(FIVE_MINUTES);
    expect(gaps(server, 'tasks/get', start)).toEqual(Array<number>(10).fill(30_000));
  });

  it('a task whose ttl (2 minutes) is shorter than its 5-minute interval is read every minute, so its kept result is not missed ([V11])', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'brief', pollInterval: FIVE_MINUTES, ttl: 120_000 });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    await clock.advance(90_000);
    server.tasks.finish('brief', 'completed', { result: text('kept for two minutes') });
    await clock.advance(60_000);
    expect((await within(result)).content).toEqual([{ type: 'text', text: 'kept for two minutes' }]);
    expect(gaps(server, 'tasks/get', start)).toEqual([60_000, 60_000]);
  });

  it("after a failed poll, the next one still waits the server's full interval, never the shorter retry backoff", async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'flaky', pollInterval: FIVE_MINUTES, ttl: null });
    let reads = 0;
    server.on('tasks/get', (params) => {
      reads += 1;
      if (reads <= 2) throw rpcError(-32603, 'Internal error (busy)');
      return server.tasks.get(String(params.taskId));
    });
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(4 * FIVE_MINUTES);
    expect(gaps(server, 'tasks/get', start)).toEqual([FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES]);
    expect(handle.settled).toBe(false);
  });

  it('input_required: tasks/result is called once ([R29]) while polling and statuses go on ([R15])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'ask', pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    server.tasks.update('ask', { status: 'input_required', statusMessage: 'need confirmation' }, true);
    await within(until(() => server.count('tasks/result') === 1, 2_000, 'tasks/result'));
    await clock.advance(1_000);
    expect(server.count('tasks/get')).toBe(1);
    server.tasks.update('ask', { status: 'working', statusMessage: 'confirmed' }, true);
    await flush();
    server.tasks.update('ask', { status: 'input_required', statusMessage: 'need more' }, true);
    await flush();
    server.tasks.update('ask', { status: 'working', statusMessage: 'thanks' }, true);
    await flush();
    server.tasks.finish('ask', 'completed', { result: text('confirmed and done') }, { statusMessage: 'done' }, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'confirmed and done' }]);
    expect(await seen).toEqual([
      'working:',
      'input_required:need confirmation',
      'working:confirmed',
      'input_required:need more',
      'working:thanks',
      'completed:done',
    ]);
    expect(server.count('tasks/result')).toBe(1);
  });
});

describe('cancel() ([R5], [R24], [V23], [V24])', () => {
  it('sends tasks/cancel {taskId}; cancel() returns the cancelled snapshot and result() rejects TaskCancelledError', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'to-cancel' });
    const handle = await tasks.callToolAsTask('job');
    const [snapshot, again] = await within(Promise.all([handle.cancel(), handle.cancel()]));
    expect(snapshot).toMatchObject({ taskId: 'to-cancel', status: 'cancelled' });
    expect(again).toEqual(snapshot); // concurrent cancels share one request
    expect(server.params('tasks/cancel')).toEqual([{ taskId: 'to-cancel' }]);
    expect(await within(handle.cancel())).toEqual(snapshot); // settled: no new request
    expect(server.count('tasks/cancel')).toBe(1);
    expect(await rejection(handle.result())).toBeInstanceOf(TaskCancelledError);
    expect(server.count('tasks/result')).toBe(0);
    expect(server.count('notifications/cancelled')).toBe(0);
  });

  it('cancel() while tasks/result is pending for input_required settles as cancelled ([R29], A3)', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'ask-cancel', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.update('ask-cancel', { status: 'input_required' }, true);
    await within(until(() => server.count('tasks/result') === 1, 2_000, 'tasks/result'));
    const snapshot = await within(handle.cancel());
    expect(snapshot?.status).toBe('cancelled');
    expect(await rejection(handle.result())).toBeInstanceOf(TaskCancelledError);
    expect(server.count('tasks/result')).toBe(1);
    expect(tasks.active).toBe(0);
  });

  it('cancel() racing completion: -32602 from tasks/cancel re-reads the task and reports the truth', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'race' });
    server.on('tasks/cancel', (params) => {
      server.tasks.finish(String(params.taskId), 'completed', { result: text('finished first') });
      throw rpcError(-32602, 'Cannot cancel task in terminal status: completed');
    });
    const handle = await tasks.callToolAsTask('job');
    const snapshot = await within(handle.cancel());
    expect(snapshot?.status).toBe('completed');
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'finished first' }]);
    expect(server.count('tasks/get')).toBeGreaterThanOrEqual(1);
  });

  it('cancel() against a server without tasks.cancel throws TaskNotSupportedError and sends nothing ([R5])', async () => {
    const { server, tasks } = await setup({
      capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
    });
    creating(server, { taskId: 'uncancellable' });
    const handle = await tasks.callToolAsTask('job');
    const error = await rejection(handle.cancel());
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect((error as TaskNotSupportedError).feature).toBe('cancel');
    expect(server.count('tasks/cancel')).toBe(0);
    server.tasks.finish('uncancellable', 'completed', { result: text('kept going') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'kept going' }]);
  });
});

describe("the user's own notifications/tasks/status handler keeps working (issue 2: chain, not replace)", () => {
  it.each(['before', 'after'] as const)(
    'a handler registered %s new TaskClient(client) receives every notification',
    async (when) => {
      const clock = new ManualClock();
      const pair = await connectScripted({ tools: TOOLS, now: clock.now });
      const received: string[] = [];
      const register = (): void =>
        setUserNotificationHandler(pair.client, STATUS, ({ params }) => {
          received.push(
            `${String(params.taskId)}:${String(params.status)}:${(params.statusMessage as string | undefined) ?? ''}`,
          );
        });
      if (when === 'before') register();
      const tasks = new TaskClient(pair.client, { clock });
      if (when === 'after') register();
      cleanups.push(async () => {
        await tasks.close();
        await pair.close();
      });
      const { server } = pair;
      creating(server, { taskId: 'shared', pollInterval: 60_000 });
      const handle = await tasks.callToolAsTask('job');
      const seen = collect(handle);
      server.tasks.update('shared', { statusMessage: 'half way' }, true);
      server.notify(STATUS, { ...server.tasks.get('shared'), taskId: 'someone-else' });
      server.tasks.finish('shared', 'completed', { result: text('shared ok') }, { statusMessage: 'done' }, true);
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'shared ok' }]);
      expect(await seen).toEqual(['working:', 'working:half way', 'completed:done']);
      await within(until(() => received.length === 3, 2_000, 'user handler'));
      expect(received).toEqual(['shared:working:half way', 'someone-else:working:half way', 'shared:completed:done']);
      // Closing the TaskClient removes only its own tap.
      await tasks.close();
      server.notify(STATUS, { ...server.tasks.get('shared'), taskId: 'after-close' });
      await within(until(() => received.length === 4, 2_000, 'user handler after close'));
      expect(received[3]).toBe('after-close:completed:done');
    },
  );
});

describe('hostile snapshots (issue 6)', () => {
  it('a malformed tasks/get reply (unknown status, missing taskId) does not crash; later good polls complete the task', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'shaky', pollInterval: 1_000 });
    let polls = 0;
    server.on('tasks/get', (params, ctx) => {
      polls += 1;
      const good = server.tasks.get(String(params.taskId));
      if (polls === 1) return { ...good, status: 'exploding' };
      if (polls === 2) return raw({ jsonrpc: '2.0', id: ctx.id, result: { nonsense: true } });
      return good;
    });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    await clock.advance(1_000);
    await clock.advance(1_000);
    expect(handle.settled).toBe(false);
    expect(handle.task?.status).toBe('working');
    server.tasks.finish('shaky', 'completed', { result: text('survived') });
    await clock.advance(10_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'survived' }]);
    expect(polls).toBeGreaterThanOrEqual(3);
    expect(await seen).toEqual(['working:', 'completed:']);
  });
});

describe('replies about the wrong task (issue 6: never a wrong result)', () => {
  it('a tasks/get reply that names another task is not adopted: polling stays on our task and the result is ours', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'mine', pollInterval: 1_000 });
    server.tasks.create({ taskId: 'other' });
    let polls = 0;
    server.on('tasks/get', (params) => {
      polls += 1;
      return polls === 1
        ? { ...server.tasks.get('other'), statusMessage: 'not yours' }
        : server.tasks.get(String(params.taskId));
    });
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(1_000);
    expect(handle.task?.taskId).toBe('mine');
    server.tasks.finish('other', 'completed', { result: text('result of someone else') });
    await clock.advance(2_000);
    expect(server.params('tasks/get').map((p) => p.taskId)).toEqual(['mine', 'mine', 'mine']);
    expect(handle.settled).toBe(false);
    server.tasks.finish('mine', 'completed', { result: text('mine') });
    await clock.advance(2_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'mine' }]);
    expect(server.params('tasks/result')).toEqual([{ taskId: 'mine' }]);
    expect(tasks.active).toBe(0);
  });

  it('a tasks/cancel reply that names another task is not adopted: our task is not reported cancelled', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'mine', pollInterval: 1_000 });
    server.tasks.create({ taskId: 'other' });
    server.on('tasks/cancel', () => server.tasks.update('other', { status: 'cancelled' }));
    const handle = await tasks.callToolAsTask('job');
    await within(handle.cancel().catch(() => undefined));
    expect(handle.task?.taskId).toBe('mine');
    expect(handle.task?.status).toBe('working');
    server.tasks.finish('mine', 'completed', { result: text('mine anyway') });
    await clock.advance(3_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'mine anyway' }]);
    expect(tasks.active).toBe(0);
  });
});

describe('hostile notifications (issue 6)', () => {
  it('malformed notifications/tasks/status (no taskId, unknown status, not an object) are ignored without harm', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'calm', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    const good = server.tasks.get('calm');
    server.notify(STATUS, { ...good, taskId: undefined, status: 'completed' });
    server.notify(STATUS, { ...good, status: 'exploded' });
    server.send({ jsonrpc: '2.0', method: STATUS, params: 'garbage' });
    await flush();
    expect(handle.task?.status).toBe('working');
    server.tasks.finish('calm', 'completed', { result: text('calm') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'calm' }]);
    expect(await seen).toEqual(['working:', 'completed:']);
  });
});

describe('the scripted server itself', () => {
  it('sends server->client requests and reads the replies; answers unknown methods with -32601; logs with timestamps', async () => {
    const { server, client, clock, start } = await setup();
    expect(await within(server.request('ping'))).toMatchObject({ result: {} });
    const reply = await within(server.request('no/such/method'));
    expect((reply.error as Json).code).toBe(-32601);
    await clock.advance(250);
    // The code, not the message: SDK v2 keeps the server's text verbatim (no "MCP error -32601:" prefix).
    await expect(client.request({ method: 'custom/thing', params: {} }, schemas.Result)).rejects.toMatchObject({
      code: -32601,
    });
    expect(server.counts()).toMatchObject({ initialize: 1, 'notifications/initialized': 1, 'custom/thing': 1 });
    expect(server.received('custom/thing')[0]!.at).toBe(start + 250);
    expect(server.received('initialize')[0]!.kind).toBe('request');
    expect(server.received('notifications/initialized')[0]!.kind).toBe('notification');
    expect(FULL_TASK_CAPS).toEqual(client.getServerCapabilities()?.tasks);
  });
});
