/**
 * The tasks extension wire through the public API: task creation from a flat `CreateTaskResult`,
 * polling at the latest `pollIntervalMs`, the outcome riding on `tasks/get` (a result with or
 * without its own `resultType`, a JSON-RPC error), both `resultType`s a `tasks/get` may carry, a
 * null `resultType` read as absent, and whole-second timestamps. One ManualClock drives client and server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskFailedError, type Task } from '../../lib/index.js';
import {
  immediateTool,
  rpcError,
  taskTool,
  textResult,
  type ExtServerOptions,
  type HandlerContext,
  type Json,
} from '../support/ext-server/index.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import { ACCEPT, closeRigs, extRig, gaps, lastTaskId, type ExtRig } from './support.js';

afterEach(closeRigs);

/** Moves the shared clock in `step` ms steps until `handle` settled (at most `max` ms). */
async function runUntilSettled(
  rig: ExtRig,
  handle: { readonly settled: boolean },
  step = 100,
  max = 60_000,
): Promise<void> {
  for (let spent = 0; !handle.settled && spent < max; spent += step) await rig.clock.advance(step);
}

/** A server whose tasks move only when the test says so. */
function manual(options: ExtServerOptions = {}): ExtServerOptions {
  return { ...options, tools: [taskTool('manual', { advance: 'manual' }), ...(options.tools ?? [])] };
}

describe('creation', () => {
  it('turns a flat CreateTaskResult (resultType "task") into a task handle with every field ([E2], [E9])', async () => {
    const rig = await extRig({ server: { pollIntervalMs: 250, ttlMs: 30_000 } });
    const handle = await rig.tasks.callToolAsTask('slow_compute', { polls: 2 });
    expect(handle.kind).toBe('task');
    expect(handle.wire).toBe('io.modelcontextprotocol/tasks');
    const at = new Date(rig.clock.now()).toISOString();
    expect(handle.task).toEqual({
      taskId: lastTaskId(rig.server),
      status: 'working',
      statusMessage: 'computing job (1/2)',
      createdAt: at,
      lastUpdatedAt: at,
      ttl: 30_000,
      pollInterval: 250,
    });
    // [E9]: the task is durable before its CreateTaskResult: the first read succeeds.
    const result = handle.result();
    await runUntilSettled(rig, handle);
    expect((await result).content).toEqual([{ type: 'text', text: 'computed job' }]);
    expect(rig.server.count('tasks/get')).toBe(2);
  });

  it('takes a null ttlMs as unlimited and leaves the handle without a ttl', async () => {
    const rig = await extRig({ server: manual({ ttlMs: null }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    expect(handle.task?.ttl).toBeNull();
  });
});

describe('observation', () => {
  it('polls at the latest pollIntervalMs as it changes from poll to poll ([E14])', async () => {
    const rig = await extRig({ server: { notifications: 'off', pollIntervalMs: [300, 700, 1_500] } });
    const start = rig.clock.now();
    const handle = await rig.tasks.callToolAsTask('slow_compute', { polls: 5 });
    const result = handle.result();
    await runUntilSettled(rig, handle, 50);
    await result;
    // Created with 300; the 1st poll says 700; the 2nd and later say 1500.
    expect(gaps(rig.server, 'tasks/get', start)).toEqual([300, 700, 1_500, 1_500, 1_500]);
  });

  it('follows a pollIntervalMs a step changes, up and down ([E14])', async () => {
    const steps = [
      { pollIntervalMs: 2_000 },
      { pollIntervalMs: 200 },
      { statusMessage: 'fast now' },
      { result: textResult('paced') },
    ];
    const rig = await extRig({
      server: { notifications: 'off', tools: [taskTool('paced', { pollIntervalMs: 500, steps })] },
    });
    const start = rig.clock.now();
    const handle = await rig.tasks.callToolAsTask('paced');
    const result = handle.result();
    await runUntilSettled(rig, handle, 50);
    expect((await result).content).toEqual(textResult('paced').content);
    expect(gaps(rig.server, 'tasks/get', start)).toEqual([500, 2_000, 200, 200]);
  });

  it('sends no tasks/result and no tasks/list: the outcome rides on tasks/get ([E3])', async () => {
    const rig = await extRig();
    const handle = await rig.tasks.callToolAsTask('slow_compute', { polls: 1 });
    const result = handle.result();
    await runUntilSettled(rig, handle);
    await result;
    expect(rig.server.count('tasks/result')).toBe(0);
    expect(rig.server.count('tasks/list')).toBe(0);
  });
});

const FIVE_MINUTES = 300_000;
const ONE_HOUR = 3_600_000;

/**
 * Makes `rig`'s server refuse (JSON-RPC -32000, as a rate limit) every `tasks/get` that comes
 * sooner than `ms` after the task's creation or its last answered read ([E14]: servers may
 * rate-limit clients that poll more often than `pollIntervalMs`). Returns the refusals so far.
 */
function rateLimit(rig: ExtRig, ms: number): () => number {
  const normal = builtinMethods(rig.server)['tasks/get']!;
  let last = rig.clock.now();
  let refused = 0;
  rig.server.on('tasks/get', (params, ctx) => {
    if (rig.clock.now() - last < ms) {
      refused += 1;
      throw rpcError(-32000, `Too many requests: poll every ${ms} ms`);
    }
    last = rig.clock.now();
    return normal(params, ctx);
  });
  return () => refused;
}

describe("a slow pace: the server's pollIntervalMs is honoured up to maxPollIntervalMs ([E14])", () => {
  it('a server stating 5 minutes is polled every 5 minutes by default: no poll is refused, and the task completes', async () => {
    const rig = await extRig({ server: manual({ notifications: 'off', pollIntervalMs: FIVE_MINUTES, ttlMs: null }) });
    const refused = rateLimit(rig, FIVE_MINUTES);
    const start = rig.clock.now();
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await rig.clock.advance(3 * FIVE_MINUTES);
    rig.server.tasks.complete(lastTaskId(rig.server), textResult('slow and steady'));
    await rig.clock.advance(FIVE_MINUTES);
    expect((await result).content).toEqual(textResult('slow and steady').content);
    expect(gaps(rig.server, 'tasks/get', start)).toEqual([FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES]);
    expect(refused()).toBe(0);
  });

  it('a maxPollIntervalMs the host set (30 s) still caps a 5-minute interval', async () => {
    const rig = await extRig({
      server: manual({ notifications: 'off', pollIntervalMs: FIVE_MINUTES, ttlMs: null }),
      client: { maxPollIntervalMs: 30_000 },
    });
    const start = rig.clock.now();
    await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(FIVE_MINUTES);
    expect(gaps(rig.server, 'tasks/get', start)).toEqual(Array<number>(10).fill(30_000));
  });

  it('an enormous pollIntervalMs is capped at maxPollIntervalMs (1 hour)', async () => {
    const rig = await extRig({ server: manual({ notifications: 'off', pollIntervalMs: 1e12, ttlMs: null }) });
    const start = rig.clock.now();
    await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(3 * ONE_HOUR);
    expect(gaps(rig.server, 'tasks/get', start)).toEqual([ONE_HOUR, ONE_HOUR, ONE_HOUR]);
  });

  it("after a failed poll, the next one still waits the server's full interval, never the shorter retry backoff", async () => {
    const rig = await extRig({ server: manual({ notifications: 'off', pollIntervalMs: FIVE_MINUTES, ttlMs: null }) });
    const normal = builtinMethods(rig.server)['tasks/get']!;
    let reads = 0;
    rig.server.on('tasks/get', (params, ctx) => {
      reads += 1;
      if (reads <= 2) throw rpcError(-32603, 'Internal error (busy)');
      return normal(params, ctx);
    });
    const start = rig.clock.now();
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(4 * FIVE_MINUTES);
    expect(gaps(rig.server, 'tasks/get', start)).toEqual([FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES]);
    expect(handle.settled).toBe(false);
  });
});

describe('the outcome on tasks/get ([E3], [E16])', () => {
  it('reads a completed task’s inline result that has its own resultType', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.complete(lastTaskId(rig.server), textResult('stamped', { structuredContent: { n: 1 } }));
    const result = handle.result();
    await runUntilSettled(rig, handle);
    expect(await result).toMatchObject({ content: [{ type: 'text', text: 'stamped' }], structuredContent: { n: 1 } });
  });

  it('reads a completed task’s inline result without a resultType of its own (absent means "complete")', async () => {
    const rig = await extRig({ server: manual({ stampInnerResultType: false }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.complete(lastTaskId(rig.server), textResult('bare'));
    const result = handle.result();
    await runUntilSettled(rig, handle);
    expect(await result).toEqual(textResult('bare'));
  });

  it('gives the tool result as the tool returned it: no protocol resultType leaks into it (as SDK v2’s own callTool strips it)', async () => {
    const rig = await extRig({ server: manual() });
    const immediate = await rig.tasks.callToolAsTask('greet', { name: 'x' });
    expect(await immediate.result()).toEqual(textResult('Hello, x!'));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.complete(lastTaskId(rig.server), textResult('stamped'));
    const result = handle.result();
    await runUntilSettled(rig, handle);
    expect(await result).toEqual(textResult('stamped'));
  });

  it('rejects a failed task with TaskFailedError carrying its JSON-RPC error and status message ([E15])', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.fail(lastTaskId(rig.server), rpcError(-32000, 'quota exhausted', { left: 0 }), 'no quota left');
    const result = handle.result().catch((error: unknown) => error);
    await runUntilSettled(rig, handle);
    const error = await result;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).toMatchObject({
      rpcError: { code: -32000, message: 'quota exhausted', data: { left: 0 } },
      statusMessage: 'no quota left',
      result: undefined,
      task: { status: 'failed' },
    });
    expect((error as Error).message).toContain('quota exhausted');
  });

  describe('a failed task in a form [E15] forbids still fails with the reason the server sent, at the first read', () => {
    it.each([
      {
        form: 'an error whose code is a numeric string',
        reshape: (task: Record<string, unknown>) => ({
          ...task,
          error: { code: '-32000', message: 'quota exhausted' },
        }),
        expected: { rpcError: { code: -32000, message: 'quota exhausted' } },
      },
      {
        form: 'an error without a message (the status message stands in)',
        reshape: (task: Record<string, unknown>) => ({ ...task, error: { code: -32000 } }),
        expected: { rpcError: { code: -32000, message: 'no quota left' } },
      },
      {
        form: 'a tool result with isError instead of an error (the 2025-11-25 habit)',
        reshape: ({ error: _error, ...task }: Record<string, unknown>) => ({
          ...task,
          result: { content: [{ type: 'text', text: 'disk full' }], isError: true },
        }),
        expected: { result: { content: [{ type: 'text', text: 'disk full' }], isError: true } },
      },
    ])('$form', async ({ reshape, expected }) => {
      const rig = await extRig({ server: manual() });
      const handle = await rig.tasks.callToolAsTask('manual');
      rig.server.tasks.fail(lastTaskId(rig.server), rpcError(-32000, 'stored'), 'no quota left');
      const normal = builtinMethods(rig.server)['tasks/get']!;
      rig.server.on('tasks/get', async (params, ctx) =>
        reshape((await normal(params, ctx)) as Record<string, unknown>),
      );
      const result = handle.result().catch((error: unknown) => error);
      await runUntilSettled(rig, handle);
      const error = await result;
      expect(error).toBeInstanceOf(TaskFailedError);
      expect(error).toMatchObject({ ...expected, statusMessage: 'no quota left', task: { status: 'failed' } });
      expect(rig.server.count('tasks/get')).toBe(1);
    });
  });

  it('reads the fixture protocol_error_job as failed with the JSON-RPC error the server stored', async () => {
    const rig = await extRig();
    const handle = await rig.tasks.callToolAsTask('protocol_error_job');
    const result = handle.result().catch((error: unknown) => error);
    await runUntilSettled(rig, handle);
    expect(await result).toMatchObject({
      name: 'TaskFailedError',
      rpcError: { code: -32603, message: 'Worker crashed' },
      statusMessage: 'Tool execution failed: worker crashed',
    });
  });

  it('rejects a completed task whose result has isError with TaskFailedError carrying that result ([E15], [V18])', async () => {
    const rig = await extRig();
    const handle = await rig.tasks.callToolAsTask('failing_job');
    const result = handle.result().catch((error: unknown) => error);
    await runUntilSettled(rig, handle);
    const error = await result;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).toMatchObject({
      result: { isError: true, content: [{ type: 'text', text: 'job failed: invalid input' }] },
      task: { status: 'completed' },
    });
  });

  for (const resultType of ['complete', 'task', 'omit'] as const) {
    it(`accepts tasks/get replies with resultType ${resultType === 'omit' ? 'absent' : `"${resultType}"`} ([E16])`, async () => {
      const rig = await extRig({ server: { getResultType: resultType } });
      const errors: unknown[] = [];
      rig.tasks.on('error', (error) => errors.push(error));
      const handle = await rig.tasks.callToolAsTask('slow_compute', { polls: 3, label: resultType });
      const seen: string[] = [];
      const iterate = (async () => {
        for await (const task of handle) seen.push(task.status);
      })();
      const result = handle.result();
      await runUntilSettled(rig, handle);
      await iterate;
      expect((await result).content).toEqual([{ type: 'text', text: `computed ${resultType}` }]);
      expect(seen).toEqual(['working', 'working', 'working', 'completed']);
      expect(errors).toEqual([]);
    });
  }
});

describe('a null resultType (D21: a writer that keeps absent fields) is read as absent, that is "complete"', () => {
  it('on a plain tools/call answer, on tasks/get, and on the tasks/update and tasks/cancel acknowledgements', async () => {
    const rig = await extRig({
      server: manual({ pollIntervalMs: 100, notifications: 'off' }),
      client: { onElicitation: () => ACCEPT },
    });
    const normal = builtinMethods(rig.server);
    const nulled =
      (method: string) =>
      async (params: Json, ctx: HandlerContext): Promise<unknown> => ({
        ...((await normal[method]!(params, ctx)) as Json),
        resultType: null,
      });
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) rig.server.on(method, nulled(method));
    rig.server.addTool(immediateTool('plain', textResult('at once')));
    rig.server.on('tools/call', async (params, ctx) =>
      params.name === 'plain' ? nulled('tools/call')(params, ctx) : normal['tools/call']!(params, ctx),
    );
    const errors: unknown[] = [];
    rig.tasks.on('error', (error) => errors.push(error));

    const plain = await rig.tasks.callToolAsTask('plain');
    expect(plain.kind).toBe('immediate');
    expect(await plain.result()).toEqual(textResult('at once'));

    const asking = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'a.txt' });
    const result = asking.result();
    await runUntilSettled(rig, asking);
    expect((await result).isError).not.toBe(true);
    expect(rig.server.count('tasks/update')).toBe(1);

    const running = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(100);
    expect(await running.cancel()).toMatchObject({ status: 'cancelled' });
    expect(rig.server.count('tasks/cancel')).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('whole-second timestamps', () => {
  it('delivers every status change to iterators even when lastUpdatedAt does not move (dedupe by content)', async () => {
    const steps = [
      { statusMessage: 'loading' },
      { status: 'input_required' as const, statusMessage: 'waiting' },
      { status: 'working' as const, statusMessage: 'resumed' },
      { result: textResult('same second') },
    ];
    const rig = await extRig({
      server: {
        wholeSeconds: true,
        notifications: 'off',
        tools: [taskTool('quick', { pollIntervalMs: 100, statusMessage: 'queued', steps })],
      },
    });
    const handle = await rig.tasks.callToolAsTask('quick');
    const seen: Task[] = [];
    const iterate = (async () => {
      for await (const task of handle) seen.push(task);
    })();
    const result = handle.result();
    // Four polls, 100 ms apart, all within the first second.
    await runUntilSettled(rig, handle, 100, 900);
    await iterate;
    expect((await result).content).toEqual(textResult('same second').content);
    expect(seen.map((task) => `${task.status}:${task.statusMessage ?? ''}`)).toEqual([
      'working:queued',
      'working:loading',
      'input_required:waiting',
      'working:resumed',
      'completed:resumed',
    ]);
    expect(new Set(seen.map((task) => task.lastUpdatedAt))).toEqual(new Set(['2026-01-01T00:00:00Z']));
    expect(seen.every((task) => task.createdAt === task.lastUpdatedAt)).toBe(true);
  });

  it('yields an unchanged snapshot only once, however often polls repeat it', async () => {
    const rig = await extRig({ server: manual({ wholeSeconds: true, notifications: 'off', pollIntervalMs: 100 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const seen: string[] = [];
    const iterate = (async () => {
      for await (const task of handle) seen.push(task.status);
    })();
    await rig.clock.advance(1_000);
    rig.server.tasks.complete(lastTaskId(rig.server), textResult('x'));
    await runUntilSettled(rig, handle);
    await iterate;
    expect(rig.server.count('tasks/get')).toBeGreaterThanOrEqual(10);
    expect(seen).toEqual(['working', 'completed']);
  });
});
