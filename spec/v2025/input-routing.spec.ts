/**
 * Input on the 2025-11-25 wire reaches the right callback (reliability review, items 10-11): an
 * input request that overtakes its task's `CreateTaskResult` still reaches the call's own
 * callback, also with several TaskClients on one SDK client; `detach()` does not fail a question
 * still being answered; a callback abandoned because its task ended is no failure. The wait of an
 * early request on its own is in spec/unit/early-input.spec.ts; task ids kept secret in every
 * message, in spec/client/secrets.spec.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskAbortError, TaskClient, type InputContext } from '../../lib/index.js';
import { EARLY_INPUT_WAIT_MS } from '../../lib/facade/input/early.js';
import { ManualClock, flush, rejection, within } from '../helpers.js';
import { NO_REPLY, connectScripted, creating, type Json } from '../support/scripted-server.js';

const RELATED = 'io.modelcontextprotocol/related-task';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(options: { clientLevel?: boolean } = {}) {
  const clock = new ManualClock();
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    now: clock.now,
    clientOptions: { capabilities: { elicitation: {} } },
  });
  const clientLevel: string[] = [];
  const tasks = new TaskClient(pair.client, {
    clock,
    ...(options.clientLevel === true
      ? {
          onElicitation: (_params, ctx) => {
            clientLevel.push(ctx.taskId ?? 'untagged');
            return { action: 'decline' };
          },
        }
      : {}),
  });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { ...pair, tasks, clock, clientLevel };
}

/** A scripted server with one required task tool `job` and an SDK client on it (no TaskClient yet). */
async function scripted(options: Parameters<typeof connectScripted>[0] = {}) {
  const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }], ...options });
  cleanups.push(() => pair.close());
  return pair;
}

const question = (taskId: string): Json => ({
  message: 'Proceed?',
  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  _meta: { [RELATED]: { taskId } },
});

describe('an input request that overtakes its CreateTaskResult', () => {
  it("reaches the call's own callback, not the client-level one", async () => {
    const { server, tasks, clock, clientLevel } = await rig({ clientLevel: true });
    let reply: Promise<Json> | undefined;
    server.on('tools/call', (_params, ctx) => {
      const created = server.tasks.createResult({ taskId: 'early-1', status: 'input_required' });
      // The question goes out before the CreateTaskResult.
      reply = server.request('elicitation/create', question('early-1'));
      setTimeout(() => ctx.reply(created), 5);
      return NO_REPLY;
    });
    const own: string[] = [];
    const handle = await tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: (_params, ctx) => {
          own.push(ctx.taskId ?? '');
          return { action: 'accept', content: { ok: true } };
        },
      },
    );
    const answer = await within(reply!);
    expect(own).toEqual(['early-1']);
    expect(clientLevel).toEqual([]);
    expect(answer.result).toMatchObject({ action: 'accept', _meta: { [RELATED]: { taskId: 'early-1' } } });
    void handle.result().catch(() => {});
    await clock.advance(0);
  });

  it('falls back to the client-level callback when no creation brings that task', async () => {
    const { server, clock, clientLevel } = await rig({ clientLevel: true });
    const reply = server.request('elicitation/create', question('nobody-knows-this-task'));
    await clock.advance(0);
    const answer = await within(reply);
    expect(clientLevel).toEqual(['nobody-knows-this-task']);
    expect(answer.result).toMatchObject({ action: 'decline' });
  });

  it('waits at most 1 s of clock time while a creation is still under way', async () => {
    const { server, tasks, clock, clientLevel } = await rig({ clientLevel: true });
    server.on('tools/call', () => NO_REPLY); // a creation that never answers
    void tasks.callToolAsTask('job').catch(() => {});
    await flush();
    const reply = server.request('elicitation/create', question('other-task-id'));
    await clock.advance(999);
    expect(clientLevel).toEqual([]);
    await clock.advance(1);
    await within(reply);
    expect(clientLevel).toEqual(['other-task-id']);
  });

  it('a request held when its TaskClient closes gets what one arriving after close() gets: no callback runs, the server gets -32601 ([V7])', async () => {
    const { server, tasks, clientLevel } = await rig({ clientLevel: true });
    server.on('tools/call', () => NO_REPLY); // a creation that never answers
    void tasks.callToolAsTask('job').catch(() => {});
    await flush();
    const reply = server.request('elicitation/create', question('held-at-close'));
    await flush();
    expect(clientLevel).toEqual([]);
    await tasks.close();
    const answer = await within(reply);
    await flush();
    // Before the fix, close() woke the request as if its wait were over: the closed client's callback declined it.
    expect(clientLevel).toEqual([]);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32601 });
    // The same request arriving after close() gets the same refusal, and no callback either.
    const after = await within(server.request('elicitation/create', question('held-at-close')));
    expect(after.error).toMatchObject({ code: -32601 });
    expect(clientLevel).toEqual([]);
  });
  it('a request whose 1 s bound passes while close() is still running is passed on too: no callback runs ([V7])', async () => {
    const { server, tasks, clock, clientLevel } = await rig({ clientLevel: true });
    // First call: a running task. Second: a creation that never answers, so the request is held.
    let calls = 0;
    server.on('tools/call', () => (++calls === 1 ? server.tasks.createResult({ taskId: 'running-1' }) : NO_REPLY));
    server.on('tasks/cancel', () => NO_REPLY); // close({ cancelRunning }) waits for it, up to its bound
    const handle = await tasks.callToolAsTask('job');
    void handle.result().catch(() => {});
    void tasks.callToolAsTask('job').catch(() => {});
    await flush();
    const reply = server.request('elicitation/create', question('held-during-close'));
    await flush();
    expect(clientLevel).toEqual([]);
    const closing = tasks.close({ cancelRunning: true });
    // close() ends once its tasks/cancel bound (requestTimeoutMs) passed, whatever the outcome below.
    cleanups.push(async () => {
      await clock.advance(60_000);
      await closing;
    });
    await flush();
    // The held request's bound passes while close() waits for the tasks/cancel.
    await clock.advance(EARLY_INPUT_WAIT_MS);
    const answer = await within(reply);
    // Before the fix, the request went on as if the client were open: its client-level callback declined it.
    expect(clientLevel).toEqual([]);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32601 });
  });
});

describe('an input request that overtakes its CreateTaskResult, with two TaskClients on one SDK client', () => {
  /** Two TaskClients on one SDK client: `first` has a client-level callback, `second` none. */
  async function shared() {
    const clock = new ManualClock();
    const pair = await connectScripted({
      tools: [{ name: 'job', taskSupport: 'required' }],
      now: clock.now,
      clientOptions: { capabilities: { elicitation: {} } },
    });
    const clientLevel: string[] = [];
    const first = new TaskClient(pair.client, {
      clock,
      onElicitation: (_params, ctx) => {
        clientLevel.push(ctx.taskId ?? 'untagged');
        return { action: 'decline' };
      },
    });
    const second = new TaskClient(pair.client, { clock });
    cleanups.push(async () => {
      await first.close();
      await second.close();
      await pair.close();
    });
    return { ...pair, first, second, clock, clientLevel };
  }

  /** The next tools/call asks for input about its task before it answers with the task. */
  function askFirst(
    server: Awaited<ReturnType<typeof shared>>['server'],
    taskId: string,
  ): { reply: () => Promise<Json> } {
    let reply: Promise<Json> | undefined;
    server.on('tools/call', (_params, ctx) => {
      const created = server.tasks.createResult({ taskId, status: 'input_required' });
      reply = server.request('elicitation/create', question(taskId));
      setTimeout(() => ctx.reply(created), 5);
      return NO_REPLY;
    });
    return { reply: () => within(reply!) };
  }

  // The owner's creation is the second TaskClient's (whose tap runs after the first's) or the first's.
  for (const [owner, order, taskId] of [
    ['second', 'the other TaskClient', 'early-2'],
    ['first', 'the owner', 'early-3'],
  ] as const) {
    it(`reaches the owning call's callback when ${order}'s tap runs first`, async () => {
      const rig = await shared();
      const { server, clock, clientLevel } = rig;
      const early = askFirst(server, taskId);
      const own: string[] = [];
      const handle = await rig[owner].callToolAsTask(
        'job',
        {},
        {
          onElicitation: (_params, ctx) => {
            own.push(ctx.taskId ?? '');
            return { action: 'accept', content: { ok: true } };
          },
        },
      );
      const answer = await early.reply();
      // Before the fix a TaskClient with no creation of its own answered at once.
      expect(clientLevel).toEqual([]);
      expect(own).toEqual([taskId]);
      expect(answer.result).toMatchObject({
        action: 'accept',
        content: { ok: true },
        _meta: { [RELATED]: { taskId } },
      });
      void handle.result().catch(() => {});
      await clock.advance(0);
    });
  }

  it('a request for a task nobody creates waits for the other TaskClient’s creation, then goes to the client-level callback', async () => {
    const { server, second, clock, clientLevel } = await shared();
    server.on('tools/call', () => NO_REPLY); // the second TaskClient's creation never answers
    void second.callToolAsTask('job').catch(() => {});
    await flush();
    const reply = server.request('elicitation/create', question('unknown-task'));
    await clock.advance(EARLY_INPUT_WAIT_MS - 1);
    expect(clientLevel).toEqual([]);
    await clock.advance(1);
    expect((await within(reply)).result).toMatchObject({ action: 'decline' });
    expect(clientLevel).toEqual(['unknown-task']);
  });

  it('a TaskClient closed with a creation under way keeps no other TaskClient waiting', async () => {
    const { server, second, clientLevel } = await shared();
    server.on('tools/call', () => NO_REPLY);
    void second.callToolAsTask('job').catch(() => {});
    await flush();
    await second.close();
    // No clock time passes: the request is answered at once, not after the 1 s bound.
    const reply = server.request('elicitation/create', question('after-close'));
    expect((await within(reply)).result).toMatchObject({ action: 'decline' });
    expect(clientLevel).toEqual(['after-close']);
  });

  it('a TaskClient closed while it holds a request for the other TaskClient’s task passes it on: the owning call’s callback answers it ([V7], [R31])', async () => {
    const { server, first, second, clock, clientLevel } = await shared();
    let answerCall: ((result: unknown) => void) | undefined;
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { name: 'job' });
      answerCall = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    const own: string[] = [];
    const pending = second.callToolAsTask(
      'job',
      {},
      {
        onElicitation: (_params, ctx) => {
          own.push(ctx.taskId ?? '');
          return { action: 'accept', content: { ok: true } };
        },
      },
    );
    await flush();
    // The question overtakes the CreateTaskResult; the first TaskClient's tap runs first and holds it.
    const reply = server.request('elicitation/create', question('early-4'));
    await flush();
    await first.close();
    await flush();
    // Passed on to the second TaskClient, which holds it in turn until its creation ends.
    expect([own, clientLevel]).toEqual([[], []]);
    answerCall?.(server.tasks.createResult({ taskId: 'early-4', status: 'input_required' }));
    const handle = await within(pending);
    const answer = await within(reply);
    // Before the fix the closed first TaskClient's client-level callback declined it.
    expect(clientLevel).toEqual([]);
    expect(own).toEqual(['early-4']);
    expect(answer.result).toMatchObject({
      action: 'accept',
      content: { ok: true },
      _meta: { [RELATED]: { taskId: 'early-4' } },
    });
    void handle.result().catch(() => {});
    await clock.advance(0);
  });
});

describe('an input request for a task whose call was given up before its CreateTaskResult', () => {
  /** A call that asks before it answers; the test answers the tools/call when it wants. */
  async function givenUp(options: { cancelOnAbort?: boolean; holdCancel?: boolean } = {}) {
    const rigged = await rig({ clientLevel: true });
    const { server, tasks } = rigged;
    let answerCall: ((result: unknown) => void) | undefined;
    server.on('tools/call', (params, ctx) => {
      server.assertRequest('tools/call', params, { name: 'job' });
      answerCall = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    let answerCancel: (() => void) | undefined;
    if (options.holdCancel === true) {
      server.on('tasks/cancel', (params, ctx) => {
        server.assertRequest('tasks/cancel', params, { taskId: 'given-up' });
        answerCancel = () => ctx.reply(server.tasks.handlers['tasks/cancel']!(params, ctx));
        return NO_REPLY;
      });
    }
    const own: string[] = [];
    const errors: Error[] = [];
    tasks.on('error', (error) => errors.push(error));
    const controller = new AbortController();
    const call = rejection(
      tasks.callToolAsTask(
        'job',
        {},
        {
          signal: controller.signal,
          ...(options.cancelOnAbort === undefined ? {} : { cancelOnAbort: options.cancelOnAbort }),
          onElicitation: (_params, ctx) => {
            own.push(ctx.taskId ?? '');
            return { action: 'accept', content: { ok: true } };
          },
        },
      ),
    );
    await flush();
    const held = server.request('elicitation/create', question('given-up'));
    await flush();
    controller.abort();
    expect(await call).toBeInstanceOf(TaskAbortError);
    const created = (): void =>
      answerCall?.(server.tasks.createResult({ taskId: 'given-up', status: 'input_required' }));
    return { ...rigged, own, errors, held, created, answerCancel: () => answerCancel?.() };
  }

  it('is refused like one for a task that ended locally (-32603, no longer needed): no callback sees it, and the task gets its tasks/cancel', async () => {
    const { server, clock, clientLevel, own, errors, held, created } = await givenUp();
    created();
    await flush();
    await clock.advance(0);
    const answer = await within(held);
    // Before the fix the request fell to the client-level callback while the library cancelled the task.
    expect([own, clientLevel]).toEqual([[], []]);
    expect(answer.error).toMatchObject({ code: -32603, message: expect.stringMatching(/no longer needed/) as unknown });
    expect(server.params('tasks/cancel')).toEqual([expect.objectContaining({ taskId: 'given-up' })]);
    // An abandoned answer is not a failure: nothing is reported.
    expect(errors).toEqual([]);
  });

  it('one that comes while that tasks/cancel is under way is refused too; once it is answered, the task is an unknown one', async () => {
    const { server, clock, clientLevel, own, held, created, answerCancel } = await givenUp({ holdCancel: true });
    created();
    await flush();
    expect((await within(held)).error).toMatchObject({ code: -32603 });
    expect(server.count('tasks/cancel')).toBe(1);
    const during = await within(server.request('elicitation/create', question('given-up')));
    expect(during.error).toMatchObject({ code: -32603, message: expect.stringMatching(/no longer needed/) as unknown });
    expect([own, clientLevel]).toEqual([[], []]);
    answerCancel();
    await flush();
    await clock.advance(0);
    // Nothing is kept for it any more: a request for it now goes where one for an unknown task goes.
    const later = await within(server.request('elicitation/create', question('given-up')));
    expect(later.result).toMatchObject({ action: 'decline' });
    expect(clientLevel).toEqual(['given-up']);
    expect(own).toEqual([]);
  });

  it('with cancelOnAbort: false the task is left running: the held request goes to the client-level callback, as one for an unknown task', async () => {
    const { server, clock, clientLevel, own, held, created } = await givenUp({ cancelOnAbort: false });
    created();
    await flush();
    await clock.advance(0);
    expect((await within(held)).result).toMatchObject({ action: 'decline' });
    expect(clientLevel).toEqual(['given-up']);
    expect(own).toEqual([]);
    expect(server.count('tasks/cancel')).toBe(0);
  });
});

describe('detach() while an input request is pending', () => {
  /**
   * A task whose call's callback is still answering an elicitation when the handle is detached:
   * `settle` runs after the detach (a close(), or nothing); then the callback answers.
   */
  async function detachedWhileAnswering(taskId: string, settle: (tasks: TaskClient) => Promise<void>) {
    const { server, tasks, clock } = await rig();
    creating(server, { taskId, status: 'input_required' });
    server.on('tasks/result', () => NO_REPLY);
    let release: (() => void) | undefined;
    let signal: AbortSignal | undefined;
    const handle = await tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: async (_params, ctx: InputContext) => {
          signal = ctx.signal;
          await new Promise<void>((resolve) => (release = resolve));
          return { action: 'accept', content: { ok: true } };
        },
      },
    );
    const reply = server.request('elicitation/create', question(taskId));
    await clock.advance(0);
    await flush();
    handle.detach();
    await flush();
    await settle(tasks);
    const aborted = signal?.aborted;
    release?.();
    return { aborted, answer: await within(reply) };
  }

  it('does not fail the remote task: the callback still answers, and the server gets that answer', async () => {
    const { aborted, answer } = await detachedWhileAnswering('d1', async () => {});
    expect(aborted).toBe(false);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ action: 'accept' });
  });

  it('nor does a close() after it: the detached task’s callback still answers, and the server gets that answer', async () => {
    const { aborted, answer } = await detachedWhileAnswering('d2', (tasks) => tasks.close());
    expect(aborted).toBe(false);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ action: 'accept' });
  });
});

describe('several TaskClients on one SDK client', () => {
  it('routes each task’s input to the client that owns it, and keeps progress tokens apart', async () => {
    const { server, client } = await scripted({ clientOptions: { capabilities: { elicitation: {} } } });
    const first = new TaskClient(client, { onElicitation: () => ({ action: 'decline' }) });
    const second = new TaskClient(client);
    cleanups.push(async () => {
      await first.close();
      await second.close();
    });
    let n = 0;
    server.on('tools/call', () => server.tasks.createResult({ taskId: `t${(n += 1)}` }));
    const progress: string[] = [];
    const mine = await second.callToolAsTask(
      'job',
      {},
      {
        onElicitation: () => ({ action: 'accept', content: { who: 'second' } }),
        onProgress: () => progress.push('second'),
      },
    );
    const theirs = await first.callToolAsTask('job', {}, { onProgress: () => progress.push('first') });
    const answer = await server.request('elicitation/create', {
      message: 'for the second client',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: mine.taskId } },
    });
    expect(answer.result).toMatchObject({ action: 'accept', content: { who: 'second' } });
    const tokens = server.params('tools/call').map((p) => (p._meta as { progressToken: string }).progressToken);
    expect(new Set(tokens).size).toBe(2);
    server.notify('notifications/progress', { progressToken: tokens[0], progress: 1 });
    server.notify('notifications/progress', { progressToken: tokens[1], progress: 1 });
    await flush();
    expect(progress.sort()).toEqual(['first', 'second']);
    mine.detach();
    theirs.detach();
  });
});

describe('an input callback abandoned because its task ended', () => {
  it('an input callback abandoned because its task ended is not reported as a failure', async () => {
    const { server, client } = await scripted({ clientOptions: { capabilities: { elicitation: {} } } });
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    const problems: string[] = [];
    tasks.on('error', (e) => problems.push(e.message));
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'ask' }));
    const handle = await tasks.callToolAsTask('job', {}, { onElicitation: () => new Promise(() => {}) });
    const reply = server.request('elicitation/create', {
      message: 'never answered',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: 'ask' } },
    });
    await flush();
    await handle.cancel();
    expect((await reply).error).toBeDefined();
    expect(problems.filter((p) => p.includes('callback failed'))).toEqual([]);
  });
});

describe('close() while a TaskClient-level callback answers a request no task of its stops', () => {
  for (const tagged of [true, false]) {
    it(`${tagged ? 'a request for an unknown task' : 'an unattributed request'}: ctx.signal fires at close(), and the server gets -32603 "no longer needed", not the late answer ([V7])`, async () => {
      const clock = new ManualClock();
      const { server, client } = await scripted({
        now: clock.now,
        clientOptions: { capabilities: { elicitation: {} } },
      });
      let seen: InputContext | undefined;
      let release: (() => void) | undefined;
      const tasks = new TaskClient(client, {
        clock,
        onElicitation: (_params, ctx) => {
          seen = ctx;
          return new Promise((resolve) => (release = () => resolve({ action: 'accept', content: { ok: true } })));
        },
      });
      cleanups.push(() => tasks.close());
      const problems: string[] = [];
      tasks.on('error', (e) => problems.push(e.message));
      const untagged: Json = { message: 'Proceed?', requestedSchema: { type: 'object', properties: {} } };
      const reply = server.request('elicitation/create', tagged ? question('unknown-task') : untagged);
      await flush();
      expect(seen?.signal.aborted).toBe(false);
      await tasks.close();
      // Before the fix, only the server's cancel or the connection's close fired it: the answer below was sent.
      expect(seen!.signal.aborted).toBe(true);
      release!();
      const answer = await within(reply);
      expect(answer.result).toBeUndefined();
      expect(answer.error).toMatchObject({ code: -32603 });
      expect((answer.error as { message: string }).message).toMatch(/no longer needed/);
      expect(problems).toEqual([]);
    });
  }
});
