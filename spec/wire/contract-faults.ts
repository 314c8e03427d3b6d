/**
 * The wire contract, second half: how a wire fails and what it delivers unasked. Errors are
 * judged by `classify()` (never by code or class name), timeouts run on the timers each request
 * is given, a request the client gives up is announced to the server only while it is still open
 * ([R27]), and pushed snapshots and the connection's end reach `subscribe()`.
 */
import { describe, expect, it } from 'vitest';
import type { WireEvents, WireSnapshot } from '../../lib/internal.js';
import { flush, rejection } from '../helpers.js';
import { deviable, failureClass, ManualTimers, startTask, text, track, type Rig, type WireDriver } from './support.js';

/** Events recorded from `subscribe()`. */
interface Recorded {
  readonly statuses: WireSnapshot[];
  readonly malformed: Error[];
  closed: number;
  readonly stop: () => void;
}

/** Every message along an error's cause chain. */
function causeChain(error: unknown): string[] {
  const messages: string[] = [];
  for (let e: unknown = error; e instanceof Error && messages.length < 10; e = e.cause)
    messages.push(`${e.name}: ${e.message}`);
  return messages;
}

function record(d: WireDriver): Recorded {
  const seen: Omit<Recorded, 'stop'> & { closed: number } = { statuses: [], malformed: [], closed: 0 };
  const events: WireEvents = {
    status: (snapshot) => seen.statuses.push(snapshot),
    malformed: (error) => seen.malformed.push(error),
    toolsChanged: () => {},
    closed: () => {
      seen.closed += 1;
    },
    progress: () => false,
  };
  const stop = d.wire.subscribe(events);
  return Object.assign(seen, { stop });
}

/** Registers the failure, timer and event half of the contract. */
export function describeFaultContract(rig: Rig): void {
  describe('classify()', () => {
    it('reads an unknown task on get and cancel as vanished', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.vanish(id);
      expect(await failureClass(d, d.wire.getTask(id, d.options()))).toBe('vanished');
      expect(await failureClass(d, d.wire.cancelTask(id, d.options()))).toBe('vanished');
      if (d.wire.features().payloadFetch) {
        // A wire that can tell an unknown task from a task's own error rejects as vanished. One that
        // cannot (2025-11-25: -32602 is both, [V26], [V17]) answers an error payload marked `gone`,
        // which classifies as vanished; the engine then decides by the status it saw.
        const fetched = d.wire.getPayload(id, d.options()).then(
          (payload) => (payload.kind === 'error' ? d.wire.classify(payload.gone) : payload.kind),
          (error: unknown) => d.wire.classify(error),
        );
        expect(await fetched).toBe('vanished');
      }
      expect(await failureClass(d, d.wire.getTask('never-existed', d.options()))).toBe('vanished');
    });

    it('reads its own request timeout as timeout', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.holdNext('get');
      const failure = failureClass(d, d.wire.getTask(id, d.options({ timeoutMs: 1_000 })));
      await d.timers.advance(1_000);
      expect(await failure).toBe('timeout');
    });

    it('reads a closed connection as transient, during and after a request', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.holdNext('get');
      const during = failureClass(d, d.wire.getTask(id, d.options()));
      await flush();
      await d.drop();
      expect(await during).toBe('transient');
      expect(await failureClass(d, d.wire.getTask(id, d.options()))).toBe('transient');
    });

    it('reads an aborted request as stopped', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.holdNext('get');
      const controller = new AbortController();
      const failure = failureClass(d, d.wire.getTask(id, d.options({ signal: controller.signal })));
      await flush();
      controller.abort(new Error('tracking stopped'));
      expect(await failure).toBe('stopped');
    });

    it('reads a malformed reply as protocol', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.malformedNext('get');
      expect(await failureClass(d, d.wire.getTask(id, d.options()))).toBe('protocol');
      d.malformedNext('cancel');
      expect(await failureClass(d, d.wire.cancelTask(id, d.options()))).toBe('protocol');
    });

    it('reads a server error such as -32603 as server', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.failNext('get', { code: -32603, message: 'database unavailable' });
      expect(await failureClass(d, d.wire.getTask(id, d.options()))).toBe('server');
      d.failNext('cancel', { code: -32603, message: 'database unavailable' });
      expect(await failureClass(d, d.wire.cancelTask(id, d.options()))).toBe('server');
    });
  });

  describe('answeredByServer()', () => {
    /** The rejection of `promise`, told apart by answeredByServer(). */
    async function answered(d: WireDriver, promise: Promise<unknown>): Promise<boolean> {
      return d.wire.answeredByServer(await rejection(promise));
    }

    it("is true for the server's own refusals (an unknown task, a server error), false for local failures and unreadable replies", async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.failNext('cancel', { code: -32603, message: 'cannot cancel now' });
      expect(await answered(d, d.wire.cancelTask(id, d.options()))).toBe(true);
      d.malformedNext('get');
      expect(await answered(d, d.wire.getTask(id, d.options()))).toBe(false);
      d.holdNext('get');
      const timedOut = answered(d, d.wire.getTask(id, d.options({ timeoutMs: 1_000 })));
      await d.timers.advance(1_000);
      expect(await timedOut).toBe(false);
      const controller = new AbortController();
      d.holdNext('get');
      const aborted = answered(d, d.wire.getTask(id, d.options({ signal: controller.signal })));
      await flush();
      controller.abort(new Error('tracking stopped'));
      expect(await aborted).toBe(false);
      d.vanish(id);
      expect(await answered(d, d.wire.cancelTask(id, d.options()))).toBe(true);
      await d.drop();
      expect(await answered(d, d.wire.getTask(id, d.options()))).toBe(false);
      expect(d.wire.answeredByServer(new Error('not a wire error'))).toBe(false);
    });
  });

  describe('task ids are secrets', () => {
    deviable(rig, 'task-id-in-cause', 'no message along a wire error’s cause chain repeats the task id', async () => {
      const d = rig.driver;
      const secret = 'secret-5f0c2a9e4b7d41c3a8e6';
      const { id } = await startTask(d, { taskId: secret });
      const errors: unknown[] = [];
      const keep = (promise: Promise<unknown>): Promise<void> =>
        promise.then(
          () => undefined,
          (error: unknown) => void errors.push(error),
        );
      d.failNext('get', { code: -32603, message: `lookup of ${secret} failed` });
      await keep(d.wire.getTask(id, d.options()));
      d.malformedNext('get');
      await keep(d.wire.getTask(id, d.options()));
      d.holdNext('get');
      const timedOut = keep(d.wire.getTask(id, d.options({ timeoutMs: 1_000 })));
      await d.timers.advance(1_000);
      await timedOut;
      d.vanish(id);
      await keep(d.wire.getTask(id, d.options()));
      await keep(d.wire.cancelTask(id, d.options()));
      expect(errors).toHaveLength(5);
      for (const error of errors) expect(causeChain(error).filter((message) => message.includes(secret))).toEqual([]);
    });
  });

  describe('timeouts', () => {
    it('fire on the timers the request was given, not before the timeout', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const mine = new ManualTimers();
      d.holdNext('get');
      const get = track(d.wire.getTask(id, { timeoutMs: 5_000, timers: mine }));
      await flush();
      expect(mine.pending).toBeGreaterThan(0);
      await d.timers.advance(60_000);
      await mine.advance(4_999);
      expect(get.settled, 'not before the timeout').toBe(false);
      await mine.advance(1);
      expect(get.rejected).toBe(true);
      expect(d.wire.classify(get.error)).toBe('timeout');
      expect(mine.pending, 'nothing left armed').toBe(0);
    });

    it('take a reply that comes late but in time, and leave no timer armed', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      expect(d.timers.pending, 'a settled request leaves no timer').toBe(0);
      const release = d.holdNext('get');
      const get = track(d.wire.getTask(id, d.options({ timeoutMs: 5_000 })));
      await d.timers.advance(4_999);
      release();
      await d.timers.advance(0);
      expect(get.value?.task.taskId).toBe(id);
      expect(d.timers.pending).toBe(0);
      await d.timers.advance(10_000);
      expect(get.rejected).toBe(false);
    });

    it('of a weak request arm only weak timers', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const mine = new ManualTimers();
      await d.wire.getTask(id, { timeoutMs: 5_000, timers: mine, weak: true });
      expect(mine.armed.length).toBeGreaterThan(0);
      expect(mine.armed.every((timer) => timer.weak)).toBe(true);
    });
  });

  describe('cancellation notices ([R27])', () => {
    it('tell the server once about an aborted request still open', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.holdNext('get');
      const controller = new AbortController();
      const get = track(d.wire.getTask(id, d.options({ signal: controller.signal })));
      await flush();
      controller.abort();
      await d.timers.advance(0);
      expect(get.rejected).toBe(true);
      expect(d.cancelNotices()).toEqual([{ open: true }]);
    });

    it('tell the server once about a timed-out request', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.holdNext('get');
      const get = track(d.wire.getTask(id, d.options({ timeoutMs: 1_000 })));
      await d.timers.advance(1_000);
      expect(get.rejected).toBe(true);
      expect(d.cancelNotices()).toEqual([{ open: true }]);
    });

    it('say nothing about a request already answered', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const controller = new AbortController();
      await d.wire.getTask(id, d.options({ signal: controller.signal, timeoutMs: 1_000 }));
      controller.abort();
      await d.timers.advance(5_000);
      expect(d.cancelNotices()).toEqual([]);
    });

    it('say nothing about a request aborted before it was sent, which never reaches the server', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const controller = new AbortController();
      controller.abort();
      const before = d.count('get');
      expect(await failureClass(d, d.wire.getTask(id, d.options({ signal: controller.signal })))).toBe('stopped');
      await flush();
      expect(d.count('get')).toBe(before);
      expect(d.cancelNotices()).toEqual([]);
    });
  });

  describe('events', () => {
    it('subscribe() delivers pushed snapshots of a watched task', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const seen = record(d);
      d.wire.watch(id, d.timers);
      d.setStatus(id, 'input_required', 'waiting for you');
      d.push(id);
      d.finish(id, 'completed', { kind: 'result', result: text('done') });
      d.push(id);
      await flush();
      expect(seen.statuses.map((s) => [s.task.taskId, s.task.status])).toEqual([
        [id, 'input_required'],
        [id, 'completed'],
      ]);
      expect(seen.statuses[0]?.task.statusMessage).toBe('waiting for you');
      d.wire.unwatch(id);
      seen.stop();
    });

    it('subscribe() reports an undecodable push as malformed, not as a status', async () => {
      const d = rig.driver;
      const seen = record(d);
      d.pushMalformed();
      await flush();
      expect(seen.statuses).toEqual([]);
      expect(seen.malformed).toHaveLength(1);
      expect(seen.malformed[0]).toBeInstanceOf(Error);
    });

    it('the function subscribe() returns stops delivery', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      const kept = record(d);
      const stopped = record(d);
      d.wire.watch(id, d.timers);
      stopped.stop();
      d.push(id);
      await d.drop();
      await flush();
      expect(kept.statuses).toHaveLength(1);
      expect(kept.closed).toBe(1);
      expect(stopped.statuses).toEqual([]);
      expect(stopped.closed).toBe(0);
      d.wire.unwatch(id);
    });

    it('subscribe() reports closed() once when the connection drops', async () => {
      const d = rig.driver;
      const seen = record(d);
      await d.drop();
      await flush();
      await d.drop();
      await flush();
      expect(seen.closed).toBe(1);
    });

    it('subscribe() after the connection dropped still reports closed()', async () => {
      const d = rig.driver;
      await d.drop();
      await flush();
      const late = record(d);
      await flush();
      expect(late.closed).toBe(1);
    });

    it('unwatch() more often than watch(), or of a task never watched, is harmless', async () => {
      const d = rig.driver;
      const { id } = await startTask(d);
      d.wire.watch(id, d.timers);
      d.wire.watch('not-a-task-of-ours', d.timers);
      d.wire.unwatch(id);
      d.wire.unwatch(id);
      d.wire.unwatch('not-a-task-of-ours');
      d.wire.unwatch('never-watched');
      expect((await d.wire.getTask(id, d.options())).task.taskId).toBe(id);
    });
  });
}
