/**
 * The public-API behaviour suite, run on both task wires wherever the behaviour exists: statuses,
 * many consumers, deadlines, aborts, input routing, events and metrics, resume. The same tests
 * drive the scripted 2025-11-25 server and the scripted extension server (worlds.ts); only the
 * server-side controls differ. Cancel there is `tasks/cancel` on both ([R24], [E6], [E7]).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClosedError,
  TaskDetachedError,
  TaskFailedError,
  TaskTimeoutError,
  type CallToolResult,
  type ElicitResult,
  type InputContext,
  type TaskClientEvents,
  type TaskMetrics,
} from '../../lib/index.js';
import { flush, rejection } from '../helpers.js';
import { textResult } from '../support/ext-server/index.js';
import { WORLDS, type World } from './worlds.js';

const ACCEPT: ElicitResult = { action: 'accept', content: { confirm: true } };

const open: World[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

/** Moves the clock in 100 ms steps until `done()` (at most `max` ms). */
async function until(world: World, done: () => boolean, max = 30_000): Promise<void> {
  for (let spent = 0; !done() && spent < max; spent += 100) await world.clock.advance(100);
}

/** Collects `${status}:${statusMessage}` of every snapshot an iterator yields. */
function collect(iterable: AsyncIterable<{ status: string; statusMessage?: string | undefined }>): Promise<string[]> {
  return (async () => {
    const seen: string[] = [];
    for await (const task of iterable) seen.push(`${task.status}:${task.statusMessage ?? ''}`);
    return seen;
  })();
}

describe.each(WORLDS)('on the %s wire', (wire, make) => {
  async function world(options: Parameters<typeof make>[0] = {}): Promise<World> {
    const w = await make(options);
    open.push(w);
    expect(w.tasks.wire).toBe(wire);
    return w;
  }

  describe('statuses', () => {
    it('a task goes working -> input_required -> working -> completed, and result() gives the tool result', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job', { n: 1 });
      expect(handle).toMatchObject({ kind: 'task', wire, toolName: 'job' });
      const taskId = handle.taskId!;
      const seen = collect(handle);
      await w.clock.advance(1_000);
      w.setStatus(taskId, 'input_required', 'needs a yes');
      await w.clock.advance(1_000);
      w.setStatus(taskId, 'working', 'going on');
      await w.clock.advance(1_000);
      w.complete(taskId, textResult('done'), 'all good');
      const result = handle.result();
      await until(w, () => handle.settled);
      expect((await result).content).toEqual(textResult('done').content);
      expect(await seen).toEqual(['working:', 'input_required:needs a yes', 'working:going on', 'completed:all good']);
      expect(handle.task?.status).toBe('completed');
    });

    it('a failed task rejects with TaskFailedError carrying the JSON-RPC error', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job');
      w.fail(handle.taskId!, { code: -32603, message: 'worker crashed' }, 'crashed');
      const result = rejection(handle.result());
      await until(w, () => handle.settled);
      const error = await result;
      expect(error).toBeInstanceOf(TaskFailedError);
      expect(error).toMatchObject({ rpcError: { code: -32603, message: 'worker crashed' } });
    });

    it('a task the server cancels rejects with TaskCancelledError', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job');
      w.cancelOnServer(handle.taskId!, 'operator stopped it');
      const result = rejection(handle.result());
      await until(w, () => handle.settled);
      expect(await result).toBeInstanceOf(TaskCancelledError);
      expect((await result) as TaskCancelledError).toMatchObject({ statusMessage: 'operator stopped it' });
    });

    it('a plain tool gives an immediate handle on this wire', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('plain');
      expect(handle).toMatchObject({ kind: 'immediate', wire, taskId: undefined });
      expect((await handle.result()).content).toEqual(textResult('plain answer').content);
    });

    it('a pushed snapshot is merged like a poll', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job');
      await w.clock.advance(0);
      w.setStatus(handle.taskId!, 'working', 'pushed message');
      w.push(handle.taskId!);
      await flush();
      expect(handle.task?.statusMessage).toBe('pushed message');
      expect(handle.metrics).toMatchObject({ notifications: 1, polls: 0 });
    });
  });

  describe('many consumers', () => {
    it('share one observation: several iterators and awaiters, a break in one affects no other, and no extra requests', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job');
      const taskId = handle.taskId!;
      const full = [collect(handle), collect(handle.updates()), collect(handle.updates({ bufferSize: 1 }))];
      const brief = (async () => {
        const seen: string[] = [];
        for await (const task of handle) {
          seen.push(task.status);
          break;
        }
        return seen;
      })();
      const results = [handle.result(), handle.result(), handle.result()];
      const stopped = new AbortController();
      const abandoned = rejection(handle.result({ signal: stopped.signal }));
      await w.clock.advance(1_000);
      stopped.abort();
      expect(await abandoned).toBeInstanceOf(TaskAbortError);
      w.setStatus(taskId, 'working', 'half');
      await w.clock.advance(1_000);
      w.complete(taskId, textResult('shared'));
      await until(w, () => handle.settled);
      const outcomes = await Promise.all(results);
      expect(outcomes.every((r) => r === outcomes[0])).toBe(true);
      expect(await brief).toEqual(['working']);
      const [a, b, c] = await Promise.all(full);
      expect(a).toEqual(['working:', 'working:half', 'completed:half']);
      expect(b).toEqual(a);
      expect(c?.at(-1)).toBe('completed:half');
      expect(w.count('tasks/get')).toBe(3);
      expect(handle.metrics?.polls).toBe(3);
    });

    it('an iterator ended by its own signal throws TaskAbortError; the task carries on', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job');
      const controller = new AbortController();
      const iterator = handle.updates({ signal: controller.signal });
      expect((await iterator.next()).value).toMatchObject({ status: 'working' });
      const next = rejection(iterator.next());
      controller.abort();
      expect(await next).toBeInstanceOf(TaskAbortError);
      w.complete(handle.taskId!, textResult('still'));
      const result = handle.result();
      await until(w, () => handle.settled);
      expect((await result).content).toEqual(textResult('still').content);
    });
  });

  describe('deadlines and aborts', () => {
    it('a deadline cancels the remote task with tasks/cancel and settles with TaskTimeoutError', async () => {
      const w = await world();
      const timeouts: Array<TaskClientEvents['timeout'][0]> = [];
      w.tasks.on('timeout', (metrics) => timeouts.push(metrics));
      const handle = await w.tasks.callToolAsTask('job', {}, { timeoutMs: 3_500 });
      const seen = collect(handle).catch((error: unknown) => error);
      const result = rejection(handle.result());
      await w.clock.advance(3_499);
      expect(handle.settled).toBe(false);
      await w.clock.advance(1);
      const error = await result;
      expect(error).toBeInstanceOf(TaskTimeoutError);
      expect(error).toMatchObject({ remoteCancel: 'cancelled', timeoutMs: 3_500 });
      expect(w.status(handle.taskId!)).toBe('cancelled');
      expect(w.count('tasks/cancel')).toBe(1);
      expect(timeouts.map((m) => [m.taskId, m.error.name])).toEqual([[handle.taskId, 'TaskTimeoutError']]);
      expect(await seen).toBeInstanceOf(TaskTimeoutError);
    });

    it('cancelOnTimeout: false leaves the remote task running', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job', {}, { timeoutMs: 1_000, cancelOnTimeout: false });
      const result = rejection(handle.result());
      await w.clock.advance(1_000);
      expect(await result).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'disabled' });
      expect(w.status(handle.taskId!)).toBe('working');
      expect(w.count('tasks/cancel')).toBe(0);
    });

    it('an abort cancels the remote task and settles with TaskAbortError carrying the reason', async () => {
      const w = await world();
      const controller = new AbortController();
      const handle = await w.tasks.callToolAsTask('job', {}, { signal: controller.signal });
      const result = rejection(handle.result());
      const reason = new Error('user left');
      controller.abort(reason);
      const error = await result;
      expect(error).toBeInstanceOf(TaskAbortError);
      expect(error).toMatchObject({ remoteCancel: 'cancelled', reason });
      expect(w.status(handle.taskId!)).toBe('cancelled');
    });

    it('an already aborted signal sends nothing at all', async () => {
      const w = await world();
      const error = await rejection(w.tasks.callToolAsTask('job', {}, { signal: AbortSignal.abort() }));
      expect(error).toMatchObject({ name: 'AbortError', remoteCancel: 'no-task' });
      expect(w.tasks.active).toBe(0);
    });

    it('an abort in the same tick as the call, tools already listed, stops it before anything is sent', async () => {
      const w = await world();
      await w.tasks.tools();
      const controller = new AbortController();
      const call = rejection(w.tasks.callToolAsTask('job', {}, { signal: controller.signal }));
      controller.abort(new Error('changed my mind'));
      const error = await call;
      expect(error).toBeInstanceOf(TaskAbortError);
      expect(error).toMatchObject({ remoteCancel: 'no-task' });
      // Had tools/call gone out, the task it created would now get its one tasks/cancel.
      await w.clock.advance(1_000);
      expect([w.count('tasks/cancel'), w.count('tasks/get'), w.tasks.active]).toEqual([0, 0, 0]);
    });

    it('close() in the same tick as a call stops it before anything is sent', async () => {
      const w = await world();
      await w.tasks.tools();
      const call = rejection(w.tasks.callToolAsTask('job', {}));
      await w.tasks.close();
      const error = await call;
      expect(error).toBeInstanceOf(TaskClosedError);
      await w.clock.advance(1_000);
      expect([w.count('tasks/cancel'), w.count('tasks/get')]).toEqual([0, 0]);
    });
  });

  describe('input routing', () => {
    it('goes to the call’s own callback first, then the client’s; the answer reaches the server', async () => {
      const calls: Array<{ who: string; context: InputContext }> = [];
      const w = await world({
        onElicitation: (_params, context) => {
          calls.push({ who: 'client', context });
          return ACCEPT;
        },
      });
      const own = await w.tasks.callToolAsTask(
        'job',
        {},
        {
          onElicitation: (_params, context) => {
            calls.push({ who: 'call', context });
            return { action: 'decline' };
          },
        },
      );
      const shared = await w.tasks.callToolAsTask('job');
      w.ask(own.taskId!, 'Own question?');
      w.ask(shared.taskId!, 'Shared question?');
      await until(w, () => w.answers(own.taskId!).length > 0 && w.answers(shared.taskId!).length > 0);
      expect(calls.map((c) => c.who).sort()).toEqual(['call', 'client']);
      for (const { who, context } of calls) {
        const handle = who === 'call' ? own : shared;
        expect(context).toMatchObject({ delivery: w.delivery, taskId: handle.taskId, toolName: 'job' });
        expect(context.handle).toBe(handle);
      }
      // (On 2025-11-25 the answer also carries the related-task tag, [R31].)
      expect(w.answers(own.taskId!)).toEqual([expect.objectContaining({ action: 'decline' })]);
      expect(w.answers(shared.taskId!)).toEqual([expect.objectContaining(ACCEPT)]);
      expect(own.task?.status === 'input_required' || own.task?.status === 'working').toBe(true);
    });

    it('aborts a callback still answering when the task ends', async () => {
      let signal: AbortSignal | undefined;
      const w = await world({
        onElicitation: (_params, context) => {
          signal = context.signal;
          return new Promise<ElicitResult>(() => {});
        },
      });
      const handle = await w.tasks.callToolAsTask('job');
      w.ask(handle.taskId!, 'Never answered?');
      await until(w, () => signal !== undefined);
      expect(signal?.aborted).toBe(false);
      w.complete(handle.taskId!, textResult('went on without you'));
      await until(w, () => handle.settled);
      expect(signal?.aborted).toBe(true);
    });
  });

  describe('events and metrics', () => {
    it('emit created, status, inputRequired, completed and settled with metrics, on the client and on the handle', async () => {
      const w = await world({ onElicitation: () => ACCEPT });
      const events: string[] = [];
      let completed: (TaskMetrics & { readonly result: CallToolResult }) | undefined;
      let settledMetrics: TaskMetrics | undefined;
      w.tasks.on('created', (m) => events.push(`created:${m.status}`));
      w.tasks.on('status', (_m, task) => events.push(`status:${task.status}`));
      w.tasks.on('inputRequired', () => events.push('inputRequired'));
      w.tasks.on('completed', (m) => {
        events.push('completed');
        if (m.role === 'requestor') completed = m;
      });
      w.tasks.on('settled', (m) => {
        events.push(`settled:${m.outcome}`);
        settledMetrics = m;
      });
      const handle = await w.tasks.callToolAsTask('job');
      const handleEvents: string[] = [];
      handle.on('status', (_m, task) => handleEvents.push(task.status));
      handle.once('completed', () => handleEvents.push('completed'));
      handle.on('settled', (m) => handleEvents.push(`settled:${m.outcome}`));
      w.setStatus(handle.taskId!, 'input_required', 'waiting for you');
      await w.clock.advance(1_000);
      w.ask(handle.taskId!, 'Ready?');
      await until(w, () => w.answers(handle.taskId!).length > 0);
      w.complete(handle.taskId!, textResult('evented'));
      await until(w, () => handle.settled);
      expect(events[0]).toBe('created:working');
      expect(events).toContain('inputRequired');
      expect(events.slice(-2)).toEqual(['completed', 'settled:completed']);
      expect(events.filter((e) => e.startsWith('status:')).at(-1)).toBe('status:completed');
      expect(handleEvents.slice(-2)).toEqual(['completed', 'settled:completed']);
      expect(handleEvents).toContain('input_required');
      expect(completed).toMatchObject({
        role: 'requestor',
        taskId: handle.taskId,
        toolName: 'job',
        status: 'completed',
        result: { content: textResult('evented').content },
      });
      expect(settledMetrics).toMatchObject({ retries: 0, notifications: 0, error: undefined });
      expect(settledMetrics?.polls).toBeGreaterThan(0);
      expect(settledMetrics?.completedAt).toBeLessThanOrEqual(w.clock.now());
      expect(settledMetrics?.completedAt).toBeGreaterThan(settledMetrics!.startedAt);
      expect(settledMetrics?.durationMs).toBe(settledMetrics!.completedAt! - settledMetrics!.startedAt);
      expect(handle.metrics).toMatchObject({ status: 'completed', polls: settledMetrics?.polls });
    });

    it('emit failed and cancelled with the typed error, and report nothing on `error`', async () => {
      const w = await world();
      const failures: string[] = [];
      const errors: unknown[] = [];
      w.tasks.on('failed', (m) => failures.push(`failed:${m.error.name}`));
      w.tasks.on('cancelled', (m) => failures.push(`cancelled:${m.error.name}`));
      w.tasks.on('error', (error) => errors.push(error));
      const failing = await w.tasks.callToolAsTask('job');
      const cancelling = await w.tasks.callToolAsTask('job');
      w.fail(failing.taskId!, { code: -32000, message: 'nope' });
      w.cancelOnServer(cancelling.taskId!);
      await until(w, () => failing.settled && cancelling.settled);
      expect(failures.sort()).toEqual(['cancelled:TaskCancelledError', 'failed:TaskFailedError']);
      expect(errors).toEqual([]);
    });
  });

  describe('resume', () => {
    it('detach() leaves the task running; resume(reference) picks it up and reads it to the end', async () => {
      const w = await world();
      const handle = await w.tasks.callToolAsTask('job');
      const result = rejection(handle.result());
      const reference = handle.detach()!;
      expect(await result).toBeInstanceOf(TaskDetachedError);
      expect(reference).toMatchObject({ v: 2, taskId: handle.taskId, toolName: 'job', wire });
      expect(w.status(reference.taskId)).toBe('working');
      expect(w.tasks.active).toBe(0);
      const polls = w.count('tasks/get');
      const resumed = w.tasks.resume(JSON.parse(JSON.stringify(reference)) as typeof reference);
      expect(resumed).toMatchObject({ kind: 'task', taskId: handle.taskId, wire, toolName: 'job' });
      await w.clock.advance(5_000);
      expect(w.count('tasks/get'), 'nothing is read before the handle is observed').toBe(polls);
      w.complete(reference.taskId, textResult('resumed'));
      const done = resumed.result();
      await until(w, () => resumed.settled);
      expect((await done).content).toEqual(textResult('resumed').content);
    });

    it('a resumed task with a deadline is cancelled like any other', async () => {
      const w = await world();
      const reference = (await w.tasks.callToolAsTask('job')).detach()!;
      const resumed = w.tasks.resume(reference, { timeoutMs: 2_000 });
      const result = rejection(resumed.result());
      await w.clock.advance(2_000);
      expect(await result).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'cancelled' });
      expect(w.status(reference.taskId)).toBe('cancelled');
    });
  });
});
