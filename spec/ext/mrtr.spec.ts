/**
 * Input before a task exists on the tasks extension (multi round-trip, [E17]): a `tools/call`
 * answered `input_required` goes to the same callbacks with `ctx.delivery === 'retry'`, and is
 * retried with `inputResponses` and the same opaque `requestState`; the retry may return a task or
 * a plain result. A kind nobody here can answer fails the call with `TaskNotSupportedError`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskError,
  TaskInputError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
  TaskTimeoutError,
  type ElicitResult,
  type TaskHandle,
  type InputContext,
} from '../../lib/index.js';
import { flush, rejection } from '../helpers.js';
import {
  elicitation,
  mrtrTool,
  outcome,
  rootsRequest,
  sampling,
  textResult,
  type ExtTool,
} from '../support/ext-server/index.js';
import { ACCEPT, closeRigs, deferred, extRig, gaps, settle } from './support.js';

afterEach(closeRigs);

describe('input before a task exists: multi round-trip ([E17])', () => {
  it('answers input_required through the callbacks (delivery "retry") and retries with inputResponses and the same requestState; the retry makes a task', async () => {
    const contexts: InputContext[] = [];
    const rig = await extRig({
      client: {
        onElicitation: (_params, context) => (contexts.push(context), { action: 'accept', content: { name: 'Alice' } }),
      },
    });
    const handle = await rig.tasks.callToolAsTask('test_tool_with_task', { x: 1 });
    expect(handle.kind).toBe('task');
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({
      delivery: 'retry',
      key: 'user_name',
      taskId: undefined,
      handle: undefined,
      toolName: 'test_tool_with_task',
    });
    const [first, retry] = rig.server.received('tools/call');
    const state = rig.server.sent.find((s) => s.message.id === first?.id)?.message.result as Record<string, unknown>;
    expect(state).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    expect(retry?.params).toMatchObject({
      name: 'test_tool_with_task',
      arguments: { x: 1 },
      inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
      requestState: state.requestState,
    });
    expect(first?.params).not.toHaveProperty('inputResponses');
    expect(retry?.id).not.toBe(first?.id);
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('Hello, Alice!').content);
  });

  it('takes a plain result from the retry as an immediate handle', async () => {
    const quick = mrtrTool('quick', {
      inputRequests: { ok: elicitation('OK?', { ok: { type: 'boolean' } }) },
      withState: false,
      then: () => outcome.text('fine'),
    });
    const rig = await extRig({
      server: { tools: [quick] },
      client: { onElicitation: () => ({ action: 'accept', content: { ok: true } }) },
    });
    const handle = await rig.tasks.callToolAsTask('quick');
    expect(handle.kind).toBe('immediate');
    expect(await handle.result()).toMatchObject({ content: [{ type: 'text', text: 'fine' }] });
    expect(rig.server.params('tools/call')[1]).not.toHaveProperty('requestState');
  });

  it('null requestState and inputRequests (D21) read as none: the input is answered, and the retry carries no requestState', async () => {
    const rig = await extRig({ client: { onElicitation: () => ({ action: 'accept', content: { ok: true } }) } });
    rig.server.on('tools/call', (params) =>
      params.inputResponses === undefined
        ? {
            resultType: 'input_required',
            inputRequests: { ok: elicitation('OK?', { ok: { type: 'boolean' } }) },
            requestState: null,
          }
        : { resultType: 'complete', ...textResult('fine'), inputRequests: null, requestState: null },
    );
    const handle = await rig.tasks.callToolAsTask('quick');
    expect(handle.kind).toBe('immediate');
    expect((await handle.result()).content).toEqual(textResult('fine').content);
    const retry = rig.server.params('tools/call')[1]!;
    expect(retry).not.toHaveProperty('requestState');
    expect(retry.inputResponses).toEqual({ ok: { action: 'accept', content: { ok: true } } });
  });

  it('uses the call’s own callback before the client’s', async () => {
    const who: string[] = [];
    const rig = await extRig({
      client: { onElicitation: () => (who.push('client'), { action: 'accept', content: { name: 'C' } }) },
    });
    await rig.tasks.callToolAsTask(
      'test_tool_with_task',
      {},
      { onElicitation: () => (who.push('call'), { action: 'accept', content: { name: 'K' } }) },
    );
    await rig.tasks.callToolAsTask('test_tool_with_task');
    expect(who).toEqual(['call', 'client']);
  });

  it('goes through several rounds, each retry carrying that round’s answers and state', async () => {
    const rounds: ExtTool = {
      name: 'two_rounds',
      run: ({ inputResponses, requestState }) => {
        if (inputResponses === undefined) return outcome.inputRequired({ a: elicitation('A?', {}) }, 'state-1');
        if (requestState === 'state-1' && inputResponses.a !== undefined)
          return outcome.inputRequired({ b: elicitation('B?', {}) }, 'state-2');
        if (requestState === 'state-2' && inputResponses.b !== undefined)
          return outcome.task({ steps: [{ result: textResult('both') }] });
        return outcome.error(-32602, 'bad round');
      },
    };
    const asked: string[] = [];
    const rig = await extRig({
      server: { tools: [rounds] },
      client: { onElicitation: (params) => (asked.push(String(params.message)), ACCEPT) },
    });
    const handle = await rig.tasks.callToolAsTask('two_rounds');
    expect(handle.kind).toBe('task');
    expect(asked).toEqual(['A?', 'B?']);
    expect(
      rig.server
        .params('tools/call')
        .map((p) => [Object.keys((p.inputResponses as object | undefined) ?? {}), p.requestState]),
    ).toEqual([
      [[], undefined],
      [['a'], 'state-1'],
      [['b'], 'state-2'],
    ]);
  });

  it('fails the call with TaskNotSupportedError for a kind nobody here can answer, without retrying', async () => {
    const needs = (name: string, request: ReturnType<typeof sampling>): ExtTool =>
      mrtrTool(name, { inputRequests: { k: request }, then: () => outcome.text('never') });
    const rig = await extRig({
      server: { tools: [needs('wants_sampling', sampling('x')), needs('wants_roots', rootsRequest())] },
      client: { onElicitation: () => ACCEPT },
    });
    const sampled = await rejection(rig.tasks.callToolAsTask('wants_sampling'));
    expect(sampled).toBeInstanceOf(TaskNotSupportedError);
    expect(sampled).toMatchObject({ feature: 'sampling', toolName: 'wants_sampling' });
    expect((sampled as Error).message).toMatch(
      /sampling\/createMessage before it answers "wants_sampling".*onSampling/,
    );
    const roots = await rejection(rig.tasks.callToolAsTask('wants_roots'));
    expect(roots).toMatchObject({ name: 'TaskNotSupportedError', feature: 'input' });
    expect(rig.server.count('tools/call')).toBe(2);
  });

  it('fails the call with TaskNotSupportedError, without asking or retrying, for a request the client would refuse on its own: params that break the schema, a mode it did not declare ([E31])', async () => {
    const asked: unknown[] = [];
    const urlMode = {
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Sign in', url: 'https://example.com/a', elicitationId: 'e1' },
    };
    const rig = await extRig({
      server: {
        tools: [
          mrtrTool('no_message', {
            inputRequests: { k: { method: 'elicitation/create', params: { mode: 'form' } } },
            then: () => outcome.text('never'),
          }),
          mrtrTool('url_mode', { inputRequests: { k: urlMode }, then: () => outcome.text('never') }),
        ],
      },
      // connect() declares elicitation: {}, form mode only.
      client: { onElicitation: (params) => (asked.push(params), ACCEPT) },
    });
    const malformed = await rejection(rig.tasks.callToolAsTask('no_message'));
    expect(malformed).toBeInstanceOf(TaskNotSupportedError);
    expect(malformed).toMatchObject({ feature: 'elicitation', toolName: 'no_message' });
    expect((malformed as Error).message).toMatch(/Invalid elicitation request: message must be a string/);
    const url = await rejection(rig.tasks.callToolAsTask('url_mode'));
    expect(url).toMatchObject({ name: 'TaskNotSupportedError', feature: 'elicitation' });
    expect((url as Error).message).toMatch(/Client does not support URL-mode elicitation requests/);
    expect(asked).toEqual([]);
    expect(rig.server.count('tools/call')).toBe(2);
  });

  it('keeps MRTR keys and task keys apart: the task may reuse a key the MRTR round used', async () => {
    const composed = mrtrTool('composed', {
      inputRequests: { k: elicitation('Before?', {}) },
      then: () =>
        outcome.task({
          steps: [{ inputRequests: { k: elicitation('During?', {}) } }, { result: textResult('composed') }],
        }),
    });
    const asked: string[] = [];
    const rig = await extRig({
      server: { pollIntervalMs: 100, notifications: 'off', tools: [composed] },
      client: {
        onElicitation: (params, context) => (asked.push(`${context.delivery}:${String(params.message)}`), ACCEPT),
      },
    });
    const handle = await rig.tasks.callToolAsTask('composed');
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('composed').content);
    expect(asked).toEqual(['retry:Before?', 'task-update:During?']);
  });

  it('fails the call when an MRTR callback throws, asking the user once and retrying nothing; the throw is reported on `error`', async () => {
    let calls = 0;
    const rig = await extRig({
      client: {
        onElicitation: () => {
          calls += 1;
          throw new Error('the user closed the dialog');
        },
      },
    });
    const reported: TaskError[] = [];
    rig.tasks.on('error', (error) => reported.push(error));
    const error = await rejection(rig.tasks.callToolAsTask('test_tool_with_task'));
    expect(error).toBeInstanceOf(TaskError);
    expect(error).not.toBeInstanceOf(TaskProtocolError);
    expect(error).toMatchObject({ toolName: 'test_tool_with_task' });
    expect(calls).toBe(1);
    expect(rig.server.count('tools/call')).toBe(1);
    expect(reported.map((e) => e.message)).toEqual(['The elicitation callback failed: the user closed the dialog']);
    expect(reported[0]).toBeInstanceOf(TaskInputError);
    expect(reported[0]).toMatchObject({ feature: 'elicitation', cause: new Error('the user closed the dialog') });
  });

  it("checks an MRTR answer's shape before the retry ([E31]): a malformed one is reported as a TaskInputError and not sent, and the call fails", async () => {
    const rig = await extRig({ client: { onElicitation: () => ({ action: 'accept', content: 'Alice' }) as never } });
    const reported: TaskError[] = [];
    rig.tasks.on('error', (error) => reported.push(error));
    const error = await rejection(rig.tasks.callToolAsTask('test_tool_with_task'));
    expect(error).toBeInstanceOf(TaskError);
    expect(rig.server.count('tools/call')).toBe(1);
    expect(reported.map((e) => e.message)).toEqual([
      'The elicitation callback returned an invalid result: content must be an object',
    ]);
    expect(reported[0]).toBeInstanceOf(TaskInputError);
    expect(reported[0]).toMatchObject({ feature: 'elicitation', toolName: 'test_tool_with_task' });
  });

  it('stops retrying the tools/call once the call’s signal aborted during an MRTR callback', async () => {
    const controller = new AbortController();
    const rig = await extRig({ client: { onElicitation: () => new Promise<ElicitResult>(() => {}) } });
    const call = rig.tasks.callToolAsTask('test_tool_with_task', {}, { signal: controller.signal });
    await flush();
    controller.abort(new Error('the user gave up'));
    expect(await rejection(call)).toMatchObject({ name: 'AbortError' });
    await rig.clock.advance(1_000);
    await flush();
    expect(rig.server.count('tools/call')).toBe(1);
  });

  it('says no task exists (remoteCancel "no-task") for a call given up while its MRTR callback runs: by its signal, its deadline or close()', async () => {
    // No tools/call is outstanding while the callbacks answer, and none is sent after the call
    // is given up: there is no task to cancel, and none will come ([E17]).
    const never = (): Promise<ElicitResult> => new Promise<ElicitResult>(() => {});
    const rig = await extRig({ client: { onElicitation: never } });
    const controller = new AbortController();
    const aborted = rejection(rig.tasks.callToolAsTask('test_tool_with_task', {}, { signal: controller.signal }));
    await flush();
    controller.abort(new Error('the user gave up'));
    const timedOut = rejection(rig.tasks.callToolAsTask('test_tool_with_task', {}, { timeoutMs: 1_000 }));
    await flush();
    await rig.clock.advance(1_000);
    const closed = rejection(rig.tasks.callToolAsTask('test_tool_with_task'));
    await flush();
    expect(rig.server.count('tools/call')).toBe(3);
    await rig.tasks.close();
    expect(await aborted).toMatchObject({ name: 'AbortError', remoteCancel: 'no-task' });
    expect(await timedOut).toMatchObject({ name: 'TaskTimeoutError', remoteCancel: 'no-task' });
    // TaskClosedError carries no remoteCancel: its message says it.
    expect(await closed).toMatchObject({ name: 'TaskClosedError' });
    for (const error of [await aborted, await timedOut, await closed])
      expect((error as Error).message).toMatch(/no remote task was created$/);
    expect(rig.server.count('tools/call')).toBe(3);
    expect(rig.server.tasks.ids()).toEqual([]);
  });

  it('sends no retry when an MRTR callback answers after the deadline passed', async () => {
    const slow = deferred();
    const rig = await extRig({ client: { onElicitation: slow.callback } });
    const call = rejection(rig.tasks.callToolAsTask('test_tool_with_task', {}, { timeoutMs: 1_000 }));
    await flush();
    await rig.clock.advance(1_000);
    expect(await call).toMatchObject({ name: 'TaskTimeoutError' });
    slow.calls[0]?.answer({ action: 'accept', content: { name: 'late' } });
    await flush();
    expect(rig.server.count('tools/call')).toBe(1);
    expect(rig.server.tasks.ids()).toEqual([]);
  });

  it('aborts an MRTR callback’s signal when the call is abandoned (its deadline passed, or the client closed)', async () => {
    let signal: AbortSignal | undefined;
    const rig = await extRig({
      client: {
        onElicitation: (_params, context) => {
          signal = context.signal;
          return new Promise<ElicitResult>(() => {});
        },
      },
    });
    const call = rejection(rig.tasks.callToolAsTask('test_tool_with_task', {}, { timeoutMs: 1_000 }));
    await flush();
    await rig.clock.advance(1_000);
    expect(await call).toMatchObject({ name: 'TaskTimeoutError' });
    expect(signal?.aborted).toBe(true);
  });

  it('aborts an MRTR callback’s signal when the client closes, and when the call’s signal aborts', async () => {
    const signals: AbortSignal[] = [];
    const rig = await extRig({
      client: {
        onElicitation: (_params, context) => {
          signals.push(context.signal);
          return new Promise<ElicitResult>(() => {});
        },
      },
    });
    const controller = new AbortController();
    const aborted = rejection(rig.tasks.callToolAsTask('test_tool_with_task', {}, { signal: controller.signal }));
    await flush();
    expect(signals.map((signal) => signal.aborted)).toEqual([false]);
    controller.abort(new Error('the user gave up'));
    expect(await aborted).toMatchObject({ name: 'AbortError' });
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
    const closed = rejection(rig.tasks.callToolAsTask('test_tool_with_task', {}));
    await flush();
    expect(signals.map((signal) => signal.aborted)).toEqual([true, false]);
    await rig.tasks.close();
    expect(await closed).toMatchObject({ name: 'TaskClosedError' });
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it('retries with an input key named "__proto__" as an own key of inputResponses (keys are the server\'s)', async () => {
    // JSON.parse makes "__proto__" an own key, as a server's reply carries it.
    const inputRequests = JSON.parse(
      `{"__proto__": ${JSON.stringify(elicitation('Name?', { name: { type: 'string' } }))}}`,
    ) as Record<string, ReturnType<typeof elicitation>>;
    const proto = mrtrTool('proto_key', {
      inputRequests,
      then: (answers) => outcome.text(Object.hasOwn(answers, '__proto__') ? 'answered' : 'not answered'),
    });
    const asked: unknown[] = [];
    const rig = await extRig({
      server: { tools: [proto] },
      client: { onElicitation: (params) => (asked.push(params.message), { action: 'accept', content: { name: 'P' } }) },
    });
    const handle = await rig.tasks.callToolAsTask('proto_key');
    expect(asked).toEqual(['Name?']);
    // What a real transport would deliver (the in-memory pair hands objects over as they are).
    const retry = JSON.parse(JSON.stringify(rig.server.params('tools/call')[1])) as {
      inputResponses: Record<string, unknown>;
    };
    expect(Object.hasOwn(retry.inputResponses, '__proto__')).toBe(true);
    expect(Object.entries(retry.inputResponses)).toEqual([['__proto__', { action: 'accept', content: { name: 'P' } }]]);
    expect(await handle.result()).toMatchObject({ content: [{ type: 'text', text: 'answered' }] });
  });

  it('gives up after 10 rounds of a server that keeps asking, with a TaskProtocolError', async () => {
    let n = 0;
    const forever: ExtTool = {
      name: 'forever',
      run: () => outcome.inputRequired({ [`k${++n}`]: elicitation('Again?', {}) }),
    };
    const rig = await extRig({ server: { tools: [forever] }, client: { onElicitation: () => ACCEPT } });
    const error = await rejection(rig.tasks.callToolAsTask('forever'));
    expect(error).toMatchObject({ name: 'TaskProtocolError', method: 'tools/call' });
    expect((error as Error).message).toMatch(/still asking for input after 10 rounds/);
    expect(rig.server.count('tools/call')).toBe(11);
  });
});

describe('request state only, no input requests: load shedding ([E17])', () => {
  /**
   * A server that answers `tools/call` with request state only (the core schema's "load shedding"
   * InputRequiredResult) `times` times, each with a fresh state, then with a plain result.
   */
  function shedding(times: number) {
    let answered = 0;
    return (rig: { server: { on(method: string, handler: () => unknown): unknown } }) =>
      rig.server.on('tools/call', () => {
        answered += 1;
        if (answered <= times) return { resultType: 'input_required', requestState: `state-${answered}` };
        return { resultType: 'complete', content: [{ type: 'text', text: 'served' }] };
      });
  }
  /** No jitter: the waits are the bare backoff (500 ms, then x1.5 up to 5 s: the hint-less poll backoff). */
  const EXACT = { random: () => 0 };
  const asked: string[] = [];
  const noQuestions = { onElicitation: () => (asked.push('asked'), ACCEPT), ...EXACT };

  it('retries after a backing-off wait, echoing each state unchanged and answering nothing; then takes the answer', async () => {
    const rig = await extRig({ client: noQuestions });
    shedding(2)(rig);
    const start = rig.clock.now();
    let handle: TaskHandle | undefined;
    const call = rig.tasks.callToolAsTask('slow_compute', { x: 1 }).then((h) => (handle = h));
    await flush();
    expect(rig.server.count('tools/call')).toBe(1);
    // Not at once: the first retry waits 500 ms (initialPollIntervalMs), the next 750 ms.
    await rig.clock.advance(499);
    expect(rig.server.count('tools/call')).toBe(1);
    await rig.clock.advance(1);
    expect(rig.server.count('tools/call')).toBe(2);
    await rig.clock.advance(749);
    expect(rig.server.count('tools/call')).toBe(2);
    await rig.clock.advance(1);
    await call;
    expect(gaps(rig.server, 'tools/call', start)).toEqual([0, 500, 750]);
    const sent = rig.server.params('tools/call');
    expect(sent[0]).not.toHaveProperty('requestState');
    expect(sent[1]).toMatchObject({ name: 'slow_compute', arguments: { x: 1 }, requestState: 'state-1' });
    expect(sent[2]).toMatchObject({ name: 'slow_compute', arguments: { x: 1 }, requestState: 'state-2' });
    // Nothing was asked, so nothing is answered.
    for (const params of sent) expect(params).not.toHaveProperty('inputResponses');
    expect(asked).toEqual([]);
    expect(handle?.kind).toBe('immediate');
    expect(await handle?.result()).toMatchObject({ content: [{ type: 'text', text: 'served' }] });
  });

  it('does not count state-only answers as input rounds: 12 of them, then the answer', async () => {
    const rig = await extRig({ client: noQuestions });
    shedding(12)(rig);
    const call = rig.tasks.callToolAsTask('slow_compute', {}, { timeoutMs: 120_000 });
    let settled = false;
    void call.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let i = 0; i < 200 && !settled; i += 1) await rig.clock.advance(500);
    expect((await call).kind).toBe('immediate');
    expect(rig.server.count('tools/call')).toBe(13);
  });

  it('a server that sheds for ever: bounded by the deadline (TaskTimeoutError, no task), spaced by the backoff, nothing sent after', async () => {
    const rig = await extRig({ client: noQuestions });
    shedding(Infinity)(rig);
    const start = rig.clock.now();
    const call = rejection(rig.tasks.callToolAsTask('slow_compute', {}, { timeoutMs: 10_000 }), 60_000);
    for (let spent = 0; spent < 10_000; spent += 250) await rig.clock.advance(250);
    const error = await call;
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error).toMatchObject({ remoteCancel: 'no-task', timeoutMs: 10_000 });
    // 500, 750, 1125, 1688, 2531 ms: the next (3797 ms) would come after the deadline.
    expect(gaps(rig.server, 'tools/call', start)).toEqual([0, 500, 750, 1125, 1688, 2531]);
    await rig.clock.advance(60_000);
    expect(rig.server.count('tools/call')).toBe(6);
  });

  it('without a deadline, a server that sheds for ever gets the bound of a plain call (60 s): a timeout TaskRpcError', async () => {
    const rig = await extRig({ client: noQuestions });
    shedding(Infinity)(rig);
    const start = rig.clock.now();
    const call = rejection(rig.tasks.callToolAsTask('slow_compute'), 60_000);
    for (let spent = 0; spent < 60_000; spent += 500) await rig.clock.advance(500);
    const error = await call;
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ method: 'tools/call', kind: 'timeout', code: -32001, transient: true });
    expect((error as Error).message).toMatch(/request state only \(load shedding\) 17 times in a row for 60000 ms/);
    // The backoff grows to 5 s (hintlessMaxPollIntervalMs); the last retry goes at the bound itself.
    const fives = Array.from({ length: 9 }, () => 5_000);
    expect(gaps(rig.server, 'tools/call', start)).toEqual([0, 500, 750, 1125, 1688, 2531, 3797, ...fives, 4_609]);
    await rig.clock.advance(60_000);
    expect(rig.server.count('tools/call')).toBe(17);
  });

  it('a call given up during the wait sends nothing more: by its signal, or by close()', async () => {
    const rig = await extRig({ client: noQuestions });
    shedding(Infinity)(rig);
    const controller = new AbortController();
    const aborted = rejection(rig.tasks.callToolAsTask('slow_compute', {}, { signal: controller.signal }));
    await flush();
    await rig.clock.advance(500);
    expect(rig.server.count('tools/call')).toBe(2);
    await rig.clock.advance(300);
    controller.abort(new Error('the user gave up'));
    expect(await aborted).toMatchObject({ name: 'AbortError', remoteCancel: 'no-task' });
    await rig.clock.advance(10_000);
    expect(rig.server.count('tools/call')).toBe(2);

    const closed = rejection(rig.tasks.callToolAsTask('slow_compute'));
    await flush();
    expect(rig.server.count('tools/call')).toBe(3);
    await rig.tasks.close();
    expect(await closed).toMatchObject({ name: 'TaskClosedError' });
    await rig.clock.advance(10_000);
    expect(rig.server.count('tools/call')).toBe(3);
  });
});
