/**
 * Task status notifications on the tasks extension ([E18]): one `subscriptions/listen` per
 * connection naming the live task ids, replaced as tasks start; `notifications/tasks` merged like
 * polls; a server that acknowledges and stays silent, or agrees to nothing, costs nothing: polling
 * goes on at `pollIntervalMs` ([E14]).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { flush, within } from '../helpers.js';
import {
  elicitation,
  ErrorCode,
  ExtServer,
  NO_REPLY,
  rpcError,
  taskTool,
  textResult,
  type ExtServerOptions,
  META,
} from '../support/ext-server/index.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import { closeRigs, extRig, gaps, lastTaskId, ManualClock, sdkV2Client } from './support.js';

afterEach(closeRigs);

function manual(options: ExtServerOptions = {}): ExtServerOptions {
  return { ...options, tools: [taskTool('manual', { advance: 'manual' }), ...(options.tools ?? [])] };
}

/** The task ids each `subscriptions/listen` named, in order. */
function listened(rig: { server: { params(method: string): Array<Record<string, unknown>> } }): string[][] {
  return rig.server
    .params('subscriptions/listen')
    .map((p) => [...((p.notifications as { taskIds?: string[] }).taskIds ?? [])].sort());
}

describe('one subscription per connection ([E18])', () => {
  it('names every task of a burst in one subscriptions/listen', async () => {
    const rig = await extRig({ server: manual() });
    const n = 25;
    const handles = await Promise.all(Array.from({ length: n }, () => rig.tasks.callToolAsTask('manual')));
    await rig.clock.advance(0);
    expect(rig.server.count('subscriptions/listen')).toBe(1);
    expect(listened(rig)).toEqual([rig.server.tasks.ids().sort()]);
    expect(rig.server.subscriptions.size).toBe(1);
    expect(handles.every((h) => h.kind === 'task')).toBe(true);
  });

  it('sends far fewer listen requests than tasks when tasks start one after another', async () => {
    const rig = await extRig({ server: manual() });
    const n = 40;
    for (let i = 0; i < n; i += 1) {
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(5);
    }
    await rig.clock.advance(100);
    // 40 starts over 200 ms: at most one replacement per 50 ms.
    expect(rig.server.count('subscriptions/listen')).toBeLessThanOrEqual(6);
    expect(listened(rig).at(-1)).toEqual(rig.server.tasks.ids().sort());
    expect(rig.server.subscriptions.size, 'replaced subscriptions are ended').toBe(1);
  });

  it('replaces the subscription as tasks start, drops ended ones at the next replacement, and ends it when none is left', async () => {
    const rig = await extRig({ server: manual() });
    const a = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    const b = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(50);
    expect(listened(rig)).toEqual([[a.taskId], [a.taskId, b.taskId].sort()]);
    rig.server.tasks.complete(a.taskId!, textResult('a'));
    await flush();
    expect(a.settled).toBe(true);
    expect(rig.server.count('subscriptions/listen'), 'an ended task alone asks for nothing').toBe(2);
    const c = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(50);
    expect(listened(rig).at(-1)).toEqual([b.taskId, c.taskId].sort());
    expect(rig.server.subscriptions.size).toBe(1);
    rig.server.tasks.complete(b.taskId!, textResult('b'));
    rig.server.tasks.complete(c.taskId!, textResult('c'));
    await flush();
    expect(b.settled && c.settled).toBe(true);
    expect(rig.server.subscriptions.size, 'no task left: the subscription ended').toBe(0);
    expect(rig.server.count('subscriptions/listen')).toBe(3);
  });

  it('listens again when the server ends the subscription while tasks are tracked', async () => {
    const rig = await extRig({ server: manual() });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    rig.server.endSubscriptions();
    await rig.clock.advance(50);
    expect(rig.server.count('subscriptions/listen')).toBe(2);
    rig.server.tasks.complete(handle.taskId!, textResult('pushed'));
    await flush();
    expect(handle.settled).toBe(true);
  });

  it('listens again when the server tears the subscription down with notifications/cancelled and no result ([E30])', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 10_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    const [first] = rig.server.received('subscriptions/listen');
    rig.server.cancelSubscriptions('restarting');
    expect(rig.server.subscriptions.size).toBe(0);
    await rig.clock.advance(50);
    const listens = rig.server.received('subscriptions/listen');
    expect(listens).toHaveLength(2);
    expect(listens[1]!.id).not.toEqual(first!.id);
    expect(rig.server.subscriptions.size, 'the new subscription is open').toBe(1);
    // The new subscription carries the end: no poll was needed.
    rig.server.tasks.complete(handle.taskId!, textResult('pushed'));
    await flush();
    expect(handle.settled).toBe(true);
    expect((await handle.result()).content).toEqual(textResult('pushed').content);
    expect(rig.server.count('tasks/get')).toBe(0);
  });

  describe('a server that keeps ending subscriptions early is asked less and less often ([E22])', () => {
    /** Times (from `start`) of the `subscriptions/listen` requests the server received. */
    function listenTimes(rig: Awaited<ReturnType<typeof extRig>>, start: number): number[] {
      return rig.server.received('subscriptions/listen').map((entry) => entry.at - start);
    }

    it('one that answers every listen at once with a result: the pause doubles up to 30 s, and polling completes the task', async () => {
      // No ttl: the task is tracked for the whole 90 s.
      const rig = await extRig({ server: manual({ pollIntervalMs: 1_000, ttlMs: null }) });
      rig.server.on('subscriptions/listen', () => ({ resultType: 'complete' }));
      const start = rig.clock.now();
      const handle = await rig.tasks.callToolAsTask('manual');
      for (let i = 0; i < 100; i += 1) await rig.clock.advance(100);
      // Before the fix: one every 50 ms, 200 in these 10 s.
      expect(listenTimes(rig, start)).toEqual([0, 50, 150, 350, 750, 1_550, 3_150, 6_350]);
      for (let i = 0; i < 80; i += 1) await rig.clock.advance(1_000);
      // 6 400 ms, 12 800, 25 600, then the 30 s cap.
      expect(listenTimes(rig, start).slice(8)).toEqual([12_750, 25_550, 51_150, 81_150]);
      expect(
        gaps(rig.server, 'tasks/get', start).every((gap) => gap === 1_000),
        'polling is unaffected',
      ).toBe(true);
      expect(rig.server.count('tasks/get')).toBe(90);
      rig.server.tasks.complete(handle.taskId!, textResult('polled'));
      const result = handle.result();
      await rig.clock.advance(1_000);
      expect((await result).content).toEqual(textResult('polled').content);
    });

    it('a subscription that lasts 10 s resets the pause, and a new task is not held back while it is open', async () => {
      const rig = await extRig({ server: manual({ pollIntervalMs: 60_000, ttlMs: null }) });
      const builtin = builtinMethods(rig.server)['subscriptions/listen']!;
      // The first 6 end at once; the ones after stay open as usual.
      let endAtOnce = 6;
      rig.server.on('subscriptions/listen', (params, ctx) => {
        if (endAtOnce <= 0) return builtin(params, ctx);
        endAtOnce -= 1;
        return { resultType: 'complete' };
      });
      const start = rig.clock.now();
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(5_000);
      expect(listenTimes(rig, start)).toEqual([0, 50, 150, 350, 750, 1_550, 3_150]);
      expect(rig.server.subscriptions.size).toBe(1);
      await rig.clock.advance(10_000);
      // Open for 11 850 ms: a new task is listened for at once, not 3 200 ms after the last listen.
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(0);
      expect(listenTimes(rig, start).at(-1)).toBe(15_000);
      await rig.clock.advance(12_000);
      // That one lasted 12 s; from now on the server ends them at once again.
      endAtOnce = Number.POSITIVE_INFINITY;
      rig.server.endSubscriptions();
      await rig.clock.advance(150);
      // The pause starts over from 50 ms (without the reset it would be 6 400 ms by now).
      expect(listenTimes(rig, start).slice(8)).toEqual([27_000, 27_050, 27_150]);
    });

    it('one whose listen fails: asked again only as new tasks start, and with the same growing pause', async () => {
      const rig = await extRig({ server: manual({ pollIntervalMs: 1_000 }) });
      rig.server.on('subscriptions/listen', () => {
        throw rpcError(ErrorCode.InternalError, 'no subscriptions today');
      });
      const start = rig.clock.now();
      for (let i = 0; i < 20; i += 1) {
        await rig.tasks.callToolAsTask('manual');
        await rig.clock.advance(100);
      }
      // Before: one per new task, 20.
      expect(listenTimes(rig, start)).toEqual([0, 100, 200, 400, 800, 1_600]);
    });

    it.each([
      ['a CreateTaskResult', { resultType: 'task', taskId: 'not-a-subscription', status: 'working', ttlMs: null }],
      ['an unknown resultType', { resultType: 'subscribed' }],
    ])(
      'one that answers every listen with %s: an invalid response ([E36]), not a graceful end ([E22]); asked again only as new tasks start, and polling completes the task',
      async (_, reply) => {
        const rig = await extRig({ server: manual({ pollIntervalMs: 1_000, ttlMs: null }) });
        rig.server.on('subscriptions/listen', () => ({
          ...reply,
          createdAt: new Date(0).toISOString(),
          lastUpdatedAt: new Date(0).toISOString(),
        }));
        const start = rig.clock.now();
        const first = await rig.tasks.callToolAsTask('manual');
        for (let i = 0; i < 100; i += 1) await rig.clock.advance(100);
        // Before the fix it counted as ended and was asked for again: 0, 50, 150, 350, ... 6 350.
        expect(listenTimes(rig, start)).toEqual([0]);
        await rig.tasks.callToolAsTask('manual');
        await rig.clock.advance(0);
        expect(listenTimes(rig, start)).toEqual([0, 10_000]);
        rig.server.tasks.complete(first.taskId!, textResult('polled'));
        const result = first.result();
        await rig.clock.advance(1_000);
        expect((await result).content).toEqual(textResult('polled').content);
        // The task a CreateTaskResult names is not one of this client's: never read, answered or cancelled.
        for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel'])
          expect(rig.server.params(method).map((p) => p.taskId)).not.toContain('not-a-subscription');
      },
    );
  });

  it('stops asking a server that has no subscriptions/listen (-32601), and polls', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 1_000 }) });
    rig.server.on('subscriptions/listen', () => {
      throw rpcError(ErrorCode.MethodNotFound, 'Method not found: subscriptions/listen');
    });
    const first = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(100);
    await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(100);
    expect(rig.server.count('subscriptions/listen')).toBe(1);
    rig.server.tasks.complete(first.taskId!, textResult('polled'));
    const result = first.result();
    await rig.clock.advance(1_000);
    expect((await result).content).toEqual(textResult('polled').content);
  });

  describe('a replaced subscription stays open until its replacement is in place', () => {
    /** A server that holds back its second `subscriptions/listen` (no registration, no ack) until released. */
    function holdingSecondListen(rig: Awaited<ReturnType<typeof extRig>>): () => void {
      const builtin = builtinMethods(rig.server)['subscriptions/listen']!;
      let release = (): void => {};
      let seen = 0;
      rig.server.on('subscriptions/listen', (params, ctx) => {
        seen += 1;
        if (seen !== 2) return builtin(params, ctx);
        release = () => void builtin(params, ctx);
        return NO_REPLY;
      });
      return () => release();
    }

    it('until the server acknowledges it: a notification sent meanwhile arrives on the old one, with no poll', async () => {
      const rig = await extRig({ server: manual() });
      const release = holdingSecondListen(rig);
      const a = await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(0);
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(50);
      expect(rig.server.count('subscriptions/listen')).toBe(2);
      // Before the fix the first subscription was cancelled as soon as the second was asked for.
      expect(rig.server.count('notifications/cancelled'), 'the old subscription is still open').toBe(0);
      rig.server.tasks.complete(a.taskId!, textResult('a'));
      await flush();
      expect(a.settled).toBe(true);
      expect(rig.server.count('tasks/get')).toBe(0);
      release();
      await flush();
      expect(rig.server.count('notifications/cancelled'), 'acknowledged: the old one ends').toBe(1);
      expect(rig.server.subscriptions.size).toBe(1);
    });

    it('only the replacement’s own acknowledgement ends the old one: a late acknowledgement of the old listen does not ([E18])', async () => {
      const rig = await extRig({ server: manual() });
      // Both listen requests are held (no registration, no acknowledgement) until released.
      const builtin = builtinMethods(rig.server)['subscriptions/listen']!;
      const held: Array<() => void> = [];
      rig.server.on('subscriptions/listen', (params, ctx) => {
        held.push(() => void builtin(params, ctx));
        return NO_REPLY;
      });
      const a = await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(0);
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(50);
      const [first, second] = rig.server.received('subscriptions/listen').map((entry) => entry.id);
      expect(held).toHaveLength(2);
      // The first listen's acknowledgement comes late, after the second listen went out: the
      // second is not in place yet, so the first stays open.
      held[0]!();
      await flush();
      // Before the fix any acknowledgement of the library's own ended the replaced subscription.
      expect(rig.server.count('notifications/cancelled'), 'the old subscription is still open').toBe(0);
      rig.server.tasks.complete(a.taskId!, textResult('a'));
      await flush();
      expect(a.settled, 'a notification on the old subscription still arrives').toBe(true);
      expect(rig.server.count('tasks/get')).toBe(0);
      // The second listen's own acknowledgement: now the first ends.
      held[1]!();
      await flush();
      expect(rig.server.params('notifications/cancelled').map((p) => p.requestId)).toEqual([first]);
      expect(second).not.toBe(first);
    });

    it('a server that acknowledges at once: the old subscription ends as soon as its replacement is acknowledged', async () => {
      const rig = await extRig({ server: manual() });
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(0);
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(50);
      await flush();
      const [first] = rig.server.received('subscriptions/listen').map((entry) => entry.id);
      expect(rig.server.count('subscriptions/listen')).toBe(2);
      expect(rig.server.params('notifications/cancelled').map((p) => p.requestId)).toEqual([first]);
      expect(rig.server.subscriptions.size).toBe(1);
    });

    it('at most 1 s when the server never acknowledges the replacement', async () => {
      const rig = await extRig({ server: manual() });
      holdingSecondListen(rig);
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(0);
      await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(50);
      expect(rig.server.count('notifications/cancelled')).toBe(0);
      await rig.clock.advance(1_000);
      expect(rig.server.count('notifications/cancelled')).toBe(1);
      expect(rig.server.subscriptions.size).toBe(0);
    });
  });
});

describe('notifications/tasks', () => {
  it('finish a task long before the next poll, with no tasks/get at all', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 10_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    rig.server.tasks.update(handle.taskId!, { statusMessage: 'half way' });
    rig.server.tasks.complete(handle.taskId!, textResult('pushed'));
    await flush();
    expect(handle.settled).toBe(true);
    expect((await handle.result()).content).toEqual(textResult('pushed').content);
    expect(rig.server.count('tasks/get')).toBe(0);
    expect(handle.metrics).toMatchObject({ polls: 0, notifications: 2, status: 'completed' });
  });

  it('bring input requests that are answered at once with tasks/update ([E3], [E5])', async () => {
    const asked: string[] = [];
    const rig = await extRig({
      server: manual({ pollIntervalMs: 10_000 }),
      client: {
        onElicitation: (params, context) => {
          asked.push(`${context.delivery}:${params.message}`);
          return { action: 'accept', content: { ok: true } };
        },
      },
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Pushed question?', { ok: { type: 'boolean' } }) });
    await flush();
    expect(asked).toEqual(['task-update:Pushed question?']);
    expect(rig.server.tasks.inspect(handle.taskId!)).toMatchObject({
      answers: { q: { action: 'accept', content: { ok: true } } },
    });
    expect(rig.server.count('tasks/get')).toBe(0);
  });

  it('make the client read the task at once when a terminal one comes without its payload (a terse notification)', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 30_000 }) });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    rig.server.notifications = 'off';
    const { result: _result, ...terse } = rig.server.tasks.complete(handle.taskId!, textResult('read me'));
    rig.server.notify('notifications/tasks', terse);
    await rig.clock.advance(100);
    expect(rig.server.count('tasks/get')).toBe(1);
    expect(handle.settled).toBe(true);
  });

  it('repeated terse terminal ones while tasks/get fails do not bypass the poll backoff, and the result still arrives ([E14])', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 1_000 }) });
    const normal = builtinMethods(rig.server)['tasks/get']!;
    const failUntil = rig.clock.now() + 2_000; // a backend restarting for 2 s
    rig.server.on('tasks/get', (params, ctx) => {
      if (rig.clock.now() < failUntil) throw rpcError(ErrorCode.InternalError, 'hiccup');
      return normal(params, ctx);
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await rig.clock.advance(0);
    rig.server.notifications = 'off';
    const { result: _result, ...terse } = rig.server.tasks.complete(handle.taskId!, textResult('done anyway'));
    const before = rig.server.count('tasks/get');
    for (let i = 0; i < 10; i += 1) {
      rig.server.notify('notifications/tasks', terse);
      await flush();
      await rig.clock.advance(10);
    }
    // The first one reads at once; its failure sets the backoff, which the other nine respect.
    expect(rig.server.count('tasks/get') - before).toBe(1);
    await rig.clock.advance(5_000);
    expect((await within(result)).content).toEqual(textResult('done anyway').content);
  });

  it('make the client read the task at once when input_required comes without its input requests, instead of waiting a full interval ([E3])', async () => {
    const asked: string[] = [];
    const rig = await extRig({
      server: manual({ pollIntervalMs: 1_000 }),
      client: {
        onElicitation: (params) => (asked.push(String(params.message)), { action: 'accept', content: { ok: true } }),
      },
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(500);
    rig.server.notifications = 'off';
    const detailed = rig.server.tasks.requestInput(handle.taskId!, {
      q: elicitation('Terse question?', { ok: { type: 'boolean' } }),
    });
    const { inputRequests: _input, ...terse } = detailed;
    const before = rig.server.count('tasks/get');
    rig.server.notify('notifications/tasks', terse);
    await flush();
    await rig.clock.advance(10);
    expect(rig.server.count('tasks/get') - before).toBe(1);
    expect(asked).toEqual(['Terse question?']);
  });

  it('a flood of 500 input_required ones without input requests: at most a couple of reads per poll interval, and the question is still answered ([E3], [E14])', async () => {
    const asked: string[] = [];
    let answer: ((value: { action: 'accept'; content: { ok: boolean } }) => void) | undefined;
    const rig = await extRig({
      server: manual({ pollIntervalMs: 1_000 }),
      client: {
        onElicitation: (params) => {
          asked.push(String(params.message));
          return new Promise((resolve) => (answer = resolve));
        },
      },
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    await rig.clock.advance(500);
    rig.server.notifications = 'off';
    const { inputRequests: _input, ...terse } = rig.server.tasks.requestInput(handle.taskId!, {
      q: elicitation('Flooded question?', { ok: { type: 'boolean' } }),
    });
    const before = rig.server.count('tasks/get');
    const start = rig.clock.now();
    // 500 over 1.5 s, each a change (its own statusMessage), none with the input requests.
    for (let i = 0; i < 500; i += 1) {
      rig.server.notify('notifications/tasks', { ...terse, statusMessage: `waiting for you (${i})` });
      await rig.clock.advance(3);
    }
    const reads = rig.server
      .received('tasks/get')
      .slice(before)
      .map((entry) => entry.at - start);
    // The first read goes at once; the others wait a full poll interval after it.
    expect(reads[0]).toBeLessThan(10);
    expect(reads.length).toBeLessThanOrEqual(4);
    for (let i = 1; i < reads.length; i += 1) expect(reads[i]! - reads[i - 1]!).toBeGreaterThanOrEqual(1_000);
    expect(asked).toEqual(['Flooded question?']);
    answer?.({ action: 'accept', content: { ok: true } });
    await rig.clock.advance(10);
    expect(rig.server.tasks.inspect(handle.taskId!).answers).toEqual({
      q: { action: 'accept', content: { ok: true } },
    });
    rig.server.tasks.complete(handle.taskId!, textResult('answered'));
    await rig.clock.advance(1_000);
    expect((await within(result)).content).toEqual(textResult('answered').content);
  });

  it('that leave out ttlMs, pollIntervalMs and the timestamps keep what the client knew of them (D20)', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 10_000 }) });
    const errors: unknown[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    const known = handle.task!;
    expect(known.ttl).not.toBeUndefined();
    expect(known.pollInterval).toBe(10_000);
    const [listen] = rig.server.received('subscriptions/listen');
    rig.server.notify('notifications/tasks', {
      taskId: handle.taskId,
      status: 'working',
      statusMessage: 'terse',
      _meta: { [META.subscriptionId]: listen!.id },
    });
    await flush();
    expect(handle.task).toEqual({ ...known, statusMessage: 'terse' });
    expect(errors).toEqual([]);
  });
  it('move the next poll a full interval away (a fresh observation)', async () => {
    const rig = await extRig({ server: manual({ pollIntervalMs: 1_000 }) });
    const start = rig.clock.now();
    const handle = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(600);
    rig.server.tasks.update(handle.taskId!, { statusMessage: 'pushed at 600' });
    await rig.clock.advance(1_500);
    expect(gaps(rig.server, 'tasks/get', start)).toEqual([1_600]);
  });
});

describe('servers that push nothing cost nothing ([E14], [E18])', () => {
  for (const mode of ['ack-only', 'off'] as const) {
    it(`${mode}: polling goes on at pollIntervalMs and the task completes`, async () => {
      const rig = await extRig({ server: manual({ notifications: mode, pollIntervalMs: 700 }) });
      const start = rig.clock.now();
      const handle = await rig.tasks.callToolAsTask('manual');
      await rig.clock.advance(0);
      expect(
        rig.server.sent.filter((s) => s.message.method === 'notifications/subscriptions/acknowledged'),
      ).toHaveLength(1);
      rig.server.tasks.update(handle.taskId!, { statusMessage: 'unseen until polled' });
      await rig.clock.advance(3_500);
      expect(gaps(rig.server, 'tasks/get', start)).toEqual([700, 700, 700, 700, 700]);
      expect(handle.task?.statusMessage).toBe('unseen until polled');
      rig.server.tasks.complete(handle.taskId!, textResult(mode));
      const result = handle.result();
      await rig.clock.advance(700);
      expect((await result).content).toEqual(textResult(mode).content);
      expect(handle.metrics).toMatchObject({ notifications: 0, polls: 6 });
      expect(rig.server.count('subscriptions/listen'), 'the subscription is asked for once').toBe(1);
      expect(rig.server.sent.filter((s) => s.message.method === 'notifications/tasks')).toEqual([]);
    });
  }
});

it('notifications for a task this client does not track change nothing', async () => {
  const rig = await extRig({ server: manual({ pollIntervalMs: 1_000 }) });
  const errors: unknown[] = [];
  rig.tasks.on('error', (error) => errors.push(error));
  const handle = await rig.tasks.callToolAsTask('manual');
  const stranger = rig.server.tasks.create({ advance: 'manual' });
  rig.server.notify('notifications/tasks', { ...rig.server.tasks.complete(stranger.taskId, textResult('not yours')) });
  await rig.clock.advance(100);
  expect(handle.settled).toBe(false);
  expect(errors).toEqual([]);
  expect(lastTaskId(rig.server)).toBe(stranger.taskId);
});

describe('the host’s own subscriptions on a shared SDK client ([E18])', () => {
  it('the host’s client.listen() gets its acknowledgement; the library keeps only its own subscription’s messages', async () => {
    const server = new ExtServer({ ...manual({ pollIntervalMs: 10_000 }) });
    const client = await sdkV2Client(server);
    const hostSaw: string[] = [];
    client.fallbackNotificationHandler = async (notification) => {
      hostSaw.push(notification.method);
    };
    const clock = new ManualClock();
    const tasks = new TaskClient(client, { clock });
    try {
      const handle = await tasks.callToolAsTask('manual');
      await clock.advance(0);
      expect(server.count('subscriptions/listen'), 'the library’s own subscription is open').toBe(1);
      // Before the fix every acknowledgement was taken, so this waited out the SDK's ack timeout.
      const subscription = await within(
        client.listen({ toolsListChanged: true }, { timeout: 2_000 }),
        2_500,
        'the host’s listen()',
      );
      expect(server.count('subscriptions/listen')).toBe(2);
      server.tasks.complete(handle.taskId!, textResult('pushed'));
      await flush();
      expect(handle.settled, 'the library still reads its own subscription').toBe(true);
      expect(server.count('tasks/get')).toBe(0);
      // Neither the library's acknowledgement nor its notifications/tasks reached the host.
      expect(hostSaw).toEqual([]);
      await subscription.close();
    } finally {
      await tasks.close();
    }
  });

  it("notifications/tasks/status, the 2025-11-25 name the C# SDK's extension sends, is read like notifications/tasks: in the extension's form or in 2025-11-25's (ttl, pollInterval) (D24)", async () => {
    const rig = await extRig({ server: { ...manual({ pollIntervalMs: 10_000 }), notifications: 'off' } });
    const errors: unknown[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const pushed = await rig.tasks.callToolAsTask('manual');
    const terse = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(0);
    const known = terse.task!;
    // A completed task in the extension's form, its result inline.
    rig.server.notify('notifications/tasks/status', {
      ...rig.server.tasks.complete(pushed.taskId!, textResult('pushed under the old name')),
    });
    // A status in 2025-11-25's form: no ttlMs or pollIntervalMs, which the client keeps as it knew them.
    rig.server.notify('notifications/tasks/status', {
      taskId: terse.taskId,
      status: 'working',
      statusMessage: 'half way',
      createdAt: known.createdAt,
      lastUpdatedAt: new Date(Date.parse(known.lastUpdatedAt) + 1_000).toISOString(),
      ttl: 60_000,
      pollInterval: 5_000,
    });
    await flush();
    expect(pushed.settled).toBe(true);
    expect((await pushed.result()).content).toEqual(textResult('pushed under the old name').content);
    expect(terse.task).toMatchObject({ status: 'working', statusMessage: 'half way', pollInterval: 10_000 });
    expect(rig.server.count('tasks/get'), 'no poll was needed').toBe(0);
    expect(pushed.metrics).toMatchObject({ polls: 0, notifications: 1, status: 'completed' });
    expect(errors).toEqual([]);
  });

  it('a notifications/tasks that names no subscription is read, and passed on to the host too', async () => {
    const server = new ExtServer({ ...manual({ pollIntervalMs: 10_000 }), notifications: 'off' });
    const client = await sdkV2Client(server);
    const hostSaw: string[] = [];
    client.fallbackNotificationHandler = async (notification) => {
      hostSaw.push(notification.method);
    };
    const clock = new ManualClock();
    const tasks = new TaskClient(client, { clock });
    try {
      const handle = await tasks.callToolAsTask('manual');
      await clock.advance(0);
      server.notify('notifications/tasks', { ...server.tasks.complete(handle.taskId!, textResult('untagged')) });
      await flush();
      expect(handle.settled).toBe(true);
      expect(hostSaw).toEqual(['notifications/tasks']);
      // One the host's own subscription names (not the library's) is the host's alone.
      const other = await tasks.callToolAsTask('manual');
      await clock.advance(0);
      server.notify('notifications/tasks', {
        ...server.tasks.complete(other.taskId!, textResult('theirs')),
        _meta: { 'io.modelcontextprotocol/subscriptionId': 7 },
      });
      await flush();
      expect(other.settled).toBe(false);
      expect(hostSaw).toEqual(['notifications/tasks', 'notifications/tasks']);
    } finally {
      await tasks.close();
    }
  });
});
