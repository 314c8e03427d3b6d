/**
 * The request timeouts of a session port (lib/port/pending.ts): requests of one timeout length
 * share a lane with one timer, and a deadline's remaining budget gives almost every request a
 * length of its own, so idle lanes are dropped once a timer queue holds 16 of them. A request
 * that stays open long keeps no request that ended behind it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { Pending, TimeoutLanes, type TimeoutLane } from '../../lib/port/pending.js';
import type { Timers } from '../../lib/port/port.js';

setFlagsFromString('--expose-gc');
const forceGc = runInNewContext('gc') as () => void;

/** A request of no session on `timers`, holding `payload` (its answer, say) until it is dropped. */
function request(timers: Timers, id: string, expired: string[] = [], payload?: unknown): Pending {
  const session = {
    giveUp: (giveUpId: string) => {
      expired.push(giveUpId);
      entry.ended = true;
    },
  };
  const entry = new Pending(
    session,
    id,
    'tasks/get',
    () => payload,
    () => {},
    () => {},
    timers,
    undefined,
    undefined,
    undefined,
  );
  return entry;
}

/** Ends `entry` as the session's `take()` does. */
function end(entry: Pending): void {
  entry.ended = true;
  entry.lane?.ended(entry);
}

describe('timeout lanes', () => {
  it("requests of ever-new timeout lengths (a deadline's remaining budget) keep a bounded number of timeout lanes", () => {
    const lanes = new TimeoutLanes();
    let now = 0;
    const timers: Timers = { after: () => ({ live: true }), cancel: () => {}, now: () => now };
    const made: TimeoutLane[] = [];
    for (let i = 0; i < 200; i += 1) {
      now += 7;
      made.push(lanes.get(timers, 30_000 + i, false)!);
    }
    // A length asked for again gets the same lane while it is kept: count the kept ones, newest
    // first (the first one not kept ends the count, since asking for it makes a new lane).
    let kept = 0;
    for (let i = 199; i >= 0 && lanes.get(timers, 30_000 + i, false) === made[i]; i -= 1) kept += 1;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(16);
    expect(lanes.get(timers, 30_000, false)).not.toBe(made[0]);
    // Lanes of the other weakness are apart.
    expect(lanes.get(timers, 30_199, true)).not.toBe(made[199]);
  });
});

describe('a request open long in a shared lane', () => {
  it('keeps none of the requests that ended behind it in memory', async () => {
    const lanes = new TimeoutLanes();
    const timers: Timers = { after: () => ({ live: true }), cancel: () => {}, now: () => 0 };
    const lane = lanes.get(timers, 600_000, false)!;
    const slow = request(timers, 'slow');
    lane.add(slow);
    const refs: Array<WeakRef<object>> = [];
    (() => {
      for (let i = 0; i < 500; i += 1) {
        const answer = { bytes: new Uint8Array(1024) };
        const entry = request(timers, `fast-${i}`, [], answer);
        lane.add(entry);
        refs.push(new WeakRef(entry), new WeakRef(answer));
        end(entry);
      }
    })();
    // A WeakRef holds its target until the current job ends.
    await new Promise((resolve) => setTimeout(resolve, 0));
    forceGc();
    forceGc();
    const kept = refs.filter((ref) => ref.deref() !== undefined).length;
    // Swept once the ended ones are most of the queue: at most the last few dozen are left.
    expect(kept).toBeLessThan(2 * 130);
    expect(slow.ended).toBe(false);
  });

  it('still times out every open request, in order, once others ended and were swept', () => {
    const lanes = new TimeoutLanes();
    let now = 0;
    const due: Array<() => void> = [];
    const timers: Timers = {
      after: (_ms: number, run: () => void) => {
        due.push(run);
        return { live: true };
      },
      cancel: () => {},
      now: () => now,
    };
    const lane = lanes.get(timers, 1_000, false)!;
    const expired: string[] = [];
    const open: string[] = [];
    for (let i = 0; i < 300; i += 1) {
      now += 1;
      const entry = request(timers, `r-${i}`, expired);
      lane.add(entry);
      if (i % 3 === 0) open.push(entry.id);
      else end(entry);
    }
    // Every timer set so far fires once its time comes; each firing re-arms for the next open one.
    now += 10_000;
    while (due.length > 0) due.shift()!();
    expect(expired).toEqual(open);
    expect(lane.idle).toBe(true);
  });
});
