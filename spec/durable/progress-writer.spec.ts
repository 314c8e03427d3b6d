/**
 * The job's progress writer: one write in flight, the latest state waiting, and `written(n)`
 * resolving once state `n` or a later one is in Redis. A fake job whose writes the test lets
 * through one at a time; no Redis needed.
 */
import { describe, expect, it } from 'vitest';
import { ProgressWriter } from '../../lib/bullmq/progress.js';
import type { ToolJobProgress } from '../../lib/bullmq/index.js';

/** A job whose `updateProgress` calls wait until the test lets each through (or fails it). */
function fakeJob() {
  const writes: { progress: ToolJobProgress; pass: () => void; fail: (error: Error) => void }[] = [];
  const job = {
    updateProgress: (progress: ToolJobProgress | number | object) =>
      new Promise<void>((pass, fail) => writes.push({ progress: progress as ToolJobProgress, pass, fail })),
  };
  return { job, writes };
}

const state = (status: ToolJobProgress['status'], ids: string[] = []): ToolJobProgress =>
  ({
    status,
    task: 'sha256:000000000000',
    questions: ids.map((id) => ({ id, kind: 'elicitation', params: { message: id }, askedAt: 0 })),
  }) as unknown as ToolJobProgress;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has resolved by now. */
async function resolved(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await tick();
  return done;
}

describe('ProgressWriter', () => {
  it('resolves written(n) once state n, or a later state that replaced it, is written, without waiting for the writer to fall idle', async () => {
    const { job, writes } = fakeJob();
    const failures: Error[] = [];
    const writer = new ProgressWriter(job, (error) => failures.push(error));
    const first = writer.set(state('working'));
    const asked = writer.set(state('input_required', ['q1'])); // replaces nothing yet: the first is in flight
    const askedWritten = writer.written(asked);
    const firstWritten = writer.written(first);
    await tick();
    expect(writes.map((w) => w.progress.status)).toEqual(['working']);
    writes[0]!.pass();
    expect(await resolved(firstWritten)).toBe(true);
    expect(await resolved(askedWritten)).toBe(false);
    // A chatty task: a new state comes while each write is in flight; the question's state is
    // still told as soon as its own write lands.
    expect(writes.map((w) => w.progress.status)).toEqual(['working', 'input_required']);
    writer.set(state('input_required', ['q1']));
    writes[1]!.pass();
    expect(await resolved(askedWritten)).toBe(true);
    expect(writes).toHaveLength(3);
    // Two states set while a write is in flight: the first is replaced, and resolves with the second.
    const replaced = writer.written(writer.set(state('working', ['q1'])));
    const latest = writer.written(writer.set(state('working', ['q1', 'q2'])));
    writes[2]!.pass();
    await tick();
    expect(writes.map((w) => w.progress.questions.length)).toEqual([0, 1, 1, 2]);
    expect(await resolved(replaced)).toBe(false);
    writes[3]!.pass();
    expect(await resolved(replaced)).toBe(true);
    expect(await resolved(latest)).toBe(true);
    await writer.settled();
    expect(failures).toEqual([]);
  });

  it('a failed write resolves nothing and is reported; the next write that succeeds resolves it', async () => {
    const { job, writes } = fakeJob();
    const failures: Error[] = [];
    const writer = new ProgressWriter(job, (error) => failures.push(error));
    const asked = writer.written(writer.set(state('input_required', ['q1'])));
    await tick();
    writes[0]!.fail(new Error('Redis is away'));
    await tick();
    expect(failures.map((e) => e.message)).toEqual(['Redis is away']);
    expect(await resolved(asked)).toBe(false);
    await writer.settled();
    writer.set(state('input_required', ['q1']));
    await tick();
    writes[1]!.pass();
    expect(await resolved(asked)).toBe(true);
  });
});
