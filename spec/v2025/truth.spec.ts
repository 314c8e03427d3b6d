/**
 * Never report an outcome the server did not report (reliability review, items 1-3): a failed
 * blocking `tasks/result` ([R29]) is not the task's failure, reordered snapshots after a terminal
 * one are dropped quietly ([A11]), and the library's own stops are never reported as failures.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskCancelledError,
  TaskClosedError,
  TaskFailedError,
  TaskRpcError,
  type TaskClientOptions,
  type TaskHandle,
} from '../../lib/index.js';
import { ManualClock, exampleServerPair, flush, rejection, within } from '../helpers.js';
import {
  NO_REPLY,
  connectScripted,
  creating,
  rpcError,
  type HandlerContext,
  type Json,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';
import { TaskClient } from '../../lib/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: ScriptedServerOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), options, taskOptions);
}

/** Every status an iterator yields. */
function statuses(handle: TaskHandle): Promise<string[]> {
  return within(
    (async () => {
      const seen: string[] = [];
      for await (const task of handle) seen.push(task.status);
      return seen;
    })(),
    5_000,
    'iterator',
  );
}

describe('a JSON-RPC error on the blocking tasks/result is not an outcome ([R29], [V16])', () => {
  for (const [code, message] of [
    [-32001, 'Request timed out'],
    [-32603, 'Internal error'],
  ] as const) {
    it(`${code} while tasks/get says input_required: no failure, polling goes on, the wait reopens, the real result arrives`, async () => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 't1', status: 'input_required' });
      let failures = 1;
      const board = server.tasks.handlers['tasks/result']!;
      server.on('tasks/result', (params, ctx) => {
        if (failures > 0) {
          failures -= 1;
          throw rpcError(code, message);
        }
        return board(params, ctx);
      });
      const handle = await tasks.callToolAsTask('job');
      const seen = statuses(handle);
      const result = handle.result();
      await clock.advance(0);
      expect(server.count('tasks/result')).toBe(1);
      expect(handle.settled).toBe(false);
      // The failed wait is reported, not the task's end.
      expect(errors.some((e) => e instanceof TaskRpcError && e.code === code)).toBe(true);
      // Still input_required at the next poll: the wait is opened again (once).
      await clock.advance(1_000);
      expect(server.count('tasks/get')).toBe(1);
      expect(server.count('tasks/result')).toBe(2);
      await clock.advance(1_000);
      expect(server.count('tasks/result')).toBe(2);
      server.tasks.finish('t1', 'completed', { result: textResult('done') });
      await clock.advance(1_000);
      await expect(within(result)).resolves.toMatchObject({ content: [{ text: 'done' }] });
      expect(await seen).toEqual(['input_required', 'completed']);
    });
  }

  it('-32602 on the blocking wait while the task lives is not a vanished task: reported, polling goes on, the real result arrives ([V26])', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 't5', status: 'input_required' });
    const board = server.tasks.handlers['tasks/result']!;
    server.on('tasks/result', (params, ctx) => {
      if ((server.tasks.get('t5') as { status?: string }).status === 'input_required')
        throw rpcError(-32602, 'Invalid params: task is not in a terminal state');
      return board(params, ctx);
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    await clock.advance(0);
    expect(handle.settled).toBe(false);
    expect(errors.some((e) => e instanceof TaskRpcError && e.code === -32602)).toBe(true);
    await clock.advance(1_000);
    expect(handle.settled).toBe(false);
    server.tasks.finish('t5', 'completed', { result: textResult('real result') }, {}, true);
    await clock.advance(1_000);
    await expect(within(result)).resolves.toMatchObject({ content: [{ text: 'real result' }] });
  });

  it('-32602 on tasks/result for a task the server reports completed means its result is unknown or expired ([V26])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't6', status: 'working' });
    server.on('tasks/result', () => {
      throw rpcError(-32602, 'Invalid params');
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    server.tasks.finish('t6', 'completed', { result: textResult('unreachable') }, {}, true);
    await clock.advance(100);
    const error = (await within(result)) as Error;
    expect(error.name).toMatch(/TaskNotFoundError|TaskExpiredError/);
  });

  it('-32602 on tasks/result for a task the server reports failed is that task’s own error ([V17])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't7', status: 'working' });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    server.tasks.finish(
      't7',
      'failed',
      { error: { code: -32602, message: 'Invalid params: the input file is malformed' } },
      {},
      true,
    );
    await clock.advance(100);
    const error = (await within(result)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({
      code: -32602,
      message: expect.stringContaining('the input file is malformed'),
    });
  });

  it('a failed task’s own -32602 survives the server dropping the task once it handed the result out ([V17], [V25])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't7b', status: 'working' });
    const board = server.tasks.handlers['tasks/result']!;
    server.on('tasks/result', async (params, ctx) => {
      try {
        return await board(params, ctx);
      } finally {
        server.tasks.delete('t7b'); // consumed on retrieval, as some servers do
      }
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    server.tasks.finish(
      't7b',
      'failed',
      { error: rpcError(-32602, 'Invalid arguments: x must be a number') },
      {},
      true,
    );
    await clock.advance(100);
    const error = (await within(result)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({ code: -32602, message: expect.stringContaining('x must be a number') });
  });

  it('a failed task’s own -32602 needs no second read: a tasks/get left unanswered from then on changes nothing ([V17])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't7c', status: 'working' });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    server.tasks.finish('t7c', 'failed', { error: rpcError(-32602, 'Invalid arguments') }, {}, true);
    const gets = server.count('tasks/get');
    server.on('tasks/get', () => NO_REPLY);
    await clock.advance(100);
    const error = (await within(result)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({ code: -32602 });
    expect(server.count('tasks/get')).toBe(gets);
  });

  it('a tasks/get lost after a refused blocking wait does not stall the task: the wait reopens and the result arrives ([R29], [V26])', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't5b', status: 'input_required' });
    let waits = 0;
    let dropNextGet = false;
    const get = server.tasks.handlers['tasks/get']!;
    server.on('tasks/result', () => {
      waits += 1;
      if (waits === 1) {
        dropNextGet = true;
        throw rpcError(-32602, 'Invalid params: task is not in a terminal state');
      }
      return { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't5b' } }, ...textResult('done') };
    });
    server.on('tasks/get', (params, ctx) => {
      if (!dropNextGet) return get(params, ctx);
      dropNextGet = false;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    for (let i = 0; i < 10; i += 1) await clock.advance(60_000);
    expect(waits).toBeGreaterThan(1);
    await expect(within(result)).resolves.toMatchObject({ content: [{ text: 'done' }] });
  });

  it('the wait is not reopened more than once per poll interval, even on a notification storm', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't2', status: 'input_required' });
    server.on('tasks/result', () => {
      throw rpcError(-32001, 'Request timed out');
    });
    const handle = await tasks.callToolAsTask('job');
    void handle.result().catch(() => {});
    await clock.advance(0);
    for (let i = 0; i < 20; i += 1) {
      server.tasks.update('t2', { statusMessage: `still waiting ${i}` }, true);
      await clock.advance(10);
    }
    // 200 ms of notifications inside one 1000 ms poll interval: still the first wait only.
    expect(server.count('tasks/result')).toBe(1);
    await clock.advance(1_000);
    expect(server.count('tasks/result')).toBe(2);
    await tasks.close();
  });

  it('an error after the server reported the task terminal is the outcome: a fresh tasks/result fetches it', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't3', status: 'input_required' });
    let held: HandlerContext | undefined;
    const board = server.tasks.handlers['tasks/result']!;
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 't3' });
      if (held === undefined) {
        held = ctx;
        return NO_REPLY;
      }
      return board(params, ctx);
    });
    const handle = await tasks.callToolAsTask('job');
    const seen = statuses(handle);
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    server.tasks.finish('t3', 'failed', { error: rpcError(-32603, 'boom') }, {}, true);
    // The held blocking request now fails with a gateway error: not the task's error.
    held?.fail(rpcError(-32001, 'Request timed out'));
    await clock.advance(100);
    const error = (await within(result)) as { name: string; rpcError?: { message: string } };
    expect(error.name).toBe('TaskFailedError');
    expect(error.rpcError?.message).toBe('boom');
    expect(await seen).toEqual(['input_required', 'failed']);
  });

  it('a gateway error kept from the wait is not the outcome when the fresh tasks/result fails for another reason than the task being gone (it times out)', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't3b', status: 'input_required' });
    let held: HandlerContext | undefined;
    server.on('tasks/result', (_params, ctx) => {
      if (held === undefined) {
        held = ctx;
        return NO_REPLY;
      }
      return NO_REPLY; // the fresh request times out, every attempt
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    server.tasks.finish('t3b', 'failed', { error: rpcError(-32603, 'boom') }, {}, true);
    // The held wait fails with a gateway's error after the failed notification: kept, not the outcome.
    held?.fail(rpcError(-32001, 'Request timed out'));
    for (let i = 0; i < 20 && !handle.settled; i += 1) await clock.advance(60_000);
    const error = (await within(result)) as { name: string; rpcError?: { code: number } };
    expect(handle.settled).toBe(true);
    expect(server.count('tasks/result')).toBeGreaterThan(1);
    expect(error.name).not.toBe('TaskFailedError');
    expect(error.rpcError?.code).toBeUndefined();
  });

  it('an untagged successful reply while the task still runs waits for the terminal status', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 't4', status: 'input_required' });
    server.on('tasks/result', () => textResult('early'));
    const handle = await tasks.callToolAsTask('job');
    const seen = statuses(handle);
    const result = handle.result();
    await clock.advance(0);
    expect(handle.settled).toBe(false);
    server.tasks.update('t4', { status: 'completed' });
    await clock.advance(1_000);
    await expect(within(result)).resolves.toMatchObject({ content: [{ text: 'early' }] });
    expect(await seen).toEqual(['input_required', 'completed']);
  });
});

describe('reordered snapshots after a terminal one ([A11])', () => {
  it('an older working snapshot after a completed notification is dropped without any error event', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'r1' });
    let held: HandlerContext | undefined;
    let payload: HandlerContext | undefined;
    server.on('tasks/get', (params, ctx) => {
      server.assertRequest('tasks/get', params, { taskId: 'r1' });
      held = ctx;
      return NO_REPLY;
    });
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 'r1' });
      payload = ctx;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const stale = server.tasks.get('r1');
    await clock.advance(1_000); // a poll goes out and is held
    await clock.advance(5);
    server.tasks.finish('r1', 'completed', { result: textResult('ok') }, {}, true);
    await clock.advance(5);
    held?.reply(stale); // the poll's answer, older than the terminal snapshot, arrives last
    await clock.advance(5);
    payload?.reply(textResult('ok'));
    await clock.advance(100);
    await expect(within(handle.result())).resolves.toMatchObject({ content: [{ text: 'ok' }] });
    expect(errors).toEqual([]);
  });

  it('whole-second timestamps (D4): a working snapshot with the same lastUpdatedAt as the terminal one is dropped quietly', async () => {
    const { server, tasks, clock, errors } = await setup({ wholeSeconds: true });
    creating(server, { taskId: 'r2' });
    let payload: HandlerContext | undefined;
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 'r2' });
      payload = ctx;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const base = server.tasks.get('r2');
    const working = { ...base, statusMessage: 'step 1' };
    server.tasks.finish('r2', 'completed', { result: textResult('ok') }, { lastUpdatedAt: base.lastUpdatedAt }, true);
    await clock.advance(10);
    server.notify('notifications/tasks/status', working);
    await clock.advance(10);
    payload?.reply(textResult('ok'));
    await clock.advance(100);
    await expect(within(handle.result())).resolves.toMatchObject({ content: [{ text: 'ok' }] });
    expect(errors).toEqual([]);
  });

  it('whole-second timestamps (D4) never make the ttl end early: the expiring warning names an expiry no earlier than the real one', async () => {
    // Created at 00:00:00.999 real time, stamped "00:00:00Z"; a change 2 ms later is stamped "00:00:01Z".
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00.999Z'));
    const pair = await connectScripted({
      tools: [{ name: 'job', taskSupport: 'required' }],
      now: clock.now,
      wholeSeconds: true,
    });
    const tasks = new TaskClient(pair.client, { clock });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const realCreation = clock.now();
    pair.server.on('tools/call', () =>
      pair.server.tasks.createResult({ taskId: 'd4-ttl', ttl: 10_000, pollInterval: 5_000 }),
    );
    const handle = await tasks.callToolAsTask('job');
    const warned: number[] = [];
    handle.on('expiring', (_metrics, expiry) => warned.push(expiry.expiresAt));
    await clock.advance(2);
    pair.server.tasks.update('d4-ttl', { statusMessage: 'step 1' }, true);
    await flush();
    await clock.advance(9_500);
    expect(warned.length).toBe(1);
    expect(warned[0]).toBeGreaterThanOrEqual(realCreation + 10_000);
    handle.detach();
  });

  it('a strictly newer non-terminal snapshot after a terminal one is still reported as a protocol error', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'r3' });
    let held: HandlerContext | undefined;
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 'r3' });
      held = ctx;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.finish('r3', 'completed', { result: textResult('ok') }, {}, true);
    await clock.advance(10);
    // While the payload is being fetched, a newer "working" snapshot arrives: a broken server.
    server.notify('notifications/tasks/status', {
      ...server.tasks.get('r3'),
      status: 'working',
      lastUpdatedAt: server.iso(clock.now() + 1_000),
    });
    await clock.advance(10);
    held?.reply(textResult('ok'));
    await clock.advance(100);
    await within(handle.result());
    expect(errors.map((e) => e.name)).toContain('TaskProtocolError');
  });

  it('real runs against the example server report no error events', async () => {
    const pair = await exampleServerPair({ stepMs: 5, pollInterval: 5 });
    const tasks = new TaskClient(pair.client, { minPollIntervalMs: 1 });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const errors: unknown[] = [];
    tasks.on('error', (error) => errors.push(error));
    const handles = await Promise.all(
      Array.from({ length: 40 }, (_, i) => tasks.callToolAsTask('analyze', { id: i, steps: 3 })),
    );
    await within(Promise.all(handles.map((h) => h.result())), 10_000);
    expect(errors).toEqual([]);
  });
});

describe("the library's own stops are never reported as failures", () => {
  it('close() while polls and waits are in flight reports no "Tracking of the task stopped" error, before or after it resolved', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { status: 'input_required' });
    server.on('tasks/get', () => NO_REPLY);
    server.on('tasks/result', () => NO_REPLY);
    const handles = await Promise.all([1, 2, 3].map(() => tasks.callToolAsTask('job')));
    const ends = handles.map((h) => h.result().catch((error: unknown) => error));
    await clock.advance(1_000); // polls in flight, blocking waits open
    await tasks.close();
    await clock.advance(60_000);
    for (const end of await Promise.all(ends)) expect(end).toBeInstanceOf(TaskClosedError);
    expect(errors.filter((e) => /Tracking of the task stopped/.test(e.message))).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a completion notification settling the task while its confirming tasks/get is open reports nothing', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 's1', status: 'input_required' });
    const gets: HandlerContext[] = [];
    server.on('tasks/get', (_params, ctx) => {
      gets.push(ctx);
      return NO_REPLY;
    });
    server.on('tasks/result', (p) => ({
      ...textResult('fine'),
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: p.taskId } },
    }));
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(0);
    expect(gets.length).toBe(1); // the confirming read of the tagged payload is open
    server.tasks.update('s1', { status: 'completed' }, true);
    await expect(within(handle.result())).resolves.toMatchObject({ content: [{ text: 'fine' }] });
    await clock.advance(60_000);
    expect(errors).toEqual([]);
  });

  it('a task settling while a confirming tasks/get and retries are in flight reports nothing', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 's2', status: 'input_required' });
    let gets = 0;
    server.on('tasks/get', () => {
      gets += 1;
      throw rpcError(-32001, 'Request timed out', { timeout: 1 });
    });
    server.on('tasks/result', (p) => ({
      ...textResult('fine'),
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: p.taskId } },
    }));
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    // The confirming read keeps failing and is retried; the tagged payload settles the task
    // meanwhile, and the retries stop without a report.
    for (let i = 0; i < 20 && !handle.settled; i += 1) await clock.advance(1_000);
    await expect(within(result)).resolves.toMatchObject({ content: [{ text: 'fine' }] });
    await clock.advance(60_000);
    expect(gets).toBeGreaterThan(0);
    expect(errors.filter((e) => /Tracking of the task stopped/.test(e.message))).toEqual([]);
  });
});

describe('a tagged tasks/result that says nothing about the outcome is never taken for a success (D6, D7, [V17], [V18])', () => {
  /**
   * A Python-SDK-like server (D5, D6, D7, D14): the task waits in input_required with the blocking
   * tasks/result open; the task then ends (`ending`, without a notification) and the wait answers
   * at once with only the related-task `_meta`: no content, no isError. The first `failingGets`
   * tasks/get requests fail with -32603.
   */
  async function bareEnding(taskId: string, ending: Json, failingGets: number) {
    const rig = await setup();
    const { server } = rig;
    creating(server, { taskId, status: 'input_required' });
    server.on('tasks/result', (params) => {
      server.tasks.update(taskId, ending);
      return { _meta: { 'io.modelcontextprotocol/related-task': { taskId: params.taskId } } };
    });
    const get = server.tasks.handlers['tasks/get']!;
    let failures = failingGets;
    server.on('tasks/get', (params, ctx) => {
      if (failures <= 0) return get(params, ctx);
      failures -= 1;
      throw rpcError(-32603, 'Internal error');
    });
    const handle = await rig.tasks.callToolAsTask('job');
    const seen = statuses(handle);
    const outcome = handle.result().then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    await rig.clock.advance(0);
    // The bare payload arrived and its confirming tasks/get failed: no outcome is guessed from it.
    expect(server.count('tasks/result')).toBe(1);
    expect(server.count('tasks/get')).toBe(1);
    expect(handle.settled).toBe(false);
    expect(rig.errors.some((e) => e instanceof TaskRpcError && e.code === -32603)).toBe(true);
    return { ...rig, handle, seen, outcome };
  }

  it('the next poll says failed: result() rejects TaskFailedError with the statusMessage', async () => {
    const { server, clock, seen, outcome } = await bareEnding(
      'b1',
      { status: 'failed', statusMessage: 'disk full' },
      1,
    );
    await clock.advance(1_000);
    const end = await within(outcome);
    expect(end.ok).toBe(false);
    const error = (end as { error: TaskFailedError }).error;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.message).toContain('disk full');
    expect(error.statusMessage).toBe('disk full');
    expect(error.result?.content ?? []).toEqual([]);
    expect(await seen).toEqual(['input_required', 'failed']);
    expect(server.count('tasks/result')).toBe(1); // the kept payload is not fetched again
  });

  it('the next poll says cancelled: result() rejects TaskCancelledError', async () => {
    const { server, clock, seen, outcome } = await bareEnding(
      'b2',
      { status: 'cancelled', statusMessage: 'Stopped by operator' },
      1,
    );
    await clock.advance(1_000);
    const end = await within(outcome);
    expect(end.ok).toBe(false);
    const error = (end as { error: TaskCancelledError }).error;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error.statusMessage).toBe('Stopped by operator');
    expect(await seen).toEqual(['input_required', 'cancelled']);
    expect(server.count('tasks/result')).toBe(1);
  });

  it('the next poll says completed: result() resolves with the kept payload', async () => {
    const { server, clock, seen, outcome } = await bareEnding('b3', { status: 'completed' }, 1);
    await clock.advance(1_000);
    const end = await within(outcome);
    expect(end.ok).toBe(true);
    const result = (end as { result: { content: unknown[]; _meta?: unknown } }).result;
    expect(result.content).toEqual([]);
    expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: 'b3' } });
    expect(await seen).toEqual(['input_required', 'completed']);
    expect(server.count('tasks/result')).toBe(1);
  });

  it('tasks/get keeps failing: after the poll-failure limit the task fails with the poll error, never a success', async () => {
    const { server, clock, handle, outcome, seen } = await bareEnding(
      'b4',
      { status: 'failed', statusMessage: 'disk full' },
      Infinity,
    );
    const streamEnd = seen.then(
      () => 'ended without an error',
      (reason: unknown) => reason,
    );
    for (let i = 0; i < 60 && !handle.settled; i += 1) await clock.advance(1_000);
    const end = await within(outcome);
    expect(end.ok).toBe(false);
    const error = (end as { error: TaskRpcError }).error;
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error.code).toBe(-32603);
    // The status stream ends with the same failure (its status never became terminal).
    expect(await streamEnd).toBe(error);
    // The confirming read, then the default limit of 5 consecutive failed polls.
    expect(server.count('tasks/get')).toBe(1 + 5);
    await clock.advance(60_000);
    expect(server.count('tasks/get')).toBe(1 + 5);
  });
});

describe('a tasks/result error once the task ended is the task’s outcome (final review)', () => {
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

  it('a "not found" from the terminal tasks/result is final while the blocking one is still open, once that one had one request timeout to bring the payload (D19)', async () => {
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
    expect(handle.settled).toBe(false);
    await clock.advance(10_000);
    const error = await rejection(handle.result());
    expect((error as Error).name).toMatch(/TaskNotFoundError|TaskExpiredError/);
    expect(n).toBe(2);
  });
});

describe('what the waiting tasks/result delivers is the task’s outcome, whatever answers around it ([V16], [V17], [V19])', () => {
  it('a tagged result in hand survives a poll in flight that then answers -32602 because the server dropped the task (D9) ([V16], [V19])', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'kept', status: 'input_required', ttl: 3_000 });
    // Every tasks/get is held: the poll in flight, and the read that confirms the delivered result.
    const reads: HandlerContext[] = [];
    server.on('tasks/get', (_params, ctx) => {
      reads.push(ctx);
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const outcome = handle.result().then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    await clock.advance(0);
    expect(server.count('tasks/result')).toBe(1); // [R29]: the wait is open
    await clock.advance(1_000);
    expect(reads).toHaveLength(1); // a poll is out, its answer delayed
    // The task completes: the waiting tasks/result delivers its result, tagged with its id...
    server.tasks.finish('kept', 'completed', { result: textResult('done') });
    await clock.advance(0);
    expect(handle.settled).toBe(false);
    // ...then the server drops the task (D9), and the poll still out answers "unknown task".
    server.tasks.delete('kept');
    reads[0]!.fail(rpcError(-32602, 'Task not found: kept'));
    await clock.advance(0);
    for (const read of reads.slice(1)) read.fail(rpcError(-32602, 'Task not found: kept'));
    await clock.advance(2_000);
    const end = await within(outcome);
    expect(end).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'done' }] } });
    expect(handle.task?.status).toBe('completed');
    expect(server.count('tasks/result')).toBe(1);
    expect(errors.filter((e) => e.name === 'TaskNotFoundError' || e.name === 'TaskExpiredError')).toEqual([]);
  });

  /**
   * A server that hands a task's result out once (D19): its task `once` waits for input, the
   * waiting tasks/result gets the outcome, and any tasks/result after it answers -32002. With
   * `late`, the answer that carries the outcome is held on its way (another HTTP stream, a slow
   * proxy) until `release()`: the server has handed the outcome out already meanwhile.
   */
  function handsOutOnce(
    server: Awaited<ReturnType<typeof setup>>['server'],
    { late = false } = {},
  ): { release(): void } {
    creating(server, { taskId: 'once', status: 'input_required' });
    const board = server.tasks.handlers['tasks/result']!;
    let handedOut = false;
    const held: Array<() => void> = [];
    server.on('tasks/result', async (params, ctx) => {
      if (handedOut) throw rpcError(-32002, 'Task not found');
      let outcome: unknown;
      try {
        outcome = await board(params, ctx);
      } catch (error) {
        if (!late) throw error;
        held.push(() => ctx.fail(error as Parameters<typeof ctx.fail>[0]));
        return NO_REPLY;
      } finally {
        handedOut = true;
      }
      if (!late) return outcome;
      held.push(() => ctx.reply(outcome));
      return NO_REPLY;
    });
    return { release: () => held.splice(0).forEach((answer) => answer()) };
  }

  it('the result a server that hands it out once (D19) gave the waiting tasks/result is the task’s, even when the short tasks/result for the terminal task answers "not found" before it arrives ([V16], [V17])', async () => {
    const { server, tasks, clock, errors } = await setup();
    const late = handsOutOnce(server, { late: true });
    const handle = await tasks.callToolAsTask('job');
    const outcome = handle.result().then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    await clock.advance(0);
    expect(server.count('tasks/result')).toBe(1); // [R29]: the wait is open
    server.tasks.finish('once', 'completed', { result: textResult('done') }, {}, true);
    await clock.advance(1_000);
    // The short request for the terminal task found the result handed out already.
    expect(server.count('tasks/result')).toBe(2);
    expect(handle.settled).toBe(false);
    late.release();
    const end = await within(outcome);
    expect(end).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'done' }] } });
    expect(server.count('tasks/result')).toBe(2);
    expect(errors.filter((e) => e.name === 'TaskNotFoundError')).toEqual([]);
  });

  /**
   * Starts `job` on a server that hands its result out once and holds back the blocking
   * `tasks/result`'s answer (`late`), ends the task (completed with "done", or as `ending` says),
   * and moves the clock on `ms`: the short `tasks/result` of the ended task has answered "not found".
   */
  async function heldOutcome(
    rig: Awaited<ReturnType<typeof setup>>,
    ms: number,
    callOptions: { timeoutMs?: number } = {},
    ending: Parameters<typeof rig.server.tasks.finish>[1] = 'completed',
    payload: Parameters<typeof rig.server.tasks.finish>[2] = { result: textResult('done') },
  ) {
    const late = handsOutOnce(rig.server, { late: true });
    const handle = await rig.tasks.callToolAsTask('job', {}, callOptions);
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(0);
    rig.server.tasks.finish('once', ending, payload, {}, true);
    await rig.clock.advance(ms);
    expect(rig.server.count('tasks/result')).toBe(2);
    return { late, handle, result };
  }

  it('a failed task’s own error that a server that hands it out once (D19) gave the waiting tasks/result is the task’s, even when the short tasks/result answers "not found" before it arrives ([V17], [V18])', async () => {
    const rig = await setup();
    const { late, handle, result } = await heldOutcome(rig, 1_000, {}, 'failed', {
      error: rpcError(-32050, 'disk full'),
    });
    expect(handle.settled).toBe(false);
    late.release();
    const error = (await within(result)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({ code: -32050, message: 'disk full' });
  });

  it('the wait for the blocking tasks/result after the short one found the result handed out is bounded: one request timeout, then TaskNotFoundError (its answer lost)', async () => {
    const rig = await setup({}, { requestTimeoutMs: 5_000 });
    const { server, clock } = rig;
    const { handle, result } = await heldOutcome(rig, 1_000);
    await clock.advance(3_000);
    expect(handle.settled).toBe(false);
    await clock.advance(2_000);
    expect(handle.settled).toBe(true);
    expect(((await within(result)) as Error).name).toBe('TaskNotFoundError');
    expect(server.count('tasks/result')).toBe(2);
  });

  it('a status notification during that wait neither ends nor restarts it: the bound still holds, and no other tasks/result goes out', async () => {
    // Whole-second timestamps (D4): the end told again within its second is the very same snapshot.
    const rig = await setup({ wholeSeconds: true }, { requestTimeoutMs: 5_000 });
    const { server, clock } = rig;
    const { handle, result } = await heldOutcome(rig, 100);
    // The server tells the end again (D8: some servers repeat it).
    server.tasks.update('once', {}, true);
    await clock.advance(4_000);
    expect(handle.settled).toBe(false);
    await clock.advance(1_000);
    expect(handle.settled).toBe(true);
    expect(((await within(result)) as Error).name).toBe('TaskNotFoundError');
    expect(server.count('tasks/result')).toBe(2);
  });

  it('a call deadline bounds that wait too: the call ends at its deadline, not one request timeout later', async () => {
    const rig = await setup({}, { requestTimeoutMs: 60_000, cancelGraceMs: 500 });
    const { clock } = rig;
    const { handle, result } = await heldOutcome(rig, 1_000, { timeoutMs: 5_000 });
    expect(handle.settled).toBe(false);
    await clock.advance(4_000);
    await clock.advance(500);
    expect(handle.settled).toBe(true);
    expect(((await within(result)) as Error).name).toBe('TaskTimeoutError');
  });

  it('a failed task’s own error from the waiting tasks/result, arriving after its failed notification, is kept when a server that hands a result out once (D19) answers the next tasks/result -32002 ([V17], [V18])', async () => {
    const { server, tasks, clock, errors } = await setup();
    handsOutOnce(server);
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    expect(server.count('tasks/result')).toBe(1); // [R29]: the wait is open
    // The failed notification goes out just before the waiting tasks/result answers with the error.
    server.tasks.finish('once', 'failed', { error: rpcError(-32050, 'disk full') }, {}, true);
    await clock.advance(1_000);
    const error = (await within(result)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({ code: -32050, message: 'disk full' });
    expect(handle.task?.status).toBe('failed');
    // Not reported as a failed wait: it was the task's outcome.
    expect(errors.map((e) => e.message)).toEqual([]);
  });

  it('a malformed answer to the waiting tasks/result, once the short one for the terminal task is out, is reported and ignored: the short one brings the result', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'pair', status: 'input_required' });
    const held: Array<(result: unknown) => void> = [];
    server.on('tasks/result', (_params, ctx) => {
      held.push((result) => ctx.reply(result));
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    expect(held).toHaveLength(1); // the blocking wait
    server.tasks.finish('pair', 'completed', { result: textResult('done') }, {}, true);
    await clock.advance(1_000);
    expect(held).toHaveLength(2); // the short request for the terminal task
    // The blocking one answers something malformed: a result tagged with another task.
    held[0]!({ content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'another' } } });
    await flush();
    held[1]!(textResult('done'));
    expect(await within(result)).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    expect(errors.map((e) => e.name)).toContain('TaskProtocolError');
  });

  it('a failed task’s own error from the waiting tasks/result, with no notification before it (rmcp sends none), is still the task’s when the next tasks/result finds the result handed out (D19, [V17])', async () => {
    const { server, tasks, clock } = await setup();
    handsOutOnce(server);
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((error: unknown) => error);
    await clock.advance(0);
    expect(server.count('tasks/result')).toBe(1);
    // Failed without a notification: the waiting tasks/result answers with the task's error while
    // the client still holds input_required; the next poll shows failed.
    server.tasks.finish('once', 'failed', { error: rpcError(-32050, 'disk full') });
    await clock.advance(2_000);
    const error = (await within(result)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.rpcError).toMatchObject({ code: -32050, message: 'disk full' });
  });
});
