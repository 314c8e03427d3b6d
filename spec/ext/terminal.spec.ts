/**
 * Ends and ttls on the tasks extension wire, through the public API:
 * - a terminal `notifications/tasks` that comes without its payload (a terse one) makes the
 *   library read the task until the payload arrives: whether that read is not newer than the
 *   notification ([A11]), fails once, or was already in flight when the notification came;
 * - the ttl backstop ([E13]) runs on the local clock, never on the server's `createdAt` read
 *   against our clock: a server clock behind or ahead of ours never makes the library give up a
 *   task early ([V11]);
 * - a ttl the server turns to unlimited (`null`) disarms the backstop;
 * - the server's timestamps never bring the ttl forward: with `lastUpdatedAt - createdAt` past the
 *   ttl (nodes whose clocks are 10 min apart, a clock set forward, a `createdAt` that changes from
 *   reply to reply) a healthy task is neither given up early nor read in a burst; the ttl counts
 *   from when this client first saw the task (for a resumed task, the resume), and the last look
 *   at it keeps to the poll interval;
 * - a task the server drops early is not called expired because the server's clock is behind;
 * - a task the server still updates past its ttl (D23: a `lastUpdatedAt` later at the last look than
 *   when the ttl ran out, the server's stamps compared with each other) is kept for one more ttl,
 *   warned about once per ttl, and given up at the first end its last look finds the stamp unmoved,
 *   whatever the server's clock reads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskExpiredError, TaskNotFoundError, TaskProtocolError, type TaskError } from '../../lib/index.js';
import { flush, until } from '../helpers.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import {
  ErrorCode,
  NO_REPLY,
  rpcError,
  taskTool,
  textResult,
  type ExtServerOptions,
  type Json,
} from '../support/ext-server/index.js';
import { closeRigs, extRig, ManualClock, secondClient, type ExtRig } from './support.js';

afterEach(closeRigs);

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

function manual(options: ExtServerOptions = {}): ExtServerOptions {
  // The server acknowledges subscriptions but pushes nothing itself: each test sends its own.
  return {
    notifications: 'ack-only',
    pollIntervalMs: 1_000,
    ...options,
    tools: [taskTool('manual', { advance: 'manual' }), ...(options.tools ?? [])],
  };
}

/** Sends `task` as a `notifications/tasks` on the TaskClient's open subscription. */
async function push(rig: ExtRig, task: Json): Promise<void> {
  const server = rig.server;
  await rig.clock.advance(0); // the subscription opens on the next turn of the client's timers
  await until(() => server.count('subscriptions/listen') > 0, 3_000, 'a subscription');
  const listen = server.received('subscriptions/listen').at(-1);
  expect(listen, 'the client subscribed').toBeDefined();
  server.notify('notifications/tasks', {
    ...(task as Record<string, Json>),
    _meta: { [SUBSCRIPTION_ID]: listen!.id! },
  });
}

/** A terminal task as a terse notification: no result, and (optionally) fields left out. */
function terse(task: Json, drop: readonly string[] = []): Json {
  const copy: Record<string, Json> = { ...(task as Record<string, Json>) };
  for (const key of ['result', 'error', ...drop]) delete copy[key];
  return copy;
}

async function outcome(rig: ExtRig, promise: Promise<unknown>, step = 100, max = 10_000): Promise<unknown> {
  let done: { value: unknown } | undefined;
  promise.then(
    (value) => (done = { value }),
    (error: unknown) => (done = { value: error }),
  );
  for (let spent = 0; done === undefined && spent < max; spent += step) {
    await flush();
    if (done === undefined) await rig.clock.advance(step);
  }
  if (done === undefined) throw new Error('still pending');
  return done.value;
}

describe('a status after the terminal one', () => {
  it('is ignored, and reported naming the extension’s notification method', async () => {
    const rig = await extRig({ server: manual() });
    const normal = builtinMethods(rig.server)['tasks/get']!;
    let open = false;
    // The read for the payload waits until the later status came.
    rig.server.on('tasks/get', (params, ctx) => (open ? normal(params, ctx) : NO_REPLY));
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    const full = rig.server.tasks.complete(handle.taskId!, textResult('the result'), 'done');
    // Terminal without its payload: the task is read for it, and meanwhile a later status comes.
    await push(rig, terse(full));
    const later = new Date(Date.parse((full as { lastUpdatedAt: string }).lastUpdatedAt) + 5_000).toISOString();
    await push(rig, { ...terse(full), status: 'working', statusMessage: 'zombie', lastUpdatedAt: later });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TaskProtocolError);
    expect(errors[0]).toMatchObject({ method: 'notifications/tasks' });
    expect(errors[0]!.message).toMatch(/after terminal "completed"/);
    open = true;
    expect(await outcome(rig, result, 1_000, 120_000)).toMatchObject({ content: textResult('the result').content });
    expect(handle.task?.status).toBe('completed');
  });
});

describe('a terminal notification without its payload', () => {
  it('reads the task once and resolves, even when the read is not newer than the notification ([A11])', async () => {
    const rig = await extRig({
      server: manual({ tools: [taskTool('chatty', { advance: 'manual', statusMessage: 'working on it' })] }),
    });
    const handle = await rig.tasks.callToolAsTask('chatty');
    const result = handle.result();
    await flush();
    const full = rig.server.tasks.complete(handle.taskId!, textResult('the result'), 'done');
    // Same lastUpdatedAt as the read will show, but statusMessage and pollIntervalMs left out.
    await push(rig, terse(full, ['statusMessage', 'pollIntervalMs']));
    expect(await outcome(rig, result)).toMatchObject({ content: textResult('the result').content });
    expect(rig.server.count('tasks/get')).toBe(1);
  });

  it('reads it again when the first read fails', async () => {
    const rig = await extRig({ server: manual() });
    const normal = builtinMethods(rig.server)['tasks/get']!;
    let failures = 1;
    rig.server.on('tasks/get', (params, ctx) => {
      if (failures-- > 0) throw rpcError(ErrorCode.InternalError, 'a hiccup');
      return normal(params, ctx);
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await flush();
    await push(rig, terse(rig.server.tasks.complete(handle.taskId!, textResult('after a retry'))));
    expect(await outcome(rig, result)).toMatchObject({ content: textResult('after a retry').content });
    expect(rig.server.count('tasks/get')).toBeGreaterThanOrEqual(2);
    expect(errors.map((error) => error.message).join()).toMatch(/hiccup/);
  });

  it('reads it again when a poll sent before the notification answers with the older state', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 300 }) });
    const normal = builtinMethods(rig.server)['tasks/get']!;
    const held: Array<() => void> = [];
    let first = true;
    rig.server.on('tasks/get', (params, ctx) => {
      const answer = normal(params, ctx); // the state now...
      if (!first) return answer;
      first = false;
      held.push(() => ctx.reply(answer)); // ...answered late
      return NO_REPLY;
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await rig.clock.advance(300); // the regular poll goes out and is held
    expect(held).toHaveLength(1);
    await push(rig, terse(rig.server.tasks.complete(handle.taskId!, textResult('late but here'))));
    await rig.clock.advance(1); // the read the notification asks for finds that poll still open
    expect(rig.server.count('tasks/get')).toBe(1);
    held.shift()?.(); // the poll answers: still working, older than the notification
    expect(await outcome(rig, result)).toMatchObject({ content: textResult('late but here').content });
  });

  it('takes the payload of a later read that is newer than the notification', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await flush();
    const full = rig.server.tasks.complete(handle.taskId!, textResult('newer read'));
    const early = {
      ...(terse(full) as Record<string, Json>),
      lastUpdatedAt: new Date(rig.clock.now() - 1_000).toISOString(),
    };
    await push(rig, early);
    expect(await outcome(rig, result)).toMatchObject({ content: textResult('newer read').content });
  });
});

describe('a terminal notification the reads never confirm (found by spec/wire/fuzz.spec.ts)', () => {
  // The notification said the task ended, but no read brings its payload: each read shows the task
  // running (or ended otherwise). The terminal status is kept ([A11]), so the payload can never come;
  // after 5 such reads (the bound of repeated hard poll failures) the task fails with
  // TaskProtocolError instead of being read forever with result() pending. The fuzzer's ext seeds
  // 311, 761 and 1862 found it (a lying notification, then reads that disagree).
  it('a terse "failed" while every read shows the task still working: TaskProtocolError after 5 reads', async () => {
    const rig = await extRig({ server: manual() });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await flush();
    await push(rig, { ...terse(rig.server.tasks.detailed(handle.taskId!)), status: 'failed' });
    const error = await outcome(rig, result, 1_000, 120_000);
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect(error).toMatchObject({ method: 'tasks/get', task: { status: 'failed' } });
    expect((error as Error).message).toMatch(/"failed".*5 reads.*never carried its error.*"working"/);
    expect(rig.server.count('tasks/get')).toBe(5);
    expect(errors.every((e) => e instanceof TaskProtocolError)).toBe(true);
    // Nothing goes on reading it.
    await rig.clock.advance(60_000);
    expect(rig.server.count('tasks/get')).toBe(5);
  });

  it('a terse "completed" while the reads show the task cancelled: TaskProtocolError after 5 reads', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await flush();
    const cancelled = rig.server.tasks.cancel(handle.taskId!);
    await push(rig, { ...terse(cancelled), status: 'completed' });
    const error = await outcome(rig, result, 1_000, 120_000);
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as Error).message).toMatch(/"completed".*never carried its result.*"cancelled"/);
    expect(rig.server.count('tasks/get')).toBe(5);
  });
});

describe('the ttl backstop runs on the local clock ([E13], [V11])', () => {
  it('does not give up a task early when the server clock is behind ours', async () => {
    const clock = new ManualClock();
    // The server's clock is 8 s behind: its createdAt read against ours looks 8 s old at creation.
    const rig = await extRig({ clock, server: manual({ ttlMs: 10_000, now: () => clock.now() - 8_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(5_000);
    expect(handle.settled).toBe(false);
    rig.server.tasks.complete(handle.taskId!, textResult('done in 5 s'));
    expect(await outcome(rig, result)).toMatchObject({ content: textResult('done in 5 s').content });
  });

  it('does not give up a task before a single poll when the server clock is minutes behind', async () => {
    const clock = new ManualClock();
    const rig = await extRig({ clock, server: manual({ ttlMs: 60_000, now: () => clock.now() - 120_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(59_000);
    expect(handle.settled).toBe(false);
    expect(rig.server.count('tasks/get')).toBeGreaterThan(0);
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(1_000);
    // The ttl has run out on our clock since the task was created: now it is given up.
    expect(await result).toBeInstanceOf(TaskExpiredError);
    expect(rig.server.tasks.detailed(handle.taskId!).status).toBe('working');
  });

  it('gives up at the ttl measured from when the task was created, when the server clock is ahead', async () => {
    const clock = new ManualClock();
    const rig = await extRig({ clock, server: manual({ ttlMs: 10_000, now: () => clock.now() + 120_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(9_000);
    expect(handle.settled).toBe(false);
    await rig.clock.advance(1_000);
    expect(await result).toBeInstanceOf(TaskExpiredError);
  });

  it('disarms the backstop when the server turns the ttl to unlimited (null)', async () => {
    const tool = taskTool('unbounded', { ttlMs: 5_000, advance: 'poll', steps: [{ ttlMs: null }] });
    const rig = await extRig({ server: manual({ tools: [tool] }) });
    const handle = await rig.tasks.callToolAsTask('unbounded');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(2_000);
    expect(handle.task?.ttl).toBeNull();
    await rig.clock.advance(60_000);
    expect(handle.settled).toBe(false);
    rig.server.tasks.complete(handle.taskId!, textResult('no rush'));
    expect(await outcome(rig, result, 1_000, 120_000)).toMatchObject({ content: textResult('no rush').content });
  });
});

const TEN_MINUTES = 600_000;
const iso = (ms: number): string => new Date(ms).toISOString();

/** The timestamps a skewed server puts on its `n`th reply about a task (0: the CreateTaskResult), at our time `now`. */
type Stamps = (task: Json, now: number, n: number) => Json;

/** Rewrites the timestamps of every task the server hands out (CreateTaskResult and tasks/get) with `stamps`. */
function stamped(rig: ExtRig, stamps: Stamps): void {
  const builtins = builtinMethods(rig.server);
  let n = 0;
  const rewrite = (reply: unknown): unknown => {
    const task = reply as Json;
    if (typeof task.taskId !== 'string') return reply;
    return { ...task, ...stamps(task, rig.clock.now(), n++) };
  };
  rig.server.on('tools/call', async (params, ctx) => rewrite(await builtins['tools/call']!(params, ctx)));
  rig.server.on('tasks/get', async (params, ctx) => rewrite(await builtins['tasks/get']!(params, ctx)));
}

/** Servers whose `lastUpdatedAt - createdAt` is far beyond any ttl while the task is young. */
const SKEWED: Array<[string, Stamps]> = [
  [
    'lastUpdatedAt stamped by a node 10 min ahead of the one that stamped createdAt',
    (_task, now) => ({ lastUpdatedAt: iso(now + TEN_MINUTES) }),
  ],
  [
    'a server clock set 10 min forward once the task was created',
    (_task, now, n) => (n === 0 ? {} : { lastUpdatedAt: iso(now + TEN_MINUTES) }),
  ],
  [
    'a createdAt that changes from reply to reply (nodes up to 10 min apart)',
    (_task, now, n) => ({ createdAt: iso(now - TEN_MINUTES + 997 * n), lastUpdatedAt: iso(now) }),
  ],
];

describe('the server’s timestamps never bring the ttl forward ([E13], [V11])', () => {
  it.each(SKEWED)(
    '%s: a healthy task is not given up, its result arrives, and tasks/get keeps to the poll interval',
    async (_label, stamps) => {
      const rig = await extRig({ server: manual({ ttlMs: 60_000, pollIntervalMs: 1_000 }) });
      stamped(rig, stamps);
      const expired: string[] = [];
      rig.tasks.on('expired', (metrics) => expired.push(metrics.error.name));
      const handle = await rig.tasks.callToolAsTask('manual');
      const result = handle.result().catch((error: unknown) => error);
      await rig.clock.advance(3_000);
      expect(handle.settled).toBe(false);
      expect(expired).toEqual([]);
      // One read a second: at 1, 2 and 3 s.
      expect(rig.server.count('tasks/get')).toBeLessThanOrEqual(3);
      rig.server.tasks.complete(handle.taskId!, textResult('done in 3 s'));
      expect(await outcome(rig, result)).toMatchObject({ content: textResult('done in 3 s').content });
      expect(rig.server.count('tasks/get')).toBeLessThanOrEqual(4);
      expect(rig.server.count('tasks/cancel')).toBe(0);
    },
  );

  it.each(SKEWED)(
    '%s: a task still running that the server stopped updating is given up at the ttl counted on our clock from its creation reply, after one last look',
    async (_label, stamps) => {
      const rig = await extRig({ server: manual({ ttlMs: 10_000, pollIntervalMs: 1_000 }) });
      // The stamps move until 5 s, then stay: a lastUpdatedAt that moved past the ttl would keep the task (D23).
      const stopsAt = rig.clock.now() + 5_000;
      let last: Json = {};
      stamped(rig, (task, now, n) => (now < stopsAt ? (last = stamps(task, now, n)) : last));
      const handle = await rig.tasks.callToolAsTask('manual');
      const result = handle.result().catch((error: unknown) => error);
      await rig.clock.advance(9_999);
      expect(handle.settled).toBe(false);
      expect(rig.server.count('tasks/get')).toBeLessThanOrEqual(10);
      await rig.clock.advance(1);
      expect(await result).toBeInstanceOf(TaskExpiredError);
      // The polls at 1..10 s, and the last look at 10 s: no burst of reads.
      expect(rig.server.count('tasks/get')).toBeLessThanOrEqual(11);
      expect(rig.server.tasks.detailed(handle.taskId!).status).toBe('working');
    },
  );

  it('a ttl that changes on every reply while it has run out: one last look, then the task is given up (no burst of reads)', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 5_000, pollIntervalMs: 1_000 }) });
    stamped(rig, (_task, _now, n) => ({ ttlMs: 5_000 - n }));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(4_000);
    const before = rig.server.count('tasks/get');
    await rig.clock.advance(1_000);
    expect(await result).toBeInstanceOf(TaskExpiredError);
    expect(rig.server.count('tasks/get') - before).toBeLessThanOrEqual(2);
  });

  it('a CreateTaskResult 5 s late: the expiring warning counts the ttl from the tools/call’s send, the backstop from its answer, so the task is never given up early ([V11], [E13])', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 10_000, pollIntervalMs: 1_000 }) });
    const builtins = builtinMethods(rig.server);
    rig.server.on('tools/call', async (params, ctx) => {
      const reply = await builtins['tools/call']!(params, ctx);
      await new Promise<void>((resolve) => rig.clock.setTimeout(resolve, 5_000));
      return reply;
    });
    const start = rig.clock.now();
    const expiring: Array<{ expiresAt: number; remainingMs: number }> = [];
    rig.tasks.on('expiring', (_metrics, expiry) => expiring.push({ ...expiry }));
    const call = rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(5_000);
    const handle = await call;
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(4_000);
    // 10% of the ttl (1 s) before its end counted from the send: the server may drop the task from then on.
    expect(expiring).toEqual([{ expiresAt: start + 10_000, remainingMs: 1_000 }]);
    // The backstop counts from the answer: the task is not given up before 15 s.
    await rig.clock.advance(5_999);
    expect(handle.settled).toBe(false);
    await rig.clock.advance(1);
    expect(await result).toBeInstanceOf(TaskExpiredError);
  });

  it('a resumed task counts its ttl from the resume (when this client first saw it), never from the server’s createdAt', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 60_000, pollIntervalMs: 1_000 }) });
    const original = await rig.tasks.callToolAsTask('manual');
    const reference = original.detach()!;
    await rig.clock.advance(30_000);
    rig.server.tasks.update(reference.taskId, { statusMessage: 'half way' }); // lastUpdatedAt - createdAt = 30 s
    const other = await secondClient(rig.server, rig.clock);
    const resumed = other.resume(reference);
    const result = resumed.result().catch((error: unknown) => error);
    await rig.clock.advance(59_999);
    expect(resumed.settled).toBe(false);
    expect(rig.server.count('tasks/get')).toBeLessThanOrEqual(61);
    await rig.clock.advance(1);
    expect(await result).toBeInstanceOf(TaskExpiredError);
  });

  it('a task the server drops long before its ttl is TaskNotFoundError, even when the server clock is 10 min behind ours', async () => {
    const clock = new ManualClock();
    const rig = await extRig({
      clock,
      server: manual({ ttlMs: 60_000, pollIntervalMs: 1_000, now: () => clock.now() - TEN_MINUTES }),
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(2_500);
    rig.server.tasks.delete(handle.taskId!);
    await rig.clock.advance(1_000);
    const error = await result;
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as Error).message).toMatch(/before its ttl elapsed/);
  });
});

/**
 * A server that stamps `lastUpdatedAt` with its own clock (`offsetMs` away from ours) on every reply,
 * as FastMCP 4 does (D23), until our clock reaches `stopsAt`: from then on every reply keeps the
 * last stamp (the server no longer updates the task).
 */
function stampsEveryRead(rig: ExtRig, offsetMs = 0, stopsAt = Infinity): void {
  let last = '';
  stamped(rig, (_task, now) => {
    if (now < stopsAt || last === '') last = iso(now + offsetMs);
    return { lastUpdatedAt: last };
  });
}

describe('a task the server still updates past its ttl is kept ([E13], D23)', () => {
  it('is followed past its ttl while every read moves lastUpdatedAt, warned about once per ttl, and completes with its result', async () => {
    // FastMCP 4: a 15 s "ttl" (its result retention, renewed by each read) for a 20 s job.
    const rig = await extRig({ server: manual({ ttlMs: 15_000, pollIntervalMs: 1_000 }) });
    stampsEveryRead(rig);
    const start = rig.clock.now();
    const events: string[] = [];
    rig.tasks.on('expiring', (_metrics, expiry) => events.push(`expiring at +${expiry.expiresAt - start}`));
    rig.tasks.on('expired', (metrics) => events.push(`expired: ${metrics.error.name}`));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(20_000);
    expect(handle.settled).toBe(false);
    expect(events).toEqual(['expiring at +15000']);
    // One read a second, the last look included: no burst at the ttl.
    expect(rig.server.count('tasks/get')).toBeLessThanOrEqual(21);
    rig.server.tasks.complete(handle.taskId!, textResult('done in 20 s'));
    expect(await outcome(rig, result)).toMatchObject({ content: textResult('done in 20 s').content });
    expect(events).toEqual(['expiring at +15000']);
  });

  it('is given up one ttl after the last look that saw lastUpdatedAt move, once the server stops updating it', async () => {
    const rig = await extRig({ server: manual({ ttlMs: 10_000, pollIntervalMs: 1_000 }) });
    const start = rig.clock.now();
    // Every read moves the stamp until just after the ttl first ran out (the last look at 10 s moved it).
    stampsEveryRead(rig, 0, start + 10_500);
    const events: string[] = [];
    rig.tasks.on('expiring', (_metrics, expiry) => events.push(`expiring at +${expiry.expiresAt - start}`));
    rig.tasks.on('expired', () => events.push(`expired at +${rig.clock.now() - start}`));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result().catch((error: unknown) => error);
    await rig.clock.advance(19_999);
    expect(handle.settled).toBe(false);
    // Warned once per ttl: before the first end and before the one the last look armed again.
    expect(events).toEqual(['expiring at +10000', 'expiring at +20000']);
    await rig.clock.advance(1);
    const error = await result;
    expect(error).toBeInstanceOf(TaskExpiredError);
    expect(error).toMatchObject({ task: { status: 'working' } });
    expect(events).toEqual(['expiring at +10000', 'expiring at +20000', 'expired at +20000']);
    expect(rig.server.tasks.detailed(handle.taskId!).status).toBe('working');
  });

  it.each([
    ['10 min behind ours', -TEN_MINUTES],
    ['10 min ahead of ours', TEN_MINUTES],
  ])(
    'a server clock %s: kept while it moves lastUpdatedAt, given up at the first end of its ttl after it stops, whatever its clock reads',
    async (_label, offsetMs) => {
      const clock = new ManualClock();
      const rig = await extRig({
        clock,
        server: manual({ ttlMs: 10_000, pollIntervalMs: 1_000, now: () => clock.now() + offsetMs }),
      });
      const start = rig.clock.now();
      stampsEveryRead(rig, offsetMs, start + 25_500);
      const handle = await rig.tasks.callToolAsTask('manual');
      const result = handle.result().catch((error: unknown) => error);
      // Kept at the ends at 10 s and 20 s (each read moved the stamp), and the one at 30 s saw it stopped.
      await rig.clock.advance(29_999);
      expect(handle.settled).toBe(false);
      await rig.clock.advance(1);
      expect(await result).toBeInstanceOf(TaskExpiredError);
    },
  );
});
