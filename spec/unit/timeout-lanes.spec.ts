/**
 * The request timeouts of a session port (lib/port/pending.ts): requests of one timeout length
 * share a lane with one timer, and a deadline's remaining budget gives almost every request a
 * length of its own, so idle lanes are dropped once a timer queue holds 16 of them.
 */
import { describe, expect, it } from 'vitest';
import { TimeoutLanes, type TimeoutLane } from '../../lib/port/pending.js';
import type { Timers } from '../../lib/port/port.js';

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
