/**
 * A hostile requestor: a scripted raw JSON-RPC peer plays the server and sends the client what no
 * polite server would: unknown ids, cancels twice, polls after expiry, huge and malformed ttls,
 * cursors that were never issued, requests for another connection's tasks. Time is a ManualClock;
 * the client side runs on the SDK chosen by `MCP_SDK`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { flush, within } from '../helpers.js';
import { HeldCallback, RECEIVER_CAPABILITIES, accept, errorOf, peerRig, resultOf } from '../support/receiver-rig.js';
import type { Json } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
const register = (cleanup: () => Promise<void>): void => void cleanups.push(cleanup);
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const DAY = 86_400_000;
const MAX_TIMER = 2_147_483_647;

describe('a hostile requestor', () => {
  it('unknown, malformed and missing task ids get -32602 on every tasks/* method ([V26])', async () => {
    const { ask, create } = await peerRig(register, { elicitation: new HeldCallback().callback });
    await create();
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      for (const params of [{ taskId: 'no-such-task' }, { taskId: 42 }, {}, { taskId: '' }]) {
        expect(errorOf(await ask(method, params)).code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      }
    }
  });

  it('cancelling twice: the second cancel, and a cancel of a finished task, get -32602 ([V23])', async () => {
    const held = new HeldCallback();
    const { ask, create } = await peerRig(register, { elicitation: held.callback });
    const task = await create();
    await flush();
    const cancelled = resultOf(await ask('tasks/cancel', { taskId: task.taskId }));
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    const again = errorOf(await ask('tasks/cancel', { taskId: task.taskId }));
    expect(again).toMatchObject({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'cancelled'",
    });
    const done = await create();
    await flush();
    held.calls[1]?.resolve(accept('Ada'));
    await flush();
    expect(errorOf(await ask('tasks/cancel', { taskId: done.taskId })).code).toBe(-32602);
    expect(resultOf(await ask('tasks/get', { taskId: done.taskId })).status).toBe('completed');
  });

  it('honours a requested ttl above the floor exactly; after it every request about the task gets -32602 ([V10], [V11])', async () => {
    const held = new HeldCallback();
    const { ask, create, clock, tasks } = await peerRig(register, { elicitation: held.callback });
    const expired: string[] = [];
    tasks.on('expired', (metrics) => expired.push(`${metrics.role}:${metrics.error.name}`));
    const task = await create({ task: { ttl: 2_345 } });
    expect(task.ttl).toBe(2_345);
    await flush();
    const waiting = ask('tasks/result', { taskId: task.taskId });
    await clock.advance(2_344);
    expect(resultOf(await ask('tasks/get', { taskId: task.taskId })).status).toBe('working');
    await clock.advance(1);
    // The blocked tasks/result learns it too, and the callback's answer is no longer wanted.
    expect(errorOf(await within(waiting)).code).toBe(-32602);
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect(errorOf(await ask(method, { taskId: task.taskId })).code).toBe(-32602);
    }
    expect(expired).toEqual(['receiver:TaskExpiredError']);
    expect(tasks.receiver?.size).toBe(0);
  });

  it('a finished task also goes when its ttl (from creation) elapses', async () => {
    const { ask, create, clock } = await peerRig(register, { elicitation: () => accept('Ada') });
    const task = await create({ task: { ttl: 2_000 } });
    await flush();
    expect(resultOf(await ask('tasks/result', { taskId: task.taskId }))).toMatchObject({ action: 'accept' });
    await clock.advance(2_000);
    expect(errorOf(await ask('tasks/result', { taskId: task.taskId })).code).toBe(-32602);
  });

  it('a huge ttl is lowered to maxTtlMs, reported, and never handed to a timer unclamped', async () => {
    const { create, clock } = await peerRig(register, { elicitation: new HeldCallback().callback });
    const delays: number[] = [];
    const setTimeout = clock.setTimeout;
    clock.setTimeout = (fn, ms) => {
      delays.push(ms);
      return setTimeout(fn, ms);
    };
    for (const ttl of [1e300, Number.MAX_SAFE_INTEGER, 2 ** 31, DAY + 1]) {
      expect((await create({ task: { ttl } })).ttl).toBe(DAY);
    }
    expect((await create({ task: {} })).ttl).toBe(3_600_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER);
  });

  it('a ttl beyond what a Node timer holds fires at the right time, not at once', async () => {
    const month = 30 * DAY;
    const { ask, create, clock } = await peerRig(register, {
      elicitation: new HeldCallback().callback,
      maxTtlMs: month,
    });
    const delays: number[] = [];
    const setTimeout = clock.setTimeout;
    clock.setTimeout = (fn, ms) => {
      delays.push(ms);
      return setTimeout(fn, ms);
    };
    const task = await create({ task: { ttl: month } });
    expect(task.ttl).toBe(month);
    await clock.advance(MAX_TIMER + 1);
    expect(resultOf(await ask('tasks/get', { taskId: task.taskId })).status).toBe('working');
    await clock.advance(month - MAX_TIMER - 2);
    expect(resultOf(await ask('tasks/get', { taskId: task.taskId })).status).toBe('working');
    await clock.advance(1);
    expect(errorOf(await ask('tasks/get', { taskId: task.taskId })).code).toBe(-32602);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER);
  });

  it('a malformed task or ttl is refused with -32602; task: null is a plain request', async () => {
    const { ask, tasks } = await peerRig(register, { elicitation: () => accept('plain') });
    const base = { message: 'Your name?', requestedSchema: { type: 'object', properties: {} } };
    for (const task of ['yes', 5, [], { ttl: -1 }, { ttl: 'soon' }, { ttl: true }]) {
      expect(errorOf(await ask('elicitation/create', { ...base, task })).code, JSON.stringify(task)).toBe(-32602);
    }
    expect(resultOf(await ask('elicitation/create', { ...base, task: null }))).toEqual(accept('plain'));
    expect(tasks.receiver?.size).toBe(0);
  });

  it('a task request whose own params are malformed is refused with -32602: no task is made and no callback runs ([V26])', async () => {
    const held = new HeldCallback();
    const { ask, tasks } = await peerRig(register, { elicitation: held.callback, sampling: held.callback });
    const form = { message: 'Your name?', requestedSchema: { type: 'object', properties: {} } };
    const url = { mode: 'url', message: 'Sign in', url: 'https://example.com/a', elicitationId: 'e1' };
    const sampling = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 };
    const bad: Array<[string, Json]> = [
      ['elicitation/create', {}],
      ['elicitation/create', { ...form, message: 5 }],
      ['elicitation/create', { ...form, mode: 'voice' }],
      ['elicitation/create', { ...form, requestedSchema: 'a form' }],
      ['elicitation/create', { ...form, requestedSchema: { type: 'object' } }],
      ['elicitation/create', { ...url, url: undefined }],
      ['elicitation/create', { ...url, elicitationId: 7 }],
      ['sampling/createMessage', {}],
      ['sampling/createMessage', { ...sampling, messages: 'hi' }],
      ['sampling/createMessage', { ...sampling, messages: ['hi'] }],
      ['sampling/createMessage', { ...sampling, maxTokens: '10' }],
      ['sampling/createMessage', { messages: sampling.messages }],
    ];
    for (const [method, params] of bad) {
      const error = errorOf(await ask(method, { ...params, task: {} }));
      expect(error.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      expect(error.message).toMatch(/^Invalid (elicitation|sampling) request: /);
    }
    await flush();
    expect(tasks.receiver?.size).toBe(0);
    expect(held.calls).toHaveLength(0);
    // Well-formed ones, an empty conversation included, are served (a url-mode elicitation only
    // where the client declared url mode: see the next test).
    for (const [method, params] of [
      ['elicitation/create', form],
      ['elicitation/create', { message: 'Your name?' }],
      ['sampling/createMessage', sampling],
      ['sampling/createMessage', { messages: [], maxTokens: 5 }],
    ] as const) {
      expect(resultOf(await ask(method, { ...params, task: {} })).task, JSON.stringify(params)).toBeDefined();
    }
    await flush();
    expect(held.calls).toHaveLength(4);
  });

  it.each([
    { declared: {}, url: false, form: true },
    { declared: { url: {} }, url: true, form: false },
    { declared: { form: {}, url: {} }, url: true, form: true },
  ])(
    'elicitation $declared: a task request in a mode the client did not declare is refused with -32602 as the SDK client refuses it; no task, no callback (url: $url, form: $form)',
    async ({ declared, url, form }) => {
      const held = new HeldCallback();
      const capabilities = { ...RECEIVER_CAPABILITIES, elicitation: declared };
      const { ask, tasks } = await peerRig(register, { elicitation: held.callback }, {}, capabilities);
      const byUrl = await ask('elicitation/create', {
        mode: 'url',
        message: 'Sign in',
        url: 'https://example.com/a',
        elicitationId: 'e1',
        task: {},
      });
      const byForm = await ask('elicitation/create', { message: 'Your name?', task: {} });
      for (const [mode, reply, served] of [
        ['URL', byUrl, url],
        ['form', byForm, form],
      ] as const) {
        if (served) expect(resultOf(reply).task).toBeDefined();
        else
          expect(errorOf(reply)).toMatchObject({
            code: -32602,
            message: expect.stringMatching(new RegExp(`^Client does not support ${mode}-mode elicitation requests`)),
          });
      }
      await flush();
      expect(tasks.receiver?.size).toBe(Number(url) + Number(form));
      expect(held.calls).toHaveLength(Number(url) + Number(form));
    },
  );

  it('list cursors never issued, tampered with or from another connection get -32602 ([R23], [V26])', async () => {
    const { ask, create } = await peerRig(register, { elicitation: new HeldCallback().callback, pageSize: 2 });
    const ids: unknown[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await create()).taskId);
    const pages: Json[] = [];
    let cursor: unknown;
    do {
      const page = resultOf(await ask('tasks/list', cursor === undefined ? {} : { cursor }));
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages.map((page) => (page.tasks as Json[]).length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((page) => (page.tasks as Json[]).map((task) => task.taskId))).toEqual(ids);
    // [V20]: no related-task _meta on tasks/list.
    expect(pages.every((page) => page._meta === undefined)).toBe(true);
    const issued = String(pages[0]?.nextCursor);
    const other = await peerRig(register, { elicitation: new HeldCallback().callback, pageSize: 1 });
    await other.create();
    await other.create();
    const foreign = String(resultOf(await other.ask('tasks/list', {})).nextCursor);
    const tampered = `${(Number.parseInt(issued.split('.')[0]!, 36) + 1).toString(36)}.${issued.split('.')[1]}`;
    for (const bad of ['bogus', 'a.b', '', '0', tampered, foreign, 5, true, [], {}, { cursor: 1 }]) {
      expect(errorOf(await ask('tasks/list', { cursor: bad })).code, JSON.stringify(bad)).toBe(-32602);
    }
  });

  it('a null cursor is no cursor: the first page, as from a peer that writes absent fields as null (D21); after close() an empty list', async () => {
    const { ask, create, tasks } = await peerRig(register, { elicitation: new HeldCallback().callback, pageSize: 2 });
    for (let i = 0; i < 3; i += 1) await create();
    const first = resultOf(await ask('tasks/list', {}));
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(resultOf(await ask('tasks/list', { cursor: null }))).toEqual(first);
    // The page after it reads on from the cursor the null-cursor request issued (one per position).
    expect((resultOf(await ask('tasks/list', { cursor: first.nextCursor })).tasks as Json[]).length).toBe(1);
    await tasks.receiver!.close();
    expect(resultOf(await ask('tasks/list', { cursor: null }))).toEqual({ tasks: [] });
    expect(errorOf(await ask('tasks/list', { cursor: 7 })).code).toBe(-32602);
  });

  it('a listed position keeps one cursor; the last 1024 positions issued stay valid, an older cursor gets -32602 like a foreign one ([V26])', async () => {
    const { ask, create } = await peerRig(register, {
      elicitation: new HeldCallback().callback,
      pageSize: 1,
      maxTasks: 2_000,
    });
    for (let i = 0; i < 1_026; i += 1) await create();
    const first = String(resultOf(await ask('tasks/list', {})).nextCursor);
    expect(String(resultOf(await ask('tasks/list', {})).nextCursor)).toBe(first);
    const cursors = [first];
    for (let i = 0; i < 1_024; i += 1)
      cursors.push(String(resultOf(await ask('tasks/list', { cursor: cursors.at(-1) })).nextCursor));
    // 1025 positions were issued: the first one's cursor is gone, the second one's still reads on.
    expect(errorOf(await ask('tasks/list', { cursor: first })).code).toBe(-32602);
    expect(resultOf(await ask('tasks/list', { cursor: cursors[1] })).tasks).toHaveLength(1);
    expect(resultOf(await ask('tasks/list', { cursor: cursors.at(-1) }))).toMatchObject({
      tasks: [{ status: 'working' }],
    });
  });

  it('a cursor issued again counts as issued last: listing from the start again keeps the first page’s cursor among the last 1024 ([V22])', async () => {
    const { ask, create } = await peerRig(register, {
      elicitation: new HeldCallback().callback,
      pageSize: 1,
      maxTasks: 2_000,
    });
    for (let i = 0; i < 1_027; i += 1) await create();
    const first = String(resultOf(await ask('tasks/list', {})).nextCursor);
    const cursors = [first];
    for (let i = 0; i < 1_023; i += 1)
      cursors.push(String(resultOf(await ask('tasks/list', { cursor: cursors.at(-1) })).nextCursor));
    // 1024 positions issued. The server lists from the start again: the first page's cursor is
    // issued once more (the same one), then one position more is issued.
    expect(String(resultOf(await ask('tasks/list', {})).nextCursor)).toBe(first);
    cursors.push(String(resultOf(await ask('tasks/list', { cursor: cursors.at(-1) })).nextCursor));
    // The one issued longest ago is the second position's, not the first page's it just handed out.
    expect(resultOf(await ask('tasks/list', { cursor: first })).tasks).toHaveLength(1);
    expect(errorOf(await ask('tasks/list', { cursor: cursors[1] })).code).toBe(-32602);
  });

  it('lists and answers only the tasks of its own connection (§6)', async () => {
    const one = await peerRig(register, { elicitation: new HeldCallback().callback });
    const two = await peerRig(register, { elicitation: new HeldCallback().callback });
    const mine = await one.create();
    await two.create();
    const listed = resultOf(await two.ask('tasks/list', {})).tasks as Json[];
    expect(listed.map((task) => task.taskId)).not.toContain(mine.taskId);
    expect(errorOf(await two.ask('tasks/get', { taskId: mine.taskId })).code).toBe(-32602);
    expect(errorOf(await two.ask('tasks/cancel', { taskId: mine.taskId })).code).toBe(-32602);
  });

  it('reads the taskId param only, never a related-task _meta on the request ([R33])', async () => {
    const { ask, create } = await peerRig(register, { elicitation: new HeldCallback().callback });
    const a = await create();
    const b = await create();
    const got = resultOf(
      await ask('tasks/get', {
        taskId: a.taskId,
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: b.taskId } },
      }),
    );
    expect(got.taskId).toBe(a.taskId);
    expect(got._meta).toBeUndefined();
  });

  it('maxTasks: a finished task whose result the server has not fetched is kept until its ttl; the request is refused until tasks/result delivered it ([V11], [V15])', async () => {
    const held = new HeldCallback();
    const { ask, create, tasks } = await peerRig(register, { elicitation: held.callback, maxTasks: 2 });
    const first = await create();
    const second = await create();
    await flush();
    const refuse = async (): Promise<void> => {
      const refused = errorOf(
        await ask('elicitation/create', {
          message: 'x',
          requestedSchema: { type: 'object', properties: {} },
          task: {},
        }),
      );
      expect(refused.code).toBe(-32603);
      expect(refused.message).toContain(
        'Too many receiver tasks: all 2 held on this connection are still running or hold a result the server has not fetched',
      );
    };
    await refuse();
    held.calls[1]?.resolve(accept('second'));
    await flush();
    // Finished, but its result was never fetched: it stays, and the new request is refused.
    await refuse();
    expect(resultOf(await ask('tasks/get', { taskId: second.taskId })).status).toBe('completed');
    // A tasks/get is no fetch; tasks/result is.
    expect(resultOf(await ask('tasks/result', { taskId: second.taskId }))).toMatchObject({
      content: { name: 'second' },
    });
    await flush();
    const third = await create();
    expect(errorOf(await ask('tasks/get', { taskId: second.taskId })).code).toBe(-32602);
    expect(resultOf(await ask('tasks/get', { taskId: first.taskId })).status).toBe('working');
    expect(resultOf(await ask('tasks/get', { taskId: third.taskId })).status).toBe('working');
    expect(tasks.receiver?.size).toBe(2);
    expect(held.calls).toHaveLength(3);
  });

  it('maxTasks: a cancelled task makes room first, before an older one whose result was delivered ([V25])', async () => {
    const held = new HeldCallback();
    const { ask, create } = await peerRig(register, { elicitation: held.callback, maxTasks: 3 });
    const delivered = await create();
    const cancelled = await create();
    const running = await create();
    await flush();
    held.calls[0]?.resolve(accept('Ada'));
    await flush();
    expect(resultOf(await ask('tasks/result', { taskId: delivered.taskId })).action).toBe('accept');
    await ask('tasks/cancel', { taskId: cancelled.taskId });
    await create();
    expect(errorOf(await ask('tasks/get', { taskId: cancelled.taskId })).code).toBe(-32602);
    expect(resultOf(await ask('tasks/get', { taskId: delivered.taskId })).status).toBe('completed');
    // Then the delivered one; the running one never.
    await create();
    expect(errorOf(await ask('tasks/get', { taskId: delivered.taskId })).code).toBe(-32602);
    expect(resultOf(await ask('tasks/get', { taskId: running.taskId })).status).toBe('working');
  });

  it('maxTasks: a failed task counts as delivered once tasks/result answered its error', async () => {
    const held = new HeldCallback();
    const { ask, create } = await peerRig(register, { elicitation: held.callback, maxTasks: 1 });
    const failed = await create();
    await flush();
    held.calls[0]?.reject(Object.assign(new Error('no'), { code: -32000 }));
    await flush();
    expect(errorOf(await ask('tasks/result', { taskId: failed.taskId }))).toEqual({ code: -32000, message: 'no' });
    await flush();
    const next = await create();
    expect(next.status).toBe('working');
  });

  it('maxResultWaiters (default 16): one tasks/result too many on a running task is refused at once (§6)', async () => {
    const held = new HeldCallback();
    const { ask, create } = await peerRig(register, { elicitation: held.callback });
    const task = await create();
    await flush();
    const answered: Json[] = [];
    const waiting = Array.from({ length: 16 }, () =>
      ask('tasks/result', { taskId: task.taskId }).then((reply) => void answered.push(reply)),
    );
    await flush();
    // The 17th is answered while the task still runs, with the error an over-limit task request gets.
    const refused = errorOf(await within(ask('tasks/result', { taskId: task.taskId })));
    expect(refused.code).toBe(-32603);
    expect(refused.message).toContain('Too many tasks/result requests waiting on this task');
    expect(answered).toEqual([]);
    expect(resultOf(await ask('tasks/get', { taskId: task.taskId })).status).toBe('working');
    held.calls[0]?.resolve(accept('Ada'));
    await within(Promise.all(waiting));
    expect(answered).toHaveLength(16);
    for (const reply of answered) expect(resultOf(reply)).toMatchObject({ action: 'accept', content: { name: 'Ada' } });
    // A finished task holds no waiter: any number of tasks/result are answered.
    expect(resultOf(await ask('tasks/result', { taskId: task.taskId })).action).toBe('accept');
  });

  it('maxResultWaiters: a waiting tasks/result the server cancels frees its place', async () => {
    const held = new HeldCallback();
    const { ask, create, server } = await peerRig(register, { elicitation: held.callback, maxResultWaiters: 1 });
    const task = await create();
    await flush();
    void ask('tasks/result', { taskId: task.taskId });
    await flush();
    expect(errorOf(await within(ask('tasks/result', { taskId: task.taskId }))).code).toBe(-32603);
    const requestId = server.sent.filter((m) => m.method === 'tasks/result').at(0)?.id;
    server.notify('notifications/cancelled', { requestId, reason: 'giving up' });
    await flush();
    const next = ask('tasks/result', { taskId: task.taskId });
    await flush();
    held.calls[0]?.resolve(accept('Ada'));
    expect(resultOf(await within(next))).toMatchObject({ action: 'accept', content: { name: 'Ada' } });
  });

  it('a tasks/result the server gives up on is never answered, and the task carries on', async () => {
    const held = new HeldCallback();
    const { ask, create, server } = await peerRig(register, { elicitation: held.callback });
    const task = await create();
    await flush();
    let answered = false;
    void ask('tasks/result', { taskId: task.taskId }).then(() => (answered = true));
    await flush();
    const requestId = server.sent.filter((m) => m.method === 'tasks/result').at(-1)?.id;
    server.notify('notifications/cancelled', { requestId, reason: 'giving up' });
    await flush();
    held.calls[0]?.resolve(accept('Ada'));
    await flush();
    expect(answered).toBe(false);
    expect(resultOf(await ask('tasks/result', { taskId: task.taskId }))).toMatchObject({
      action: 'accept',
      content: { name: 'Ada' },
    });
  });

  it('a request the server cancels before its CreateTaskResult is sent leaves no task, and its callback never runs ([V14])', async () => {
    const held = new HeldCallback();
    const { server, tasks } = await peerRig(register, { elicitation: held.callback });
    const events: string[] = [];
    tasks.on('status', (metrics, task) => events.push(`status:${metrics.role}:${task.status}`));
    tasks.on('cancelled', (metrics) => events.push(`cancelled:${metrics.error.message}`));
    tasks.on('settled', (metrics) => events.push(`settled:${metrics.outcome}`));
    // Both reach the client before its answer, which waits a microtask: the request is cancelled first.
    server.send({
      jsonrpc: '2.0',
      id: 'early',
      method: 'elicitation/create',
      params: { message: 'x', requestedSchema: { type: 'object', properties: {} }, task: {} },
    });
    server.notify('notifications/cancelled', { requestId: 'early', reason: 'never mind' });
    await flush();
    expect(server.log.filter((entry) => entry.kind === 'response')).toEqual([]);
    expect(held.calls).toEqual([]);
    expect(tasks.receiver?.size).toBe(0);
    expect(server.params('notifications/tasks/status')).toEqual([]);
    expect(events).toEqual([
      'status:receiver:working',
      'status:receiver:cancelled',
      'cancelled:The receiver task for elicitation/create was withdrawn before its elicitation callback ran: the server cancelled the request before its CreateTaskResult was sent',
      'settled:cancelled',
    ]);
  });

  it('a callback that answers at once: the server gets the CreateTaskResult before the completed status, and tasks/result right after it has the answer', async () => {
    const { create, server, ask } = await peerRig(register, { elicitation: () => accept('Ada') });
    const task = await create();
    const result = await ask('tasks/result', { taskId: task.taskId });
    expect(resultOf(result)).toMatchObject({ action: 'accept', content: { name: 'Ada' } });
    const order = server.log.filter(
      (entry) => entry.kind === 'response' || entry.method === 'notifications/tasks/status',
    );
    expect(
      order.map((entry) =>
        entry.kind === 'response'
          ? `reply:${Object.keys(entry.message.result as Json).join(',')}`
          : `status:${String(entry.params.status)}`,
      ),
    ).toEqual(['reply:task', 'status:completed', expect.stringMatching(/^reply:/)]);
  });

  it('sends notifications/tasks/status on every status change, without related-task _meta ([V21])', async () => {
    const held = new HeldCallback();
    const { create, server, ask } = await peerRig(register, { elicitation: held.callback });
    const done = await create();
    const cancelled = await create();
    await flush();
    held.calls[0]?.resolve(accept('Ada'));
    await flush();
    await ask('tasks/cancel', { taskId: cancelled.taskId });
    await flush();
    const notes = server.params('notifications/tasks/status');
    expect(notes.map((n) => [n.taskId, n.status])).toEqual([
      [done.taskId, 'completed'],
      [cancelled.taskId, 'cancelled'],
    ]);
    expect(
      notes.every((n) => n._meta === undefined && typeof n.lastUpdatedAt === 'string' && n.ttl === 3_600_000),
    ).toBe(true);
  });

  it('a task-augmented request reusing the id of one still being answered makes no second task: -32600 at once, and one callback runs', async () => {
    const held = new HeldCallback();
    const { server, tasks } = await peerRig(register, { elicitation: held.callback });
    const request = (message: string): Json => ({
      jsonrpc: '2.0',
      id: 'twice',
      method: 'elicitation/create',
      params: { message, requestedSchema: { type: 'object', properties: {} }, task: {} },
    });
    // Both reach the client before the first's CreateTaskResult, which waits a microtask.
    server.send(request('first?'));
    server.send(request('second?'));
    await flush();
    const replies = server.log.filter((entry) => entry.kind === 'response').map((entry) => entry.message);
    expect(replies).toEqual([
      { jsonrpc: '2.0', id: 'twice', error: { code: -32600, message: expect.stringMatching(/already in use/) } },
      { jsonrpc: '2.0', id: 'twice', result: { task: expect.objectContaining({ status: 'working' }) } },
    ]);
    expect(held.calls.map((call) => call.params.message)).toEqual(['first?']);
    expect(tasks.receiver?.size).toBe(1);
  });

  it('a tasks/result reusing the id of one still waiting gets -32600 at once; the server’s cancel of the id then ends the first wait', async () => {
    const held = new HeldCallback();
    const { ask, create, server } = await peerRig(register, { elicitation: held.callback });
    const task = await create();
    await flush();
    const wait = { jsonrpc: '2.0', id: 'wait', method: 'tasks/result', params: { taskId: task.taskId } };
    const repliesTo = (): Json[] =>
      server.log.filter((entry) => entry.kind === 'response' && entry.id === 'wait').map((entry) => entry.message);
    server.send(wait);
    await flush();
    server.send(wait);
    await flush();
    const refused = [{ jsonrpc: '2.0', id: 'wait', error: expect.objectContaining({ code: -32600 }) }];
    expect(repliesTo()).toEqual(refused);
    server.notify('notifications/cancelled', { requestId: 'wait', reason: 'giving up' });
    await flush();
    held.calls[0]?.resolve(accept('Ada'));
    await flush();
    // The cancelled wait is never answered; a new tasks/result gets the result.
    expect(repliesTo()).toEqual(refused);
    expect(resultOf(await within(ask('tasks/result', { taskId: task.taskId })))).toMatchObject({
      action: 'accept',
      content: { name: 'Ada' },
    });
  });

  it('serves tasks/list and tasks/cancel only when the client declared them ([R5])', async () => {
    const capabilities = { ...RECEIVER_CAPABILITIES, tasks: { requests: RECEIVER_CAPABILITIES.tasks.requests } };
    const { ask, create } = await peerRig(register, { elicitation: new HeldCallback().callback }, {}, capabilities);
    const task = await create();
    expect(errorOf(await ask('tasks/list', {})).code).toBe(-32601);
    expect(errorOf(await ask('tasks/cancel', { taskId: task.taskId })).code).toBe(-32601);
    expect(resultOf(await ask('tasks/get', { taskId: task.taskId })).status).toBe('working');
  });
});
