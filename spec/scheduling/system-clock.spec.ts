/**
 * The default clock never goes back: after a step back of the machine's clock it goes on from its
 * last reading (docs/reliability.md, "Timers and process lifetime"). The machine's clock is
 * stepped here by replacing `Date.now` (an NTP correction, someone setting the time); the
 * scripted server and the TaskClient run on real timers, with no `clock` option. Before the fix,
 * a step back held every poll, request timeout and deadline for as long as the clock went back.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskClient, TaskTimeoutError } from '../../lib/index.js';
import { connectScripted, creating } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const realNow = Date.now.bind(Date);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A scripted server whose tool makes a task that runs until it is cancelled, polled every `pollInterval` ms. */
async function rig(pollInterval: number) {
  const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
  creating(pair.server, { pollInterval, ttl: 600_000 });
  const tasks = new TaskClient(pair.client, { cancelGraceMs: 200 });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { ...pair, tasks };
}

/** Steps the machine's clock by `ms` from now on. */
function stepClock(ms: number): void {
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
}

describe("the default clock and a step of the machine's clock", () => {
  it('a step back of an hour holds no deadline: one of 500 ms, armed before the step, fires about when due', async () => {
    const { tasks, server } = await rig(100);
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 500 });
    const result = handle.result().catch((error: unknown) => error);
    stepClock(-3_600_000);
    const started = realNow();
    expect(await result).toBeInstanceOf(TaskTimeoutError);
    // The deadline and the cancel's grace, with room for a loaded machine; not an hour.
    expect(realNow() - started).toBeLessThan(5_000);
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('a step back of an hour holds no poll: the task is still read every poll interval', async () => {
    const { tasks, server } = await rig(100);
    const handle = await tasks.callToolAsTask('job');
    const updates = handle.updates();
    await updates.next();
    await sleep(250);
    stepClock(-3_600_000);
    const before = server.count('tasks/get');
    await sleep(800);
    expect(server.count('tasks/get') - before).toBeGreaterThanOrEqual(3);
    await updates.return?.();
  });
});
