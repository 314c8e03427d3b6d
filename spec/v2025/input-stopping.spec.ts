/**
 * Input on the 2025-11-25 wire while the task is being stopped or cancelled: a `cancel()`, a
 * deadline, an abort or `dispose()` first reads the task (the last look), then sends `tasks/cancel`,
 * which may take up to the cancel grace (more for `cancel()`). Servers keep running work after a
 * cancel (D10), so an answer sent meanwhile would be acted on: the answer is no longer wanted from
 * the moment the stop begins, not once it is over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type InputContext } from '../../lib/index.js';
import { ManualClock, flush, within } from '../helpers.js';
import {
  NO_REPLY,
  connectScripted,
  creating,
  rpcError,
  type HandlerContext,
  type Json,
  type ScriptedServer,
} from '../support/scripted-server.js';
import { RELATED_TASK as RELATED, questionFor as question } from '../support/asking.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

type Stop = 'cancel()' | 'a deadline' | 'an abort' | 'dispose()';
const STOPS: readonly Stop[] = ['cancel()', 'a deadline', 'an abort', 'dispose()'];

/**
 * A task `x1` in `input_required` whose call's callback answers when released (`accept`), or at
 * once when `held` is false; `asked` counts its runs.
 */
async function rig(stop: Stop, held = true) {
  const clock = new ManualClock();
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    now: clock.now,
    clientOptions: { capabilities: { elicitation: {} } },
  });
  const tasks = new TaskClient(pair.client, { clock });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  const { server } = pair;
  creating(server, { taskId: 'x1', status: 'input_required' });
  server.on('tasks/result', () => NO_REPLY);
  const aborter = new AbortController();
  const seen: InputContext[] = [];
  let release: (() => void) | undefined;
  const handle = await tasks.callToolAsTask(
    'job',
    {},
    {
      ...(stop === 'a deadline' ? { timeoutMs: 5_000 } : {}),
      signal: aborter.signal,
      onElicitation: (_params, ctx) => {
        seen.push(ctx);
        const answer = { action: 'accept' as const, content: { ok: true } };
        return held ? new Promise((resolve) => (release = () => resolve(answer))) : answer;
      },
    },
  );
  void handle.result().catch(() => {});
  return { server, tasks, clock, handle, seen, release: () => release?.(), aborter };
}

/**
 * Begins `stop` with the last look held (its `tasks/get` unanswered): no `tasks/cancel` goes out
 * meanwhile. Returns what lets the stop go on: the look answered, the task cancelled.
 */
async function beginStop(stop: Stop, { clock, server, handle, aborter }: Awaited<ReturnType<typeof rig>>) {
  // The regular polls before the deadline are answered; the look that comes with the stop is held.
  if (stop === 'a deadline') await clock.advance(4_999);
  const looks: HandlerContext[] = [];
  server.on('tasks/get', (_params, ctx) => {
    looks.push(ctx);
    return NO_REPLY;
  });
  if (stop === 'cancel()') void handle.cancel().catch(() => {});
  if (stop === 'a deadline') await clock.advance(1);
  if (stop === 'an abort') aborter.abort();
  if (stop === 'dispose()') void handle[Symbol.asyncDispose]();
  await flush();
  expect(looks).toHaveLength(1);
  return async (): Promise<void> => {
    server.on('tasks/get', server.tasks.handlers['tasks/get']!);
    looks[0]!.reply(server.tasks.get('x1'));
    await flush();
    await clock.advance(0);
    await flush();
  };
}

/** The server's reply to its question: `-32603` "no longer needed", sent after the stop's `tasks/cancel`. */
function expectRefusedAfterCancel(server: ScriptedServer, answer: Json): void {
  expect(answer.result).toBeUndefined();
  expect(answer.error).toMatchObject({ code: -32603 });
  expect((answer.error as { message: string }).message).toMatch(/no longer needed/);
  const order = server.log.map((entry) => entry.method ?? entry.kind);
  expect(order.indexOf('tasks/cancel')).toBeGreaterThan(-1);
  expect(order.indexOf('response')).toBeGreaterThan(order.indexOf('tasks/cancel'));
  // Told after the cancel, the server found the task cancelled as asked, not failed by the refusal.
  expect(server.tasks.get('x1').status).toBe('cancelled');
}

describe('a stop that begins while a callback answers (D10)', () => {
  it.each(STOPS)(
    '%s: ctx.signal fires as the stop begins, and the answer is never sent: the server gets -32603 "no longer needed" after the tasks/cancel (D10)',
    async (stop) => {
      const rigged = await rig(stop);
      const { server, clock, seen, release } = rigged;
      const reply = server.request('elicitation/create', question('x1'));
      let answered = false;
      void reply.then(() => (answered = true));
      await clock.advance(0);
      await flush();
      expect(seen).toHaveLength(1);
      const goOn = await beginStop(stop, rigged);
      // Before the fix it fired only once the stop settled, after the last look and the tasks/cancel.
      expect(seen[0]!.signal.aborted).toBe(true);
      release();
      await flush();
      expect(answered).toBe(false);
      await goOn();
      expectRefusedAfterCancel(server, await within(reply));
    },
  );
});

describe('a question that arrives while a stop is under way (D10)', () => {
  it.each(STOPS)(
    '%s: it reaches no callback, and the server gets -32603 "no longer needed" after the tasks/cancel',
    async (stop) => {
      const rigged = await rig(stop, false);
      const { server, clock, seen } = rigged;
      await clock.advance(0);
      const goOn = await beginStop(stop, rigged);
      const reply = server.request('elicitation/create', question('x1'));
      await flush();
      expect(seen).toEqual([]);
      await goOn();
      expectRefusedAfterCancel(server, await within(reply));
      expect(seen).toEqual([]);
    },
  );
});

describe('a cancel() that fails', () => {
  it('leaves the task running: its next question reaches the call’s callback, with a live ctx.signal', async () => {
    const { server, clock, handle, seen } = await rig('cancel()', false);
    await clock.advance(0);
    await within(server.request('elicitation/create', question('x1')));
    server.on('tasks/cancel', () => {
      throw rpcError(-32603, 'cannot cancel now');
    });
    await expect(handle.cancel()).rejects.toThrow();
    const answer = await within(server.request('elicitation/create', question('x1')));
    expect(seen).toHaveLength(2);
    expect(seen[1]!.signal.aborted).toBe(false);
    expect(answer.result).toMatchObject({ action: 'accept', _meta: { [RELATED]: { taskId: 'x1' } } });
  });
});
