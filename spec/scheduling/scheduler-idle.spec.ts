/**
 * The engine's one clock timer when nothing is scheduled. With Node's timers (tokens that can be
 * unref'd), the timer left when the last job is cancelled stays armed without holding the process
 * open, so the next job rarely needs a new one; when it fires with nothing due, nothing happens.
 * close() clears it. Other clocks' timers are cleared as soon as nothing is scheduled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers.js';
import { NO_REPLY, creating, gaps } from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

/** A ManualClock whose tokens can be ref'd and unref'd, as Node's are; it knows which are still armed. */
class RefClock extends ManualClock {
  /** Tokens armed and neither fired nor cleared. */
  readonly armed = new Set<{ held: boolean; due: number }>();

  constructor() {
    super();
    const setTimer = this.setTimeout;
    const clearTimer = this.clearTimeout;
    this.setTimeout = (fn: () => void, ms: number): unknown => {
      const extra = {
        due: this.now() + ms,
        held: true,
        ref(this: { held: boolean }) {
          this.held = true;
        },
        unref(this: { held: boolean }) {
          this.held = false;
        },
      };
      const token = Object.assign(
        setTimer(() => {
          this.armed.delete(token);
          fn();
        }, ms) as object,
        extra,
      );
      this.armed.add(token);
      return token;
    };
    this.clearTimeout = (token: unknown): void => {
      this.armed.delete(token as { held: boolean; due: number });
      clearTimer(token);
    };
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('the clock timer when nothing is scheduled', () => {
  it('with unref-able tokens: kept but not holding once the last task settled; later tasks poll on time; close() clears it', async () => {
    const clock = new RefClock();
    const { server, tasks, start } = await scriptedTaskClient((c) => cleanups.push(c), {}, {}, clock);
    creating(server, { pollInterval: 1_000 });
    for (let round = 0; round < 3; round += 1) {
      const from = clock.now();
      const handle = await tasks.callToolAsTask('job');
      await clock.advance(2_500);
      server.tasks.finish(handle.taskId!, 'completed', { result: textResult(`r${round}`) });
      await clock.advance(1_000);
      expect((await handle.result()).content).toEqual([{ type: 'text', text: `r${round}` }]);
      // Polls one second apart from this task's start, whatever timer was left from the last one.
      const polls = server
        .received('tasks/get')
        .map((entry) => entry.at)
        .filter((at) => at >= from);
      expect(polls.map((at) => at - from)).toEqual([1_000, 2_000, 3_000]);
      // Nothing is scheduled: a clock timer may be left, but none holds the process open.
      expect([...clock.armed].filter((token) => token.held)).toEqual([]);
      // It is kept (the next task's first job is due no earlier than it), not cleared and set again.
      expect(clock.armed.size).toBe(1);
    }
    expect(gaps(server, 'tasks/get', start)).toHaveLength(9);
    await tasks.close();
    expect(clock.pending).toBe(0);
  });

  it('a timer due far ahead is not kept: it would keep the client reachable until then', async () => {
    const clock = new RefClock();
    const { server, tasks } = await scriptedTaskClient(
      (c) => cleanups.push(c),
      {},
      { requestTimeoutMs: 120_000 },
      clock,
    );
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 600_000 });
    // Told by a notification: the poll a minute ahead and the deadline are cancelled, and the
    // timer armed for the poll is the one left when the result request is answered.
    server.tasks.finish(handle.taskId!, 'completed', { result: textResult('done') }, {}, true);
    await clock.advance(10);
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'done' }]);
    expect([...clock.armed].map((token) => token.due - clock.now()).filter((ahead) => ahead > 30_000)).toEqual([]);
  });

  it("a clock whose setTimeout returns null (tokens are the clock's business): tasks settle, nothing is reported", async () => {
    const inner = new ManualClock();
    const clock = {
      now: inner.now,
      setTimeout: (fn: () => void, ms: number): unknown => {
        inner.setTimeout(fn, ms);
        return null;
      },
      clearTimeout: (): void => {},
    };
    const { server, tasks, errors } = await scriptedTaskClient((c) => cleanups.push(c), {}, { clock }, inner);
    creating(server, { pollInterval: 1_000 });
    for (let round = 0; round < 2; round += 1) {
      const handle = await tasks.callToolAsTask('job');
      server.tasks.finish(handle.taskId!, 'completed', { result: textResult(`r${round}`) });
      await inner.advance(1_000);
      expect((await handle.result()).content).toEqual([{ type: 'text', text: `r${round}` }]);
    }
    expect(errors).toEqual([]);
  });

  it('a timer left for background work only (a remote cancel the server has not answered) does not hold the process open', async () => {
    const clock = new RefClock();
    const { server, tasks } = await scriptedTaskClient((c) => cleanups.push(c), {}, { cancelGraceMs: 0 }, clock);
    creating(server, { pollInterval: 1_000 });
    server.on('tasks/cancel', () => NO_REPLY);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 2_500 });
    const outcome = handle.result().then(
      () => 'resolved',
      (error: unknown) => (error as Error).name,
    );
    await clock.advance(2_600);
    expect(await outcome).toBe('TaskTimeoutError');
    expect(server.count('tasks/cancel')).toBe(1);
    // The cancel is still unanswered (a background request with its own timeout): nothing holds.
    expect([...clock.armed].filter((token) => token.held)).toEqual([]);
  });

  it('a request sent after the earlier ones of its timeout length ended times out a full timeout after it was sent', async () => {
    // The shared timeout timer of requests of one length rests once none is open, while other
    // jobs (a task's polls) keep the scheduler busy, and the next request wakes it: armed for an
    // older deadline, it must not time the new request out early.
    const { server, tasks, clock } = await scriptedTaskClient(
      (c) => cleanups.push(c),
      {},
      { requestTimeoutMs: 10_000, retry: { retries: 0 } },
    );
    creating(server, { pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(6_000);
    expect(server.count('tasks/get')).toBe(6);
    server.on('tasks/list', () => NO_REPLY);
    const sentAt = clock.now();
    let failedAt: number | undefined;
    const page = tasks.listPage().then(
      () => 'resolved',
      (error: unknown) => {
        failedAt = clock.now();
        return (error as Error).name;
      },
    );
    await clock.advance(9_900);
    expect(failedAt).toBeUndefined();
    await clock.advance(200);
    expect(await page).not.toBe('resolved');
    expect(failedAt! - sentAt).toBeGreaterThanOrEqual(10_000);
    server.tasks.finish(handle.taskId!, 'completed', { result: textResult('done') });
    await clock.advance(1_000);
    await handle.result();
    expect(clock.pending).toBe(0);
  });

  it('with plain tokens: no clock timer is left once the last task settled', async () => {
    const { server, tasks, clock } = await scriptedTaskClient((c) => cleanups.push(c));
    creating(server, { pollInterval: 1_000 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.finish(handle.taskId!, 'completed', { result: textResult('done') });
    await clock.advance(1_000);
    await handle.result();
    expect(clock.pending).toBe(0);
  });
});
