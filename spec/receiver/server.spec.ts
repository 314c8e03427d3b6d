/**
 * The receiver role against an SDK v1 `McpServer` (spec/support/receiver-server.ts), in process:
 * the server sends task-augmented `elicitation/create` and `sampling/createMessage` requests to
 * the client and drives the client's tasks with `tasks/get|result|list|cancel`. The client side
 * runs on the SDK chosen by `MCP_SDK` (both majors run this suite).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CompletedMetrics, InputContext, TaskMetrics } from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import { flush, until, within } from '../helpers.js';
import { HeldCallback, accept, sampled, serverRig } from '../support/receiver-rig.js';
import type { Json } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
const register = (cleanup: () => Promise<void>): void => void cleanups.push(cleanup);
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const RELATED = 'io.modelcontextprotocol/related-task';

describe('receiver tasks served to an SDK McpServer', () => {
  it('completes an elicitation task: CreateTaskResult at once, polled to completed, result tagged ([V14], [V19])', async () => {
    const contexts: InputContext[] = [];
    const polled = { requests: [] as string[] };
    const { tool, requests } = await serverRig(register, {
      serve: taskReceiver({
        elicitation: async (params, context) => {
          contexts.push(context);
          expect(params.message).toBe('What is your name?');
          // The work lasts until the server has polled the task at least once.
          await until(() => polled.requests.includes('tasks/get'), 5_000, 'a tasks/get while the task works');
          return { action: 'accept', content: { name: 'Ada' } };
        },
      }),
    });
    polled.requests = requests;
    const answer = await tool('delegate', { method: 'elicitation/create', ttl: 60_000, message: 'What is your name?' });
    const created = (answer.created as Json).task as Json;
    // [V5], [V9], [V10], [V14]: working at once, timestamps, the ttl granted, a poll interval.
    expect(created).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 1_000 });
    expect(Date.parse(String(created.createdAt))).not.toBeNaN();
    expect(created.lastUpdatedAt).toBe(created.createdAt);
    expect(String(created.taskId)).toMatch(/^[0-9a-f-]{36}$/);
    const statuses = answer.statuses as string[];
    expect(statuses[0]).toBe('working');
    expect(statuses.slice(1, -1)).toContain('working');
    expect(statuses.at(-1)).toBe('completed');
    expect(answer.result).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
      _meta: { [RELATED]: { taskId: created.taskId } },
    });
    // [V21]: the terminal status was pushed, without related-task _meta.
    const notes = answer.notifications as Json[];
    expect(notes.map((n) => n.status)).toEqual(['completed']);
    expect(notes[0]?._meta).toBeUndefined();
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ delivery: 'receiver-task', receiverTaskId: created.taskId, taskId: undefined });
    expect(contexts[0]?.signal.aborted).toBe(false);
  });

  it("completes a sampling task with the callback's message", async () => {
    const { tool } = await serverRig(register, { serve: taskReceiver({ sampling: () => sampled('forty-two') }) });
    const answer = await tool('delegate', { method: 'sampling/createMessage' });
    expect((answer.statuses as string[]).at(-1)).toBe('completed');
    expect(answer.result).toMatchObject({
      role: 'assistant',
      model: 'spec-model',
      content: { type: 'text', text: 'forty-two' },
    });
  });

  it('a callback that throws fails the task; its error reaches the server on tasks/result and tasks/get ([V18])', async () => {
    const { tool } = await serverRig(register, {
      serve: taskReceiver({
        elicitation: () => {
          throw new Error('the user closed the window');
        },
        sampling: () => {
          throw Object.assign(new Error('model overloaded'), { code: -32000 });
        },
      }),
    });
    const failed = await tool('delegate', { method: 'elicitation/create' });
    expect((failed.statuses as string[]).at(-1)).toBe('failed');
    expect(failed.error).toEqual({
      code: -32603,
      message: 'The elicitation callback failed: the user closed the window',
    });
    expect((failed.notifications as Json[])[0]).toMatchObject({
      status: 'failed',
      statusMessage: 'The elicitation callback failed: the user closed the window',
    });
    // A callback that throws {code, message} chooses the JSON-RPC error ([V17]).
    const coded = await tool('delegate', { method: 'sampling/createMessage' });
    expect(coded.error).toEqual({ code: -32000, message: 'model overloaded' });
  });

  it("a callback's error of any length is cut in the failed task's statusMessage (16,384 characters), as the library cuts what it reads", async () => {
    const { tool } = await serverRig(register, {
      serve: taskReceiver({
        elicitation: () => {
          throw new Error('x'.repeat(100_000));
        },
      }),
    });
    const failed = await tool('delegate', { method: 'elicitation/create' });
    const note = (failed.notifications as Json[]).at(-1) as { status: string; statusMessage: string };
    expect(note.status).toBe('failed');
    expect(note.statusMessage).toHaveLength(16_384);
    expect(note.statusMessage.endsWith('x…')).toBe(true);
  });

  it('a result of the wrong shape fails the task with -32603', async () => {
    const { tool } = await serverRig(register, {
      serve: taskReceiver({ elicitation: () => ({ action: 'maybe' }) as never }),
    });
    const answer = await tool('delegate', { method: 'elicitation/create' });
    expect((answer.statuses as string[]).at(-1)).toBe('failed');
    expect(answer.error).toMatchObject({ code: -32603 });
    expect(String((answer.error as Json).message)).toContain('action must be');
  });

  it("a cancel from the server aborts the callback's signal and the task stays cancelled ([V6], [V24])", async () => {
    const held = new HeldCallback();
    const { tool, tasks } = await serverRig(register, { serve: taskReceiver({ elicitation: held.callback }) });
    const answer = await tool('delegate', { method: 'elicitation/create', cancelAfterPolls: 2 });
    expect(answer.statuses).toEqual(['working', 'working', 'working', 'cancelled']);
    expect((answer.cancel as Json).result).toMatchObject({
      status: 'cancelled',
      statusMessage: 'The server cancelled the task',
    });
    expect(held.calls[0]?.context.signal.aborted).toBe(true);
    // [A2]: a cancelled request has no result: tasks/result answers with an error.
    expect(answer.error).toMatchObject({ code: -32603 });
    expect((answer.notifications as Json[]).map((n) => n.status)).toEqual(['cancelled']);
    // A late answer changes nothing.
    held.calls[0]?.resolve(accept('too late'));
    await flush();
    expect(tasks.receiver?.tasks()[0]?.status).toBe('cancelled');
  });

  it('runs 100 receiver tasks at once; tasks/list pages over them in creation order', async () => {
    const held = new HeldCallback();
    const { tool, tasks, requests } = await serverRig(register, {
      serve: taskReceiver({ elicitation: held.callback }),
    });
    const created = ((await tool('create', { method: 'elicitation/create', count: 100 })).created as Json[]).map((t) =>
      String(t.taskId),
    );
    expect(new Set(created).size).toBe(100);
    await until(() => held.calls.length === 100, 5_000, '100 callbacks');
    expect(tasks.receiver?.running).toBe(100);
    const listing = await tool('list');
    expect(listing.pages).toBe(2);
    expect(listing.taskIds).toEqual(tasks.receiver?.tasks().map((t) => t.taskId));
    expect([...(listing.taskIds as string[])].sort()).toEqual([...created].sort());
    // tasks/result blocks until each is answered ([V16]).
    const results = tool('results', { taskIds: created });
    await until(
      () => requests.filter((method) => method === 'tasks/result').length === 100,
      5_000,
      '100 tasks/result sent',
    );
    await flush();
    for (const call of held.calls) call.resolve(accept(String(call.context.receiverTaskId)));
    const answers = (await within(results, 5_000, 'results')).results as Json[];
    expect(answers.map((a) => ((a.result as Json).content as Json).name)).toEqual(created);
    expect(tasks.receiver?.running).toBe(0);
    expect(tasks.receiver?.size).toBe(100);
  });

  it('emits lifecycle events with role receiver', async () => {
    const logged: { message: string; fields: Record<string, unknown> }[] = [];
    const { tool, tasks } = await serverRig(register, {
      serve: taskReceiver({ elicitation: () => accept('Ada') }),
      logger: { log: (entry) => logged.push(entry) },
    });
    const events: string[] = [];
    let completed: CompletedMetrics | undefined;
    let settled: TaskMetrics | undefined;
    for (const name of ['created', 'status', 'completed', 'failed', 'settled'] as const) {
      tasks.on(name, ((metrics: TaskMetrics & { outcome?: string }) => {
        events.push(`${name}:${metrics.role}${metrics.outcome === undefined ? '' : `:${metrics.outcome}`}`);
      }) as never);
    }
    tasks.on('completed', (metrics) => (completed = metrics));
    tasks.on('settled', (metrics) => (settled = metrics));
    const answer = await tool('delegate', { method: 'elicitation/create' });
    await until(() => settled !== undefined);
    // status for the first snapshot (working), then for the completion.
    expect(events).toEqual([
      'created:receiver',
      'status:receiver',
      'status:receiver',
      'completed:receiver',
      'settled:receiver:completed',
    ]);
    expect(completed?.role).toBe('receiver');
    if (completed?.role === 'receiver')
      expect(completed.result).toEqual({ action: 'accept', content: { name: 'Ada' } });
    expect(settled).toMatchObject({
      role: 'receiver',
      toolName: 'elicitation/create',
      status: 'completed',
      taskId: ((answer.created as Json).task as Json).taskId,
      notifications: 1,
    });
    // Settled when the callback answered: before the server's poll that saw it.
    expect(settled?.polls).toBe(0);
    // The audit log names the role too.
    expect(logged.filter((e) => e.fields.role === 'receiver').map((e) => e.message)).toEqual([
      'task created',
      'task status',
      'task status',
      'task completed',
    ]);
  });

  it('a plain request (no task) reaches the same callback directly ([V1])', async () => {
    const contexts: InputContext[] = [];
    const { tool, tasks } = await serverRig(register, {
      serve: taskReceiver({
        elicitation: (_params, context) => {
          contexts.push(context);
          return accept('plain');
        },
      }),
    });
    const answer = await tool('call', {
      method: 'elicitation/create',
      params: { message: 'hi', requestedSchema: { type: 'object', properties: {} } },
    });
    expect(answer.result).toEqual(accept('plain'));
    expect(contexts[0]?.delivery).toBe('request');
    expect(contexts[0]?.receiverTaskId).toBeUndefined();
    expect(tasks.receiver?.size).toBe(0);
  });

  it('a task-augmented request of a kind not served is processed normally ([V1])', async () => {
    const { tool, tasks } = await serverRig(register, {
      serve: taskReceiver({ elicitation: () => accept('x') }),
      onSampling: () => sampled('plain'),
    });
    const answer = await tool('delegate', { method: 'sampling/createMessage' });
    expect(answer.sync).toBe(true);
    expect(answer.created).toMatchObject({ model: 'spec-model' });
    expect(tasks.receiver?.size).toBe(0);
  });

  it('a request that belongs to a server task names it: in the context and on the CreateTaskResult ([R31])', async () => {
    const contexts: InputContext[] = [];
    const { tool } = await serverRig(register, {
      serve: taskReceiver({
        elicitation: (_params, context) => {
          contexts.push(context);
          return accept('x');
        },
      }),
    });
    const answer = await tool('delegate', { method: 'elicitation/create', relatedTaskId: 'server-task-1' });
    expect((answer.created as Json)._meta).toEqual({ [RELATED]: { taskId: 'server-task-1' } });
    expect(contexts[0]?.taskId).toBe('server-task-1');
    // [V19]: tasks/result names the receiver task, not the server's.
    expect(((answer.result as Json)._meta as Json)[RELATED]).toEqual({
      taskId: ((answer.created as Json).task as Json).taskId,
    });
  });

  it("TaskClient.connect declares the capabilities, merged with the caller's", async () => {
    const { server } = await serverRig(register, {
      capabilities: { roots: { listChanged: true }, tasks: { list: { custom: true } } },
      serve: taskReceiver({ elicitation: () => accept('x'), sampling: () => sampled('y') }),
    });
    expect(server.server.getClientCapabilities()).toMatchObject({
      roots: { listChanged: true },
      elicitation: {},
      sampling: {},
      tasks: {
        list: { custom: true },
        cancel: {},
        requests: { elicitation: { create: {} }, sampling: { createMessage: {} } },
      },
    });
  });

  it('close() of the TaskClient cancels running receiver tasks, tells the server and aborts the callbacks', async () => {
    const held = new HeldCallback();
    const { tool, tasks, notifications } = await serverRig(register, {
      serve: taskReceiver({ elicitation: held.callback }),
    });
    await tool('create', { method: 'elicitation/create', count: 2 });
    await until(() => held.calls.length === 2);
    const settled: string[] = [];
    tasks.on('settled', (metrics) => settled.push(`${metrics.role}:${metrics.outcome}`));
    await tasks.close();
    expect(held.calls.every((call) => call.context.signal.aborted)).toBe(true);
    expect(settled).toEqual(['receiver:closed', 'receiver:closed']);
    await until(() => notifications.length === 2);
    expect(notifications.map((n) => n.status)).toEqual(['cancelled', 'cancelled']);
    expect(tasks.receiver).toBeUndefined();
  });
});
