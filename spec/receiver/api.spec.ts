/**
 * The receiver's API: `taskReceiver()` served by `tasks.serve()` or the `serve` option, the capabilities it needs, its options,
 * its handle (`close()`, `await using`), events and what happens at close and reconnect. The
 * client side runs on the SDK chosen by `MCP_SDK`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  TaskClosedError,
  TaskNotSupportedError,
  TaskOptionError,
  type InputContext,
  type ServeOptions,
  type TaskMetrics,
} from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import { ManualClock, exampleServerPair, flush, within } from '../helpers.js';
import {
  HeldCallback,
  RECEIVER_CAPABILITIES,
  accept,
  errorOf,
  peerRig,
  resultOf,
  serverRig,
} from '../support/receiver-rig.js';
import { NO_REPLY, connectScripted, creating, type Json } from '../support/scripted-server.js';
import { connectOptions, createLinkedPair } from '../support/sdk.js';

const RELATED = 'io.modelcontextprotocol/related-task';

const cleanups: Array<() => Promise<void>> = [];
const register = (cleanup: () => Promise<void>): void => void cleanups.push(cleanup);
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A scripted server and an SDK client declaring `capabilities`. */
async function bareClient(capabilities: Json) {
  const pair = await connectScripted({ clientOptions: { capabilities: capabilities as Record<string, object> } });
  register(() => pair.close());
  return pair;
}

describe('serve(): capabilities', () => {
  it('fails fast, naming the missing capability, on a client that did not declare it', async () => {
    const plain = await bareClient({});
    const tasks = new TaskClient(plain.client);
    register(() => tasks.close());
    const error = (() => {
      try {
        tasks.serve(taskReceiver({ elicitation: () => accept('x') }));
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect((error as TaskNotSupportedError).feature).toBe('elicitation');
    expect((error as Error).message).toContain('"elicitation"');
    const halfway = await bareClient({
      elicitation: {},
      sampling: {},
      tasks: { requests: { elicitation: { create: {} } } },
    });
    const other = new TaskClient(halfway.client);
    register(() => other.close());
    expect(() =>
      other.serve(
        taskReceiver({ sampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: '' } }) }),
      ),
    ).toThrow(/"tasks\.requests\.sampling\.createMessage"/);
    // Elicitation alone is declared: that serves.
    expect(other.serve(taskReceiver({ elicitation: () => accept('x') })).closed).toBe(false);
  });

  it('the serve option fails fast in the constructor, and leaves the SDK client usable', async () => {
    const plain = await bareClient({ elicitation: {} });
    expect(() => new TaskClient(plain.client, { serve: taskReceiver({ elicitation: () => accept('x') }) })).toThrow(
      /"tasks\.requests\.elicitation\.create"/,
    );
    const tasks = new TaskClient(plain.client, { onElicitation: () => accept('plain') });
    register(() => tasks.close());
    const reply = await plain.server.request('elicitation/create', {
      message: 'hi',
      requestedSchema: { type: 'object', properties: {} },
    });
    expect(reply.result).toEqual(accept('plain'));
  });

  it('one receiver per connection; serve() again after close(); never after the client closed', async () => {
    const pair = await bareClient(RECEIVER_CAPABILITIES);
    const tasks = new TaskClient(pair.client);
    const receiver = tasks.serve(taskReceiver({ elicitation: () => accept('x') }));
    expect(tasks.receiver).toBe(receiver);
    expect(() => tasks.serve(taskReceiver({ elicitation: () => accept('y') }))).toThrow(TaskOptionError);
    const neighbour = new TaskClient(pair.client);
    register(() => neighbour.close());
    expect(() => neighbour.serve(taskReceiver({ elicitation: () => accept('z') }))).toThrow(
      /already served on this connection/,
    );
    await receiver.close();
    expect(receiver.closed).toBe(true);
    expect(tasks.receiver).toBeUndefined();
    const again = tasks.serve(taskReceiver({ elicitation: () => accept('again') }));
    expect(again.closed).toBe(false);
    await tasks.close();
    expect(again.closed).toBe(true);
    expect(() => tasks.serve(taskReceiver({ elicitation: () => accept('late') }))).toThrow(TaskClosedError);
  });
});

describe('serve(): options', () => {
  it('rejects invalid options, naming them', async () => {
    const pair = await bareClient(RECEIVER_CAPABILITIES);
    const tasks = new TaskClient(pair.client);
    register(() => tasks.close());
    const elicitation = () => accept('x');
    const bad: Array<[ServeOptions, string]> = [
      [{}, 'serve'],
      [{ elicitation: 'yes' as never }, 'serve.elicitation'],
      [{ elicitation, maxTtlMs: 0 }, 'serve.maxTtlMs'],
      [{ elicitation, ttlMs: -1 }, 'serve.ttlMs'],
      [{ elicitation, ttlMs: 0 }, 'serve.ttlMs'],
      [{ elicitation, pollIntervalMs: 1.5 }, 'serve.pollIntervalMs'],
      [{ elicitation, maxTasks: 0 }, 'serve.maxTasks'],
      [{ elicitation, maxResultWaiters: 0 }, 'serve.maxResultWaiters'],
      [{ elicitation, pageSize: 'ten' as never }, 'serve.pageSize'],
      [null as never, 'serve'],
    ];
    for (const [options, option] of bad) {
      expect(() => tasks.serve(taskReceiver(options)), option).toThrow(TaskOptionError);
      try {
        tasks.serve(taskReceiver(options));
      } catch (error) {
        expect((error as TaskOptionError).option).toBe(option);
      }
    }
    expect(tasks.receiver).toBeUndefined();
  });

  it('takes only a receiver taskReceiver() made: the serve options themselves are a TaskOptionError that says so', async () => {
    const pair = await bareClient(RECEIVER_CAPABILITIES);
    const options = { elicitation: () => accept('x') };
    expect(() => new TaskClient(pair.client, { serve: options as never })).toThrow(
      /must be a receiver made by taskReceiver\(options\) of 'mcp-task-client\/receiver'/,
    );
    const tasks = new TaskClient(pair.client);
    register(() => tasks.close());
    for (const given of [options, { options }, undefined, null, 'serve']) {
      const error = (() => {
        try {
          tasks.serve(given as never);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error, JSON.stringify(given)).toBeInstanceOf(TaskOptionError);
      expect((error as TaskOptionError).option).toBe('serve');
      expect((error as Error).message).toContain('taskReceiver(options)');
    }
    expect(tasks.receiver).toBeUndefined();
    // TaskClient.connect refuses it before it opens anything: the transport is never started.
    const [clientSide] = createLinkedPair();
    let started = false;
    const start = clientSide.start.bind(clientSide);
    clientSide.start = () => {
      started = true;
      return start();
    };
    await expect(TaskClient.connect(clientSide, { ...connectOptions(), serve: options as never })).rejects.toThrow(
      /taskReceiver\(options\)/,
    );
    expect(started).toBe(false);
    // A bad value fails where the receiver is made, naming the option.
    expect(() => taskReceiver({ ...options, maxTasks: 0 })).toThrow(TaskOptionError);
    // The receiver is reusable: made once, served by one client after another.
    const receiver = taskReceiver(options);
    expect(receiver.options.elicitation).toBe(options.elicitation);
    await tasks.serve(receiver).close();
    expect(tasks.serve(receiver).closed).toBe(false);
  });

  it("without callbacks, serves with the client's; with one, only that kind", async () => {
    const pair = await bareClient(RECEIVER_CAPABILITIES);
    const seen: string[] = [];
    const tasks = new TaskClient(pair.client, {
      onElicitation: (_p, context) => {
        seen.push(`elicitation:${context.delivery}`);
        return accept('client');
      },
      onSampling: (_p, context) => {
        seen.push(`sampling:${context.delivery}`);
        return { role: 'assistant', model: 'm', content: { type: 'text', text: 'client' } };
      },
    });
    register(() => tasks.close());
    const receiver = tasks.serve(taskReceiver());
    const base = { messages: [], maxTokens: 5, task: {} };
    expect(resultOf(await pair.server.request('sampling/createMessage', base)).task).toBeDefined();
    expect(resultOf(await pair.server.request('elicitation/create', { message: 'x', task: {} })).task).toBeDefined();
    await flush();
    expect(seen.sort()).toEqual(['elicitation:receiver-task', 'sampling:receiver-task']);
    await receiver.close();
    tasks.serve(taskReceiver({ elicitation: () => accept('own') }));
    // Sampling tasks stay declared (capabilities are fixed once connected) but nobody serves them
    // now: refused, never a plain result a server asking for a task cannot take ([V14]; [V1] is
    // only for kinds not declared). A plain sampling request still goes to onSampling.
    expect(errorOf(await pair.server.request('sampling/createMessage', base))).toMatchObject({
      code: -32603,
      message: expect.stringContaining('declared sampling tasks') as unknown,
    });
    const { task: _task, ...plain } = base;
    expect(resultOf(await pair.server.request('sampling/createMessage', plain))).toMatchObject({ model: 'm' });
  });

  it('ttlMs is granted when the server asks for none, capped by maxTtlMs; pollIntervalMs is reported', async () => {
    const { create } = await peerRig(register, {
      elicitation: new HeldCallback().callback,
      ttlMs: 10 * 86_400_000,
      maxTtlMs: 86_400_000,
      pollIntervalMs: 250,
    });
    expect(await create()).toMatchObject({ ttl: 86_400_000, pollInterval: 250 });
  });

  it('a requested ttl below the floor (1 s, or two poll intervals when longer) is raised to it, and the task lives that long ([V10])', async () => {
    const held = new HeldCallback();
    const { create, ask, clock } = await peerRig(register, { elicitation: held.callback, pollIntervalMs: 250 });
    for (const ttl of [0, 0.5, 999]) expect((await create({ task: { ttl } })).ttl, String(ttl)).toBe(1_000);
    expect((await create({ task: { ttl: 1_000.9 } })).ttl).toBe(1_000);
    const task = await create({ task: { ttl: 0 } });
    await flush();
    expect(held.calls.at(-1)?.context.signal.aborted).toBe(false);
    await clock.advance(999);
    expect(resultOf(await ask('tasks/get', { taskId: task.taskId })).status).toBe('working');
    await clock.advance(1);
    expect(errorOf(await ask('tasks/get', { taskId: task.taskId })).code).toBe(-32602);
    // Two poll intervals when they are longer; maxTtlMs, the host's own cap, wins over the floor.
    const slow = await peerRig(register, { elicitation: held.callback, pollIntervalMs: 5_000 });
    expect(await slow.create({ task: { ttl: 0 } })).toMatchObject({ ttl: 10_000, pollInterval: 5_000 });
    const capped = await peerRig(register, { elicitation: held.callback, maxTtlMs: 500 });
    expect((await capped.create({ task: { ttl: 0 } })).ttl).toBe(500);
    // The host's own ttlMs, used when the server asks for none, is granted as it is.
    const own = await peerRig(register, { elicitation: held.callback, ttlMs: 10 });
    expect((await own.create()).ttl).toBe(10);
  });
});

describe("the receiver handle and the client's life", () => {
  it('close() cancels running tasks, tells the server, aborts the callbacks; the server then gets errors', async () => {
    const held = new HeldCallback();
    const { create, ask, tasks, server } = await peerRig(register, { elicitation: held.callback });
    const running = await create();
    const receiver = tasks.receiver!;
    expect(receiver.running).toBe(1);
    await flush();
    const waiting = ask('tasks/result', { taskId: running.taskId });
    await receiver.close();
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    expect(receiver.size).toBe(0);
    expect(receiver.tasks()).toEqual([]);
    await flush();
    expect(server.params('notifications/tasks/status').map((n) => n.status)).toEqual(['cancelled']);
    expect(errorOf(await waiting)).toMatchObject({
      code: -32603,
      message: 'The task was cancelled: The client stopped serving receiver tasks',
    });
    // The client still declares tasks/list and tasks/cancel ([R5]): never -32601, but no task ([V26]).
    const gone = {
      code: -32602,
      message:
        'Task not found: this client stopped serving receiver tasks on this connection and deleted every task it held',
    };
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'])
      expect(errorOf(await ask(method, { taskId: running.taskId })), method).toEqual(gone);
    expect(errorOf(await ask('tasks/get', {})).code).toBe(-32602);
    expect(resultOf(await ask('tasks/list', {}))).toEqual({ tasks: [] });
    expect(errorOf(await ask('tasks/list', { cursor: 'abc' })).code).toBe(-32602);
  });

  it('after close(), a receiver serving the connection again answers for its own tasks; closed again, the stopped answers return', async () => {
    const { create, ask, tasks } = await peerRig(register, { elicitation: new HeldCallback().callback });
    const old = await create();
    for (let round = 0; round < 3; round += 1) {
      await tasks.receiver!.close();
      tasks.serve(taskReceiver({ elicitation: new HeldCallback().callback }));
    }
    const fresh = await create();
    expect(resultOf(await ask('tasks/get', { taskId: fresh.taskId })).status).toBe('working');
    expect(errorOf(await ask('tasks/get', { taskId: old.taskId })).message).toMatch(/^Task not found: no such task/);
    expect((resultOf(await ask('tasks/list', {})).tasks as Json[]).map((task) => task.taskId)).toEqual([fresh.taskId]);
    expect(resultOf(await ask('tasks/cancel', { taskId: fresh.taskId })).status).toBe('cancelled');
    await tasks.receiver!.close();
    expect(errorOf(await ask('tasks/get', { taskId: fresh.taskId })).message).toMatch(/stopped serving/);
    expect(resultOf(await ask('tasks/list', {}))).toEqual({ tasks: [] });
  });

  it('after the client closed, a task-augmented request of a declared kind is still refused with -32603, never left unanswered ([V14])', async () => {
    // Found by spec/receiver/fuzz.spec.ts (seeds 59, 68, 89): the SDK client, left alone, answered
    // -32601, and dropped unanswered a request whose related-task taskId is no string (its schema
    // refuses the message), so the server waited for ever.
    const { ask, tasks } = await peerRig(register, { elicitation: new HeldCallback().callback });
    await tasks.close();
    const form = { message: 'Your name?', requestedSchema: { type: 'object', properties: {} } };
    const refused = { code: -32603, message: expect.stringContaining('declared elicitation tasks') as unknown };
    expect(errorOf(await within(ask('elicitation/create', { ...form, task: {} })))).toMatchObject(refused);
    for (const taskId of [7, null, 'a-task']) {
      const _meta = { 'io.modelcontextprotocol/related-task': { taskId } };
      const reply = await within(ask('elicitation/create', { ...form, task: { ttl: 1_000 }, _meta }), 1_000);
      expect(errorOf(reply), String(taskId)).toMatchObject(refused);
    }
    // A plain request is not the receiver's: the SDK client answers it as it would (no handler: -32601).
    expect(errorOf(await within(ask('elicitation/create', form))).code).toBe(-32601);
    expect(errorOf(await ask('tasks/get', { taskId: 'x' })).code).toBe(-32602);
  });

  it('await using stops serving at scope exit', async () => {
    const pair = await bareClient(RECEIVER_CAPABILITIES);
    const tasks = new TaskClient(pair.client);
    register(() => tasks.close());
    let signal: AbortSignal | undefined;
    {
      await using receiver = tasks.serve(
        taskReceiver({
          elicitation: (_p, context) => {
            signal = context.signal;
            return new Promise<never>(() => {});
          },
        }),
      );
      expect(resultOf(await pair.server.request('elicitation/create', { message: 'x', task: {} })).task).toBeDefined();
      await flush();
      expect(receiver.running).toBe(1);
    }
    expect(signal?.aborted).toBe(true);
    expect(tasks.receiver).toBeUndefined();
  });

  it('the connection closing ends the running tasks (outcome closed) and frees them', async () => {
    const held = new HeldCallback();
    const { create, tasks, client } = await peerRig(register, { elicitation: held.callback });
    const outcomes: string[] = [];
    tasks.on('settled', (metrics) => outcomes.push(`${metrics.role}:${metrics.outcome}`));
    await create();
    await flush();
    await client.close();
    await flush();
    expect(outcomes).toEqual(['receiver:closed']);
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    expect(tasks.receiver?.size).toBe(0);
  });

  it('a created listener that closes the receiver: the CreateTaskResult still reports the task working ([V5])', async () => {
    const held = new HeldCallback();
    const { create, tasks } = await peerRig(register, { elicitation: held.callback });
    tasks.on('created', (metrics) => {
      if (metrics.role === 'receiver') void tasks.receiver?.close();
    });
    expect(await create()).toMatchObject({ status: 'working' });
  });

  it('a created or status listener that closes the receiver: the server hears of the cancel only after the CreateTaskResult ([V14], [V21])', async () => {
    for (const event of ['created', 'status'] as const) {
      const { create, tasks, server } = await peerRig(register, { elicitation: new HeldCallback().callback });
      const stop = (metrics: TaskMetrics): void => {
        if (metrics.role === 'receiver') void tasks.receiver?.close();
      };
      if (event === 'created') tasks.on('created', stop);
      else tasks.on('status', stop);
      const task = await create();
      await flush();
      const order = server.log
        .filter((entry) => entry.kind === 'response' || entry.method === 'notifications/tasks/status')
        .map((entry) =>
          entry.kind === 'response'
            ? `reply:${String((entry.message.result as Json).task !== undefined)}`
            : `status:${String(entry.params.taskId === task.taskId)}:${String(entry.params.status)}`,
        );
      expect(order, event).toEqual(['reply:true', 'status:true:cancelled']);
    }
  });

  it('the connection closing emits status cancelled once for each running task, before settled', async () => {
    const held = new HeldCallback();
    const { create, tasks, client } = await peerRig(register, { elicitation: held.callback });
    const events: string[] = [];
    tasks.on('status', (metrics, task) =>
      events.push(`status:${metrics.role}:${task.taskId}:${task.status}:${metrics.status}`),
    );
    tasks.on('settled', (metrics) => events.push(`settled:${metrics.role}:${metrics.taskId}:${metrics.outcome}`));
    const done = String((await create()).taskId);
    const first = String((await create()).taskId);
    const second = String((await create()).taskId);
    await flush();
    held.calls[0]?.resolve(accept('Ada'));
    await flush();
    events.length = 0;
    await client.close();
    await flush();
    // The finished task is left alone; each running one reports its last status change.
    expect(events).toEqual([
      `status:receiver:${first}:cancelled:cancelled`,
      `settled:receiver:${first}:closed`,
      `status:receiver:${second}:cancelled:cancelled`,
      `settled:receiver:${second}:closed`,
    ]);
    expect(events.join()).not.toContain(done);
  });

  it("after a reconnect, the new connection is served and the old one's tasks are gone", async () => {
    const held = new HeldCallback();
    const { create, tasks } = await peerRig(register, { elicitation: held.callback });
    await create();
    await flush();
    const next = await connectScripted({ clientOptions: { capabilities: RECEIVER_CAPABILITIES } });
    register(() => next.close());
    tasks.reconnect(next.client);
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    const reply = resultOf(await next.server.request('elicitation/create', { message: 'x', task: {} }));
    const taskId = (reply.task as Json).taskId;
    expect(tasks.receiver?.tasks().map((t) => t.taskId)).toEqual([taskId]);
    await flush();
    held.calls[1]?.resolve(accept('new'));
    await flush();
    expect(resultOf(await next.server.request('tasks/result', { taskId }))).toMatchObject({ content: { name: 'new' } });
  });

  it('a reconnect to a client without the capabilities stops serving and says why on the error event', async () => {
    const { tasks, errors } = await peerRig(register, { elicitation: new HeldCallback().callback });
    const next = await connectScripted({ clientOptions: { capabilities: {} } });
    register(() => next.close());
    tasks.reconnect(next.client);
    expect(errors.at(-1)).toBeInstanceOf(TaskNotSupportedError);
    expect(tasks.receiver?.size).toBe(0);
  });
});

describe('receiver tasks on an SDK McpServer with a manual clock', () => {
  it("expire at their ttl: the server gets -32602, the callback's signal fires, expired is emitted ([V11])", async () => {
    const clock = new ManualClock();
    const held = new HeldCallback();
    const { tool, tasks } = await serverRig(register, { clock, serve: taskReceiver({ elicitation: held.callback }) });
    const expired: TaskMetrics[] = [];
    tasks.on('expired', (metrics) => expired.push(metrics));
    const created = ((await tool('create', { method: 'elicitation/create', ttl: 5_000 })).created as Json[])[0]!;
    await flush();
    await clock.advance(4_999);
    expect((await tool('call', { method: 'tasks/get', params: { taskId: created.taskId } })).result).toMatchObject({
      status: 'working',
    });
    await clock.advance(1);
    expect((await tool('call', { method: 'tasks/get', params: { taskId: created.taskId } })).error).toMatchObject({
      code: -32602,
    });
    expect((await tool('call', { method: 'tasks/result', params: { taskId: created.taskId } })).error).toMatchObject({
      code: -32602,
    });
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    expect(expired.map((m) => [m.role, m.taskId, m.toolName])).toEqual([
      ['receiver', created.taskId, 'elicitation/create'],
    ]);
  });
});

describe('roles', () => {
  it('requestor tasks carry role requestor in their metrics', async () => {
    const pair = await exampleServerPair();
    register(() => pair.close());
    const tasks = new TaskClient(pair.client);
    register(() => tasks.close());
    const roles: string[] = [];
    tasks.on('settled', (metrics) => roles.push(metrics.role));
    const handle = await tasks.callToolAsTask('analyze', { id: 1, steps: 1, stepMs: 1 });
    await handle.result();
    await flush();
    expect(roles).toEqual(['requestor']);
    expect(handle.metrics?.role).toBe('requestor');
  });

  it("a receiver task is answered by the callback a side-channel request of its task would reach: the owning call's, then the client's, then serve()'s", async () => {
    const asked: string[] = [];
    const answering = (who: string) => (_params: unknown, context: InputContext) => {
      asked.push(`${who}:${context.delivery}:${context.taskId ?? '-'}:${context.toolName ?? '-'}`);
      return accept(who);
    };
    const { server, tasks, create } = await peerRig(
      register,
      { elicitation: answering('serve') },
      { onElicitation: answering('client') },
    );
    creating(server, { taskId: 'tool-1', pollInterval: 60_000 });
    const own = await tasks.callToolAsTask('job', {}, { onElicitation: answering('call') });
    creating(server, { taskId: 'tool-2', pollInterval: 60_000 });
    await tasks.callToolAsTask('job');
    await create({ _meta: { [RELATED]: { taskId: 'tool-1' } } });
    await create({ _meta: { [RELATED]: { taskId: 'tool-2' } } });
    await create({ _meta: { [RELATED]: { taskId: 'unknown-to-us' } } });
    await flush();
    expect(asked).toEqual([
      'call:receiver-task:tool-1:job',
      'client:receiver-task:tool-2:job',
      'client:receiver-task:unknown-to-us:-',
    ]);
    expect(own.taskId).toBe('tool-1');
  });

  it("a receiver task that overtakes the CreateTaskResult of its task ([V7]) waits for that task to be tracked: the owning call's callback answers it", async () => {
    const asked: string[] = [];
    const answering = (who: string) => (_params: unknown, context: InputContext) => {
      asked.push(`${who}:${context.delivery}:${context.taskId ?? '-'}:${context.toolName ?? '-'}`);
      return accept(who);
    };
    const { server, tasks } = await peerRig(register, { elicitation: answering('serve') });
    let receiverReply: Promise<Json> | undefined;
    server.on('tools/call', (_params, ctx) => {
      // Sent before the reply: the receiver's request reaches the client first.
      receiverReply = server.request('elicitation/create', {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: {} },
        task: {},
        _meta: { [RELATED]: { taskId: 'tool-1' } },
      });
      setTimeout(() => ctx.reply(server.tasks.createResult({ taskId: 'tool-1', pollInterval: 60_000 })), 5);
      return NO_REPLY;
    });
    const own = await tasks.callToolAsTask('job', {}, { onElicitation: answering('call') });
    expect((await within(receiverReply!)).result).toMatchObject({ task: { status: 'working' } });
    await flush();
    expect(asked).toEqual(['call:receiver-task:tool-1:job']);
    expect(own.taskId).toBe('tool-1');
  });

  it('a receiver task of a tracked task is cancelled when the call tracking it ends, as its side-channel questions are; not when it is detached', async () => {
    const held = new HeldCallback();
    const { server, tasks, create, ask } = await peerRig(register, { elicitation: held.callback });
    const cancelled: string[] = [];
    tasks.on('cancelled', (metrics) => metrics.role === 'receiver' && cancelled.push(metrics.error.message));
    creating(server, { taskId: 'tool-1', pollInterval: 60_000 });
    const stop = new AbortController();
    const call = await tasks.callToolAsTask('job', {}, { signal: stop.signal });
    const asked = await create({ _meta: { [RELATED]: { taskId: 'tool-1' } } });
    await flush();
    expect(held.calls[0]?.context.signal.aborted).toBe(false);
    stop.abort();
    await call.result().catch(() => undefined);
    await flush();
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    expect(resultOf(await ask('tasks/get', { taskId: asked.taskId }))).toMatchObject({
      status: 'cancelled',
      statusMessage: 'The client no longer needs the answer',
    });
    expect(server.params('notifications/tasks/status').map((n) => [n.taskId, n.status])).toEqual([
      [asked.taskId, 'cancelled'],
    ]);
    expect(cancelled).toEqual([
      'The receiver task for elicitation/create was cancelled: the call that tracks the server task it belongs to ended',
    ]);
    // A detached call keeps its receiver tasks running.
    creating(server, { taskId: 'tool-2', pollInterval: 60_000 });
    const detached = await tasks.callToolAsTask('job');
    const kept = await create({ _meta: { [RELATED]: { taskId: 'tool-2' } } });
    await flush();
    detached.detach();
    await flush();
    expect(held.calls.map((c) => [c.context.taskId, c.context.signal.aborted])).toEqual([
      ['tool-1', true],
      ['tool-2', false],
    ]);
    expect(resultOf(await ask('tasks/get', { taskId: kept.taskId })).status).toBe('working');
  });

  it("without a call's or the client's callback, serve()'s answers a receiver task of a tracked task", async () => {
    const asked: string[] = [];
    const { server, tasks, create } = await peerRig(register, {
      elicitation: (_params, context) => {
        asked.push(`serve:${context.taskId ?? '-'}:${context.toolName ?? '-'}`);
        return accept('serve');
      },
    });
    creating(server, { taskId: 'tool-3', pollInterval: 60_000 });
    await tasks.callToolAsTask('job');
    await create({ _meta: { [RELATED]: { taskId: 'tool-3' } } });
    await flush();
    expect(asked).toEqual(['serve:tool-3:job']);
  });

  it("the callback context of a receiver task names the server task it belongs to and this client's handle of it", async () => {
    const contexts: InputContext[] = [];
    const { ask } = await peerRig(register, {
      elicitation: (_p, context) => {
        contexts.push(context);
        return accept('x');
      },
    });
    await ask('elicitation/create', {
      message: 'x',
      task: {},
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'unknown-to-us' } },
    });
    await flush();
    expect(contexts[0]).toMatchObject({
      taskId: 'unknown-to-us',
      delivery: 'receiver-task',
      handle: undefined,
      toolName: undefined,
    });
  });
});
