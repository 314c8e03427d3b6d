/**
 * Input during a task on the tasks extension, through the public callbacks: the `inputRequests`
 * a `tasks/get` (or a notification) carries go to the call's own callbacks, then the client's, with
 * `ctx.delivery === 'task-update'`; answers go back with `tasks/update`, each key exactly once over
 * the task's life, partial answers allowed ([E3]-[E5]). What happens when a callback throws, is
 * aborted, or is missing, and when a `tasks/update` fails ([E23]). Input before a task exists is
 * in mrtr.spec.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  type TaskError,
  TaskInputError,
  TaskRpcError,
  type TaskNotSupportedError,
  type TaskProtocolError,
  type InputContext,
} from '../../lib/index.js';
import { flush } from '../helpers.js';
import {
  elicitation,
  ErrorCode,
  ExtServer,
  fixtureTools,
  rootsRequest,
  rpcError,
  sampling,
  taskTool,
  textResult,
  type ExtServerOptions,
} from '../support/ext-server/index.js';
import { builtinMethods } from '../support/ext-server/methods.js';
import {
  ACCEPT,
  closeRigs,
  deferred,
  extRig,
  ManualClock,
  sdkV2Client,
  secondClient,
  settle,
  type ExtRig,
  type ExtRigOptions,
} from './support.js';

afterEach(closeRigs);

function manual(options: ExtServerOptions = {}): ExtServerOptions {
  return {
    pollIntervalMs: 100,
    notifications: 'off',
    ...options,
    tools: [taskTool('manual', { advance: 'manual' }), ...(options.tools ?? [])],
  };
}

/**
 * Has `rig`'s server ask a new `manual` task `requests`, and checks that the task is ended as one
 * nobody here answers ([E31]): settled, `result()` rejecting with a `TaskNotSupportedError` of
 * `feature` whose message matches `says`, one `tasks/cancel`, nothing answered.
 */
async function expectEndedUnanswered(
  rig: ExtRig,
  requests: Record<string, unknown>,
  feature: TaskNotSupportedError['feature'],
  says: RegExp,
): Promise<void> {
  const handle = await rig.tasks.callToolAsTask('manual');
  const result = handle.result();
  result.catch(() => {});
  rig.server.tasks.requestInput(handle.taskId!, requests as never);
  await rig.clock.advance(200);
  await flush();
  expect(handle.settled).toBe(true);
  const error = (await result.catch((e: unknown) => e)) as TaskNotSupportedError;
  expect(error.name).toBe('TaskNotSupportedError');
  expect(error.feature).toBe(feature);
  expect(error.message).toMatch(says);
  expect(rig.server.count('tasks/cancel')).toBe(1);
  expect(rig.server.count('tasks/update')).toBe(0);
}

describe('input during a task ([E3]-[E5])', () => {
  it('goes to the call’s own callback first, then the client’s, with delivery "task-update"', async () => {
    const contexts: Array<{ who: string; context: InputContext }> = [];
    const rig = await extRig({
      server: manual(),
      client: {
        onElicitation: (_params, context) => {
          contexts.push({ who: 'client', context });
          return ACCEPT;
        },
      },
    });
    const own = await rig.tasks.callToolAsTask(
      'confirm_delete',
      { filename: 'own' },
      {
        onElicitation: (_params, context) => {
          contexts.push({ who: 'call', context });
          return ACCEPT;
        },
      },
    );
    const shared = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'shared' });
    const results = Promise.all([own.result(), shared.result()]);
    await settle(rig, {
      get settled() {
        return own.settled && shared.settled;
      },
    });
    expect((await results).map((r) => r.content)).toEqual([
      textResult('deleted own').content,
      textResult('deleted shared').content,
    ]);
    expect(contexts.map((c) => c.who)).toEqual(['call', 'client']);
    const [first, second] = contexts;
    // Each with its key in the task's inputRequests ([E4]).
    expect(first?.context).toMatchObject({
      delivery: 'task-update',
      key: 'confirm',
      taskId: own.taskId,
      toolName: 'confirm_delete',
    });
    expect(first?.context.handle).toBe(own);
    expect(second?.context).toMatchObject({
      delivery: 'task-update',
      key: 'confirm',
      taskId: shared.taskId,
      toolName: 'confirm_delete',
    });
    expect(second?.context.handle).toBe(shared);
  });

  it('answers with tasks/update { taskId, inputResponses } by key, and the request params reach the callback as sent', async () => {
    const seen: unknown[] = [];
    const rig = await extRig({ server: manual(), client: { onElicitation: (params) => (seen.push(params), ACCEPT) } });
    const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'b.txt' });
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('deleted b.txt').content);
    expect(seen).toEqual([elicitation('Delete b.txt?', { confirm: { type: 'boolean' } }).params]);
    expect(rig.server.params('tasks/update').map(({ _meta, ...rest }) => rest)).toEqual([
      { taskId: handle.taskId, inputResponses: { confirm: ACCEPT } },
    ]);
  });

  it('answers each key exactly once however many polls repeat it ([E4])', async () => {
    const slow = deferred();
    const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
    await rig.clock.advance(1_000);
    expect(rig.server.count('tasks/get')).toBe(10);
    expect(slow.calls).toHaveLength(1);
    slow.calls[0]?.answer(ACCEPT);
    await rig.clock.advance(1_000);
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ q: ACCEPT }]);
    expect(slow.calls).toHaveLength(1);
  });

  it('sends partial answers as each is ready; the task waits for the rest ([E5])', async () => {
    const slow = deferred();
    const rig = await extRig({ server: manual({ tools: [] }), client: { onElicitation: slow.callback } });
    const handle = await rig.tasks.callToolAsTask('multi_input');
    const result = handle.result();
    await rig.clock.advance(1_000);
    expect(slow.calls.map((c) => c.params.message)).toEqual(['Your name?', 'Proceed?']);
    slow.calls[0]?.answer({ action: 'accept', content: { name: 'Ada' } });
    await rig.clock.advance(300);
    const taskId = handle.taskId!;
    expect(rig.server.tasks.inspect(taskId).updates).toEqual([
      { name: { action: 'accept', content: { name: 'Ada' } } },
    ]);
    expect(rig.server.tasks.detailed(taskId)).toMatchObject({
      status: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    expect(handle.task?.status).toBe('input_required');
    slow.calls[1]?.answer(ACCEPT);
    await settle(rig, handle);
    expect((await result).structuredContent).toEqual({
      answers: { name: { action: 'accept', content: { name: 'Ada' } }, confirm: ACCEPT },
    });
    expect(rig.server.tasks.inspect(taskId).updates).toHaveLength(2);
    expect(slow.calls).toHaveLength(2);
  });

  it('asks again only for keys it has not seen when the task asks a second time', async () => {
    const messages: string[] = [];
    const rig = await extRig({
      server: manual(),
      client: { onElicitation: (params) => (messages.push(String(params.message)), ACCEPT) },
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { first: elicitation('First?', {}) });
    await rig.clock.advance(500);
    rig.server.tasks.requestInput(handle.taskId!, { second: elicitation('Second?', {}) });
    await rig.clock.advance(500);
    expect(messages).toEqual(['First?', 'Second?']);
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ first: ACCEPT }, { second: ACCEPT }]);
  });

  it("reports a key the server reuses for a different request ([E4]: keys are unique over a task's life) as a TaskProtocolError, once, without asking it again", async () => {
    const asked: string[] = [];
    const rig = await extRig({
      server: manual(),
      client: { onElicitation: (params) => (asked.push(params.message), ACCEPT) },
    });
    const get = builtinMethods(rig.server)['tasks/get']!;
    let reuse = false;
    // A deviant server: its tasks/get lists the answered key "q" again, for another question.
    rig.server.on('tasks/get', async (params, ctx) => {
      const reply = (await get(params, ctx)) as Record<string, unknown>;
      return reuse ? { ...reply, status: 'input_required', inputRequests: { q: elicitation('Second?', {}) } } : reply;
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('First?', {}) });
    // Polls repeat the same request under the same key: that is no reuse.
    await rig.clock.advance(300);
    expect(rig.server.count('tasks/update')).toBe(1);
    reuse = true;
    await rig.clock.advance(1_000);
    expect(asked).toEqual(['First?']);
    expect(rig.server.count('tasks/update')).toBe(1);
    expect(errors).toHaveLength(1);
    const [error] = errors as [TaskProtocolError];
    expect(error.name).toBe('TaskProtocolError');
    expect(error).toMatchObject({ method: 'tasks/get', taskId: handle.taskId, toolName: 'manual' });
    expect(error.message).toBe(
      'The server reused the input request key "q" for a different request (keys are unique over a task\'s life); it is not asked again, and no answer is sent under that key',
    );
    // The task goes on, and ends the way the server says.
    reuse = false;
    rig.server.tasks.complete(handle.taskId!, textResult('done'));
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('done').content);
  });

  describe('a key the server reuses for a different request gets no answer meant for the first ([E4])', () => {
    /** A rig whose tasks/get lists key "q" for "Second?" once `reuse` is set. */
    async function reusing(client: ExtRigOptions['client']) {
      const rig = await extRig({ server: manual(), client });
      const get = builtinMethods(rig.server)['tasks/get']!;
      const state = { reuse: false };
      rig.server.on('tasks/get', async (params, ctx) => {
        const reply = (await get(params, ctx)) as Record<string, unknown>;
        return state.reuse
          ? { ...reply, status: 'input_required', inputRequests: { q: elicitation('Second?', {}) } }
          : reply;
      });
      rig.tasks.on('error', () => {});
      return { rig, state };
    }

    it('an answer still being given when the key changes is not sent', async () => {
      const asked = deferred();
      const { rig, state } = await reusing({ onElicitation: asked.callback });
      const handle = await rig.tasks.callToolAsTask('manual');
      rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('First?', {}) });
      await rig.clock.advance(150);
      expect(asked.calls.map((c) => c.params.message)).toEqual(['First?']);
      state.reuse = true;
      await rig.clock.advance(150);
      // The user answers the first question after the server put another under its key.
      asked.calls[0]!.answer(ACCEPT);
      await rig.clock.advance(300);
      expect(rig.server.count('tasks/update')).toBe(0);
      expect(asked.calls).toHaveLength(1);
    });

    it('an answer kept after a failed tasks/update is dropped when the key changes, not sent again under it', async () => {
      const { rig, state } = await reusing({ onElicitation: () => ACCEPT });
      const normal = builtinMethods(rig.server)['tasks/update']!;
      let fail = true;
      rig.server.on('tasks/update', (params, ctx) => {
        if (!fail) return normal(params, ctx);
        fail = false;
        throw rpcError(ErrorCode.InternalError, 'transient db error');
      });
      const handle = await rig.tasks.callToolAsTask('manual');
      rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('First?', {}) });
      await rig.clock.advance(150);
      expect(rig.server.count('tasks/update')).toBe(1);
      state.reuse = true;
      await rig.clock.advance(500);
      // Before, the next poll sent the kept answer to "First?" again, under the key now naming "Second?".
      expect(rig.server.count('tasks/update')).toBe(1);
    });

    it('a prompt of the first question dismissed unanswered when the key is withdrawn leaves no answer under it: listed again, the second question is asked, and its answer sent ([E4], [E5])', async () => {
      const asked = deferred();
      const rig = await extRig({ server: manual(), client: { onElicitation: asked.callback } });
      const get = builtinMethods(rig.server)['tasks/get']!;
      let view: 'store' | 'second' | 'none' = 'store';
      rig.server.on('tasks/get', async (params, ctx) => {
        const reply = (await get(params, ctx)) as Record<string, unknown>;
        if (view === 'store') return reply;
        const { inputRequests: _asked, ...task } = reply;
        return view === 'none'
          ? { ...task, status: 'working' }
          : { ...task, status: 'input_required', inputRequests: { q: elicitation('Second?', {}) } };
      });
      rig.tasks.on('error', () => {});
      const handle = await rig.tasks.callToolAsTask('manual');
      rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('First?', {}) });
      await rig.clock.advance(150);
      view = 'second';
      await rig.clock.advance(100);
      expect(asked.calls.map((c) => c.params.message)).toEqual(['First?']);
      view = 'none';
      await rig.clock.advance(100);
      expect(asked.calls[0]!.context.signal.aborted).toBe(true);
      view = 'second';
      await rig.clock.advance(100);
      expect(asked.calls.map((c) => c.params.message)).toEqual(['First?', 'Second?']);
      asked.calls[1]!.answer(ACCEPT);
      await rig.clock.advance(100);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ q: ACCEPT }]);
    });
  });

  it("[E4] a listing that only stamps the request's _meta anew (a trace context per poll) is the same request: no reuse reported, asked once", async () => {
    const asked: string[] = [];
    let answer: (() => void) | undefined;
    // The answer is held, so the server lists the question on every poll meanwhile.
    const rig = await extRig({
      server: manual(),
      client: {
        onElicitation: (params) => {
          asked.push(params.message);
          return new Promise((resolve) => (answer = () => resolve(ACCEPT)));
        },
      },
    });
    const get = builtinMethods(rig.server)['tasks/get']!;
    let stamp = 0;
    rig.server.on('tasks/get', async (params, ctx) => {
      const reply = (await get(params, ctx)) as Record<string, unknown>;
      const listed = reply.inputRequests as Record<string, { params: Record<string, unknown> }> | undefined;
      if (listed === undefined) return reply;
      const stamped = Object.fromEntries(
        Object.entries(listed).map(([key, request]) => {
          stamp += 1;
          return [key, { ...request, params: { ...request.params, _meta: { traceparent: `00-${stamp}` } } }];
        }),
      );
      return { ...reply, inputRequests: stamped };
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('First?', {}) });
    await rig.clock.advance(1_000);
    expect(stamp).toBeGreaterThan(1);
    expect(asked).toEqual(['First?']);
    expect(errors).toEqual([]);
    answer?.();
    await rig.clock.advance(300);
    expect(rig.server.count('tasks/update')).toBe(1);
    rig.server.tasks.complete(handle.taskId!, textResult('done'));
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('done').content);
  });

  it('answers sampling requests with onSampling', async () => {
    const rig = await extRig({
      server: manual(),
      client: {
        onSampling: (_params, context) => ({
          role: 'assistant',
          content: { type: 'text', text: `one line (${context.delivery})` },
          model: 'test-model',
        }),
      },
    });
    const handle = await rig.tasks.callToolAsTask('summarize');
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('summary: one line (task-update)').content);
  });

  describe('a request the server withdraws while its callback is still answering (no longer outstanding)', () => {
    // The extension: each key of a tasks/update must be one the task currently has outstanding, and
    // a task that leaves input_required, or lists other keys, has withdrawn (superseded) the rest
    // ([E5]: answers go for pending keys only). A late answer is not sent for a withdrawn key.
    it('sends no tasks/update for a key the task stopped listing, and still answers the key it asks for instead', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(300);
      expect(slow.calls).toHaveLength(1);
      // The server withdraws q (back to working), then asks r instead; both seen by polls.
      rig.server.tasks.update(taskId, { status: 'working' });
      await rig.clock.advance(300);
      rig.server.tasks.requestInput(taskId, { r: elicitation('R?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(300);
      expect(slow.calls.map((c) => c.params.message)).toEqual(['Q?', 'R?']);
      slow.calls[0]?.answer(ACCEPT);
      await rig.clock.advance(300);
      expect(rig.server.count('tasks/update')).toBe(0);
      slow.calls[1]?.answer(ACCEPT);
      await rig.clock.advance(300);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ r: ACCEPT }]);
      expect(rig.server.tasks.detailed(taskId)).toMatchObject({ status: 'working' });
      const result = handle.result();
      rig.server.tasks.complete(taskId, textResult('done'));
      await settle(rig, handle);
      expect((await result).content).toEqual(textResult('done').content);
    });

    it('sends nothing for a key withdrawn while the task still waits for another one', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, {
        a: elicitation('A?', { confirm: { type: 'boolean' } }),
        b: elicitation('B?', { confirm: { type: 'boolean' } }),
      });
      await rig.clock.advance(300);
      expect(slow.calls).toHaveLength(2);
      // The server replaces the whole question: a and b are superseded by c.
      rig.server.tasks.update(taskId, { status: 'working' });
      rig.server.tasks.requestInput(taskId, { c: elicitation('C?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(300);
      expect(slow.calls.map((c) => c.params.message)).toEqual(['A?', 'B?', 'C?']);
      slow.calls[0]?.answer(ACCEPT);
      slow.calls[2]?.answer(ACCEPT);
      slow.calls[1]?.answer(ACCEPT);
      await rig.clock.advance(300);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ c: ACCEPT }]);
    });

    it('dismisses the prompt of a request the task stops listing in a newer snapshot: its ctx.signal aborts, nothing is sent, and the task goes on ([E5], [E31])', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(100);
      expect(slow.calls).toHaveLength(1);
      const asked = slow.calls[0]!.context.signal;
      await rig.clock.advance(300);
      expect(asked.aborted).toBe(false);
      // The server gives up on its question (its own timeout, say) and carries on without it.
      rig.server.tasks.update(taskId, { status: 'working', statusMessage: 'going on without an answer' });
      await rig.clock.advance(100);
      expect(handle.task?.status).toBe('working');
      // As a request the server cancels: the answer is no longer wanted.
      expect(asked.aborted).toBe(true);
      expect(String((asked.reason as Error).message)).toMatch(/server withdrew the request/);
      slow.calls[0]?.answer(ACCEPT);
      await rig.clock.advance(300);
      expect(rig.server.count('tasks/update')).toBe(0);
      expect(handle.settled).toBe(false);
      const result = handle.result();
      rig.server.tasks.complete(taskId, textResult('done'));
      await settle(rig, handle);
      expect((await result).content).toEqual(textResult('done').content);
    });

    it('dismisses only the prompts of the keys a newer snapshot replaced, while the task waits for another key ([E5], [E31])', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
      const normal = builtinMethods(rig.server)['tasks/get']!;
      let withdrawB = false;
      rig.server.on('tasks/get', async (params, ctx) => {
        const reply = (await normal(params, ctx)) as Record<string, unknown>;
        if (!withdrawB) return reply;
        const { b: _b, ...rest } = reply.inputRequests as Record<string, unknown>;
        return { ...reply, inputRequests: rest };
      });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, {
        a: elicitation('A?', { confirm: { type: 'boolean' } }),
        b: elicitation('B?', { confirm: { type: 'boolean' } }),
      });
      await rig.clock.advance(100);
      expect(slow.calls).toHaveLength(2);
      // b is superseded by c, in a newer snapshot; a stays outstanding.
      rig.server.tasks.requestInput(taskId, { c: elicitation('C?', { confirm: { type: 'boolean' } }) });
      withdrawB = true;
      await rig.clock.advance(100);
      expect(slow.calls.map((call) => call.params.message)).toEqual(['A?', 'B?', 'C?']);
      expect(slow.calls.map((call) => call.context.signal.aborted)).toEqual([false, true, false]);
      slow.calls[0]?.answer(ACCEPT);
      slow.calls[2]?.answer(ACCEPT);
      await rig.clock.advance(100);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ a: ACCEPT }, { c: ACCEPT }]);
    });

    it('dismisses the prompt of a read no newer than the one that asked that stops listing its key (a tie goes to the later arrival, [A11]), and asks again when the next poll lists the key after all (that read was a lagging one): the answer reaches the server ([E4], [E5])', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
      const normal = builtinMethods(rig.server)['tasks/get']!;
      let lag = false;
      rig.server.on('tasks/get', async (params, ctx) => {
        const reply = (await normal(params, ctx)) as Record<string, unknown>;
        if (!lag) return reply;
        lag = false;
        // A replica behind the task: still working, with the very same lastUpdatedAt.
        const { inputRequests: _input, ...behind } = reply;
        return { ...behind, status: 'working' };
      });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(100);
      expect(slow.calls).toHaveLength(1);
      lag = true;
      await rig.clock.advance(100);
      expect(handle.task?.status).toBe('working');
      // The task as the client now holds it asks nothing: the prompt goes.
      expect(slow.calls[0]?.context.signal.aborted).toBe(true);
      slow.calls[0]?.answer(ACCEPT);
      await flush();
      expect(rig.server.count('tasks/update')).toBe(0);
      const result = handle.result();
      await rig.clock.advance(100);
      // The next read lists q again: it was never answered, so it is asked again ([E4] skips answered keys only).
      expect(slow.calls.map((call) => call.params.message)).toEqual(['Q?', 'Q?']);
      expect(slow.calls[1]?.context.signal.aborted).toBe(false);
      slow.calls[1]?.answer(ACCEPT);
      await rig.clock.advance(100);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ q: ACCEPT }]);
      rig.server.tasks.complete(taskId, textResult('done'));
      await settle(rig, handle);
      expect((await result).content).toEqual(textResult('done').content);
      expect(slow.calls).toHaveLength(2);
    });

    it('dismisses the prompt of a request a whole-seconds server replaces within the same second, while the task waits for the new key: the host that answers one prompt at a time is not stuck ([E5], [A11], D4)', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual({ wholeSeconds: true }), client: { onElicitation: slow.callback } });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, { a: elicitation('A?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(100);
      expect(slow.calls).toHaveLength(1);
      const asked = rig.server.tasks.detailed(taskId).lastUpdatedAt;
      // Within the same second the server takes its question back and asks another one instead.
      rig.server.tasks.update(taskId, { status: 'working' });
      rig.server.tasks.requestInput(taskId, { b: elicitation('B?', { confirm: { type: 'boolean' } }) });
      expect(rig.server.tasks.detailed(taskId).lastUpdatedAt).toBe(asked);
      await rig.clock.advance(100);
      expect(slow.calls.map((call) => call.params.message)).toEqual(['A?', 'B?']);
      // a is no longer asked: its prompt goes at once, not when the task next changes (never, while it waits for b).
      expect(slow.calls.map((call) => call.context.signal.aborted)).toEqual([true, false]);
      expect(String((slow.calls[0]!.context.signal.reason as Error).message)).toMatch(/server withdrew the request/);
      slow.calls[1]?.answer(ACCEPT);
      await rig.clock.advance(100);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ b: ACCEPT }]);
      const result = handle.result();
      rig.server.tasks.complete(taskId, textResult('done'));
      await settle(rig, handle);
      expect((await result).content).toEqual(textResult('done').content);
      expect(slow.calls).toHaveLength(2);
    });

    it('dismisses the prompt of a request a whole-seconds server withdraws within the same second, going back to working, rather than leaving it open until the task next changes ([E5], [A11], D4)', async () => {
      const slow = deferred();
      const rig = await extRig({
        server: manual({ wholeSeconds: true, ttlMs: null }),
        client: { onElicitation: slow.callback },
      });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(100);
      expect(slow.calls).toHaveLength(1);
      rig.server.tasks.update(taskId, { status: 'working' });
      await rig.clock.advance(100);
      expect(handle.task?.status).toBe('working');
      expect(slow.calls[0]?.context.signal.aborted).toBe(true);
      // The task works on for minutes with that timestamp: nothing more is asked or sent.
      for (let i = 0; i < 30; i += 1) await rig.clock.advance(10_000);
      expect(slow.calls).toHaveLength(1);
      expect(rig.server.count('tasks/update')).toBe(0);
      expect(handle.settled).toBe(false);
    });

    it('still sends an answer whose key a terse notification (input_required without inputRequests) left unmentioned', async () => {
      const slow = deferred();
      const rig = await extRig({ server: manual({ notifications: 'on' }), client: { onElicitation: slow.callback } });
      const handle = await rig.tasks.callToolAsTask('manual');
      const taskId = handle.taskId!;
      rig.server.tasks.requestInput(taskId, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
      await rig.clock.advance(300);
      expect(slow.calls).toHaveLength(1);
      rig.server.notifications = 'off';
      const { inputRequests: _input, ...terse } = rig.server.tasks.update(taskId, { statusMessage: 'still waiting' });
      rig.server.notify('notifications/tasks', terse);
      await flush();
      slow.calls[0]?.answer(ACCEPT);
      await rig.clock.advance(300);
      expect(rig.server.params('tasks/update').map((p) => p.inputResponses)).toEqual([{ q: ACCEPT }]);
    });
  });

  it('reports a callback that throws on `error`, once, and does not ask that key again', async () => {
    let calls = 0;
    const thrown = new Error('the user closed the dialog');
    const rig = await extRig({
      server: manual(),
      client: {
        onElicitation: () => {
          calls += 1;
          throw thrown;
        },
      },
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    await rig.clock.advance(1_000);
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TaskInputError);
    expect(errors[0]).toMatchObject({
      name: 'TaskInputError',
      feature: 'elicitation',
      cause: thrown,
      taskId: handle.taskId,
      toolName: 'manual',
      message: 'The elicitation callback failed: the user closed the dialog',
    });
    expect(rig.server.count('tasks/update')).toBe(0);
    // The task waits for an answer; it ends the way the server says.
    rig.server.tasks.complete(handle.taskId!, textResult('went ahead'));
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('went ahead').content);
  });

  it('reports an onSampling callback that rejects as a TaskInputError: feature "sampling", its error as cause', async () => {
    const thrown = new Error('no model today');
    const rig = await extRig({ server: manual(), client: { onSampling: () => Promise.reject(thrown) } });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { s: sampling('Summarise') });
    await rig.clock.advance(1_000);
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error).toBeInstanceOf(TaskInputError);
    expect(error).toMatchObject({
      feature: 'sampling',
      cause: thrown,
      taskId: handle.taskId,
      toolName: 'manual',
      message: 'The sampling callback failed: no model today',
    });
    expect(rig.server.count('tasks/update')).toBe(0);
  });

  it("checks an answer's shape before tasks/update ([E31]): a malformed one is reported as a TaskInputError, nothing is sent for its key, and it is not asked again", async () => {
    let asked = 0;
    const rig = await extRig({
      server: manual(),
      client: {
        // What an untyped caller (JavaScript, or a body read off the network) may return.
        onElicitation: () => (asked++, { action: 'maybe' }) as never,
        onSampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hi' } }) as never,
      },
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}), s: sampling('Summarise') });
    await rig.clock.advance(1_000);
    expect(asked).toBe(1);
    expect(rig.server.count('tasks/update')).toBe(0);
    expect(errors.map((e) => [e.name, (e as TaskInputError).feature, e.message]).sort()).toEqual([
      [
        'TaskInputError',
        'elicitation',
        'The elicitation callback returned an invalid result: action must be "accept", "decline" or "cancel"',
      ],
      ['TaskInputError', 'sampling', 'The sampling callback returned an invalid result: model must be a string'],
    ]);
    expect(errors[0]).toMatchObject({ taskId: handle.taskId, toolName: 'manual' });
  });

  it('sends the valid answers of a snapshot and leaves out only the malformed one ([E5], [E31])', async () => {
    const rig = await extRig({
      server: manual(),
      client: {
        onElicitation: (params) => (params.message === 'Good?' ? ACCEPT : ('yes' as never)),
      },
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { good: elicitation('Good?', {}), bad: elicitation('Bad?', {}) });
    await rig.clock.advance(1_000);
    const updates = rig.server.received('tasks/update');
    expect(updates.map((u) => Object.keys(u.params?.inputResponses as object))).toEqual([['good']]);
    expect(errors.map((e) => e.message)).toEqual([
      'The elicitation callback returned an invalid result: it must be an object',
    ]);
  });

  it('aborts a callback still answering when the task ends, and sends nothing after', async () => {
    const slow = deferred();
    const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    await rig.clock.advance(200);
    const context = slow.calls[0]?.context;
    expect(context?.signal.aborted).toBe(false);
    rig.server.tasks.cancel(handle.taskId!, 'gave up waiting');
    await settle(rig, handle);
    expect(context?.signal.aborted).toBe(true);
    slow.calls[0]?.answer(ACCEPT);
    await rig.clock.advance(1_000);
    expect(rig.server.count('tasks/update')).toBe(0);
    await expect(handle.result()).rejects.toMatchObject({ name: 'TaskCancelledError' });
  });

  it('aborts a callback still answering when a cancel() begins (D10); a cancel that fails leaves the task waiting, and the key it still lists is asked again and answered', async () => {
    const slow = deferred();
    const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    await rig.clock.advance(200);
    expect(slow.calls).toHaveLength(1);
    rig.server.on('tasks/cancel', () => {
      throw rpcError(ErrorCode.InternalError, 'cannot cancel now');
    });
    const cancel = handle.cancel().catch((error: unknown) => error);
    await flush();
    expect(slow.calls[0]?.context.signal.aborted).toBe(true);
    expect(await cancel).toBeInstanceOf(TaskRpcError);
    slow.calls[0]?.answer(ACCEPT);
    await rig.clock.advance(200);
    // Before, the prompt given up for the cancel stayed handed out: never asked again, the task waited.
    expect(slow.calls).toHaveLength(2);
    expect(slow.calls[1]?.context.signal.aborted).toBe(false);
    slow.calls[1]?.answer(ACCEPT);
    await rig.clock.advance(200);
    expect(rig.server.count('tasks/update')).toBe(1);
  });

  it('a cancel the server acknowledged while the task runs on ([E6], D10): the questions it asks later reach no callback, and nothing is answered', async () => {
    const asked = deferred();
    const rig = await extRig({ server: manual(), client: { onElicitation: asked.callback } });
    const handle = await rig.tasks.callToolAsTask('manual');
    // Acknowledged, and the task goes on working (the server stops it when it can, or never).
    rig.server.on('tasks/cancel', () => ({ resultType: 'complete' }));
    const cancelled = await handle.cancel();
    expect(cancelled?.status).toBe('working');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    await rig.clock.advance(2_000);
    // Before, the cancel's end made its questions wanted again: the user was asked, and the
    // answer went out with tasks/update.
    expect(asked.calls).toHaveLength(0);
    expect(rig.server.count('tasks/update')).toBe(0);
  });

  it('ends a task that asks for a request nobody here can answer (roots/list) at once: cancelled on the server, result() rejects with TaskNotSupportedError, nothing answered ([E31])', async () => {
    const rig = await extRig({ server: manual(), client: { onElicitation: () => ACCEPT } });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    result.catch(() => {});
    rig.server.tasks.requestInput(handle.taskId!, { e: elicitation('E?', {}), r: rootsRequest() });
    await rig.clock.advance(200);
    await flush();
    expect(handle.settled).toBe(true);
    const error = (await result.catch((e: unknown) => e)) as TaskNotSupportedError;
    expect(error.name).toBe('TaskNotSupportedError');
    expect(error.feature).toBe('input');
    expect(error.message).toMatch(/roots\/list.*cannot answer.*the remote task was cancelled/);
    expect(rig.server.count('tasks/cancel')).toBe(1);
    expect(rig.server.tasks.inspect(handle.taskId!).cancelRequested).toBe(true);
    // The snapshot's other request is not answered either: the task is over.
    expect(rig.server.count('tasks/update')).toBe(0);
    // Reported on `error` too, once, as soon as it is seen.
    expect(errors.map((e) => [e.name, (e as TaskNotSupportedError).feature])).toEqual([
      ['TaskNotSupportedError', 'input'],
    ]);
  });

  it.each([
    {
      what: 'an entry with no method (not a request)',
      request: { params: { message: 'E?' } },
      named: /an input request without a method/,
    },
    {
      what: "a method named after one of Object's own (not a kind of request)",
      request: { method: 'constructor', params: { messages: [], maxTokens: 1 } },
      named: /constructor.*cannot answer/,
    },
  ])(
    'ends a task whose inputRequests has $what like one nobody answers, rather than skipping it and waiting ([E31])',
    async ({ request, named }) => {
      const asked: string[] = [];
      const rig = await extRig({
        server: manual(),
        client: {
          onElicitation: () => (asked.push('elicitation'), ACCEPT),
          onSampling: () => (
            asked.push('sampling'),
            { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }
          ),
        },
      });
      rig.tasks.on('error', () => {});
      await expectEndedUnanswered(rig, { bad: request }, 'input', named);
      expect(asked).toEqual([]);
    },
  );

  it.each([
    {
      what: 'whose params break the schema (no message)',
      request: {
        method: 'elicitation/create',
        params: { mode: 'form', requestedSchema: { type: 'object', properties: {} } },
      },
      says: /elicitation\/create.*Invalid elicitation request: message must be a string.*the remote task was cancelled/,
    },
    {
      what: 'in a mode the client did not declare (url)',
      request: {
        method: 'elicitation/create',
        params: { mode: 'url', message: 'Sign in', url: 'https://example.com/a', elicitationId: 'e1' },
      },
      says: /elicitation\/create.*Client does not support URL-mode elicitation requests.*the remote task was cancelled/,
    },
  ])(
    'ends a task that asks for an elicitation $what like one nobody answers: the client would refuse it sent on its own, and an answer has no error form ([E31])',
    async ({ request, says }) => {
      const asked: unknown[] = [];
      // connect() declares elicitation: {}, form mode only.
      const rig = await extRig({
        server: manual(),
        client: { onElicitation: (params) => (asked.push(params), ACCEPT) },
      });
      const errors: TaskError[] = [];
      rig.tasks.on('error', (error) => errors.push(error));
      await expectEndedUnanswered(rig, { e: elicitation('E?', {}), bad: request }, 'elicitation', says);
      expect(asked).toEqual([]);
      expect(errors.map((e) => [e.name, (e as TaskNotSupportedError).feature])).toEqual([
        ['TaskNotSupportedError', 'elicitation'],
      ]);
    },
  );

  it('ends a task that asks for a kind no callback here answers (sampling), even when another is answerable ([E31])', async () => {
    const rig = await extRig({ server: manual(), client: { onElicitation: () => ACCEPT } });
    const handle = await rig.tasks.callToolAsTask('manual');
    const result = handle.result();
    result.catch(() => {});
    rig.server.tasks.requestInput(handle.taskId!, { e: elicitation('E?', {}), s: sampling('Summarise') });
    await rig.clock.advance(200);
    await flush();
    const error = (await result.catch((e: unknown) => e)) as TaskNotSupportedError;
    expect(error.name).toBe('TaskNotSupportedError');
    expect(error.feature).toBe('sampling');
    expect(error.message).toMatch(/sampling\/createMessage.*onSampling/);
    expect(rig.server.count('tasks/cancel')).toBe(1);
    expect(rig.server.count('tasks/update')).toBe(0);
  });

  it('ends a task whose elicitation only the host’s own SDK handler would answer: the SDK offers no public way to run it, so it is cancelled at once rather than left waiting ([E31])', async () => {
    const server = new ExtServer(manual({ tools: fixtureTools() }));
    const client = await sdkV2Client(server, { elicitation: {} });
    let hostAsked = 0;
    client.setRequestHandler('elicitation/create', async () => {
      hostAsked += 1;
      return Promise.resolve({ action: 'accept' as const, content: { confirm: true } });
    });
    const clock = new ManualClock();
    const tasks = new TaskClient(client, { clock });
    try {
      const handle = await tasks.callToolAsTask('manual');
      const result = handle.result();
      result.catch(() => {});
      server.tasks.requestInput(handle.taskId!, { e: elicitation('E?', {}) });
      await clock.advance(200);
      await flush();
      expect(handle.settled).toBe(true);
      const error = (await result.catch((e: unknown) => e)) as TaskNotSupportedError;
      expect(error.name).toBe('TaskNotSupportedError');
      expect(error.feature).toBe('elicitation');
      expect(error.message).toMatch(/elicitation\/create.*pass onElicitation/);
      expect(server.count('tasks/cancel')).toBe(1);
      expect(hostAsked).toBe(0);
    } finally {
      await tasks.close();
    }
  });

  it('only reports, never cancels, a task taken up by resume() that asks for what its callbacks do not answer: its creator may answer it ([E31])', async () => {
    const slow = deferred();
    const rig = await extRig({ server: manual(), client: { onElicitation: () => ACCEPT } });
    const own = await rig.tasks.callToolAsTask('manual', {}, { onElicitation: slow.callback });
    const owned = own.result();
    // A dashboard: another client following the task, with no callbacks of its own.
    const dashboard = await secondClient(rig.server, rig.clock);
    const errors: TaskError[] = [];
    dashboard.on('error', (error) => errors.push(error));
    const watched = dashboard.resume(own.toJSON()!);
    const followed = watched.result();
    followed.catch(() => {});
    await rig.clock.advance(0);
    rig.server.tasks.requestInput(own.taskId!, { q: elicitation('Q?', { confirm: { type: 'boolean' } }) });
    await rig.clock.advance(300);
    await flush();
    expect(rig.server.count('tasks/cancel')).toBe(0);
    expect(watched.settled).toBe(false);
    expect(errors.map((e) => [e.name, (e as TaskNotSupportedError).feature])).toEqual([
      ['TaskNotSupportedError', 'elicitation'],
    ]);
    // The creator's callback is asked, and its answer ends the wait for both.
    expect(slow.calls).toHaveLength(1);
    slow.calls[0]?.answer(ACCEPT);
    await rig.clock.advance(300);
    expect(rig.server.tasks.inspect(own.taskId!).updates).toEqual([{ q: ACCEPT }]);
    rig.server.tasks.complete(own.taskId!, textResult('done'));
    await settle(rig, {
      get settled() {
        return own.settled && watched.settled;
      },
    });
    expect((await owned).content).toEqual(textResult('done').content);
    expect((await followed).content).toEqual(textResult('done').content);
    expect(errors).toHaveLength(1);
  });

  /**
   * A call whose task asks (`Early?`, key `q`) in a notification sent before its
   * `CreateTaskResult`, then, with `takenBack`, a second notification of the same second that
   * shows it `working` again; the call's own callback counts what it is asked.
   */
  async function askedEarly(takenBack: boolean) {
    const server = new ExtServer(manual({ tools: fixtureTools() }));
    const create = builtinMethods(server)['tools/call']!;
    server.on('tools/call', async (params, ctx) => {
      const reply = (await create(params, ctx)) as { taskId: string };
      // An untagged notification, before the reply that creates the task.
      const asking = server.tasks.requestInput(reply.taskId, {
        q: elicitation('Early?', { confirm: { type: 'boolean' } }),
      }) as Record<string, unknown>;
      server.notify('notifications/tasks', asking);
      if (takenBack) {
        // Taken back within the same second (the same lastUpdatedAt): the later arrival is the task.
        const { inputRequests: _taken, ...working } = asking;
        server.notify('notifications/tasks', { ...working, status: 'working' });
      }
      return reply;
    });
    // Elicitation declared, but only the call answers it: the client has no callback of its own.
    const client = await sdkV2Client(server, { elicitation: {} });
    const clock = new ManualClock();
    const tasks = new TaskClient(client, { clock });
    const asked: string[] = [];
    const handle = await tasks.callToolAsTask(
      'manual',
      {},
      { onElicitation: (params) => (asked.push(String(params.message)), ACCEPT) },
    );
    handle.result().catch(() => {});
    await clock.advance(0);
    await flush();
    return { server, tasks, handle, asked };
  }

  it('asks the call’s own callback for input that arrived before its CreateTaskResult, rather than ending the task ([E31])', async () => {
    const { server, tasks, handle, asked } = await askedEarly(false);
    try {
      expect(asked).toEqual(['Early?']);
      expect(server.count('tasks/cancel')).toBe(0);
      expect(handle.settled).toBe(false);
      expect(server.tasks.inspect(handle.taskId!).updates).toEqual([{ q: ACCEPT }]);
    } finally {
      await tasks.close();
    }
  });

  it('does not ask a question that a second notification, also before the CreateTaskResult, already withdrew', async () => {
    const { server, tasks, handle, asked } = await askedEarly(true);
    try {
      expect(handle.task?.status).toBe('working');
      expect(asked, 'a prompt no read would ever dismiss').toEqual([]);
      expect(server.count('tasks/update')).toBe(0);
    } finally {
      await tasks.close();
    }
  });

  it('lets a callback still answering after detach() finish: its answer reaches the server (detach leaves the remote task running)', async () => {
    const slow = deferred();
    const rig = await extRig({ server: manual(), client: { onElicitation: slow.callback } });
    const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'kept' });
    await rig.clock.advance(200);
    handle.detach();
    expect(slow.calls[0]?.context.signal.aborted, 'detach does not abort the callback').toBe(false);
    slow.calls[0]?.answer(ACCEPT);
    await rig.clock.advance(200);
    await flush();
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ confirm: ACCEPT }]);
    expect(rig.server.count('tasks/update')).toBe(1);
  });
});

/** `{ "__proto__": value }` as JSON.parse makes it: an own key, as a server's reply carries it. */
function protoKeyed<T>(value: T): Record<string, T> {
  return JSON.parse(`{"__proto__": ${JSON.stringify(value)}}`) as Record<string, T>;
}

/** What a real transport would deliver of `value` (the in-memory pair hands objects over as they are). */
function overTheWire(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

describe('an input key named "__proto__" (keys are the server\'s, [E3]-[E5])', () => {
  const protoTool = taskTool('proto_key', {
    steps: [
      { inputRequests: protoKeyed(elicitation('Proto?', { confirm: { type: 'boolean' } })) },
      { result: ({ answers }) => textResult(Object.hasOwn(answers, '__proto__') ? 'answered' : 'not answered') },
    ],
  });

  it('is asked once and answered with a tasks/update whose inputResponses has it as an own key; the task completes', async () => {
    const asked: unknown[] = [];
    const rig = await extRig({
      server: { pollIntervalMs: 100, notifications: 'off', tools: [protoTool] },
      client: { onElicitation: (params) => (asked.push(params.message), ACCEPT) },
    });
    const handle = await rig.tasks.callToolAsTask('proto_key');
    const result = handle.result().then(
      (value) => value,
      (error: unknown) => error,
    );
    await settle(rig, handle);
    expect(asked).toEqual(['Proto?']);
    const sent = rig.server.params('tasks/update').map((params) => overTheWire(params.inputResponses));
    expect(sent).toHaveLength(1);
    expect(Object.hasOwn(sent[0]!, '__proto__')).toBe(true);
    expect(Object.entries(sent[0]!)).toEqual([['__proto__', ACCEPT]]);
    expect(handle.settled).toBe(true);
    expect(((await result) as { content?: unknown }).content).toEqual(textResult('answered').content);
  });

  it('is sent again, still as an own key, when its first tasks/update failed ([E23])', async () => {
    const rig = await extRig({
      server: { pollIntervalMs: 100, notifications: 'off', tools: [protoTool] },
      client: { onElicitation: () => ACCEPT },
    });
    const normal = builtinMethods(rig.server)['tasks/update']!;
    let first = true;
    rig.server.on('tasks/update', (params, ctx) => {
      if (!first) return normal(params, ctx);
      first = false;
      throw rpcError(ErrorCode.InternalError, 'transient db error');
    });
    rig.tasks.on('error', () => {});
    const handle = await rig.tasks.callToolAsTask('proto_key');
    const result = handle.result().then(
      (value) => value,
      (error: unknown) => error,
    );
    await settle(rig, handle);
    const sent = rig.server.params('tasks/update').map((params) => overTheWire(params.inputResponses));
    expect(sent.map((responses) => Object.entries(responses))).toEqual([
      [['__proto__', ACCEPT]],
      [['__proto__', ACCEPT]],
    ]);
    expect(handle.settled).toBe(true);
    expect(((await result) as { content?: unknown }).content).toEqual(textResult('answered').content);
  });
});

describe('a tasks/update that fails ([E23]: the answer is kept, never lost, and the user is not asked twice, [E4])', () => {
  /** A rig whose `tasks/update` fails with -32603 (non-transient) `failures` times, then works; times of every update kept. */
  async function failingUpdates(failures: number) {
    let calls = 0;
    const rig = await extRig({ server: manual(), client: { onElicitation: () => ((calls += 1), ACCEPT) } });
    const normal = builtinMethods(rig.server)['tasks/update']!;
    const at: number[] = [];
    let left = failures;
    rig.server.on('tasks/update', (params, ctx) => {
      at.push(rig.clock.now());
      if (left-- > 0) throw rpcError(ErrorCode.InternalError, 'transient db error');
      return normal(params, ctx);
    });
    const errors: TaskError[] = [];
    rig.tasks.on('error', (error) => errors.push(error));
    return { rig, at, errors, calls: () => calls };
  }

  it('sends the same answer again when the next poll still lists the key, without asking the callback again; the task completes', async () => {
    const { rig, at, errors, calls } = await failingUpdates(1);
    const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'a.txt' });
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('deleted a.txt').content);
    expect(calls()).toBe(1);
    expect(rig.server.params('tasks/update').map(({ _meta, ...rest }) => rest)).toEqual([
      { taskId: handle.taskId, inputResponses: { confirm: ACCEPT } },
      { taskId: handle.taskId, inputResponses: { confirm: ACCEPT } },
    ]);
    // Paced by polling: the re-send rides on a later poll, not at once.
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(100);
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ confirm: ACCEPT }]);
    expect(errors.map((e) => [e.name, (e as TaskRpcError).method, (e as TaskRpcError).code])).toEqual([
      ['TaskRpcError', 'tasks/update', -32603],
    ]);
  });

  it('does not send a kept answer again once a cancel began: the last look before tasks/cancel carries no tasks/update (D10)', async () => {
    const { rig, at } = await failingUpdates(1);
    const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'c.txt' });
    for (let i = 0; i < 20 && at.length === 0; i += 1) await rig.clock.advance(100);
    expect(at).toHaveLength(1);
    const cancel = handle.cancel();
    await rig.clock.advance(1_000);
    await cancel;
    // Before, the cancel's last look (a poll that still listed the key) sent the kept accept again.
    expect(rig.server.count('tasks/update')).toBe(1);
    expect(rig.server.count('tasks/cancel')).toBe(1);
  });

  it('gives up after a bounded number of sends, one per poll, and fails the task with a TaskRpcError naming the key and the last error', async () => {
    const { rig, at, errors, calls } = await failingUpdates(Infinity);
    const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'b.txt' });
    const result = handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    await settle(rig, handle);
    expect(handle.settled, 'no pending result() without a deadline or ttl').toBe(true);
    const error = await result;
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({
      method: 'tasks/update',
      code: -32603,
      transient: false,
      taskId: handle.taskId,
      toolName: 'confirm_delete',
    });
    expect((error as Error).message).toMatch(
      /input request "confirm" never reached the server: tasks\/update failed 5 times \(last: .*transient db error\)/,
    );
    expect(((error as Error).cause as TaskRpcError).code).toBe(-32603);
    expect(calls()).toBe(1);
    expect(at).toHaveLength(5);
    for (let i = 1; i < at.length; i += 1) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(100);
    expect(errors.filter((e) => e instanceof TaskRpcError && e.method === 'tasks/update')).toHaveLength(5);
    // Nothing goes on after the task settled.
    const polls = rig.server.count('tasks/get');
    await rig.clock.advance(10_000);
    expect(rig.server.count('tasks/update')).toBe(5);
    expect(rig.server.count('tasks/get')).toBe(polls);
  });

  for (const [label, reply] of [
    [
      'a CreateTaskResult',
      {
        resultType: 'task',
        taskId: 'another',
        status: 'working',
        createdAt: '2026-01-01T00:00:00.000Z',
        lastUpdatedAt: '2026-01-01T00:00:00.000Z',
        ttlMs: null,
      },
    ],
    ['an unknown resultType', { resultType: 'bogus' }],
  ] as const) {
    it(`takes ${label} in answer to tasks/update for an invalid response, not an acknowledgement: the answer is sent again ([E24])`, async () => {
      let calls = 0;
      const rig = await extRig({ server: manual(), client: { onElicitation: () => ((calls += 1), ACCEPT) } });
      const normal = builtinMethods(rig.server)['tasks/update']!;
      let first = true;
      rig.server.on('tasks/update', (params, ctx) => {
        if (!first) return normal(params, ctx);
        first = false;
        return reply;
      });
      const errors: TaskError[] = [];
      rig.tasks.on('error', (error) => errors.push(error));
      const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'c.txt' });
      const result = handle.result();
      await settle(rig, handle);
      expect((await result).content).toEqual(textResult('deleted c.txt').content);
      expect(calls).toBe(1);
      expect(rig.server.count('tasks/update')).toBe(2);
      expect(errors.map((e) => [e.name, (e as TaskProtocolError).method])).toEqual([
        ['TaskProtocolError', 'tasks/update'],
      ]);
    });
  }

  it('keeps the answer through a poll that shows input_required without inputRequests (it says nothing of them), and sends it when the next poll lists the key', async () => {
    const { rig, errors } = await failingUpdates(1);
    const get = builtinMethods(rig.server)['tasks/get']!;
    let terse = false;
    rig.server.on('tasks/get', async (params, ctx) => {
      const reply = (await get(params, ctx)) as Record<string, unknown>;
      if (!terse) return reply;
      const { inputRequests: _left, ...rest } = reply;
      return rest;
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    await rig.clock.advance(150);
    expect(rig.server.count('tasks/update')).toBe(1);
    terse = true;
    await rig.clock.advance(300);
    expect(rig.server.count('tasks/update')).toBe(1);
    terse = false;
    await rig.clock.advance(300);
    // Before, the poll without inputRequests dropped the kept answer, and the key was never answered.
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ q: ACCEPT }]);
    expect(errors.map((e) => e.name)).toEqual(['TaskRpcError']);
  });

  it('keeps an answer whose tasks/update failed through a read that leaves its key out but is no newer (a lagging replica), and sends it again once a read lists the key ([E23], [A11])', async () => {
    const rig = await extRig({ server: manual(), client: { onElicitation: () => ACCEPT } });
    const normal = builtinMethods(rig.server)['tasks/update']!;
    const read = builtinMethods(rig.server)['tasks/get']!;
    let failUpdate = true;
    let lagging = false;
    rig.server.on('tasks/update', (params, ctx) => {
      if (!failUpdate) return normal(params, ctx);
      failUpdate = false;
      lagging = true;
      throw rpcError(ErrorCode.InternalError, 'the update did not reach the store');
    });
    rig.server.on('tasks/get', (params, ctx) => {
      const reply = read(params, ctx) as Record<string, unknown>;
      if (!lagging) return reply;
      lagging = false;
      // A replica behind the store: the task as it was before it asked, with the same timestamp.
      const { inputRequests: _asked, ...behind } = reply;
      return { ...behind, status: 'working' };
    });
    rig.tasks.on('error', () => {});
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    for (let i = 0; i < 4; i += 1) await rig.clock.advance(1_000);
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ q: ACCEPT }]);
    expect(rig.server.count('tasks/update')).toBe(2);
    expect(handle.settled).toBe(false);
  });

  it('drops a kept answer once a poll no longer lists its key (the server took it although the update failed)', async () => {
    const rig = await extRig({ server: manual(), client: { onElicitation: () => ACCEPT } });
    const normal = builtinMethods(rig.server)['tasks/update']!;
    let first = true;
    rig.server.on('tasks/update', (params, ctx) => {
      const reply = normal(params, ctx);
      if (!first) return reply;
      first = false;
      throw rpcError(ErrorCode.InternalError, 'reply lost after the answer was stored');
    });
    rig.tasks.on('error', () => {});
    const handle = await rig.tasks.callToolAsTask('manual');
    rig.server.tasks.requestInput(handle.taskId!, { q: elicitation('Q?', {}) });
    await rig.clock.advance(1_000);
    expect(rig.server.tasks.detailed(handle.taskId!)).toMatchObject({ status: 'working' });
    // The task asks again under a new key: only that one is answered, and the old answer is not re-sent.
    rig.server.tasks.requestInput(handle.taskId!, { r: elicitation('R?', {}) });
    await rig.clock.advance(1_000);
    expect(rig.server.tasks.inspect(handle.taskId!).updates).toEqual([{ q: ACCEPT }, { r: ACCEPT }]);
    expect(rig.server.count('tasks/update')).toBe(2);
    expect(handle.settled).toBe(false);
  });
});
