/**
 * Questions tagged with a task this client no longer tracks (2025-11-25): it ended, a stop ended
 * it, or `detach()` left it running. Servers keep running work after a cancel (D10), so such a
 * task may still ask; the TaskClient-level callback never knew it, and does not answer it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type TaskHandle } from '../../lib/index.js';
import { ManualClock, flush, within } from '../helpers.js';
import { NO_REPLY, connectScripted } from '../support/scripted-server.js';
import { RELATED_TASK as RELATED, questionFor as question } from '../support/asking.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/**
 * A TaskClient whose own callback accepts, and calls `t1`, `t2`, … whose callback declines; `seen`
 * lists who answered what (`client:<id>`, `call:<id>`).
 */
async function rig() {
  const clock = new ManualClock();
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    now: clock.now,
    clientOptions: { capabilities: { elicitation: {} } },
  });
  const seen: string[] = [];
  const tasks = new TaskClient(pair.client, {
    clock,
    onElicitation: (_params, ctx) => {
      seen.push(`client:${ctx.taskId}`);
      return { action: 'accept', content: { ok: true } };
    },
  });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  const { server } = pair;
  let made = 0;
  server.on('tools/call', () => server.tasks.createResult({ taskId: `t${++made}` }));
  server.on('tasks/result', () => NO_REPLY);
  const handles: TaskHandle[] = [];
  const call = async (options: { timeoutMs?: number; cancelOnTimeout?: boolean } = {}): Promise<TaskHandle> => {
    const handle = await tasks.callToolAsTask(
      'job',
      {},
      {
        ...options,
        onElicitation: (_params, ctx) => {
          seen.push(`call:${ctx.taskId}`);
          expect(ctx.handle).toBe(handle);
          return { action: 'decline' };
        },
      },
    );
    void handle.result().catch(() => {});
    handles.push(handle);
    return handle;
  };
  return { server, tasks, clock, seen, call };
}

type Ending = 'cancel()' | 'completed' | 'a deadline' | 'dispose()';
const ENDINGS: readonly Ending[] = ['cancel()', 'completed', 'a deadline', 'dispose()'];

describe('a question for a task this client ended (D10)', () => {
  it.each(ENDINGS)(
    'ended by %s: it reaches no callback, not even the TaskClient-level one, and the server gets -32603 "no longer needed"',
    async (ending) => {
      const { server, clock, seen, call } = await rig();
      const handle = await call(ending === 'a deadline' ? { timeoutMs: 5_000 } : {});
      if (ending === 'cancel()') await handle.cancel();
      if (ending === 'completed') {
        server.on('tasks/result', server.tasks.handlers['tasks/result']!);
        server.tasks.finish('t1', 'completed', { result: { content: [] } }, {}, true);
        await clock.advance(0);
        await handle.result();
      }
      if (ending === 'a deadline') await clock.advance(5_000);
      if (ending === 'dispose()') await handle[Symbol.asyncDispose]();
      await flush();
      expect(handle.settled).toBe(true);
      const answer = await within(server.request('elicitation/create', question('t1')));
      // Before the fix the TaskClient-level callback answered it: the server got its accept.
      expect(seen).toEqual([]);
      expect(answer.result).toBeUndefined();
      expect(answer.error).toMatchObject({ code: -32603 });
      expect((answer.error as { message: string }).message).toMatch(/no longer needed/);
    },
  );

  it('once its ttl has passed, a question for it is one for a task nobody tracks: the TaskClient-level callback answers', async () => {
    const { server, clock, seen, call } = await rig();
    const handle = await call();
    await handle.cancel();
    await clock.advance(59_999);
    const refused = await within(server.request('elicitation/create', question('t1')));
    expect(refused.error).toMatchObject({ code: -32603 });
    await clock.advance(1);
    const answer = await within(server.request('elicitation/create', question('t1')));
    expect(seen).toEqual(['client:t1']);
    expect(answer.result).toMatchObject({ action: 'accept', _meta: { [RELATED]: { taskId: 't1' } } });
  });
});

describe('a question for a task a deadline left running on purpose', () => {
  it('cancelOnTimeout: false: the task is not ended here, and its question goes to the TaskClient-level callback, as for a task nobody tracks', async () => {
    const { server, clock, seen, call } = await rig();
    const handle = await call({ timeoutMs: 5_000, cancelOnTimeout: false });
    await clock.advance(5_000);
    await flush();
    expect(handle.settled).toBe(true);
    expect(server.count('tasks/cancel')).toBe(0);
    const answer = await within(server.request('elicitation/create', question('t1')));
    // Before the fix it was refused (-32603 "no longer needed"), and the server failed the task a
    // host means to resume.
    expect(seen).toEqual(['client:t1']);
    expect(answer.result).toMatchObject({ action: 'accept', _meta: { [RELATED]: { taskId: 't1' } } });
  });
});

describe('a question for a task detached here', () => {
  it('goes to its call’s own callback, as while it was tracked, not to the TaskClient-level one; the answer is tagged', async () => {
    const { server, seen, call } = await rig();
    const handle = await call();
    handle.detach();
    await flush();
    const answer = await within(server.request('elicitation/create', question('t1')));
    expect(seen).toEqual(['call:t1']);
    expect(answer.result).toMatchObject({ action: 'decline', _meta: { [RELATED]: { taskId: 't1' } } });
  });

  it('at most 1,000 tasks are remembered, the oldest forgotten first: its question is then one for a task nobody tracks', async () => {
    const { server, seen, call } = await rig();
    for (let i = 0; i < 1_001; i += 1) (await call()).detach();
    await flush();
    await within(server.request('elicitation/create', question('t1')));
    await within(server.request('elicitation/create', question('t2')));
    expect(seen).toEqual(['client:t1', 'call:t2']);
  });
});
