/**
 * Hostile or broken servers (issue 6), against the scripted server (spec/support/scripted-server.ts):
 * every malformed or abusive thing a server can send. Each test asserts exactly what the library
 * does (a clamp or a typed error) and that nothing crashes, hangs, grows without bound or yields a
 * wrong result. Time is a ManualClock wherever timing matters. The few cases that hinge on the SDK
 * Client's own request timer (which runs on real time) use short real timeouts, and every wait is
 * bounded by `within`. docs/reliability.md maps every case to its test.
 *
 * Covered in spec/v2025/protocol.spec.ts and not repeated here: a tasks/get or tasks/cancel reply that
 * names another task ("replies about the wrong task"), `pollInterval: 0` (clamped to 100 ms), an
 * enormous `pollInterval` in a tasks/get reply, and notifications whose params are not an object.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskCancelledError,
  TaskClient,
  TaskExpiredError,
  TaskFailedError,
  TaskNotFoundError,
  TaskProtocolError,
  TaskRpcError,
  TaskTimeoutError,
  type ElicitResult,
  type InputContext,
  type Task,
  type TaskClientOptions,
  type TaskError,
  type TaskHandle,
  type TaskMetrics,
} from '../../lib/index.js';
import { flush, ManualClock, rejection, unhandledDuring, until, within } from '../helpers.js';
import {
  NO_REPLY,
  connectScripted,
  creating,
  gaps,
  raw,
  rpcError,
  type HandlerContext,
  type Json,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const TOOLS = [
  { name: 'job', taskSupport: 'required' as const },
  { name: 'slow', taskSupport: 'optional' as const },
];
const STATUS = 'notifications/tasks/status';
const RELATED = 'io.modelcontextprotocol/related-task';
/** The library's documented limits (asserted as literals: they are the contract). */
const MAX_STATUS_MESSAGE = 16_384;
const MAX_POLL_FAILURES = 5;
const STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);

const text = textResult;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The scripted rig with jitter off. */
function setup(options: ScriptedServerOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient(
    (cleanup) => cleanups.push(cleanup),
    { tools: TOOLS, ...options },
    { random: () => 0, ...taskOptions },
  );
}

/**
 * The same on real time, with short request timeouts and retry delays: for replies the SDK Client
 * itself drops, where only its (real-time) request timer would ever end the request.
 */
async function setupRealTime() {
  const pair = await connectScripted({ tools: TOOLS });
  const tasks = new TaskClient(pair.client, {
    requestTimeoutMs: 100,
    minPollIntervalMs: 10,
    retry: { minDelayMs: 10, maxDelayMs: 20, jitter: 0 },
  });
  const errors: TaskError[] = [];
  tasks.on('error', (error) => errors.push(error));
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { ...pair, tasks, errors };
}

/** Checks that a snapshot honours the public `Task` type, whatever the server sent. */
function expectWellTyped(task: Task | undefined): void {
  expect(task).toBeDefined();
  const t = task!;
  expect(typeof t.taskId).toBe('string');
  expect(t.taskId.length).toBeGreaterThan(0);
  expect(STATUSES.has(t.status)).toBe(true);
  expect(typeof t.createdAt).toBe('string');
  expect(typeof t.lastUpdatedAt).toBe('string');
  if (t.ttl !== null) {
    expect(Number.isFinite(t.ttl)).toBe(true);
    expect(t.ttl).toBeGreaterThanOrEqual(0);
  }
  if ('pollInterval' in t) {
    expect(Number.isFinite(t.pollInterval)).toBe(true);
    expect(t.pollInterval).toBeGreaterThanOrEqual(0);
  }
  if ('statusMessage' in t) {
    expect(typeof t.statusMessage).toBe('string');
    expect(t.statusMessage!.length).toBeLessThanOrEqual(MAX_STATUS_MESSAGE);
  }
}

/** Every snapshot an iterator yields (type-checked), until it ends. */
function collect(handle: TaskHandle): Promise<Task[]> {
  const iterator = handle.updates();
  return within(
    (async () => {
      const seen: Task[] = [];
      for await (const task of iterator) {
        expectWellTyped(task);
        seen.push(task);
      }
      return seen;
    })(),
    5_000,
    'iterator',
  );
}

/** `status:statusMessage` of each snapshot. */
const labels = (snapshots: readonly Task[]): string[] => snapshots.map((t) => `${t.status}:${t.statusMessage ?? ''}`);

/** Drains an iterator that was left paused, as `status:statusMessage`. */
function drain(iterator: AsyncIterableIterator<Task>): Promise<string[]> {
  return within(
    (async () => {
      const seen: Task[] = [];
      for await (const task of iterator) seen.push(task);
      return labels(seen);
    })(),
    5_000,
    'drain',
  );
}

/** Marker for "this key must be absent" in an expected snapshot shape. */
const ABSENT = Symbol('absent');

function expectShape(task: Task | undefined, expected: Readonly<Record<string, unknown>>): void {
  expectWellTyped(task);
  for (const [key, value] of Object.entries(expected)) {
    if (value === ABSENT) expect(task).not.toHaveProperty(key);
    else expect((task as unknown as Record<string, unknown>)[key], key).toEqual(value);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** A string of `length` characters, distinct enough to check where it was cut. */
function longText(length: number): string {
  return '0123456789abcdef'.repeat(Math.ceil(length / 16)).slice(0, length);
}

/** What the library keeps of a `statusMessage` of `length` characters. */
function clamped(length: number): string {
  const full = longText(length);
  return length <= MAX_STATUS_MESSAGE ? full : `${full.slice(0, MAX_STATUS_MESSAGE - 1)}…`;
}

// ---- heap measurement (a forced GC, so retained memory is what is measured) ----
setFlagsFromString('--expose-gc');
const forceGc = runInNewContext('gc') as () => void;
function heapUsed(): number {
  forceGc();
  forceGc();
  return process.memoryUsage().heapUsed;
}
/** Retained heap growth allowed after a 100,000-message flood (unbounded keeping would be tens of MB). */
const MODEST_HEAP_GROWTH = 8 * 1024 * 1024;

/**
 * Pushes `count` notifications quickly (in bursts of 5,000 delivered synchronously), forgetting the
 * scripted server's own copies so only the client's memory is measured.
 */
async function flood(server: ScriptedServer, count: number, make: (i: number) => Json): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    server.notify(STATUS, make(i));
    if (i % 5_000 === 4_999) {
      server.sent.length = 0;
      await flush(1);
    }
  }
  server.sent.length = 0;
  await flush();
}

// ------------------------------------------------------------------------------------------------
// Malformed Task objects
// ------------------------------------------------------------------------------------------------

/** Task objects that cannot be used: the decoder rejects them with TaskProtocolError. */
const REJECTED: ReadonlyArray<{ readonly name: string; readonly patch: Json }> = [
  { name: 'missing taskId', patch: { taskId: undefined } },
  { name: 'empty taskId', patch: { taskId: '' } },
  { name: 'numeric taskId', patch: { taskId: 42 } },
  { name: 'taskId longer than 65,536 characters', patch: { taskId: 'x'.repeat(65_537) } },
  { name: 'missing status', patch: { status: undefined } },
  { name: 'unknown status "exploding"', patch: { status: 'exploding' } },
  { name: 'status in the wrong case "COMPLETED"', patch: { status: 'COMPLETED' } },
  { name: 'numeric status', patch: { status: 3 } },
];

/** Task objects that are merely odd: accepted with these fields normalised. */
const CLAMPED: ReadonlyArray<{
  readonly name: string;
  readonly patch: Json;
  readonly expected: Record<string, unknown>;
  /** Fields left out (or null): a notification keeps what was known of them instead (D20, D21). */
  readonly leftOut?: readonly string[];
}> = [
  {
    name: 'non-ISO timestamps (a word, a number)',
    patch: { createdAt: 'yesterday', lastUpdatedAt: 12_345 },
    expected: { createdAt: 'yesterday', lastUpdatedAt: '' },
  },
  {
    name: 'missing timestamps',
    patch: { createdAt: undefined, lastUpdatedAt: undefined },
    expected: { createdAt: '', lastUpdatedAt: '' },
    leftOut: ['createdAt', 'lastUpdatedAt'],
  },
  { name: 'negative pollInterval', patch: { pollInterval: -5 }, expected: { pollInterval: ABSENT } },
  {
    name: 'NaN pollInterval (null on the JSON wire)',
    patch: { pollInterval: Number.NaN },
    expected: { pollInterval: ABSENT },
    leftOut: ['pollInterval'],
  },
  { name: 'non-numeric string pollInterval', patch: { pollInterval: 'soon' }, expected: { pollInterval: ABSENT } },
  { name: 'numeric-string pollInterval', patch: { pollInterval: '2500' }, expected: { pollInterval: 2_500 } },
  {
    name: 'enormous pollInterval (kept; the poll delay is clamped)',
    patch: { pollInterval: 1e12 },
    expected: { pollInterval: 1e12 },
  },
  { name: 'ttl as a numeric string', patch: { ttl: '45000' }, expected: { ttl: 45_000 } },
  { name: 'ttl as a non-numeric string', patch: { ttl: 'forever' }, expected: { ttl: null } },
  { name: 'negative ttl', patch: { ttl: -1 }, expected: { ttl: null } },
  { name: 'non-string statusMessage', patch: { statusMessage: 42 }, expected: { statusMessage: ABSENT } },
  {
    name: 'unknown extra fields (a server’s own bookkeeping): left out',
    patch: { ownerId: 42, progress: 0.5, extensions: { 'x-go': true } },
    expected: { ownerId: ABSENT, progress: ABSENT, extensions: ABSENT },
  },
  { name: 'ttl 0 (kept as sent; no expiry is counted from it)', patch: { ttl: 0 }, expected: { ttl: 0 } },
  {
    name: 'microsecond timestamps with a +00:00 offset or none (D4, D22): kept as sent',
    patch: { createdAt: '2026-01-01T00:00:00.000100+00:00', lastUpdatedAt: '2026-01-01T00:00:00.000200' },
    expected: { createdAt: '2026-01-01T00:00:00.000100+00:00', lastUpdatedAt: '2026-01-01T00:00:00.000200' },
  },
];

describe('malformed Task objects are rejected with TaskProtocolError, wherever they appear', () => {
  it.each(REJECTED)(
    'CreateTaskResult with $name: callToolAsTask rejects, nothing is tracked or polled; a usable task id gets one tasks/cancel',
    async ({ patch }) => {
      const { server, tasks, clock } = await setup();
      server.on('tools/call', () => ({ task: { ...server.tasks.create({ taskId: 'bad' }), ...patch } }));
      const error = await rejection(tasks.callToolAsTask('job'));
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as TaskProtocolError).method).toBe('tools/call');
      expect(tasks.active).toBe(0);
      await clock.advance(120_000);
      expect(server.count('tools/call')).toBe(1);
      expect(server.count('tasks/get') + server.count('tasks/result')).toBe(0);
      // The server made a task whose id the library can read: it is not left running unasked.
      const named = !('taskId' in patch);
      expect(server.params('tasks/cancel').map((p) => p.taskId)).toEqual(named ? ['bad'] : []);
      expect(clock.pending).toBe(0);
    },
  );

  it('a task id of 10,000 characters (an opaque token; no spec limit) is accepted and used on every request', async () => {
    const { server, tasks, clock } = await setup();
    const taskId = `tok_${'A'.repeat(9_996)}`;
    creating(server, { taskId, pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    expect(handle.taskId).toBe(taskId);
    server.tasks.finish(taskId, 'completed', { result: text('ok') });
    await clock.advance(1_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(server.params('tasks/get').map((p) => p.taskId)).toContain(taskId);
  });

  it.each(REJECTED)(
    'tasks/get reply with $name: reported on `error`, the last good snapshot is kept, the next poll goes on',
    async ({ patch }) => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 't1', pollInterval: 1_000 });
      let polls = 0;
      server.on('tasks/get', (params) => {
        polls += 1;
        const good = server.tasks.get(String(params.taskId));
        return polls === 1 ? { ...good, statusMessage: 'garbage', ...patch } : good;
      });
      const handle = await tasks.callToolAsTask('job');
      const before = handle.task;
      const seen = collect(handle);
      await clock.advance(1_000);
      expect(polls).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TaskProtocolError);
      expect((errors[0] as TaskProtocolError).method).toBe('tasks/get');
      expect(handle.task).toEqual(before);
      expect(handle.settled).toBe(false);
      server.tasks.finish('t1', 'completed', { result: text('ok') });
      await clock.advance(1_000);
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
      expect(labels(await seen)).toEqual(['working:', 'completed:']);
      expect(polls).toBe(2);
    },
  );

  it.each(REJECTED)('notification with $name: ignored and reported on `error`', async ({ patch }) => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 't1', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const before = handle.task;
    const seen = collect(handle);
    server.notify(STATUS, { ...server.tasks.get('t1'), statusMessage: 'garbage', ...patch });
    await flush();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TaskProtocolError);
    expect((errors[0] as TaskProtocolError).method).toBe('notifications/tasks/status');
    expect(handle.task).toEqual(before);
    server.tasks.finish('t1', 'completed', { result: text('ok') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(labels(await seen)).toEqual(['working:', 'completed:']);
  });

  it.each(REJECTED)(
    'tasks/cancel reply with $name: cancel() rejects (not retried); the next poll reports the truth',
    async ({ patch }) => {
      const { server, tasks, clock } = await setup();
      creating(server, { taskId: 't1', pollInterval: 1_000 });
      server.on('tasks/cancel', (params) => ({
        ...server.tasks.update(String(params.taskId), {
          status: 'cancelled',
          statusMessage: 'Client cancelled task execution.',
        }),
        ...patch,
      }));
      const handle = await tasks.callToolAsTask('job');
      const error = await rejection(handle.cancel());
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as TaskProtocolError).method).toBe('tasks/cancel');
      expect(server.count('tasks/cancel')).toBe(1);
      expect(handle.task?.status).toBe('working');
      expect(handle.settled).toBe(false);
      const failure = rejection(handle.result());
      await clock.advance(1_000);
      const cancelled = await failure;
      expect(cancelled).toBeInstanceOf(TaskCancelledError);
      expect((cancelled as TaskCancelledError).statusMessage).toBe('Client cancelled task execution.');
      expect(server.count('tasks/result')).toBe(0);
    },
  );
});

describe('odd Task fields are clamped, wherever they appear', () => {
  it.each(CLAMPED)('CreateTaskResult with $name', async ({ patch, expected }) => {
    const { server, tasks, errors } = await setup();
    server.on('tools/call', () => ({ task: { ...server.tasks.create({ taskId: 't1' }), ...patch } }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('task');
    expectShape(handle.task, { taskId: 't1', status: 'working', ...expected });
    server.tasks.finish('t1', 'completed', { result: text('ok') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(errors).toEqual([]);
  });

  it.each(CLAMPED)('tasks/get reply with $name', async ({ patch, expected }) => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 't1', pollInterval: 1_000 });
    server.on('tasks/get', (params) => ({ ...server.tasks.get(String(params.taskId)), ...patch }));
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    await clock.advance(1_000);
    expect(server.count('tasks/get')).toBe(1);
    expectShape(handle.task, { taskId: 't1', status: 'working', ...expected });
    server.tasks.finish('t1', 'completed', { result: text('ok') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect((await seen).at(-1)?.status).toBe('completed');
    expect(errors).toEqual([]);
  });

  it.each(CLAMPED)('notification with $name', async ({ patch, expected, leftOut = [] }) => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 't1', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    const held = handle.task as unknown as Record<string, unknown>;
    server.notify(STATUS, { ...server.tasks.get('t1'), ...patch });
    await flush();
    // D20: what a notification leaves out keeps the value held before.
    const kept = Object.fromEntries(leftOut.map((field) => [field, held[field]]));
    expectShape(handle.task, { taskId: 't1', status: 'working', ...expected, ...kept });
    server.tasks.finish('t1', 'completed', { result: text('ok') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect((await seen).at(-1)?.status).toBe('completed');
    expect(errors).toEqual([]);
  });

  it.each(CLAMPED)('tasks/cancel reply with $name', async ({ patch, expected }) => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 't1', pollInterval: 60_000 });
    server.on('tasks/cancel', (params) => ({
      ...server.tasks.update(String(params.taskId), {
        status: 'cancelled',
        statusMessage: 'Client cancelled task execution.',
      }),
      ...patch,
    }));
    const handle = await tasks.callToolAsTask('job');
    const snapshot = await within(handle.cancel());
    expectShape(snapshot, { taskId: 't1', status: 'cancelled', ...expected });
    expect(await rejection(handle.result())).toBeInstanceOf(TaskCancelledError);
    expect(errors).toEqual([]);
  });
});

describe('pollInterval clamps drive the poll schedule ([R13], [R16], [V13])', () => {
  it.each([
    ['negative', -5],
    ['NaN (null on the JSON wire)', Number.NaN],
    ['a non-numeric string', 'soon'],
    ['a numeric string that overflows to Infinity', '1e400'],
  ])(
    'a %s pollInterval is ignored: the hint-less backoff applies (500 ms, then x1.5)',
    async (_label, pollInterval) => {
      const { server, tasks, clock, start } = await setup();
      creating(server, { taskId: 'p', pollInterval });
      const handle = await tasks.callToolAsTask('job');
      expect(handle.task).not.toHaveProperty('pollInterval');
      await clock.advance(4_100);
      const expected = [500, 750, 1_125, 1_687.5];
      const seen = gaps(server, 'tasks/get', start);
      expect(seen).toHaveLength(expected.length);
      seen.forEach((gap, i) => expect(gap).toBeCloseTo(expected[i]!, 3));
    },
  );

  it('a numeric-string pollInterval ("2500") is honoured as a number', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'p', pollInterval: '2500' });
    await tasks.callToolAsTask('job');
    await clock.advance(7_500);
    expect(gaps(server, 'tasks/get', start)).toEqual([2_500, 2_500, 2_500]);
  });

  it('an enormous pollInterval in the CreateTaskResult is clamped to maxPollIntervalMs (1 hour) from the first poll', async () => {
    const { server, tasks, clock, start } = await setup();
    creating(server, { taskId: 'p', pollInterval: 1e12, ttl: null });
    await tasks.callToolAsTask('job');
    await clock.advance(3 * 3_600_000);
    expect(gaps(server, 'tasks/get', start)).toEqual([3_600_000, 3_600_000, 3_600_000]);
  });

  it('an enormous pollInterval respects a custom maxPollIntervalMs too (5 s)', async () => {
    const { server, tasks, clock, start } = await setup({}, { maxPollIntervalMs: 5_000 });
    creating(server, { taskId: 'p', pollInterval: Number.MAX_VALUE });
    await tasks.callToolAsTask('job');
    await clock.advance(15_000);
    expect(gaps(server, 'tasks/get', start)).toEqual([5_000, 5_000, 5_000]);
  });
});

describe('ttl clamps decide expiry ([V10], [V11], D1, D9)', () => {
  it.each([
    { ttl: '45000', label: 'a numeric string "45000" counts as 45 s', error: TaskExpiredError, warns: true },
    { ttl: 'forever', label: 'a non-numeric string is unknown (null)', error: TaskNotFoundError, warns: false },
    { ttl: -1, label: 'a negative ttl is unknown (null)', error: TaskNotFoundError, warns: false },
    { ttl: null, label: 'null is unlimited (D1)', error: TaskNotFoundError, warns: false },
    { ttl: 0, label: '0 is not usable: no warning, no expiry counted from it', error: TaskNotFoundError, warns: false },
  ])('ttl $ttl: $label, so a task dropped at 45 s ends with $error.name', async ({ ttl, error, warns }) => {
    const { server, tasks, clock, start } = await setup();
    server.on('tools/call', () => {
      const created = server.tasks.createResult({ taskId: 'exp', ttl, pollInterval: 1_000 });
      clock.setTimeout(() => server.tasks.delete('exp'), 45_000);
      return created;
    });
    const expiring: Array<{ expiresAt: number; remainingMs: number }> = [];
    tasks.on('expiring', (_metrics, expiry) => expiring.push({ ...expiry }));
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await clock.advance(50_000);
    expect(await failure).toBeInstanceOf(error);
    // 10% of the ttl ahead of it (between 1 s and 60 s) when the ttl is known.
    expect(expiring).toEqual(warns ? [{ expiresAt: start + 45_000, remainingMs: 4_500 }] : []);
    expect(tasks.active).toBe(0);
  });

  it('a non-ISO createdAt does not hide the ttl: the warning comes on our clock, and a task dropped at its ttl is TaskExpiredError', async () => {
    const { server, tasks, clock, start } = await setup();
    server.on('tools/call', () => {
      const created = server.tasks.createResult({
        taskId: 'exp',
        ttl: 10_000,
        createdAt: 'long ago',
        pollInterval: 1_000,
      });
      clock.setTimeout(() => server.tasks.delete('exp'), 10_000);
      return created;
    });
    const expiring: Array<{ expiresAt: number; remainingMs: number }> = [];
    tasks.on('expiring', (_metrics, expiry) => expiring.push({ ...expiry }));
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await clock.advance(15_000);
    expect(await failure).toBeInstanceOf(TaskExpiredError);
    expect(expiring).toEqual([{ expiresAt: start + 10_000, remainingMs: 1_000 }]);
  });
});

const TEN_MINUTES = 600_000;

describe('server clocks that disagree never bring the ttl forward ([V11])', () => {
  /** How the server stamps the task in its `n`th tasks/get answer, at our time `now`. */
  const SKEWED: Array<[string, (task: Json, now: number, n: number) => Json]> = [
    [
      'lastUpdatedAt stamped by a node 10 min ahead of the one that stamped createdAt',
      (_task, now) => ({ lastUpdatedAt: iso(now + TEN_MINUTES) }),
    ],
    [
      'a createdAt that changes from reply to reply (nodes up to 10 min apart)',
      (_task, now, n) => ({ createdAt: iso(now - TEN_MINUTES + 997 * n), lastUpdatedAt: iso(now) }),
    ],
  ];

  it.each(SKEWED)(
    '%s: one `expiring` warning, at the ttl counted on our clock from its creation reply, and the result still arrives',
    async (_label, stamps) => {
      const { server, tasks, clock, start } = await setup();
      creating(server, { taskId: 'skewed', ttl: 60_000, pollInterval: 1_000 });
      let n = 0;
      server.on('tasks/get', (p) => {
        const task = server.tasks.get(String(p.taskId));
        return { ...task, ...stamps(task, clock.now(), ++n) };
      });
      const expiring: Array<{ expiresAt: number; remainingMs: number }> = [];
      tasks.on('expiring', (_metrics, expiry) => expiring.push({ ...expiry }));
      const handle = await tasks.callToolAsTask('job');
      await clock.advance(53_999);
      expect(expiring).toEqual([]);
      await clock.advance(1);
      // 10% of the ttl before it, counted from when the CreateTaskResult arrived.
      expect(expiring).toEqual([{ expiresAt: start + 60_000, remainingMs: 6_000 }]);
      await clock.advance(10_000);
      expect(expiring).toHaveLength(1);
      expect(server.count('tasks/get')).toBeLessThanOrEqual(64);
      server.tasks.finish('skewed', 'completed', { result: text('late but here') });
      await clock.advance(1_000);
      expect((await within(handle.result())).content).toEqual(text('late but here').content);
    },
  );

  it('a task the server drops long before its ttl is TaskNotFoundError, even when the server clock is 10 min behind ours', async () => {
    const clock = new ManualClock();
    const { server, tasks } = await setup({ now: () => clock.now() - TEN_MINUTES }, { clock });
    creating(server, { taskId: 'dropped', ttl: 60_000, pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await clock.advance(2_500);
    server.tasks.delete('dropped');
    await clock.advance(1_000);
    const error = await failure;
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as Error).message).toMatch(/before its ttl elapsed/);
  });
});

describe('the ttl counts from when the creating tools/call was sent, not from its slow answer ([V11], D9)', () => {
  /** A server whose CreateTaskResult takes `delayMs` to arrive, and that drops the task at creation + ttl. */
  async function slowCreation(delayMs: number, ttl: number) {
    const rig = await setup();
    const { server, clock } = rig;
    server.on('tools/call', (_params, ctx) => {
      const created = server.tasks.createResult({ taskId: 'slow', ttl, pollInterval: 1_000 });
      clock.setTimeout(() => server.tasks.delete('slow'), ttl);
      clock.setTimeout(() => ctx.reply(created), delayMs);
      return NO_REPLY;
    });
    const expiring: Array<{ expiresAt: number; remainingMs: number }> = [];
    rig.tasks.on('expiring', (_metrics, expiry) => expiring.push({ ...expiry }));
    const call = rig.tasks.callToolAsTask('job');
    await clock.advance(delayMs);
    const handle = await within(call);
    return { ...rig, handle, expiring };
  }

  it('a CreateTaskResult 5 s late: the task dropped at creation + ttl is TaskExpiredError, and the warning names that time ([V11])', async () => {
    const { handle, clock, start, expiring } = await slowCreation(5_000, 10_000);
    const failure = rejection(handle.result());
    await clock.advance(8_000);
    const error = await failure;
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect((error as Error).message).toMatch(/ttl of 10000 ms elapsed/);
    // 10% of the ttl (1 s) before the end of the ttl counted from the send, not from the answer.
    expect(expiring).toEqual([{ expiresAt: start + 10_000, remainingMs: 1_000 }]);
  });

  it('a task dropped well before its ttl is still TaskNotFoundError after a slow CreateTaskResult', async () => {
    const { server, handle, clock } = await slowCreation(5_000, 60_000);
    const failure = rejection(handle.result());
    await clock.advance(2_000);
    server.tasks.delete('slow');
    await clock.advance(2_000);
    const error = await failure;
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as Error).message).toMatch(/before its ttl elapsed/);
  });
});

describe('timestamps that lie ([A11])', () => {
  it('non-ISO lastUpdatedAt values: snapshots are applied in arrival order, none dropped', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'ts', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    const base = server.tasks.get('ts');
    for (const [message, lastUpdatedAt] of [
      ['a', 'noon'],
      ['b', 'earlier than noon'],
      ['c', 7],
    ] as const) {
      server.notify(STATUS, { ...base, statusMessage: message, lastUpdatedAt });
    }
    await flush();
    server.tasks.finish('ts', 'completed', { result: text('ok') }, { statusMessage: 'done' }, true);
    expect(labels(await seen)).toEqual(['working:', 'working:a', 'working:b', 'working:c', 'completed:done']);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('a far-future lastUpdatedAt makes later non-terminal updates look stale (dropped), but the terminal status and the result still arrive', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'future', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    server.notify(STATUS, {
      ...server.tasks.get('future'),
      statusMessage: 'from 9999',
      lastUpdatedAt: '9999-12-31T23:59:59.999Z',
    });
    await flush();
    server.tasks.update('future', { statusMessage: 'step 2' }, true);
    await flush();
    expect(handle.task?.statusMessage).toBe('from 9999');
    server.tasks.finish('future', 'completed', { result: text('ok') }, { statusMessage: 'done' }, true);
    expect(labels(await seen)).toEqual(['working:', 'working:from 9999', 'completed:done']);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'ok' }]);
  });
});

describe('a status going backwards from terminal ([V5], [V6])', () => {
  it('a non-terminal status after a terminal one is ignored and reported on `error` (TaskProtocolError); the result is the true one', async () => {
    const { server, tasks, errors, start } = await setup();
    creating(server, { taskId: 'back', pollInterval: 60_000 });
    let resultCall: HandlerContext | undefined;
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 'back' });
      resultCall = ctx;
      return NO_REPLY;
    });
    const handle = await tasks.callToolAsTask('job');
    const seen = collect(handle);
    server.tasks.finish('back', 'completed', { result: text('final') }, { statusMessage: 'done' }, true);
    await within(until(() => resultCall !== undefined, 2_000, 'tasks/result'));
    const base = server.tasks.get('back');
    server.notify(STATUS, { ...base, status: 'working', statusMessage: 'zombie', lastUpdatedAt: iso(start + 5_000) });
    server.notify(STATUS, {
      ...base,
      status: 'input_required',
      statusMessage: 'zombie 2',
      lastUpdatedAt: iso(start + 6_000),
    });
    await flush();
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as TaskProtocolError).method).toBe('notifications/tasks/status');
      expect(error.message).toMatch(/after terminal "completed"/);
    }
    expect(handle.task).toMatchObject({ status: 'completed', statusMessage: 'done' });
    resultCall!.reply({ ...text('final'), _meta: { [RELATED]: { taskId: 'back' } } });
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'final' }]);
    expect(labels(await seen)).toEqual(['working:', 'completed:done']);
    expect(server.count('tasks/result')).toBe(1);
  });

  it('a different terminal status after a terminal one is ignored as well: terminal is sticky', async () => {
    const { server, tasks, start } = await setup();
    creating(server, { taskId: 'sticky', pollInterval: 60_000 });
    let resultCall: HandlerContext | undefined;
    server.on('tasks/result', (params, ctx) => {
      server.assertRequest('tasks/result', params, { taskId: 'sticky' });
      resultCall = ctx;
      return NO_REPLY;
    });
    const failed: unknown[] = [];
    tasks.on('failed', (metrics) => failed.push(metrics));
    const handle = await tasks.callToolAsTask('job');
    server.tasks.finish('sticky', 'completed', { result: text('final') }, {}, true);
    await within(until(() => resultCall !== undefined, 2_000, 'tasks/result'));
    server.notify(STATUS, {
      ...server.tasks.get('sticky'),
      status: 'failed',
      statusMessage: 'late',
      lastUpdatedAt: iso(start + 5_000),
    });
    await flush();
    expect(handle.task?.status).toBe('completed');
    resultCall!.reply(text('final'));
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'final' }]);
    expect(failed).toEqual([]);
  });
});

describe('a CreateTaskResult without `task` when a task was requested ([V1], [V14])', () => {
  it.each([
    ['an empty object', {}],
    ['only _meta', { _meta: { 'io.modelcontextprotocol/model-immediate-response': 'on it' } }],
    ['content that is not an array', { content: 'done' }],
    // D21: a null task is no task.
    ['task: null', { task: null }],
  ])('%s (neither task nor content): callToolAsTask rejects with TaskProtocolError', async (_label, reply) => {
    const { server, tasks, clock } = await setup();
    server.on('tools/call', () => reply);
    const error = await rejection(tasks.callToolAsTask('job'));
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tools/call');
    expect((error as Error).message).toMatch(/neither task nor content/);
    expect(tasks.active).toBe(0);
    await clock.advance(60_000);
    expect(server.count('tools/call')).toBe(1);
    expect(server.count('tasks/get')).toBe(0);
  });

  it.each([
    ['task: a string', { task: 'oops' }],
    ['task: an array', { task: [] }],
  ])('%s: callToolAsTask rejects with TaskProtocolError', async (_label, reply) => {
    const { server, tasks } = await setup();
    server.on('tools/call', () => reply);
    const error = await rejection(tasks.callToolAsTask('job'));
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as Error).message).toMatch(/task is not an object/);
    expect(tasks.active).toBe(0);
  });

  it('for an optional tool, a malformed reply is not retried as a plain call (the tool would run twice)', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', () => ({}));
    expect(await rejection(tasks.callToolAsTask('slow'))).toBeInstanceOf(TaskProtocolError);
    expect(server.count('tools/call')).toBe(1);
    expect(server.params('tools/call')[0]).toHaveProperty('task');
  });

  it('a plain CallToolResult instead: an immediate handle with that result (D16)', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', () => ({ ...text('ran synchronously'), structuredContent: { n: 1 } }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('immediate');
    expect(handle.taskId).toBeUndefined();
    expect(await within(handle.result())).toMatchObject({ ...text('ran synchronously'), structuredContent: { n: 1 } });
    expect(tasks.active).toBe(0);
  });

  it('a plain isError CallToolResult instead: an immediate handle whose result() rejects with TaskFailedError', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', () => ({ ...text('refused'), isError: true }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('immediate');
    const error = await rejection(handle.result());
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).result).toMatchObject({ ...text('refused'), isError: true });
  });
});

describe('tasks/result payloads ([V17], [V19], A9)', () => {
  /** A task that completes at once (by notification) and whose tasks/result answers `payload`. */
  async function completing(payload: unknown) {
    const context = await setup();
    const { server } = context;
    creating(server, { taskId: 'r1', pollInterval: 60_000 });
    server.on('tasks/result', () => payload);
    const handle = await context.tasks.callToolAsTask('job');
    server.tasks.update('r1', { status: 'completed' }, true);
    return { ...context, handle };
  }

  it.each([
    ['without _meta', text('no meta')],
    ['with _meta but no related-task key', { ...text('no meta'), _meta: { other: 1 } }],
  ])('a result %s is accepted', async (_label, payload) => {
    const { handle, server, errors } = await completing(payload);
    expect((await within(handle.result())).content).toEqual((payload as { content: unknown }).content);
    expect(server.count('tasks/result')).toBe(1);
    expect(errors).toEqual([]);
  });

  it('a result whose related-task _meta names another task: TaskProtocolError, and it is not fetched again', async () => {
    const { handle, server, clock } = await completing({
      ...text('not yours'),
      _meta: { [RELATED]: { taskId: 'other' } },
    });
    const error = await rejection(handle.result());
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tasks/result');
    expect((error as TaskProtocolError).taskId).toBe('r1');
    await clock.advance(120_000);
    expect(server.count('tasks/result')).toBe(1);
  });

  it('a result whose content is not an array: TaskProtocolError', async () => {
    const { handle, server } = await completing({ content: 'just a string' });
    const error = await rejection(handle.result());
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as Error).message).toMatch(/content is not an array/);
    expect(server.count('tasks/result')).toBe(1);
  });

  it('a result without content: content defaults to [] and other keys pass through', async () => {
    const { handle } = await completing({ structuredContent: { answer: 42 } });
    expect(await within(handle.result())).toEqual({ content: [], structuredContent: { answer: 42 } });
  });

  it('entries of content that are not objects (null, a string, an array) are left out; the blocks around them are kept', async () => {
    const { handle, errors } = await completing({
      content: [null, 'loose text', [1], { type: 'text', text: 'kept' }, 7],
    });
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'kept' }]);
    expect(errors).toEqual([]);
  });

  it('a failed result whose first block is null: TaskFailedError with the text after it, no crash and no hang', async () => {
    const unhandled = await unhandledDuring(async () => {
      const { handle } = await completing({ content: [null, { type: 'text', text: 'boom' }], isError: true });
      const error = await rejection(handle.result());
      expect(error).toBeInstanceOf(TaskFailedError);
      expect((error as Error).message).toBe('Tool "job" failed: boom');
      expect((error as TaskFailedError).result?.content).toEqual([{ type: 'text', text: 'boom' }]);
    });
    expect(unhandled).toEqual([]);
  });

  it('an immediate isError result whose first block is null: result() rejects with TaskFailedError, never a TypeError', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', () => ({ content: [null, { type: 'text', text: 'refused' }], isError: true }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('immediate');
    const error = await rejection(handle.result());
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as Error).message).toBe('Tool "job" failed: refused');
  });

  it('isError "true" (quoted) is a tool error: result() rejects with TaskFailedError; "false" is a success', async () => {
    const failing = await completing({ ...text('quota exceeded'), isError: 'true' });
    const error = await rejection(failing.handle.result());
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).result?.isError).toBe(true);
    expect((error as Error).message).toContain('quota exceeded');
    const fine = await completing({ ...text('fine'), isError: 'false' });
    expect(await within(fine.handle.result())).toMatchObject({ isError: false });
  });

  it.each([1, 'True', ' TRUE ', '1'])(
    'isError %j (a writer of C-like or capitalised booleans) is a tool error: TaskFailedError',
    async (isError) => {
      const failing = await completing({ ...text('quota exceeded'), isError });
      const error = await rejection(failing.handle.result());
      expect(error).toBeInstanceOf(TaskFailedError);
      expect((error as TaskFailedError).result?.isError).toBe(true);
    },
  );

  it.each([0, 'False', '0'])('isError %j is a success, read as false', async (isError) => {
    const fine = await completing({ ...text('fine'), isError });
    expect(await within(fine.handle.result())).toMatchObject({ isError: false });
  });

  it('a non-boolean isError is dropped (a completed task stays a success)', async () => {
    const { handle } = await completing({ ...text('fine'), isError: 'yes' });
    const result = await within(handle.result());
    expect(result.content).toEqual([{ type: 'text', text: 'fine' }]);
    expect(result).not.toHaveProperty('isError');
  });
});

describe('replies the SDK Client cannot parse: a prompt TaskProtocolError, never a wait for timeouts', () => {
  // The SDK Client drops a response whose `result` is not an object, or whose `_meta` does not fit
  // its schema ("Unknown message type" on client.onerror); the request then only ends with the
  // SDK's (real-time) request timeout, -32001, which the library treats as transient.
  const SHAPES: ReadonlyArray<readonly [string, unknown]> = [
    ['a string', 'garbage'],
    ['a number', 42],
    ['an array', []],
    ['null', null],
    ['an object whose _meta is not an object', { _meta: 5 }],
    ['an object whose related-task _meta has no taskId', { _meta: { [RELATED]: {} } }],
  ];

  it.each(SHAPES)(
    'tasks/get keeps answering %s: the task fails with TaskProtocolError after 5 polls',
    async (_label, result) => {
      const { server, tasks } = await setupRealTime();
      creating(server, { taskId: 'g', pollInterval: 10 });
      server.on('tasks/get', (_params, ctx) => raw({ jsonrpc: '2.0', id: ctx.id, result }));
      const handle = await tasks.callToolAsTask('job');
      const error = await rejection(handle.result(), 2_000);
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as TaskProtocolError).method).toBe('tasks/get');
      expect(server.count('tasks/get')).toBe(MAX_POLL_FAILURES);
    },
  );

  it.each(SHAPES)(
    'tasks/result answers %s: result() rejects with TaskProtocolError, tasks/result sent once',
    async (_label, result) => {
      const { server, tasks } = await setupRealTime();
      creating(server, { taskId: 'r', pollInterval: 10_000 });
      server.on('tasks/result', (_params, ctx) => raw({ jsonrpc: '2.0', id: ctx.id, result }));
      const handle = await tasks.callToolAsTask('job');
      server.tasks.update('r', { status: 'completed' }, true);
      const error = await rejection(handle.result(), 2_000);
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as TaskProtocolError).method).toBe('tasks/result');
      expect(server.count('tasks/result')).toBe(1);
    },
  );

  it('tools/call answers a string: callToolAsTask rejects with TaskProtocolError (not a timeout)', async () => {
    const { server, tasks } = await setupRealTime();
    server.on('tools/call', (_params, ctx) => raw({ jsonrpc: '2.0', id: ctx.id, result: 'garbage' }));
    const error = await rejection(tasks.callToolAsTask('job', {}, { timeoutMs: 1_500 }), 2_000);
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tools/call');
  });

  it('tasks/cancel answers a string: cancel() rejects with TaskProtocolError, sent once', async () => {
    const { server, tasks } = await setupRealTime();
    creating(server, { taskId: 'c', pollInterval: 10_000 });
    server.on('tasks/cancel', (_params, ctx) => raw({ jsonrpc: '2.0', id: ctx.id, result: 'garbage' }));
    const handle = await tasks.callToolAsTask('job');
    const error = await rejection(handle.cancel(), 2_000);
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tasks/cancel');
    expect(server.count('tasks/cancel')).toBe(1);
  });
});

describe('an `error` that is not a JSON-RPC error object: a prompt TaskProtocolError, never a wait for timeouts', () => {
  // lib/port/session.ts takes the replies to the library's own requests off the transport: an
  // `error` member without an integer `code` and a string `message` is neither a result nor a
  // server error, so the request fails at once as malformed. Time is a ManualClock: a request that
  // waited for a timeout would never end without an advance.
  const BAD_ERRORS: ReadonlyArray<readonly [string, unknown]> = [
    ['a string code', { code: 'x', message: 'm' }],
    ['a numeric-string code without a message', { code: '-32603' }],
    ['no message', { code: -32603 }],
    ['a fractional code', { code: 1.5, message: 'm' }],
    ['a string', 'boom'],
    ['null', null],
    ['absent (neither a result nor an error)', undefined],
  ];
  const malformed = (method: string) => `Malformed ${method} reply from server: neither a result nor a valid error`;

  it.each(BAD_ERRORS)(
    'tools/call answers an error that is %s: callToolAsTask rejects with TaskProtocolError at once, sent once',
    async (_label, error) => {
      const { server, tasks, clock } = await setup();
      server.on('tools/call', (_params, ctx) => raw({ jsonrpc: '2.0', id: ctx.id, error }));
      const failure = await rejection(tasks.callToolAsTask('job')); // no clock advance at all
      expect(failure).toBeInstanceOf(TaskProtocolError);
      expect((failure as TaskProtocolError).method).toBe('tools/call');
      expect((failure as Error).message).toBe(malformed('tools/call'));
      expect(server.count('tools/call')).toBe(1);
      expect(tasks.active).toBe(0);
      expect(clock.pending).toBe(0);
    },
  );

  it('an error whose code is a numeric string ("-32602", a writer that quotes every value) is read as that code: an unknown task is TaskNotFoundError at the first poll', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { taskId: 'quoted-code', pollInterval: 1_000 });
    server.on('tasks/get', (_params, ctx) =>
      raw({ jsonrpc: '2.0', id: ctx.id, error: { code: '-32602', message: 'Task not found' } }),
    );
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await clock.advance(1_000);
    expect(await within(failure)).toBeInstanceOf(TaskNotFoundError);
    expect(server.count('tasks/get')).toBe(1);
  });

  it.each(BAD_ERRORS)(
    'tasks/get keeps answering an error that is %s: each poll fails at once, TaskProtocolError after 5 polls, never retried as transient',
    async (_label, error) => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 'bad-error', pollInterval: 1_000 });
      server.on('tasks/get', (_params, ctx) => raw({ jsonrpc: '2.0', id: ctx.id, error }));
      const handle = await tasks.callToolAsTask('job');
      const failure = rejection(handle.result());
      // The first poll fails as soon as its reply arrives, well before any request timeout.
      await clock.advance(1_000);
      await flush();
      expect(server.count('tasks/get')).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TaskProtocolError);
      await clock.advance(600_000);
      const final = await failure;
      expect(final).toBeInstanceOf(TaskProtocolError);
      expect((final as TaskProtocolError).method).toBe('tasks/get');
      expect((final as Error).message).toBe(malformed('tasks/get'));
      // A transient failure would be retried and not counted: exactly 5 polls, each reported.
      expect(server.count('tasks/get')).toBe(MAX_POLL_FAILURES);
      expect(errors).toHaveLength(MAX_POLL_FAILURES);
      for (const reported of errors) {
        expect(reported).toBeInstanceOf(TaskProtocolError);
        expect((reported as TaskProtocolError).method).toBe('tasks/get');
      }
      expect(tasks.active).toBe(0);
      expect(clock.pending).toBe(0);
      expect(server.count('tasks/cancel')).toBe(0);
    },
  );
});

describe('a reply with both `result` and `error` (JSON-RPC forbids it): the `result` is taken, the `error` ignored', () => {
  const SERVER_ERROR = { code: -32603, message: 'Internal error' };

  it('tools/call: a valid CreateTaskResult next to a valid error creates the task', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', (_params, ctx) =>
      raw({
        jsonrpc: '2.0',
        id: ctx.id,
        result: server.tasks.createResult({ taskId: 'both', pollInterval: 60_000 }),
        error: SERVER_ERROR,
      }),
    );
    const handle = await tasks.callToolAsTask('job');
    expect(handle.task).toMatchObject({ taskId: 'both', status: 'working' });
  });

  it('tools/call: a malformed result next to a valid error is a malformed reply (TaskProtocolError), not the server error', async () => {
    const { server, tasks } = await setup();
    server.on('tools/call', (_params, ctx) =>
      raw({ jsonrpc: '2.0', id: ctx.id, result: 'garbage', error: SERVER_ERROR }),
    );
    const failure = await rejection(tasks.callToolAsTask('job'));
    expect(failure).toBeInstanceOf(TaskProtocolError);
    expect((failure as TaskProtocolError).method).toBe('tools/call');
    expect((failure as Error).message).toBe('Malformed tools/call reply from server: the result is not an object');
  });

  it('tasks/get: a valid task next to a valid error is a good poll (no failure reported), and the task completes', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'both', pollInterval: 1_000 });
    server.on('tasks/get', (params, ctx) =>
      raw({ jsonrpc: '2.0', id: ctx.id, result: server.tasks.get(String(params.taskId)), error: SERVER_ERROR }),
    );
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(10_000);
    expect(server.count('tasks/get')).toBeGreaterThanOrEqual(MAX_POLL_FAILURES);
    expect(handle.settled).toBe(false);
    expect(errors).toEqual([]);
    server.tasks.finish('both', 'completed', { result: text('fine') });
    await clock.advance(1_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'fine' }]);
    expect(errors).toEqual([]);
  });
});

describe('huge statusMessage: clamped to 16,384 characters ending in "…"', () => {
  it.each([
    [MAX_STATUS_MESSAGE, 'kept whole'],
    [MAX_STATUS_MESSAGE + 1, 'clamped'],
    [1_000_000, 'clamped'],
  ])('%i characters in a notification are %s', async (length) => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'm', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.update('m', { statusMessage: longText(length) }, true);
    await flush();
    const message = handle.task?.statusMessage ?? '';
    expect(message).toBe(clamped(length));
    expect(message.length).toBe(Math.min(length, MAX_STATUS_MESSAGE));
    if (length > MAX_STATUS_MESSAGE) expect(message.endsWith('…')).toBe(true);
  });

  it('in the CreateTaskResult, a tasks/get reply and a tasks/cancel reply', async () => {
    const { server, tasks, clock } = await setup();
    server.on('tools/call', () =>
      server.tasks.createResult({ taskId: 'm', pollInterval: 1_000, statusMessage: longText(50_000) }),
    );
    const handle = await tasks.callToolAsTask('job');
    expect(handle.task?.statusMessage).toBe(clamped(50_000));
    server.tasks.update('m', { statusMessage: longText(60_000) });
    await clock.advance(1_000);
    expect(handle.task?.statusMessage).toBe(clamped(60_000));
    server.on('tasks/cancel', (params) =>
      server.tasks.update(String(params.taskId), { status: 'cancelled', statusMessage: longText(70_000) }),
    );
    const snapshot = await within(handle.cancel());
    expect(snapshot?.statusMessage).toBe(clamped(70_000));
    const error = await rejection(handle.result());
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect((error as TaskCancelledError).statusMessage).toBe(clamped(70_000));
  });

  it('a failed task: TaskFailedError carries the clamped statusMessage (also in its message, D6)', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'f', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const bare = { _meta: { [RELATED]: { taskId: 'f' } } };
    server.tasks.finish('f', 'failed', { result: bare }, { statusMessage: longText(200_000) }, true);
    const error = (await rejection(handle.result())) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.statusMessage).toBe(clamped(200_000));
    expect(error.message).toBe(`Tool "job" failed: ${clamped(200_000)}`);
  });
});

describe('a flood of notifications for one task: bounded memory, no crash', () => {
  it('100,000 distinct snapshots: paused iterators keep only their buffer (the newest), heap growth stays modest', async () => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 'flood', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const settled: TaskMetrics[] = [];
    tasks.on('settled', (metrics) => settled.push(metrics));
    const small = handle.updates({ bufferSize: 64 });
    const standard = handle.updates();
    const base = server.tasks.get('flood');
    const before = heapUsed();
    await within(
      flood(server, 100_000, (i) => ({ ...base, statusMessage: `step ${i}` })),
      15_000,
      'flood',
    );
    expect(handle.task?.statusMessage).toBe('step 99999');
    expect(heapUsed() - before).toBeLessThan(MODEST_HEAP_GROWTH);
    server.tasks.finish('flood', 'completed', { result: text('survived') }, { statusMessage: 'done' }, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'survived' }]);
    // A paused iterator holds at most its buffer: the newest snapshots, the terminal one last.
    const fromSmall = await drain(small);
    expect(fromSmall).toHaveLength(64);
    expect(fromSmall.slice(0, 63)).toEqual(Array.from({ length: 63 }, (_, k) => `working:step ${100_000 - 63 + k}`));
    expect(fromSmall[63]).toBe('completed:done');
    const fromStandard = await drain(standard);
    expect(fromStandard).toHaveLength(1_024);
    expect(fromStandard[0]).toBe(`working:step ${100_000 - 1_023}`);
    expect(fromStandard.at(-1)).toBe('completed:done');
    expect(settled).toHaveLength(1);
    expect(settled[0]!.notifications).toBe(100_001);
    expect(server.count('tasks/get')).toBe(0);
    expect(errors).toEqual([]);
  });

  it('100,000 identical snapshots: nothing is queued, emitted or polled; heap growth stays modest', async () => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 'same', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    let statusEvents = 0;
    handle.on('status', () => {
      statusEvents += 1;
    });
    const paused = handle.updates({ bufferSize: 8 });
    const snapshot = server.tasks.get('same');
    const before = heapUsed();
    await within(
      flood(server, 100_000, () => snapshot),
      15_000,
      'flood',
    );
    expect(heapUsed() - before).toBeLessThan(MODEST_HEAP_GROWTH);
    expect(statusEvents).toBe(0);
    expect(server.count('tasks/get')).toBe(0);
    server.tasks.finish('same', 'completed', { result: text('calm') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'calm' }]);
    expect(await drain(paused)).toEqual(['working:', 'completed:']);
    expect(statusEvents).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('a flood of notifications for unknown task ids (mcp-go broadcasts them, D8)', () => {
  it('100,000 for unknown ids while no creation is under way: ignored, nothing kept, nothing reported', async () => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 'mine', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const template = server.tasks.get('mine');
    const before = heapUsed();
    await within(
      flood(server, 100_000, (i) => ({ ...template, taskId: `stranger-${i}`, status: 'completed' })),
      15_000,
      'flood',
    );
    expect(heapUsed() - before).toBeLessThan(MODEST_HEAP_GROWTH);
    expect(handle.task).toMatchObject({ taskId: 'mine', status: 'working' });
    expect(tasks.active).toBe(1);
    expect(errors).toEqual([]);
    expect(
      server
        .params('tasks/get')
        .concat(server.params('tasks/result'))
        .filter((p) => p.taskId !== 'mine'),
    ).toEqual([]);
  });

  it.each([
    ['100,000 distinct unknown ids', (i: number) => `stranger-${i}`],
    ['one unknown id 100,000 times', () => 'stranger'],
  ])(
    '%s during a creation: the early buffer stays bounded, and our own early terminal notification still settles the task',
    async (_label, id) => {
      const { server, tasks } = await setup();
      let call: HandlerContext | undefined;
      server.on('tools/call', (params, ctx) => {
        server.assertRequest('tools/call', params, { name: 'job' });
        call = ctx;
        return NO_REPLY;
      });
      const pending = tasks.callToolAsTask('job');
      await within(until(() => call !== undefined, 2_000, 'tools/call'));
      const template = server.tasks.create({ taskId: 'template' });
      const before = heapUsed();
      await within(
        flood(server, 100_000, (i) => ({ ...template, taskId: id(i), statusMessage: `noise ${i}` })),
        15_000,
        'flood',
      );
      expect(heapUsed() - before).toBeLessThan(MODEST_HEAP_GROWTH);
      const created = server.tasks.create({ taskId: 'early', pollInterval: 60_000 });
      server.tasks.finish('early', 'completed', { result: text('early and right') }, { statusMessage: 'done' }, true);
      await flush();
      call!.reply({ task: created });
      const handle = await within(pending);
      expect(handle.task).toMatchObject({ taskId: 'early', status: 'completed', statusMessage: 'done' });
      expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'early and right' }]);
      expect(server.count('tasks/get')).toBe(0);
      expect(server.params('tasks/result')).toEqual([{ taskId: 'early' }]);
    },
  );
});

describe('a server whose tasks/get keeps failing: the task fails after 5 consecutive failures, polling stops', () => {
  it.each([
    ['an object without task fields', (): Json => ({ nonsense: true })],
    ['an unknown status', (good: Json): Json => ({ ...good, status: 'exploding' })],
    ['no taskId', (good: Json): Json => ({ ...good, taskId: undefined })],
    ['another task', (good: Json): Json => ({ ...good, taskId: 'someone-else' })],
  ])(
    'keeps answering %s: TaskProtocolError after 5 polls, each failure reported on `error`',
    async (_label, garbage) => {
      const { server, tasks, clock, errors } = await setup();
      creating(server, { taskId: 'g', pollInterval: 1_000 });
      server.on('tasks/get', (params) => garbage(server.tasks.get(String(params.taskId))));
      const handle = await tasks.callToolAsTask('job');
      const failure = rejection(handle.result());
      await clock.advance(600_000);
      const error = await failure;
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as TaskProtocolError).method).toBe('tasks/get');
      expect(server.count('tasks/get')).toBe(MAX_POLL_FAILURES);
      expect(errors).toHaveLength(MAX_POLL_FAILURES);
      for (const reported of errors) expect(reported).toBeInstanceOf(TaskProtocolError);
      expect(tasks.active).toBe(0);
      expect(clock.pending).toBe(0);
      expect(server.count('tasks/cancel')).toBe(0); // given up locally; the remote task is left alone
    },
  );

  it('only consecutive failures count: 4 bad replies then 1 good one, over and over, never fail the task', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'flaky', pollInterval: 1_000 });
    let polls = 0;
    server.on('tasks/get', (params) => {
      polls += 1;
      const good = server.tasks.get(String(params.taskId));
      return polls % MAX_POLL_FAILURES === 0 ? good : { ...good, status: 'exploding' };
    });
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(60_000);
    expect(polls).toBeGreaterThanOrEqual(3 * MAX_POLL_FAILURES);
    expect(handle.settled).toBe(false);
    server.tasks.finish('flaky', 'completed', { result: text('made it') }, {}, true);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'made it' }]);
    expect(errors.length).toBeGreaterThanOrEqual(3 * (MAX_POLL_FAILURES - 1));
  });

  it("a lost answer (the library's own timeout) between hard failures starts the count again: 4 timeouts then 1 hard error never fail the task", async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'restarting', pollInterval: 1_000 });
    let polls = 0;
    // A server restarting: answers lost first, then an error while it comes up, then healthy again.
    const cycle = MAX_POLL_FAILURES + 1;
    server.on('tasks/get', (params) => {
      polls += 1;
      const step = polls % cycle;
      if (step === 0) return server.tasks.get(String(params.taskId));
      if (step < MAX_POLL_FAILURES) return NO_REPLY;
      throw rpcError(-32603, 'Internal error (starting up)');
    });
    const handle = await tasks.callToolAsTask('job');
    for (let i = 0; i < 600 && polls < 3 * cycle; i += 1) await clock.advance(1_000);
    expect(polls).toBeGreaterThanOrEqual(3 * cycle);
    expect(handle.settled).toBe(false);
    expect(errors.some((e) => (e as TaskRpcError).transient === true)).toBe(true);
    server.tasks.finish('restarting', 'completed', { result: text('made it') }, {}, true);
    await clock.advance(20_000);
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'made it' }]);
  });

  it.each([
    [-32601, 'Method not found: tasks/get'],
    [-32600, 'Invalid request'],
    [-32603, 'Internal error'],
    // The SDK uses -32000/-32001 for its own closed connection and timeout; sent by a server
    // they are that server's errors, not transient failures.
    [-32000, 'Server busy'],
    [-32001, 'Server timed out upstream'],
  ])(
    'answers JSON-RPC %i: TaskRpcError with that code after 5 polls (never retried as transient)',
    async (code, message) => {
      const { server, tasks, clock } = await setup();
      creating(server, { taskId: 'rpc', pollInterval: 1_000 });
      server.on('tasks/get', () => {
        throw rpcError(code, message);
      });
      const handle = await tasks.callToolAsTask('job');
      const failure = rejection(handle.result());
      await clock.advance(600_000);
      const error = await failure;
      expect(error).toBeInstanceOf(TaskRpcError);
      expect((error as TaskRpcError).code).toBe(code);
      expect((error as TaskRpcError).transient).toBe(false);
      expect((error as TaskRpcError).method).toBe('tasks/get');
      expect((error as Error).message).toContain(message);
      expect(server.count('tasks/get')).toBe(MAX_POLL_FAILURES);
      expect(clock.pending).toBe(0);
    },
  );
});

describe('a task id the server hands out twice ([V4]: ids are unique)', () => {
  it('a second call answered with a task id that is already tracked is rejected (TaskProtocolError), not given the first call’s result', async () => {
    const { server, tasks } = await setup();
    let calls = 0;
    server.on('tools/call', () => {
      calls += 1;
      return calls === 1
        ? server.tasks.createResult({ taskId: 'dup', pollInterval: 60_000 })
        : { task: server.tasks.get('dup') };
    });
    const first = await tasks.callToolAsTask('job', { which: 'first' });
    const error = await rejection(tasks.callToolAsTask('job', { which: 'second' }));
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tools/call');
    expect(tasks.handles()).toEqual([first]);
    server.tasks.finish('dup', 'completed', { result: text('result of the first call') }, {}, true);
    expect((await within(first.result())).content).toEqual([{ type: 'text', text: 'result of the first call' }]);
  });
});

describe('a request id the server reuses while the client still answers the first request (a requestor never reuses an id in a session)', () => {
  /** The rig with a client-level onElicitation that holds every question until the test answers it. */
  async function reuseRig() {
    const asked: Array<{ message: unknown; ctx: InputContext; answer: (result: ElicitResult) => void }> = [];
    const rig = await scriptedTaskClient(
      (cleanup) => cleanups.push(cleanup),
      { clientOptions: { capabilities: { elicitation: {} } } },
      {
        random: () => 0,
        onElicitation: (params, ctx) =>
          new Promise<ElicitResult>((answer) => asked.push({ message: params.message, ctx, answer })),
      },
    );
    /** Sends an untagged elicitation/create with request id `id` (no call is in flight: the client-level callback). */
    const ask = (id: string, message: string): void =>
      rig.server.send({
        jsonrpc: '2.0',
        id,
        method: 'elicitation/create',
        params: { message, requestedSchema: { type: 'object', properties: {} } },
      });
    /** Every reply the server got for request id `id`, in order. */
    const repliesTo = (id: string): Json[] =>
      rig.server.log.filter((entry) => entry.kind === 'response' && entry.id === id).map((entry) => entry.message);
    /** A question with id `dup`, then another reusing it while the first is unanswered. */
    const askTwice = async (): Promise<void> => {
      ask('dup', 'first?');
      await flush();
      ask('dup', 'second?');
      await flush();
    };
    return { ...rig, asked, ask, askTwice, repliesTo };
  }
  const IN_USE = { code: -32600, message: 'Request id already in use by a request this client is still answering' };

  it('the reuse is refused at once with -32600 and asks no callback; the first request still gets its own answer, and the id is free again after it', async () => {
    const { ask, askTwice, asked, repliesTo, errors } = await reuseRig();
    await askTwice();
    expect(asked.map((a) => a.message)).toEqual(['first?']);
    expect(repliesTo('dup')).toEqual([{ jsonrpc: '2.0', id: 'dup', error: IN_USE }]);
    asked[0]!.answer({ action: 'accept', content: { to: 'first' } });
    await flush();
    expect(repliesTo('dup')).toEqual([
      { jsonrpc: '2.0', id: 'dup', error: IN_USE },
      { jsonrpc: '2.0', id: 'dup', result: { action: 'accept', content: { to: 'first' } } },
    ]);
    // Answered, the first no longer holds the id: a request reusing it now is asked as any other.
    ask('dup', 'third?');
    await flush();
    expect(asked.map((a) => a.message)).toEqual(['first?', 'third?']);
    asked[1]!.answer({ action: 'decline' });
    await flush();
    expect(repliesTo('dup').at(-1)).toEqual({ jsonrpc: '2.0', id: 'dup', result: { action: 'decline' } });
    expect(errors).toEqual([]);
  });

  type Rig = Awaited<ReturnType<typeof reuseRig>>;
  const stops: Array<{ stop: string; by: (server: Rig['server']) => Promise<void> }> = [
    {
      stop: 'a notifications/cancelled for the id',
      by: async (server) => server.notify('notifications/cancelled', { requestId: 'dup', reason: 'never mind' }),
    },
    { stop: 'the connection closing', by: (server) => server.close() },
  ];
  it.each(stops)(
    '$stop then fires the first callback’s ctx.signal, and its late answer is not sent',
    async ({ by }) => {
      const { askTwice, asked, repliesTo, server } = await reuseRig();
      await askTwice();
      await by(server);
      await flush();
      expect(asked[0]!.ctx.signal.aborted).toBe(true);
      expect(asked).toHaveLength(1);
      asked[0]!.answer({ action: 'accept', content: {} });
      await flush();
      expect(repliesTo('dup')).toEqual([{ jsonrpc: '2.0', id: 'dup', error: IN_USE }]);
    },
  );
});

describe('paging that never ends (tasks/list D13, tools/list)', () => {
  it('tasks/list answering the same nextCursor again: the listing ends instead of looping', async () => {
    const { server, tasks } = await setup();
    server.tasks.create({ taskId: 'only' });
    server.on('tasks/list', () => ({ tasks: [server.tasks.get('only')], nextCursor: 'again' }));
    const listed: string[] = [];
    for await (const task of tasks.list()) listed.push(task.taskId);
    expect(server.params('tasks/list').map((p) => p.cursor)).toEqual([undefined, 'again']);
    expect(listed).toEqual(['only', 'only']);
  });

  it('tasks/list with a fresh nextCursor forever: the listing stops after 10,000 pages', async () => {
    const { server, tasks } = await setup();
    let page = 0;
    server.on('tasks/list', () => ({ tasks: [], nextCursor: `page-${++page}` }));
    const drained = within(
      (async () => {
        let count = 0;
        for await (const _task of tasks.list()) count += 1;
        return count;
      })(),
      15_000,
      'endless listing',
    );
    expect(await drained).toBe(0);
    expect(server.count('tasks/list')).toBe(10_000);
  });

  it('tasks/list whose `tasks` is not an array: TaskProtocolError', async () => {
    const { server, tasks } = await setup();
    server.on('tasks/list', () => ({ tasks: 'none' }));
    const error = await rejection(tasks.listPage());
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tasks/list');
    expect(server.count('tasks/list')).toBe(1);
  });

  it('tasks/list answering `tasks: null` (mcp-go with no tasks, D13): an empty page, not an error', async () => {
    const { server, tasks, errors } = await setup();
    server.on('tasks/list', () => ({ tasks: null }));
    expect(await tasks.listPage()).toEqual({ tasks: [] });
    const listed: string[] = [];
    for await (const task of tasks.list()) listed.push(task.taskId);
    expect(listed).toEqual([]);
    expect(server.count('tasks/list')).toBe(2);
    expect(errors).toEqual([]);
  });

  it('tasks/list answering `tasks: null` with a nextCursor: an empty page whose cursor is followed, like any empty page', async () => {
    const { server, tasks, errors } = await setup();
    server.tasks.create({ taskId: 'later' });
    server.on('tasks/list', (params) =>
      params.cursor === undefined ? { tasks: null, nextCursor: 'x' } : { tasks: [server.tasks.get('later')] },
    );
    expect(await tasks.listPage()).toEqual({ tasks: [], nextCursor: 'x' });
    const listed: string[] = [];
    for await (const task of tasks.list()) listed.push(task.taskId);
    expect(listed).toEqual(['later']);
    expect(server.params('tasks/list').map((p) => p.cursor)).toEqual([undefined, undefined, 'x']);
    expect(errors).toEqual([]);
  });

  it('tasks/list with a nextCursor that is not a string: TaskProtocolError, not a listing cut short unseen ([R23])', async () => {
    const { server, tasks } = await setup();
    server.tasks.create({ taskId: 'first-page' });
    server.on('tasks/list', () => ({ tasks: [server.tasks.get('first-page')], nextCursor: 10 }));
    const error = await rejection(tasks.listPage());
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect(error).toMatchObject({ method: 'tasks/list' });
    expect((error as Error).message).toMatch(/nextCursor is not a string \(number\)/);
    const listing = rejection(
      (async () => {
        for await (const _task of tasks.list());
      })(),
    );
    expect(await listing).toBeInstanceOf(TaskProtocolError);
    expect(server.count('tasks/list')).toBe(2);
  });

  it('tools/list with a nextCursor that is not a string: the call rejects with TaskProtocolError and nothing is called ([R23])', async () => {
    const { server, tasks } = await setup();
    server.on('tools/list', () => ({
      tools: [{ name: 'other', inputSchema: { type: 'object' } }],
      nextCursor: { page: 2 },
    }));
    creating(server);
    const error = await rejection(tasks.callToolAsTask('job'));
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect(error).toMatchObject({ method: 'tools/list' });
    expect(server.count('tools/call')).toBe(0);
  });

  it('tools/list answering the same nextCursor again: the catalog stops reading and the call goes on', async () => {
    const { server, tasks } = await setup();
    server.on('tools/list', () => ({
      tools: [{ name: 'job', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } }],
      nextCursor: 'again',
    }));
    creating(server, { taskId: 'listed', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('task');
    expect(server.count('tools/list')).toBe(2);
  });

  it('tools/list with a fresh nextCursor forever: reading stops after 1,000 pages, then a plain call; the unknown tool is not re-listed', async () => {
    const { server, tasks } = await setup();
    let page = 0;
    server.on('tools/list', () => ({ tools: [], nextCursor: `page-${++page}` }));
    server.on('tools/call', () => text('plain'));
    const handle = await within(tasks.callToolAsTask('job'), 15_000, 'endless tools/list');
    expect(handle.kind).toBe('immediate');
    expect(server.count('tools/list')).toBe(1_000);
    expect(server.params('tools/call')[0]).not.toHaveProperty('task');
    // The list was read for this call, so the miss is final until tools/list_changed.
    await within(tasks.callToolAsTask('job'), 15_000, 'second call');
    expect(server.count('tools/list')).toBe(1_000);
  });
});

describe('a tools/call that is never answered (its answer lost on the wire)', () => {
  it('callToolAsTask rejects with TaskRpcError -32001 after the request timeout, and the call is not retried (a retry could start a second task)', async () => {
    const { server, tasks, clock } = await setup({}, { requestTimeoutMs: 1_000 });
    server.on('tools/call', () => NO_REPLY);
    {
      const outcome = tasks.callToolAsTask('job').then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await flush();
      expect(server.count('tools/call')).toBe(1);
      // No deadline: the plain-call default of 60 s for the call plus requestTimeoutMs.
      await clock.advance(60_000 + 999);
      expect(server.count('tools/call')).toBe(1);
      await clock.advance(1);
      const error = await outcome;
      expect(error).toBeInstanceOf(TaskRpcError);
      expect((error as TaskRpcError).code).toBe(-32001);
      expect((error as TaskRpcError).method).toBe('tools/call');
      expect(server.count('tools/call')).toBe(1);
      expect(tasks.active).toBe(0);
      // [R24], [R25], [A5]: a call that asked for a task is never cancelled with
      // notifications/cancelled, not even at its timeout (its task may exist).
      await flush();
      expect(server.count('notifications/cancelled')).toBe(0);
    }
  });

  it('a plain call (a tool without task support) that is never answered is still cancelled with notifications/cancelled at its timeout', async () => {
    const { server, tasks, clock } = await setup(
      { tools: [{ name: 'plain', inputSchema: { type: 'object' }, execution: { taskSupport: 'forbidden' } }] },
      { requestTimeoutMs: 1_000 },
    );
    server.on('tools/call', () => NO_REPLY);
    const outcome = tasks.callToolAsTask('plain').then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await clock.advance(60_000 + 1_000);
    expect(await outcome).toBeInstanceOf(TaskRpcError);
    await flush();
    expect(server.params('notifications/cancelled')).toEqual([
      { requestId: server.received('tools/call')[0]!.id, reason: 'Request timed out' },
    ]);
  });
});

describe('a deadline while close({ cancelRunning: true }) waits for a payload that never comes (found by spec/wire/fuzz.spec.ts)', () => {
  // close({ cancelRunning: true }) waits up to closeTimeoutMs for the payload of a task known ended;
  // the task's own deadline still bounds it at timeoutMs + cancelGraceMs (the second stop waits
  // for the one under way at most its own grace). The fuzzer's 2025 seed 5110 found it.
  for (const lying of [true, false]) {
    it(`${lying ? 'a "completed" notification the server never backs' : 'a task really completed whose tasks/result is never answered'}: TaskTimeoutError at timeoutMs + cancelGraceMs, not at closeTimeoutMs`, async () => {
      const { server, tasks, clock, start } = await setup({}, { requestTimeoutMs: 5_000, cancelGraceMs: 2_000 });
      creating(server, { taskId: 'late-payload', pollInterval: 1_000 });
      server.on('tasks/result', () => NO_REPLY);
      const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 3_526 });
      const outcome = handle.result().then(
        () => 'resolved',
        (error: unknown) => ({ error, at: clock.now() - start }),
      );
      await clock.advance(1_500);
      if (lying) server.notify(STATUS, { ...server.tasks.get('late-payload'), status: 'completed' });
      else server.tasks.finish('late-payload', 'completed', { result: text('never fetched') }, {}, true);
      await clock.advance(1_000);
      expect(handle.task?.status).toBe('completed');
      const closing = tasks.close({ cancelRunning: true });
      await clock.advance(3_526 + 2_000 - 2_500);
      const settled = await Promise.race([outcome, flush().then(() => 'pending')]);
      expect(settled).toMatchObject({ error: expect.any(TaskTimeoutError), at: 5_526 });
      expect((settled as { error: TaskTimeoutError }).error.remoteCancel).toBe('finished');
      // close() keeps its own bound (closeTimeoutMs = requestTimeoutMs).
      await clock.advance(5_000);
      await within(closing);
    });
  }
});
