/**
 * Input reaches the right callback, and task ids stay secret (reliability review, items 10-12):
 * an input request that overtakes its task's `CreateTaskResult` still reaches the call's own
 * callback, `detach()` does not fail a question still being answered, and no message the library
 * writes carries a task id ([R31], [V7]).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { TaskAbortError, TaskClient, type InputContext, type LogEntry, type TaskError } from '../../lib/index.js';
import { Scheduler } from '../../lib/internal.js';
import { EARLY_INPUT_WAIT_MS, EarlyInput, PortCreations } from '../../lib/facade/early-input.js';
import { ManualClock, flush, rejection, within } from '../helpers.js';
import { NO_REPLY, connectScripted, creating, rpcError, type Json } from '../support/scripted-server.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const SECRET = '7f3c2a9e-1b4d-4c6a-9e8f-0a1b2c3d4e5f';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(options: { clientLevel?: boolean; logger?: (entry: LogEntry) => void; wrap?: (transport: Transport) => Transport } = {}) {
  const clock = new ManualClock();
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    now: clock.now,
    clientOptions: { capabilities: { elicitation: {} } },
    ...(options.wrap === undefined ? {} : { wrap: options.wrap }),
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
    ...(options.logger === undefined ? {} : { logger: { log: options.logger } }),
  });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { ...pair, tasks, clock, clientLevel };
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
    const handle = await tasks.callToolAsTask('job', {}, {
      onElicitation: (_params, ctx) => {
        own.push(ctx.taskId ?? '');
        return { action: 'accept', content: { ok: true } };
      },
    });
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
  function askFirst(server: Awaited<ReturnType<typeof shared>>['server'], taskId: string): { reply: () => Promise<Json> } {
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
  for (const [owner, order, taskId] of [['second', 'the other TaskClient', 'early-2'], ['first', 'the owner', 'early-3']] as const) {
    it(`reaches the owning call's callback when ${order}'s tap runs first`, async () => {
      const rig = await shared();
      const { server, clock, clientLevel } = rig;
      const early = askFirst(server, taskId);
      const own: string[] = [];
      const handle = await rig[owner].callToolAsTask('job', {}, {
        onElicitation: (_params, ctx) => {
          own.push(ctx.taskId ?? '');
          return { action: 'accept', content: { ok: true } };
        },
      });
      const answer = await early.reply();
      // Before the fix a TaskClient with no creation of its own answered at once.
      expect(clientLevel).toEqual([]);
      expect(own).toEqual([taskId]);
      expect(answer.result).toMatchObject({ action: 'accept', content: { ok: true }, _meta: { [RELATED]: { taskId } } });
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
    server.on('tools/call', (_params, ctx) => {
      answerCall = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    const own: string[] = [];
    const pending = second.callToolAsTask('job', {}, {
      onElicitation: (_params, ctx) => {
        own.push(ctx.taskId ?? '');
        return { action: 'accept', content: { ok: true } };
      },
    });
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
    expect(answer.result).toMatchObject({ action: 'accept', content: { ok: true }, _meta: { [RELATED]: { taskId: 'early-4' } } });
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
    server.on('tools/call', (_params, ctx) => {
      answerCall = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    let answerCancel: (() => void) | undefined;
    if (options.holdCancel === true) {
      server.on('tasks/cancel', (params, ctx) => {
        answerCancel = () => ctx.reply(server.tasks.handlers['tasks/cancel']!(params, ctx));
        return NO_REPLY;
      });
    }
    const own: string[] = [];
    const errors: Error[] = [];
    tasks.on('error', (error) => errors.push(error));
    const controller = new AbortController();
    const call = rejection(
      tasks.callToolAsTask('job', {}, {
        signal: controller.signal,
        ...(options.cancelOnAbort === undefined ? {} : { cancelOnAbort: options.cancelOnAbort }),
        onElicitation: (_params, ctx) => {
          own.push(ctx.taskId ?? '');
          return { action: 'accept', content: { ok: true } };
        },
      }),
    );
    await flush();
    const held = server.request('elicitation/create', question('given-up'));
    await flush();
    controller.abort();
    expect(await call).toBeInstanceOf(TaskAbortError);
    const created = (): void => answerCall?.(server.tasks.createResult({ taskId: 'given-up', status: 'input_required' }));
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
    expect([woken(), (await within(atClose))(), (await within(early.wait(creations, 'late')))()]).toEqual(['pass', 'pass', 'pass']);
    held.end();
    expect([early.size, creations.watched, creations.busy, clock.pending]).toEqual([0, 0, false, 0]);
  });
});

describe('detach() while an input request is pending', () => {
  it('does not fail the remote task: the callback still answers, and the server gets that answer', async () => {
    const { server, tasks, clock } = await rig();
    creating(server, { taskId: 'd1', status: 'input_required' });
    server.on('tasks/result', () => NO_REPLY);
    let release: (() => void) | undefined;
    let signal: AbortSignal | undefined;
    const handle = await tasks.callToolAsTask('job', {}, {
      onElicitation: async (_params, ctx: InputContext) => {
        signal = ctx.signal;
        await new Promise<void>((resolve) => (release = resolve));
        return { action: 'accept', content: { ok: true } };
      },
    });
    const reply = server.request('elicitation/create', question('d1'));
    await clock.advance(0);
    await flush();
    handle.detach();
    await flush();
    expect(signal?.aborted).toBe(false);
    release?.();
    const answer = await within(reply);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ action: 'accept' });
  });
});

describe('task ids are secrets in every message the library writes', () => {
  it('the -32601 sent back for an unhandled request names the task by fingerprint', async () => {
    const { server } = await rig();
    const answer = await within(server.request('elicitation/create', question(SECRET)));
    const error = answer.error as { code: number; message: string };
    expect(error.code).toBe(-32601);
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toMatch(/sha256:[0-9a-f]{12}/);
  });

  it('errors thrown and logged repeat no task id from the server’s messages', async () => {
    const logs: LogEntry[] = [];
    const { server, tasks, clock } = await rig({ logger: (entry) => logs.push(entry) });
    creating(server, { taskId: SECRET });
    server.on('tasks/get', (p) => {
      throw rpcError(-32602, `Task not found: ${String(p.taskId)}`);
    });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await clock.advance(1_000);
    const error = (await failure) as Error & { cause?: Error };
    expect(error.message).not.toContain(SECRET);
    expect(String(error.cause?.message)).not.toContain(SECRET);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it('a reply whose unknown status repeats the task id: the TaskProtocolError names it by fingerprint', async () => {
    const { server, tasks, clock } = await rig();
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    server.on('tasks/get', (p) => ({ ...server.tasks.get(String(p.taskId)), status: `stuck on ${String(p.taskId)}` }));
    const errors: TaskError[] = [];
    tasks.on('error', (error) => errors.push(error));
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(1_000);
    expect(errors.map((e) => e.name)).toContain('TaskProtocolError');
    for (const error of errors) expect(error.message).not.toContain(SECRET);
    expect(errors[0]!.message).toMatch(/unknown status "stuck on sha256:[0-9a-f]{12}/);
    handle.detach();
  });

  it('a failed send whose error chain quotes the task id (an HTTP body): no link of the chain repeats it', async () => {
    // Like an SDK's HTTP error quoting the server's body, with a cause of its own.
    const leaky = (transport: Transport): Transport =>
      new Proxy(transport, {
        get(target, key, receiver) {
          if (key !== 'send') return Reflect.get(target, key, receiver) as unknown;
          return (message: { method?: string; params?: { taskId?: string } }, ...rest: unknown[]) => {
            const taskId = message.params?.taskId;
            if (message.method !== 'tasks/get' || taskId === undefined) return (target.send as (...args: unknown[]) => Promise<void>).call(target, message, ...rest);
            const error = new Error(`HTTP 403: forbidden: task ${taskId} belongs to someone else`, { cause: new Error(`socket said ${taskId}`) });
            return Promise.reject(Object.assign(error, { code: 403, body: 'kept' }));
          };
        },
      });
    const { server, tasks, clock } = await rig({ wrap: leaky });
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    const errors: TaskError[] = [];
    tasks.on('error', (error) => errors.push(error));
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(1_000);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      // The error's own `taskId` field is the id by design; every text in the chain is scrubbed.
      const lines = inspect(error, { depth: 10 }).split('\n').filter((line) => line.includes(SECRET));
      expect(lines.every((line) => /^\s*taskId: '/.test(line))).toBe(true);
      let link: unknown = error;
      for (; link instanceof Error; link = link.cause) expect(link.message).not.toContain(SECRET);
    }
    // The copies keep what the SDK's error carried.
    const sdkError = (errors[0]!.cause as Error).cause as Error & { code?: number; body?: string };
    expect(sdkError).toBeInstanceOf(Error);
    expect(sdkError).toMatchObject({ code: 403, body: 'kept' });
    expect(sdkError.message).toMatch(/forbidden: task sha256:[0-9a-f]{12} belongs/);
    handle.detach();
  });

  it('a throwing listener whose text names the task: the error event carries the task\'s metrics, and neither it nor the log repeats the id', async () => {
    const logs: LogEntry[] = [];
    const { server, tasks, clock } = await rig({ logger: (entry) => logs.push(entry) });
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    const reported: Array<[TaskError, string | undefined]> = [];
    tasks.on('error', (error, metrics) => reported.push([error, metrics?.taskId]));
    const handle = await tasks.callToolAsTask('job');
    handle.on('status', (metrics) => {
      throw new Error(`cannot render ${metrics.taskId}`);
    });
    server.tasks.update(SECRET, { statusMessage: 'step 2' });
    await clock.advance(1_000);
    expect(reported.map(([error, taskId]) => [error.message.replace(/sha256:[0-9a-f]{12}/, 'FP'), taskId])).toEqual([['A "status" listener threw: cannot render FP', SECRET]]);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    handle.detach();
  });

  it('a throwing onProgress of a tracked task is reported with its task; progress on its token after it settled is consumed, not handed to the SDK', async () => {
    const { server, tasks, clock, client } = await rig();
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    const reported: Array<[string | undefined, string | undefined]> = [];
    tasks.on('error', (error, metrics) => reported.push([error.taskId, metrics?.taskId]));
    const sdkErrors: unknown[] = [];
    client.onerror = (error) => sdkErrors.push(error);
    const handle = await tasks.callToolAsTask('job', {}, {
      onProgress: () => {
        throw new Error('render failed');
      },
    });
    const token = (server.params('tools/call')[0]!._meta as { progressToken: string }).progressToken;
    server.notify('notifications/progress', { progressToken: token, progress: 1 });
    await flush();
    expect(reported).toEqual([[SECRET, SECRET]]);
    server.tasks.finish(SECRET, 'completed', { result: { content: [] } }, {}, true);
    await clock.advance(10);
    expect(handle.settled).toBe(true);
    server.notify('notifications/progress', { progressToken: token, progress: 2 });
    await flush();
    expect(sdkErrors).toEqual([]);
  });

  it('a failed task whose error text names the task: TaskFailedError.message shows the fingerprint', async () => {
    const { server, tasks, clock } = await rig();
    creating(server, { taskId: SECRET });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    server.tasks.finish(SECRET, 'failed', { error: rpcError(-32603, `task ${SECRET} crashed`) }, {}, true);
    await clock.advance(10);
    const error = (await failure) as Error;
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toContain('crashed');
  });

  it('a cancelled task whose statusMessage names the task: TaskCancelledError.message and the log show the fingerprint', async () => {
    const logs: LogEntry[] = [];
    const { server, tasks, clock } = await rig({ logger: (entry) => logs.push(entry) });
    creating(server, { taskId: SECRET, pollInterval: 100 });
    server.on('tasks/cancel', (p) => server.tasks.update(String(p.taskId), { status: 'cancelled', statusMessage: `Task ${SECRET} was cancelled by the client` }));
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await handle.cancel();
    await clock.advance(10);
    const error = (await failure) as Error;
    expect(error.name).toBe('TaskCancelledError');
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toMatch(/was cancelled: Task sha256:[0-9a-f]{12} was cancelled by the client$/);
    const entries = JSON.stringify(logs);
    expect(entries).not.toContain(SECRET);
    expect(logs.some((entry) => String(entry.fields.statusMessage).startsWith('Task sha256:'))).toBe(true);
  });
});

