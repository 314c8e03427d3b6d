/**
 * The input capabilities each request declares on the tasks extension ([E35]): on 2026-07-28 a
 * request's `io.modelcontextprotocol/clientCapabilities` says what the client supports for that
 * request, and a server asks (in `inputRequests`) only for what it declared. So a request declares
 * `elicitation` (or `sampling`) exactly when a callback of this client answers that kind for its
 * call: the call's own, the client's, or a receiver's. Not merely because the SDK client declared
 * it when it connected (nothing here would answer: the SDK's own handlers are never asked on this
 * wire), and even when the SDK client did not (so a per-call callback is never refused here, as it
 * is on 2025-11-25, where the capabilities were fixed at connect time). The server here follows
 * the rule: its `careful` tool asks for a confirmation only when the request that created the task
 * declared elicitation, and goes on without one otherwise.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskNotSupportedError, type ElicitationCallback } from '../../lib/index.js';
import { flush } from '../helpers.js';
import {
  elicitation,
  ExtServer,
  fixtureTools,
  isObject,
  outcome,
  sampling,
  taskTool,
  textResult,
  type ExtTool,
  type Json,
  type LoggedMessage,
} from '../support/ext-server/index.js';
import { ACCEPT, closeRigs, declared, EXT, extRig, ManualClock, sdkV2Client, secondClient, settle } from './support.js';

afterEach(closeRigs);

/**
 * A tool that follows the rule: when the `tools/call` declared elicitation, its task asks for a
 * confirmation before it deletes; otherwise it keeps the file without asking.
 */
const careful: ExtTool = {
  name: 'careful',
  run: (call) =>
    isObject(call.capabilities.elicitation)
      ? outcome.task({
          steps: [
            { inputRequests: { confirm: elicitation('Delete it?', { confirm: { type: 'boolean' } }) } },
            { result: ({ answers }) => textResult(answers.confirm?.action === 'accept' ? 'deleted' : 'kept') },
          ],
        })
      : outcome.task({ steps: [{ result: textResult('kept without asking') }] }),
};

/** A server with `careful`, the fixtures and a manual task, polled every 100 ms, sending no notifications. */
function server(clock: ManualClock): ExtServer {
  return new ExtServer({
    now: clock.now,
    pollIntervalMs: 100,
    tools: [...fixtureTools(), careful, taskTool('manual', { advance: 'manual' })],
  });
}

/** The library's own requests the server got (not the SDK client's `server/discover`). */
function libraryRequests(server: ExtServer): LoggedMessage[] {
  return server.log.filter((entry) => entry.kind === 'request' && entry.method !== 'server/discover');
}

/** The requests of task `taskId`'s `tasks/*` methods. */
function taskRequests(server: ExtServer, taskId: string): LoggedMessage[] {
  return libraryRequests(server).filter(
    (entry) => entry.method?.startsWith('tasks/') && entry.params.taskId === taskId,
  );
}

/** The `tools/call` requests of tool `name`. */
function callsOf(server: ExtServer, name: string): LoggedMessage[] {
  return server.received('tools/call').filter((entry) => entry.params.name === name);
}

/** The input capabilities (elicitation, sampling) a request declared. */
function inputDeclared(entry: LoggedMessage): Json {
  const { elicitation: e, sampling: s } = declared(entry) ?? {};
  return { ...(e === undefined ? {} : { elicitation: e }), ...(s === undefined ? {} : { sampling: s }) };
}

const answerConfirm: ElicitationCallback = () => ACCEPT;

/** Moves `clock` in 100 ms steps until `handle` settled (at most 600 steps). */
async function settled(clock: ManualClock, handle: { readonly settled: boolean }): Promise<void> {
  for (let i = 0; i < 600 && !handle.settled; i += 1) await clock.advance(100);
}

describe('the input a request declares on the tasks extension ([E35])', () => {
  it('declares no elicitation or sampling that nobody here answers, even when the SDK client declared them: a server that follows the rule asks nothing, and the task completes', async () => {
    const clock = new ManualClock();
    const ext = server(clock);
    // The host's own SDK client declares both (its own handlers answer its own requests).
    const client = await sdkV2Client(ext, { elicitation: { form: {}, url: {} }, sampling: {} });
    const tasks = new TaskClient(client, { clock });
    const handle = await tasks.callToolAsTask('careful');
    expect(handle.kind).toBe('task');
    const result = handle.result();
    await settled(clock, handle);
    expect((await result).content).toEqual(textResult('kept without asking').content);
    await tasks.close();
    const sent = libraryRequests(ext);
    expect(sent.map((entry) => entry.method)).toEqual(expect.arrayContaining(['tools/call', 'tasks/get']));
    for (const entry of sent) expect(declared(entry), entry.method).toEqual({ extensions: { [EXT]: {} } });
  });

  it('declares on each request what the call’s callbacks (then the client’s) answer: its tools/call and every tasks/* request of its task', async () => {
    const clock = new ManualClock();
    const ext = server(clock);
    const client = await sdkV2Client(ext, { elicitation: { form: {}, url: {} }, sampling: { tools: {} } });
    const tasks = new TaskClient(client, {
      clock,
      onSampling: () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' }),
    });
    const own = await tasks.callToolAsTask('careful', {}, { onElicitation: answerConfirm });
    const plain = await tasks.callToolAsTask('careful');
    const results = Promise.all([own.result(), plain.result()]);
    await settled(clock, {
      get settled() {
        return own.settled && plain.settled;
      },
    });
    expect((await results).map((r) => r.content)).toEqual([
      textResult('deleted').content,
      textResult('kept without asking').content,
    ]);
    await tasks.close();
    // The call with onElicitation: elicitation as the SDK client declared it (its modes), and the
    // client's sampling; the other call: sampling only.
    const both = { elicitation: { form: {}, url: {} }, sampling: { tools: {} } };
    const [ownCall, plainCall] = callsOf(ext, 'careful');
    expect(inputDeclared(ownCall!)).toEqual(both);
    expect(inputDeclared(plainCall!)).toEqual({ sampling: { tools: {} } });
    const ownTask = taskRequests(ext, own.taskId!);
    expect(ownTask.map((entry) => entry.method)).toEqual(expect.arrayContaining(['tasks/get', 'tasks/update']));
    for (const entry of ownTask) expect(inputDeclared(entry), entry.method).toEqual(both);
    const plainTask = taskRequests(ext, plain.taskId!);
    expect(plainTask.length).toBeGreaterThan(0);
    for (const entry of plainTask) expect(inputDeclared(entry), entry.method).toEqual({ sampling: { tools: {} } });
    // Requests of no call (the subscription) declare what the client answers.
    const listens = ext.received('subscriptions/listen');
    expect(listens.length).toBeGreaterThan(0);
    for (const entry of listens) expect(inputDeclared(entry)).toEqual({ sampling: { tools: {} } });
  });

  it('takes a per-call onElicitation although the SDK client did not declare elicitation, and declares it (form mode) on that call’s requests', async () => {
    const rig = await extRig({ server: { pollIntervalMs: 100, tools: [careful] } });
    // TaskClient.connect with no TaskClient-level callback: the SDK client declares no elicitation.
    const asked: string[] = [];
    const handle = await rig.tasks.callToolAsTask(
      'careful',
      {},
      { onElicitation: (params, context) => (asked.push(`${context.delivery}:${params.message}`), ACCEPT) },
    );
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('deleted').content);
    expect(asked).toEqual(['task-update:Delete it?']);
    const sent = [...callsOf(rig.server, 'careful'), ...taskRequests(rig.server, handle.taskId!)];
    expect(sent.map((entry) => entry.method)).toEqual(
      expect.arrayContaining(['tools/call', 'tasks/get', 'tasks/update']),
    );
    for (const entry of sent) {
      expect(declared(entry), entry.method).toEqual({ elicitation: {}, extensions: { [EXT]: {} } });
    }
    // A call without a callback of its own declares none.
    const other = await rig.tasks.callToolAsTask('careful');
    const otherResult = other.result();
    await settle(rig, other);
    expect((await otherResult).content).toEqual(textResult('kept without asking').content);
    expect(inputDeclared(callsOf(rig.server, 'careful')[1]!)).toEqual({});
  });

  it('takes a TaskClient-level onSampling on an SDK client made without the sampling capability', async () => {
    const clock = new ManualClock();
    const ext = server(clock);
    const client = await sdkV2Client(ext);
    const tasks = new TaskClient(client, {
      clock,
      onSampling: () => ({ role: 'assistant', content: { type: 'text', text: 'one line' }, model: 'm' }),
    });
    const handle = await tasks.callToolAsTask('summarize');
    const result = handle.result();
    await settled(clock, handle);
    expect((await result).content).toEqual(textResult('summary: one line').content);
    await tasks.close();
    for (const entry of libraryRequests(ext)) expect(inputDeclared(entry), entry.method).toEqual({ sampling: {} });
  });

  it('declares form mode only for a callback the SDK client declared no elicitation for: a url-mode question ends the task unanswered ([E31])', async () => {
    const rig = await extRig({
      server: { pollIntervalMs: 100, notifications: 'off', tools: [taskTool('manual', { advance: 'manual' })] },
    });
    const asked: unknown[] = [];
    const handle = await rig.tasks.callToolAsTask(
      'manual',
      {},
      { onElicitation: (params) => (asked.push(params), ACCEPT) },
    );
    const result = handle.result();
    result.catch(() => {});
    rig.server.tasks.requestInput(handle.taskId!, {
      sign: {
        method: 'elicitation/create',
        params: { mode: 'url', message: 'Sign in', url: 'https://example.com/a', elicitationId: 'e1' },
      },
    });
    await rig.clock.advance(200);
    await flush();
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect((error as Error).message).toMatch(/Client does not support URL-mode elicitation requests/);
    expect(asked).toEqual([]);
    expect(inputDeclared(callsOf(rig.server, 'manual')[0]!)).toEqual({ elicitation: {} });
  });

  it('takes the per-call callbacks of resume() on a client without the capabilities, and its requests declare them', async () => {
    const rig = await extRig({
      server: { pollIntervalMs: 100, notifications: 'off', tools: [taskTool('manual', { advance: 'manual' })] },
    });
    const reference = (await rig.tasks.callToolAsTask('manual')).detach()!;
    // Another process, whose SDK client declares nothing.
    const other = await secondClient(rig.server, rig.clock);
    const asked: string[] = [];
    const resumed = other.resume(reference, {
      onSampling: (params) => {
        asked.push(String((params.messages[0]?.content as { text?: string }).text));
        return { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' };
      },
    });
    const result = resumed.result();
    await rig.clock.advance(0);
    rig.server.tasks.requestInput(reference.taskId, { s: sampling('Anything?') });
    await rig.clock.advance(200);
    await flush();
    expect(asked).toEqual(['Anything?']);
    rig.server.tasks.complete(reference.taskId, textResult('answered elsewhere'));
    await rig.clock.advance(200);
    expect((await result).content).toEqual(textResult('answered elsewhere').content);
    const after = taskRequests(rig.server, reference.taskId).filter(
      (entry) => entry.link !== callsOf(rig.server, 'manual')[0]!.link,
    );
    expect(after.map((entry) => entry.method)).toEqual(expect.arrayContaining(['tasks/get', 'tasks/update']));
    for (const entry of after) expect(inputDeclared(entry), entry.method).toEqual({ sampling: {} });
  });
});
