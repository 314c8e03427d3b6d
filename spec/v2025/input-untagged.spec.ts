/**
 * Input requests that name no task (issue 23, "input that reaches its call"): servers such as
 * mcp-go send `elicitation/create` and `sampling/createMessage` from inside a task without the
 * related-task `_meta` (D14). Such a request reaches the call's own callback when the calls in
 * flight leave no doubt (one call in flight, or one task alone in `input_required`); otherwise the
 * TaskClient-level callback answers, an `inputUnattributed` event says why, and with no callback
 * anywhere the server's error names the cause. The answer stays untagged: the server named no
 * task ([R31]). Against a scripted 2025-11-25 server (for the ordering and the statuses) and the
 * SDK's McpServer (a task tool that elicits without `relatedTask`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createExampleServer } from '../../examples/server.js';
import {
  TaskClient,
  type ElicitResult,
  type InputContext,
  type LogEntry,
  type TaskClientOptions,
  type TaskHandle,
  type UnattributedInput,
} from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import { ManualClock, connectPair, flush, within } from '../helpers.js';
import { NO_REPLY, connectScripted, type Json } from '../support/scripted-server.js';
import { setUserRequestHandler } from '../support/sdk.js';

const RELATED = 'io.modelcontextprotocol/related-task';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** An untagged question, as mcp-go sends it. */
const QUESTION: Json = {
  message: 'Proceed?',
  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
};

/** What one callback saw. */
interface Seen {
  readonly by: string;
  readonly taskId: string | undefined;
  readonly toolName: string | undefined;
  readonly handle: boolean;
  readonly inferred: boolean | undefined;
}

/** A callback that records what it saw under `by` and accepts. */
function recording(seen: Seen[], by: string): (params: unknown, ctx: InputContext) => ElicitResult {
  return (_params, ctx) => {
    seen.push({
      by,
      taskId: ctx.taskId,
      toolName: ctx.toolName,
      handle: ctx.handle !== undefined,
      inferred: ctx.inferred,
    });
    return { action: 'accept', content: { by } };
  };
}

/**
 * A TaskClient on a ManualClock and a scripted 2025-11-25 server whose `tools/call` creates the
 * tasks named in `ids`, in order (each task-augmented, as the server asserts), `working` with a
 * poll interval of 1 s.
 */
async function rig(options: { clientLevel?: boolean; tasks?: TaskClientOptions } = {}) {
  const clock = new ManualClock();
  const pair = await connectScripted({
    tools: [
      { name: 'job', taskSupport: 'required' },
      { name: 'plain', taskSupport: 'forbidden' },
    ],
    now: clock.now,
    clientOptions: { capabilities: { elicitation: {} } },
  });
  const seen: Seen[] = [];
  const tasks = new TaskClient(pair.client, {
    clock,
    ...(options.clientLevel === true ? { onElicitation: recording(seen, 'client') } : {}),
    ...options.tasks,
  });
  const unattributed: UnattributedInput[] = [];
  tasks.on('inputUnattributed', (input) => unattributed.push(input));
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  const server = pair.server;
  let next = 0;
  server.on('tools/call', (params) => {
    // The request held before the reply: a task-augmented call of `job`.
    expect(params).toMatchObject({ name: 'job', task: {} });
    next += 1;
    return server.tasks.createResult({ taskId: `t${next}` });
  });
  /** Calls `job` with its own recording callback (under `by`). */
  const call = (by: string): Promise<TaskHandle> =>
    tasks.callToolAsTask('job', {}, { onElicitation: recording(seen, by) });
  return { ...pair, server, tasks, clock, seen, unattributed, call };
}

/** The `_meta` of a reply's result. */
function metaOf(reply: Json): Record<string, unknown> | undefined {
  return (reply.result as { _meta?: Record<string, unknown> } | undefined)?._meta;
}

describe('an untagged question reaches the call it belongs to', () => {
  it("one task in flight: the call's own onElicitation answers, told the task, and the answer stays untagged (D14, [R31])", async () => {
    const { server, seen, unattributed, call } = await rig({ clientLevel: true });
    const handle = await call('own');
    // mcp-go: the question goes out straight away, untagged, and the task stays working.
    const reply = await within(server.request('elicitation/create', QUESTION));
    // Before the fix the TaskClient-level callback answered it.
    expect(seen).toEqual([{ by: 'own', taskId: 't1', toolName: 'job', handle: true, inferred: true }]);
    expect(reply.result).toMatchObject({ action: 'accept', content: { by: 'own' } });
    expect(metaOf(reply)?.[RELATED]).toBeUndefined();
    expect(unattributed).toEqual([]);
    expect(handle.task?.status).toBe('working');
    handle.detach();
  });

  it("a task detached here may still ask: with it and one call in flight, an untagged question is ambiguous, and the call's callback is not asked", async () => {
    const { server, clock, seen, unattributed, call } = await rig({ clientLevel: true });
    const first = await call('first');
    const second = await call('second');
    first.detach();
    const asked = server.request('elicitation/create', QUESTION);
    // Judged once the polls had the time to show a task in input_required (none does).
    await clock.advance(5_000);
    const reply = await within(asked);
    expect(seen.map((s) => s.by)).toEqual(['client']);
    expect(reply.result).toMatchObject({ content: { by: 'client' } });
    expect(unattributed.map((u) => u.reason)).toEqual(['ambiguous']);
    second.detach();
  });

  it('one task in flight and no TaskClient-level callback: the call’s callback answers (before, the server got "No elicitation handler")', async () => {
    const { server, seen, call } = await rig();
    const handle = await call('own');
    const reply = await within(server.request('elicitation/create', QUESTION));
    expect(reply.error).toBeUndefined();
    expect(reply.result).toMatchObject({ action: 'accept', content: { by: 'own' } });
    expect(seen.map((s) => s.by)).toEqual(['own']);
    handle.detach();
  });

  it('a question that overtakes the CreateTaskResult waits for it, then reaches the call with its handle', async () => {
    const { server, seen, call } = await rig({ clientLevel: true });
    let reply: Promise<Json> | undefined;
    server.on('tools/call', (params, ctx) => {
      expect(params).toMatchObject({ name: 'job', task: {} });
      const created = server.tasks.createResult({ taskId: 'early' });
      reply = server.request('elicitation/create', QUESTION);
      setTimeout(() => ctx.reply(created), 5);
      return NO_REPLY;
    });
    const handle = await call('own');
    expect((await within(reply!)).result).toMatchObject({ content: { by: 'own' } });
    expect(seen).toEqual([{ by: 'own', taskId: 'early', toolName: 'job', handle: true, inferred: true }]);
    handle.detach();
  });

  it('a question tied to a call whose CreateTaskResult comes only after the 1 s wait: ctx.signal fires when the task it made settles, and the server gets -32603 "no longer needed"', async () => {
    const { server, clock, tasks } = await rig({ clientLevel: true });
    let reply: ((result: unknown) => void) | undefined;
    server.on('tools/call', (params, ctx) => {
      expect(params).toMatchObject({ name: 'job', task: {} });
      reply = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    let seen: InputContext | undefined;
    const call = tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: (_params, ctx) => {
          seen = ctx;
          return new Promise<ElicitResult>(() => {}); // never answers
        },
      },
    );
    await flush();
    const question = server.request('elicitation/create', QUESTION);
    await clock.advance(1_000); // no CreateTaskResult within the wait: the call's callback is asked
    expect(seen).toMatchObject({ inferred: true, taskId: undefined });
    reply!(server.tasks.createResult({ taskId: 'late-1' }));
    const handle = await call;
    expect(seen!.signal.aborted).toBe(false);
    server.tasks.finish('late-1', 'failed', { result: { content: [], isError: true } }, {}, true);
    await expect(handle.result()).rejects.toThrow();
    // Before the fix, the signal fired only when the call was given up: the callback kept the question open.
    expect(seen!.signal.aborted).toBe(true);
    const answer = await within(question);
    expect(answer.error).toMatchObject({ code: -32603 });
    expect((answer.error as { message: string }).message).toMatch(/no longer needed/);
  });

  it('two tasks in flight, one in input_required (notified): that one’s callback answers at once', async () => {
    const { server, seen, unattributed, call } = await rig({ clientLevel: true });
    const first = await call('first');
    const second = await call('second');
    server.tasks.update('t2', { status: 'input_required' }, true);
    await flush();
    expect(second.task?.status).toBe('input_required');
    const reply = await within(server.request('elicitation/create', QUESTION));
    expect(reply.result).toMatchObject({ content: { by: 'second' } });
    expect(seen).toEqual([{ by: 'second', taskId: 't2', toolName: 'job', handle: true, inferred: true }]);
    expect(unattributed).toEqual([]);
    first.detach();
    second.detach();
  });

  it('but not once a question tagged with its task came on the connection: that server tags its questions, and the task in input_required may wait for its own, queued for its tasks/result', async () => {
    const { server, clock, seen, unattributed, call } = await rig({ clientLevel: true });
    const tagging = await call('tagging');
    await within(server.request('elicitation/create', { ...QUESTION, _meta: { [RELATED]: { taskId: 't1' } } }));
    const waiting = await call('waiting');
    const working = await call('working');
    server.tasks.update('t2', { status: 'input_required' }, true);
    await flush();
    expect(waiting.task?.status).toBe('input_required');
    // The working task's question, sent untagged by a tool that does not tag (D14).
    const asked = server.request('elicitation/create', QUESTION);
    await clock.advance(5_000);
    // Before the fix the task in input_required got it, for being the only one.
    expect((await within(asked)).result).toMatchObject({ content: { by: 'client' } });
    expect(seen.map((s) => s.by)).toEqual(['tagging', 'client']);
    expect(unattributed.map((u) => u.reason)).toEqual(['ambiguous']);
    for (const handle of [tagging, waiting, working]) handle.detach();
  });

  it('two tasks in flight, the input_required one only seen by the next poll: the question waits for that poll', async () => {
    const { server, clock, seen, unattributed, call } = await rig({ clientLevel: true });
    const first = await call('first');
    const second = await call('second');
    // The server moves t1 to input_required without a notification, then asks, untagged.
    server.tasks.update('t1', { status: 'input_required' });
    const reply = server.request('elicitation/create', QUESTION);
    await flush();
    expect(seen).toEqual([]);
    await clock.advance(1_000); // the polls of both tasks (pollInterval 1 s)
    expect((await within(reply)).result).toMatchObject({ content: { by: 'first' } });
    expect(seen).toEqual([{ by: 'first', taskId: 't1', toolName: 'job', handle: true, inferred: true }]);
    expect(unattributed).toEqual([]);
    first.detach();
    second.detach();
  });

  it('a task whose questions come tagged is not the one asking untagged: the other task’s callback answers', async () => {
    const { server, seen, call } = await rig();
    const tagging = await call('tagging');
    const other = await call('other');
    const tagged = await within(
      server.request('elicitation/create', { ...QUESTION, _meta: { [RELATED]: { taskId: 't1' } } }),
    );
    expect(metaOf(tagged)?.[RELATED]).toEqual({ taskId: 't1' });
    const untagged = await within(server.request('elicitation/create', QUESTION));
    expect(untagged.result).toMatchObject({ content: { by: 'other' } });
    expect(seen.map((s) => [s.by, s.taskId, s.inferred])).toEqual([
      ['tagging', 't1', undefined],
      ['other', 't2', true],
    ]);
    tagging.detach();
    other.detach();
  });
});

describe('an untagged question that cannot be tied to one call', () => {
  it('two tasks in flight, neither waiting for input: after one poll interval (and the grace) the TaskClient-level callback answers, with an inputUnattributed event', async () => {
    const logs: LogEntry[] = [];
    const { server, clock, seen, unattributed, call } = await rig({
      clientLevel: true,
      tasks: { logger: { log: (entry) => logs.push(entry) } },
    });
    const first = await call('first');
    const second = await call('second');
    const reply = server.request('elicitation/create', QUESTION);
    await clock.advance(1_499);
    expect(seen).toEqual([]);
    await clock.advance(1);
    const answer = await within(reply);
    expect(answer.result).toMatchObject({ content: { by: 'client' } });
    expect(metaOf(answer)?.[RELATED]).toBeUndefined();
    expect(seen).toEqual([
      { by: 'client', taskId: undefined, toolName: undefined, handle: false, inferred: undefined },
    ]);
    expect(unattributed).toEqual([
      {
        method: 'elicitation/create',
        reason: 'ambiguous',
        inFlight: 2,
        waitingForInput: 0,
        hostRequests: 0,
        answeredBy: 'client',
      },
    ]);
    // The event names no task: ids are secrets.
    expect(JSON.stringify(unattributed)).not.toMatch(/t1|t2/);
    expect(logs.filter((entry) => entry.message === 'input request names no task')).toEqual([
      { level: 'warn', message: 'input request names no task', fields: unattributed[0] },
    ]);
    first.detach();
    second.detach();
  });

  it('with no TaskClient-level callback the server gets -32601 naming the cause, and the event says nobody here answered', async () => {
    const { server, clock, seen, unattributed, call } = await rig();
    const first = await call('first');
    const second = await call('second');
    const reply = server.request('elicitation/create', QUESTION);
    await clock.advance(1_500);
    const answer = await within(reply);
    expect(seen).toEqual([]);
    expect(answer.error).toMatchObject({ code: -32601 });
    const message = (answer.error as { message: string }).message;
    // Before the fix: "No elicitation handler: pass onElicitation to the TaskClient or the call".
    expect(message).toMatch(/named no task/);
    expect(message).toMatch(/2 calls were in flight \(none of them waiting for input\)/);
    expect(message).toMatch(/no call's own handler could be chosen/);
    // Addressed to whoever reads the server's result (an agent's model): no option to set.
    expect(message).not.toMatch(/pass onElicitation/);
    expect(message).not.toMatch(/t1|t2/);
    expect(unattributed).toEqual([
      {
        method: 'elicitation/create',
        reason: 'ambiguous',
        inFlight: 2,
        waitingForInput: 0,
        hostRequests: 0,
        answeredBy: undefined,
      },
    ]);
    first.detach();
    second.detach();
  });

  it('no call in flight: the TaskClient-level callback answers at once, reason no-task', async () => {
    const { server, seen, unattributed } = await rig({ clientLevel: true });
    const answer = await within(server.request('elicitation/create', QUESTION));
    expect(answer.result).toMatchObject({ content: { by: 'client' } });
    expect(seen.map((s) => s.by)).toEqual(['client']);
    expect(unattributed).toEqual([
      {
        method: 'elicitation/create',
        reason: 'no-task',
        inFlight: 0,
        waitingForInput: 0,
        hostRequests: 0,
        answeredBy: 'client',
      },
    ]);
  });

  it('a malformed question no call could be tied to gets -32602 and fires no inputUnattributed: refused, not unattributed input (as a malformed tagged one is reported nowhere)', async () => {
    const { server, seen, unattributed, tasks } = await rig({ clientLevel: true });
    const errors: unknown[] = [];
    tasks.on('error', (error) => errors.push(error));
    for (const params of [{ ...QUESTION, message: 5 }, { mode: 'url', message: 'Sign in' }, {}]) {
      const reply = await within(server.request('elicitation/create', params));
      expect(reply.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
      expect((reply.error as { message: string }).message).toMatch(
        /Invalid elicitation request|does not support URL-mode/,
      );
    }
    expect(seen).toEqual([]);
    expect(unattributed).toEqual([]);
    expect(errors).toEqual([]);
    // A well-formed one is still reported as before.
    expect((await within(server.request('elicitation/create', QUESTION))).result).toMatchObject({
      content: { by: 'client' },
    });
    expect(unattributed.map((input) => [input.reason, input.answeredBy])).toEqual([['no-task', 'client']]);
  });

  it('a call still waiting for its CreateTaskResult counts as in flight: a running task does not get the question', async () => {
    const { server, clock, seen, unattributed, tasks, call } = await rig({ clientLevel: true });
    const running = await call('running');
    server.on('tools/call', () => NO_REPLY); // the second creation is never answered
    void tasks.callToolAsTask('job', {}, { onElicitation: recording(seen, 'creating') }).catch(() => {});
    await flush();
    const reply = server.request('elicitation/create', QUESTION);
    await clock.advance(1_500);
    expect((await within(reply)).result).toMatchObject({ content: { by: 'client' } });
    expect(seen.map((s) => s.by)).toEqual(['client']);
    expect(unattributed).toMatchObject([{ reason: 'ambiguous', inFlight: 2, waitingForInput: 0 }]);
    running.detach();
  });

  it('a tool call the host makes through the SDK client itself counts as in flight: the task does not get its question', async () => {
    const { server, client, seen, unattributed, call } = await rig({ clientLevel: true });
    const running = await call('running');
    let plainId: string | number | undefined;
    let held: ((result: unknown) => void) | undefined;
    server.on('tools/call', (params, ctx) => {
      expect(params).toMatchObject({ name: 'plain' });
      expect(params.task).toBeUndefined();
      plainId = ctx.id;
      held = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    const plain = client.callTool({ name: 'plain', arguments: {} });
    await flush();
    expect(plainId).toBeDefined();
    // The plain call asks, untagged, as any plain call does: 1 task and 1 host request in flight.
    const reply = server.request('elicitation/create', QUESTION);
    expect((await within(reply)).result).toMatchObject({ content: { by: 'client' } });
    expect(seen.map((s) => s.by)).toEqual(['client']);
    expect(unattributed).toEqual([
      {
        method: 'elicitation/create',
        reason: 'ambiguous',
        inFlight: 1,
        waitingForInput: 0,
        hostRequests: 1,
        answeredBy: 'client',
      },
    ]);
    held!({ content: [{ type: 'text', text: 'done' }] });
    await within(plain);
    running.detach();
  });

  it('the only call in flight was given up before its CreateTaskResult: its question is refused, no callback is asked', async () => {
    const { server, clock, seen, unattributed, tasks } = await rig({ clientLevel: true });
    let created: ((result: unknown) => void) | undefined;
    server.on('tools/call', (params, ctx) => {
      expect(params).toMatchObject({ name: 'job', task: {} });
      created = (result) => ctx.reply(result);
      return NO_REPLY;
    });
    const abort = new AbortController();
    const call = tasks.callToolAsTask('job', {}, { signal: abort.signal, onElicitation: recording(seen, 'given-up') });
    await flush();
    abort.abort();
    await expect(call).rejects.toThrow();
    const reply = server.request('elicitation/create', QUESTION);
    await clock.advance(1_000); // the wait for a CreateTaskResult that does not come
    const answer = await within(reply);
    expect(answer.error).toMatchObject({ code: -32603 });
    expect((answer.error as { message: string }).message).toMatch(/no longer needed/);
    expect(seen).toEqual([]);
    expect(unattributed).toEqual([]);
    // The late task is cancelled once its id is known.
    created!(server.tasks.createResult({ taskId: 'late' }));
    await clock.advance(0);
    await flush();
    expect(server.params('tasks/cancel')).toEqual([{ taskId: 'late' }]);
  });

  it('two TaskClients on one SDK client, one task each: the question is ambiguous for both (one view per connection)', async () => {
    const { server, client, clock, seen, unattributed, call } = await rig();
    const other = new TaskClient(client, { clock, onElicitation: recording(seen, 'other-client') });
    const otherEvents: UnattributedInput[] = [];
    other.on('inputUnattributed', (input) => otherEvents.push(input));
    cleanups.push(() => other.close());
    const mine = await call('mine');
    const theirs = await other.callToolAsTask('job', {}, { onElicitation: recording(seen, 'theirs') });
    const reply = server.request('elicitation/create', QUESTION);
    await clock.advance(1_500);
    expect((await within(reply)).result).toMatchObject({ content: { by: 'other-client' } });
    expect(seen.map((s) => s.by)).toEqual(['other-client']);
    expect(unattributed).toMatchObject([{ reason: 'ambiguous', inFlight: 2, answeredBy: undefined }]);
    expect(otherEvents).toMatchObject([{ reason: 'ambiguous', inFlight: 2, answeredBy: 'client' }]);
    mine.detach();
    theirs.detach();
  });

  it('two TaskClients on one SDK client, one task in all: the owner’s call answers, whichever tap runs first', async () => {
    const { server, client, clock, seen } = await rig({ clientLevel: true });
    const second = new TaskClient(client, { clock });
    cleanups.push(() => second.close());
    const handle = await second.callToolAsTask('job', {}, { onElicitation: recording(seen, 'owner') });
    const reply = await within(server.request('elicitation/create', QUESTION));
    expect(reply.result).toMatchObject({ content: { by: 'owner' } });
    expect(seen.map((s) => [s.by, s.taskId])).toEqual([['owner', 't1']]);
    handle.detach();
  });

  it('a TaskClient that closes while a question waits passes it on at once: none of its callbacks runs', async () => {
    const { server, tasks, seen, call } = await rig({ clientLevel: true });
    await call('first');
    await call('second');
    const reply = server.request('elicitation/create', QUESTION);
    await flush();
    await tasks.close();
    const answer = await within(reply);
    expect(seen).toEqual([]);
    expect(answer.error).toMatchObject({ code: -32601 });
  });
});

describe('receiver tasks are not confused with calls in flight', () => {
  it('a task-augmented request without related-task _meta is served as a receiver task, not given to the running call', async () => {
    const clock = new ManualClock();
    const pair = await connectScripted({
      tools: [{ name: 'job', taskSupport: 'required' }],
      now: clock.now,
      clientOptions: {
        capabilities: { elicitation: {}, tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } },
      },
    });
    const seen: Seen[] = [];
    const tasks = new TaskClient(pair.client, {
      clock,
      serve: taskReceiver({ elicitation: recording(seen, 'serve') }),
    });
    const unattributed: UnattributedInput[] = [];
    tasks.on('inputUnattributed', (input) => unattributed.push(input));
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    pair.server.on('tools/call', (params) => {
      expect(params).toMatchObject({ name: 'job', task: {} });
      return pair.server.tasks.createResult({ taskId: 'r1' });
    });
    const handle = await tasks.callToolAsTask('job', {}, { onElicitation: recording(seen, 'call') });
    const created = await within(pair.server.request('elicitation/create', { ...QUESTION, task: {} }));
    expect((created.result as { task?: { status?: string } }).task?.status).toBe('working');
    await clock.advance(0);
    await flush();
    expect(seen.map((s) => s.by)).toEqual(['serve']);
    expect(unattributed).toEqual([]);
    // A plain untagged question while the same task runs does reach the call.
    const plain = await within(pair.server.request('elicitation/create', QUESTION));
    expect(plain.result).toMatchObject({ content: { by: 'call' } });
    handle.detach();
  });
});

describe('with a real peer: the SDK McpServer eliciting without relatedTask from inside a task tool', () => {
  it("the call's own onElicitation answers, the TaskClient-level one is not asked", async () => {
    const { server, store } = createExampleServer({ pollInterval: 50 });
    server.experimental.tasks.registerToolTask(
      'ask_untagged',
      { inputSchema: { path: z.string() }, execution: { taskSupport: 'required' } },
      {
        createTask: async ({ path }, extra) => {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval: 50 });
          void (async () => {
            // No relatedTask: the request goes out at once, untagged, and the task stays working.
            const answer = await server.server.elicitInput({
              message: `Delete ${path}?`,
              requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
            });
            const text =
              answer.action === 'accept' && answer.content?.confirm === true ? `deleted ${path}` : `kept ${path}`;
            await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text }] });
          })();
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
      },
    );
    const pair = await connectPair(server, { capabilities: { elicitation: {} } });
    const seen: Seen[] = [];
    const tasks = new TaskClient(pair.client, {
      onElicitation: () => (seen.push({ by: 'client' } as Seen), { action: 'decline' }),
    });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      store.cleanup();
    });
    const handles: Array<TaskHandle | undefined> = [];
    const handle = await tasks.callToolAsTask(
      'ask_untagged',
      { path: '/srv/a' },
      {
        onElicitation: (params, ctx) => {
          handles.push(ctx.handle);
          seen.push({
            by: 'own',
            taskId: ctx.taskId,
            toolName: ctx.toolName,
            handle: ctx.handle !== undefined,
            inferred: ctx.inferred,
          });
          return { action: 'accept', content: { confirm: params.message === 'Delete /srv/a?' } };
        },
      },
    );
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'deleted /srv/a' }]);
    expect(seen).toEqual([
      { by: 'own', taskId: handle.taskId, toolName: 'ask_untagged', handle: true, inferred: true },
    ]);
    expect(handles).toEqual([handle]);
  });

  it('the same question object asked again for a later call (a constant in the tool) is judged again: each call answers its own', async () => {
    const { server, store } = createExampleServer({ pollInterval: 50 });
    // One object for every call: the SDK passes it on as it is, over the in-memory transport too.
    const CONFIRM = {
      mode: 'form' as const,
      message: 'Proceed?',
      requestedSchema: { type: 'object' as const, properties: { confirm: { type: 'boolean' as const } } },
    };
    server.experimental.tasks.registerToolTask(
      'ask_constant',
      { inputSchema: {}, execution: { taskSupport: 'required' } },
      {
        createTask: async (_args, extra) => {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval: 50 });
          void (async () => {
            const answer = await server.server.elicitInput(CONFIRM);
            const by = answer.action === 'accept' ? String(answer.content?.by) : answer.action;
            await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: by }] });
          })();
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
      },
    );
    const pair = await connectPair(server, { capabilities: { elicitation: {} } });
    const seen: Seen[] = [];
    const tasks = new TaskClient(pair.client, { onElicitation: recording(seen, 'client') });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      store.cleanup();
    });
    for (const by of ['first', 'second']) {
      const handle = await tasks.callToolAsTask('ask_constant', {}, { onElicitation: recording(seen, by) });
      expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: by }]);
    }
    expect(seen.map((s) => s.by)).toEqual(['first', 'second']);
  });

  it("a plain call the host makes through the SDK client while a task runs still reaches the host's own SDK handler", async () => {
    const { server, store } = createExampleServer({ pollInterval: 50 });
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    server.experimental.tasks.registerToolTask(
      'wait',
      { inputSchema: {}, execution: { taskSupport: 'required' } },
      {
        createTask: async (_args, extra) => {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval: 50 });
          void gate.then(() =>
            extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: 'waited' }] }),
          );
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
      },
    );
    server.registerTool('ask_plain', { inputSchema: { q: z.string() } }, async ({ q }) => {
      const answer = await server.server.elicitInput({
        message: q,
        requestedSchema: { type: 'object', properties: {} },
      });
      return { content: [{ type: 'text', text: answer.action }] };
    });
    const pair = await connectPair(server, { capabilities: { elicitation: {} } });
    const userSaw: string[] = [];
    setUserRequestHandler(pair.client, 'elicitation/create', (request) => {
      userSaw.push(String(request.params.message));
      return { action: 'decline' };
    });
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      release?.();
      await tasks.close();
      await pair.close();
      store.cleanup();
    });
    const own: string[] = [];
    const handle = await tasks.callToolAsTask(
      'wait',
      {},
      { onElicitation: () => (own.push('x'), { action: 'accept', content: {} }) },
    );
    const plain = await within(pair.client.callTool({ name: 'ask_plain', arguments: { q: 'plain question' } }));
    expect(plain.content).toEqual([{ type: 'text', text: 'decline' }]);
    expect(userSaw).toEqual(['plain question']);
    expect(own).toEqual([]);
    release!();
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'waited' }]);
  });
});
