/**
 * lib/facade/input/early.ts on its own: an input request that overtakes its task's
 * `CreateTaskResult` waits, and each wait ends (its bound passed, the task tracked, the creations
 * over, the client closed) leaving no timer and no entry behind (reliability review, item 17), and
 * says how the request goes on. Time is a ManualClock; the client-level behaviour is in
 * spec/v2025/input-routing.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../lib/internal.js';
import { EARLY_INPUT_WAIT_MS, EarlyInput, PortCreations } from '../../lib/facade/input/early.js';
import { ManualClock, within } from '../helpers.js';

describe('early input requests leave nothing behind', () => {
  it('each wait (bound passed, task tracked, creations over, close) removes its timer and entries', async () => {
    const clock = new ManualClock();
    const scheduler = new Scheduler(clock, (error) => {
      throw error;
    });
    const creations = new PortCreations();
    const early = new EarlyInput(scheduler);
    // The engine's own count of creations (early notifications) moves with the port's.
    let engineCreating = 0;
    const engine = { beginCreate: () => void (engineCreating += 1), endCreate: () => void (engineCreating -= 1) };
    const creation = early.begin(creations, engine);
    expect(engineCreating).toBe(1);
    // Five requests for tasks no creation brings wait out the bound (the leak of review item 17).
    const outlived = Array.from({ length: 5 }, (_, i) => early.wait(creations, `someone-elses-${i}`));
    expect(early.size).toBe(5);
    await clock.advance(EARLY_INPUT_WAIT_MS);
    await within(Promise.all(outlived));
    expect(early.size).toBe(0);
    expect(creations.watched).toBe(0);
    expect(clock.pending).toBe(0);
    // Woken because the task is tracked.
    const tracked = early.wait(creations, 'mine');
    creations.tracked('mine');
    await within(tracked);
    // Woken because the last creation ended.
    const ended = early.wait(creations, 'never');
    creation.end();
    creation.end();
    await within(ended);
    expect(creations.busy).toBe(false);
    expect(engineCreating).toBe(0);
    // Woken by close(), which also ends the client's creations still under way.
    early.begin(creations, engine);
    const closed = early.wait(creations, 'closing');
    early.close();
    await within(closed);
    expect(creations.busy).toBe(false);
    expect([early.size, creations.watched, clock.pending, engineCreating]).toEqual([0, 0, 0, 0]);
  });

  it('each wait says how the request goes on: go, drop (its task is being cancelled) or pass (the client closed), read when it goes on', async () => {
    const clock = new ManualClock();
    const scheduler = new Scheduler(clock, (error) => {
      throw error;
    });
    const creations = new PortCreations();
    const early = new EarlyInput(scheduler);
    const engine = { beginCreate: () => {}, endCreate: () => {} };
    const creation = early.begin(creations, engine);
    const tracked = early.wait(creations, 'tracked');
    const dropped = early.wait(creations, 'dropped');
    creations.tracked('tracked');
    // The given-up creation's task: held requests for it are refused, and so are new ones until the release.
    const release = creation.abandon('dropped');
    expect((await within(tracked))()).toBe('go');
    expect((await within(dropped))()).toBe('drop');
    expect(creations.busy).toBe(true);
    expect((await within(early.wait(creations, 'dropped')))()).toBe('drop');
    expect((await within(early.wait(creations, 'other')))()).toBe('go');
    release();
    release();
    expect(creations.busy).toBe(false);
    // A verdict of `go` read after close() says `pass`; so does every wait after close().
    const woken = await within(early.wait(creations, 'whatever'));
    const held = early.begin(creations, engine);
    const atClose = early.wait(creations, 'held');
    early.close();
    expect([woken(), (await within(atClose))(), (await within(early.wait(creations, 'late')))()]).toEqual([
      'pass',
      'pass',
      'pass',
    ]);
    held.end();
    expect([early.size, creations.watched, creations.busy, clock.pending]).toEqual([0, 0, false, 0]);
  });
});
