/**
 * Whatever a host callback does, the server gets an answer: a thrown value of any kind (a
 * null-prototype object, a symbol, an error whose getters throw), a result whose getters throw or
 * that cannot be serialized (a bigint, a cycle). A receiver task ends `failed` with a -32603 and
 * `tasks/result` answers that error ([V15], [V17], [V18]); a plain request is answered with a
 * -32603 too; nothing escapes as an unhandled rejection. The client's transport serializes what
 * it sends, as stdio and Streamable HTTP do. The client side runs on the SDK chosen by `MCP_SDK`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TaskClient, type ServeOptions, type TaskError, type TaskMetrics } from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import { ManualClock, flush, within } from '../helpers.js';
import { HeldCallback, RECEIVER_CAPABILITIES, errorOf, resultOf } from '../support/receiver-rig.js';
import {
  NO_REPLY,
  connectScripted,
  creating,
  type HandlerContext,
  type Json,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import type { SpecTransport } from '../support/sdk.js';
import type * as Run from '../../lib/receiver/run.js';

/** When set, the receiver's callback runner rejects (a bug the last line of defence must contain). */
const broken: { reason: unknown } = { reason: undefined };
vi.mock('../../lib/receiver/run.js', async (importOriginal) => {
  const original = await importOriginal<typeof Run>();
  return {
    ...original,
    runCallback: (...args: Parameters<typeof original.runCallback>) =>
      broken.reason === undefined ? original.runCallback(...args) : Promise.reject(broken.reason),
  };
});

/**
 * What the client's transport does with a message it is given (none: sends it): `refuse` rejects
 * it unsent; `hold` delivers it at once but settles its send only when the test calls `release`
 * (a Streamable HTTP POST whose response is still on its way): resolved, or rejected with the
 * error given (the POST failed after all).
 */
/** The `_meta` key that ties a request to the task it belongs to. */
const RELATED = 'io.modelcontextprotocol/related-task';

const sends: {
  refuse?: (message: Json) => boolean;
  hold?: (message: Json) => boolean;
  release: Array<(failure?: Error) => void>;
} = { release: [] };

const cleanups: Array<() => Promise<void>> = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  broken.reason = undefined;
  sends.refuse = undefined;
  sends.hold = undefined;
  sends.release = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
  process.off('unhandledRejection', onUnhandled);
});

/**
 * Makes `transport.send` serialize each message first, as a real transport does (a bigint throws),
 * then do what {@link sends} says.
 */
function serializing(transport: SpecTransport): SpecTransport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      return Promise.reject(error);
    }
    const copy = JSON.parse(text) as Json;
    if (sends.refuse?.(copy) === true) return Promise.reject(new Error('the transport refused it'));
    const sent = send(copy as never, options);
    if (sends.hold?.(copy) !== true) return sent;
    return new Promise((resolve, reject) =>
      sends.release.push(
        (failure) => void sent.then(() => (failure === undefined ? resolve() : reject(failure)), reject),
      ),
    );
  };
  return transport;
}

/** The task a reply's result names in its related-task `_meta`, if any. */
const relatedTaskOf = (result: unknown): unknown =>
  (((result as Json | undefined)?._meta as Json | undefined)?.[RELATED] as Json | undefined)?.taskId;

/** True for a `CreateTaskResult` reply. */
const isCreateTaskResult = (message: Json): boolean =>
  typeof message.result === 'object' && message.result !== null && (message.result as Json).task !== undefined;

/** A TaskClient serving `serve`, over a serializing transport, to a scripted requestor. */
async function rig(serve: ServeOptions, scripted: ScriptedServerOptions = {}) {
  const clock = new ManualClock();
  const pair = await connectScripted({
    ...scripted,
    now: clock.now,
    clientOptions: { capabilities: RECEIVER_CAPABILITIES },
    wrap: serializing,
  });
  const tasks = new TaskClient(pair.client, { clock, serve: taskReceiver(serve) });
  const errors: TaskError[] = [];
  const failed: TaskMetrics[] = [];
  tasks.on('error', (error) => errors.push(error));
  tasks.on('failed', (metrics) => failed.push(metrics));
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  const ask = (method: string, params: Json = {}): Promise<Json> =>
    within(pair.server.request(method, params), 3_000, method);
  const form = { message: 'Your name?', requestedSchema: { type: 'object', properties: {} } };
  /** Creates a receiver task, lets its callback run, and returns its `tasks/get` and `tasks/result` replies. */
  const runTask = async (): Promise<{ task: Json; result: Json }> => {
    const created = resultOf(await ask('elicitation/create', { ...form, task: {} }));
    const taskId = (created.task as Json).taskId;
    await flush();
    const task = resultOf(await ask('tasks/get', { taskId }));
    return { task, result: await ask('tasks/result', { taskId }) };
  };
  return { server: pair.server, tasks, errors, failed, ask, form, runTask };
}

describe('a receiver task whose callback misbehaves', () => {
  it('a result whose getter throws: the task fails with -32603 and tasks/result answers it ([V15], [V18])', async () => {
    const answer = {
      action: 'accept',
      get content(): never {
        throw new Error('boom from getter');
      },
    };
    const { runTask, tasks, failed, server } = await rig({ elicitation: () => answer as never });
    const { task, result } = await runTask();
    expect(task).toMatchObject({
      status: 'failed',
      statusMessage: expect.stringContaining('boom from getter') as unknown,
    });
    expect(errorOf(result)).toMatchObject({
      code: -32603,
      message: expect.stringContaining('boom from getter') as unknown,
    });
    expect(tasks.receiver?.running).toBe(0);
    expect(failed.map((m) => m.role)).toEqual(['receiver']);
    expect(server.params('notifications/tasks/status').map((n) => n.status)).toEqual(['failed']);
    expect(unhandled).toEqual([]);
  });

  it('a thrown null-prototype object, symbol, revoked proxy or error with throwing getters: -32603, never a crash ([V18])', async () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwables: Array<[string, () => unknown]> = [
      ['null-prototype object', () => Object.assign(Object.create(null) as object, { reason: 'user closed dialog' })],
      ['symbol', () => Symbol('nope')],
      ['revoked proxy', () => revoked.proxy],
      [
        'error whose message getter throws',
        () =>
          Object.defineProperty(new Error('hidden'), 'message', {
            get: () => {
              throw new Error('getter');
            },
          }),
      ],
      [
        'object whose code getter throws',
        () => ({
          message: 'readable',
          get code(): never {
            throw new Error('getter');
          },
        }),
      ],
      ['undefined', () => undefined],
    ];
    for (const [name, make] of throwables) {
      const { runTask, tasks } = await rig({
        elicitation: () => {
          throw make();
        },
      });
      const { task, result } = await runTask();
      expect(task.status, name).toBe('failed');
      expect(typeof task.statusMessage, name).toBe('string');
      const error = errorOf(result);
      expect(error.code, name).toBe(-32603);
      expect(error.message, name).toMatch(/^The elicitation callback failed: /);
      expect(tasks.receiver?.running, name).toBe(0);
    }
    expect(unhandled).toEqual([]);
  });

  it('a thrown DOMException (an AbortError, code 20; a TimeoutError, code 23) is -32603: its code is no JSON-RPC code', async () => {
    const signal = AbortSignal.timeout(0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const throwables: Array<[string, unknown]> = [
      ['AbortError', new DOMException('This operation was aborted', 'AbortError')],
      ['TimeoutError', signal.reason],
      ['abort() reason', AbortSignal.abort().reason],
    ];
    for (const [name, thrown] of throwables) {
      expect((thrown as { code?: unknown }).code, name).toBeGreaterThan(0);
      const { runTask } = await rig({
        elicitation: () => {
          throw thrown;
        },
      });
      const { task, result } = await runTask();
      expect(task.status, name).toBe('failed');
      expect(errorOf(result), name).toEqual({
        code: -32603,
        message: `The elicitation callback failed: ${(thrown as Error).message}`,
      });
    }
    // The same on a plain request: the callback's DOMException is a -32603 there too.
    const { ask, form } = await rig({
      elicitation: () => {
        throw new DOMException('This operation was aborted', 'AbortError');
      },
    });
    expect(errorOf(await ask('elicitation/create', form)).code).toBe(-32603);
    expect(unhandled).toEqual([]);
  });

  it('a thrown { code, message } with data that cannot be sent keeps its code and message, without the data ([V17])', async () => {
    const { runTask } = await rig({
      elicitation: () => {
        throw Object.assign(new Error('user rejected'), { code: -1, data: { n: 10n } });
      },
    });
    const { result } = await runTask();
    const error = errorOf(result);
    expect(error.code).toBe(-1);
    expect(error.message).toMatch(/^user rejected \(its data was left out: /);
    expect((result.error as Json).data).toBeUndefined();
    expect(unhandled).toEqual([]);
  });

  it('a result that cannot be serialized (a bigint, a cycle) fails the task with -32603 instead of completing it ([V15], [V17], [V18])', async () => {
    const cyclic: Record<string, unknown> = { name: 'Ada' };
    cyclic.self = cyclic;
    for (const content of [{ n: 10n }, cyclic]) {
      const { runTask, server, failed } = await rig({ elicitation: () => ({ action: 'accept', content }) as never });
      const { task, result } = await runTask();
      expect(task.status).toBe('failed');
      const error = errorOf(result);
      expect(error.code).toBe(-32603);
      expect(error.message).toMatch(
        /^The elicitation callback returned an invalid result: serializing it as JSON threw: /,
      );
      // Never announced as completed first.
      expect(server.params('notifications/tasks/status').map((n) => n.status)).toEqual(['failed']);
      expect(failed).toHaveLength(1);
    }
    expect(unhandled).toEqual([]);
  });

  it('a completed result is what the callback answered when it answered: later changes are not sent ([V17])', async () => {
    const content: Record<string, unknown> = { name: 'Ada' };
    const { runTask } = await rig({ elicitation: () => ({ action: 'accept', content }) as never });
    const pending = runTask();
    await flush();
    content.name = 'changed';
    const { task, result } = await pending;
    expect(task.status).toBe('completed');
    expect(resultOf(result)).toMatchObject({ action: 'accept', content: { name: 'Ada' } });
  });

  it('last line of defence: a run that rejects anyway fails the task with -32603 and is reported on error ([V15], [V18])', async () => {
    const { runTask, errors, tasks } = await rig({ elicitation: () => ({ action: 'decline' }) });
    broken.reason = Object.create(null) as object;
    const { task, result } = await runTask();
    expect(task.status).toBe('failed');
    expect(errorOf(result)).toMatchObject({
      code: -32603,
      message: expect.stringContaining('failed unexpectedly') as unknown,
    });
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringContaining('The receiver task for elicitation/create failed unexpectedly'),
    ]);
    expect(tasks.receiver?.running).toBe(0);
    expect(unhandled).toEqual([]);
  });
});

describe('a CreateTaskResult the transport refuses or has not taken yet ([V14])', () => {
  it('one the transport refuses: the server gets -32603 instead, the task is withdrawn and its callback never runs', async () => {
    const held = new HeldCallback();
    const { ask, form, tasks, server } = await rig({ elicitation: held.callback });
    const events: string[] = [];
    tasks.on('cancelled', (metrics) => events.push(`cancelled:${metrics.error.message}`));
    tasks.on('settled', (metrics) => events.push(`settled:${metrics.outcome}`));
    sends.refuse = isCreateTaskResult;
    const error = errorOf(await ask('elicitation/create', { ...form, task: {} }));
    expect(error).toEqual({
      code: -32603,
      message: 'The reply to elicitation/create could not be sent: the transport refused it',
    });
    await flush();
    expect(held.calls).toEqual([]);
    // The refused answer may still have reached the server (a POST that failed after the server
    // read it): the server is told the task was cancelled, and the task stays to answer for itself.
    expect(tasks.receiver?.size).toBe(1);
    expect(server.params('notifications/tasks/status').map((n) => n.status)).toEqual(['cancelled']);
    expect(events).toEqual([
      'cancelled:The receiver task for elicitation/create was withdrawn before its elicitation callback ran: its CreateTaskResult could not be sent',
      'settled:cancelled',
    ]);
    const taskId = server.params('notifications/tasks/status')[0]?.taskId;
    expect(resultOf(await ask('tasks/get', { taskId })).status).toBe('cancelled');
    expect(unhandled).toEqual([]);
  });

  it('the call that owns the task ends while its answer is on the way: the task is cancelled, and no other callback gets the question', async () => {
    const held = new HeldCallback();
    const { ask, form, tasks, server } = await rig(
      { elicitation: held.callback },
      { tools: [{ name: 'job', taskSupport: 'required' }] },
    );
    creating(server, { taskId: 'tool-1', pollInterval: 60_000 });
    const stop = new AbortController();
    const call = await tasks.callToolAsTask('job', {}, { signal: stop.signal });
    sends.hold = isCreateTaskResult;
    const asked = resultOf(
      await ask('elicitation/create', { ...form, task: {}, _meta: { [RELATED]: { taskId: 'tool-1' } } }),
    ).task as Json;
    stop.abort();
    await call.result().catch(() => undefined);
    sends.release.splice(0).forEach((release) => release());
    await flush();
    expect(held.calls).toEqual([]);
    expect(resultOf(await ask('tasks/get', { taskId: asked.taskId })).status).toBe('cancelled');
  });

  it("a request that overtook its task's CreateTaskResult ([V7]) is routed when its wait ends: the call ends before the transport took the answer, its task is cancelled and no callback gets the question", async () => {
    const served = new HeldCallback();
    const own = new HeldCallback();
    const { ask, form, tasks, server } = await rig(
      { elicitation: served.callback },
      { tools: [{ name: 'job', taskSupport: 'required' }] },
    );
    let toolCall: HandlerContext | undefined;
    server.on('tools/call', (_params, ctx) => {
      toolCall = ctx;
      return NO_REPLY;
    });
    const stop = new AbortController();
    const calling = tasks.callToolAsTask('job', {}, { signal: stop.signal, onElicitation: own.callback });
    await flush();
    expect(toolCall).toBeDefined();
    // The server asks before it answers tools/call; our CreateTaskResult R1 is on its way (held).
    sends.hold = isCreateTaskResult;
    const asked = resultOf(
      await ask('elicitation/create', { ...form, task: {}, _meta: { [RELATED]: { taskId: 'tool-1' } } }),
    ).task as Json;
    sends.hold = undefined;
    toolCall?.reply(server.tasks.createResult({ taskId: 'tool-1', pollInterval: 60_000 }));
    const call = await calling;
    await flush();
    // The user gives up the call before the transport took R1.
    stop.abort();
    await call.result().catch(() => undefined);
    await flush();
    sends.release.splice(0).forEach((release) => release());
    await flush();
    expect(own.calls).toEqual([]);
    expect(served.calls).toEqual([]);
    expect(resultOf(await ask('tasks/get', { taskId: asked.taskId }))).toMatchObject({
      status: 'cancelled',
      statusMessage: 'The client no longer needs the answer',
    });
    expect(unhandled).toEqual([]);
  });

  it('the callback starts once the transport took the answer; a task the server cancels before then never runs it', async () => {
    const held = new HeldCallback();
    const { ask, form } = await rig({ elicitation: held.callback });
    sends.hold = isCreateTaskResult;
    // The server has the task (its send is still pending here) and cancels it at once.
    const first = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    expect(resultOf(await ask('tasks/cancel', { taskId: first.taskId })).status).toBe('cancelled');
    sends.release.splice(0).forEach((release) => release());
    await flush();
    expect(held.calls).toEqual([]);
    // Not cancelled: the callback starts when the send resolves, not before.
    const second = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    await flush();
    expect(held.calls).toEqual([]);
    expect(resultOf(await ask('tasks/get', { taskId: second.taskId })).status).toBe('working');
    sends.release.splice(0).forEach((release) => release());
    await flush();
    expect(held.calls).toHaveLength(1);
    expect(held.calls[0]?.context).toMatchObject({ delivery: 'receiver-task', receiverTaskId: second.taskId });
    expect(held.calls[0]?.context.signal.aborted).toBe(false);
  });

  it('a tasks/result answer handed to the transport counts as delivered at once: a next question that overtakes the send (an HTTP POST still returning) finds room under maxTasks', async () => {
    const { ask, form } = await rig({ elicitation: () => ({ action: 'decline' }), maxTasks: 1 });
    const task = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    await flush();
    sends.hold = (message) => typeof message.result === 'object' && (message.result as Json).action === 'decline';
    expect(resultOf(await ask('tasks/result', { taskId: task.taskId })).action).toBe('decline');
    const next = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    expect(next.status).toBe('working');
    sends.release.splice(0).forEach((release) => release());
  });

  it('a tasks/result answer the transport refuses is not a delivery: the finished task is kept under maxTasks', async () => {
    const { ask, form } = await rig({ elicitation: () => ({ action: 'decline' }), maxTasks: 1 });
    const task = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    await flush();
    sends.refuse = (message) => typeof message.result === 'object' && (message.result as Json).action === 'decline';
    expect(errorOf(await ask('tasks/result', { taskId: task.taskId })).message).toMatch(
      /^The reply to tasks\/result could not be sent: /,
    );
    await flush();
    expect(errorOf(await ask('elicitation/create', { ...form, task: {} })).message).toContain(
      'Too many receiver tasks',
    );
    sends.refuse = undefined;
    expect(resultOf(await ask('tasks/result', { taskId: task.taskId })).action).toBe('decline');
    await flush();
    expect(resultOf(await ask('elicitation/create', { ...form, task: {} })).task).toBeDefined();
  });

  it('one tasks/result answer the transport refuses does not undo another it took: the finished task still makes room under maxTasks ([V15])', async () => {
    const { ask, form } = await rig({ elicitation: () => ({ action: 'decline' }), maxTasks: 1 });
    const task = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    await flush();
    const isResult = (message: Json): boolean =>
      typeof message.result === 'object' && (message.result as Json).action === 'decline';
    // A: handed to the transport, its send still on its way.
    sends.hold = isResult;
    expect(resultOf(await ask('tasks/result', { taskId: task.taskId })).action).toBe('decline');
    // B: refused by the transport.
    sends.hold = undefined;
    sends.refuse = isResult;
    expect(errorOf(await ask('tasks/result', { taskId: task.taskId })).message).toMatch(
      /^The reply to tasks\/result could not be sent: /,
    );
    await flush();
    // A's send completes: the server has the result.
    sends.refuse = undefined;
    sends.release.splice(0).forEach((release) => release());
    await flush();
    expect(resultOf(await ask('elicitation/create', { ...form, task: {} })).task).toMatchObject({ status: 'working' });
  });

  it('to make room under maxTasks, a task whose tasks/result answer is still in the transport goes only after every one whose answer was sent: a failed POST leaves its result to fetch again ([V15], [V17])', async () => {
    const { ask, form } = await rig({ elicitation: () => ({ action: 'decline' }), maxTasks: 2 });
    const older = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    const newer = resultOf(await ask('elicitation/create', { ...form, task: {} })).task as Json;
    await flush();
    // The older task's answer is in the transport (a POST still on its way); the newer's was sent.
    sends.hold = (message) => relatedTaskOf(message.result) === older.taskId;
    expect(resultOf(await ask('tasks/result', { taskId: older.taskId })).action).toBe('decline');
    sends.hold = undefined;
    expect(resultOf(await ask('tasks/result', { taskId: newer.taskId })).action).toBe('decline');
    await flush();
    // A new question needs room: the newer task, whose result went out, makes it.
    expect(resultOf(await ask('elicitation/create', { ...form, task: {} })).task).toMatchObject({ status: 'working' });
    // The POST that carried the older result fails: the server asks for it again, and gets it.
    sends.release.splice(0).forEach((release) => release(new Error('the POST failed')));
    await flush();
    expect(resultOf(await ask('tasks/result', { taskId: older.taskId })).action).toBe('decline');
    expect(errorOf(await ask('tasks/get', { taskId: newer.taskId })).code).toBe(-32602);
  });
});

describe('a plain request whose callback misbehaves', () => {
  it('an answer that cannot be serialized is answered with -32603, not left waiting', async () => {
    const { ask, form } = await rig({ elicitation: () => ({ action: 'accept', content: { n: 10n } }) as never });
    const error = errorOf(await ask('elicitation/create', form));
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/^The reply to elicitation\/create could not be sent: /);
    expect(unhandled).toEqual([]);
  });

  it('a thrown { code } whose message getter throws is still answered with its code, never a crash', async () => {
    const { ask, form } = await rig({
      elicitation: () => {
        throw Object.defineProperties(
          {},
          {
            code: { value: -32000, enumerable: true },
            message: {
              get: (): never => {
                throw new Error('getter');
              },
            },
          },
        );
      },
    });
    expect(errorOf(await ask('elicitation/create', form))).toEqual({ code: -32000, message: '[object Object]' });
    expect(unhandled).toEqual([]);
  });

  it('an onElicitation callback that throws a null-prototype { code, message }: answered with its code, and reported on error', async () => {
    const clock = new ManualClock();
    const pair = await connectScripted({
      now: clock.now,
      clientOptions: { capabilities: RECEIVER_CAPABILITIES },
      wrap: serializing,
    });
    const tasks = new TaskClient(pair.client, {
      clock,
      onElicitation: () => {
        throw Object.assign(Object.create(null) as object, { code: -32000, message: 'user closed the dialog' });
      },
    });
    const errors: TaskError[] = [];
    tasks.on('error', (error) => errors.push(error));
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const reply = await within(
      pair.server.request('elicitation/create', {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: {} },
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'unknown-task' } },
      }),
      3_000,
      'elicitation/create',
    );
    expect(errorOf(reply)).toMatchObject({ code: -32000, message: 'user closed the dialog' });
    expect(errors.map((e) => e.message)).toEqual(['The elicitation callback failed: user closed the dialog']);
    expect(unhandled).toEqual([]);
  });
});
