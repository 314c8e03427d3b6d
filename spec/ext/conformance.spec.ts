/**
 * What the conformance suite's client scenarios for the tasks extension judge, played through the
 * public API against the scripted extension server (written from the extension schema): the suite
 * stands in as the server and watches what the client sends.
 *
 * - One connection runs the suite's client script: a task polled to its inline result, a plain
 *   result on the same connection, a `failed` task surfaced (and never read again), a running task
 *   cancelled with `tasks/cancel`. Every `tools/call` and `tasks/*` request declares the extension
 *   in its own `_meta` ([E1]); polls are spaced by `pollIntervalMs` ([E14]); there is no
 *   `tasks/result` ([E3]), no legacy `task` or ttl ([E2], [E13]), and no `notifications/cancelled`
 *   for a task ([E7]).
 * - A `CreateTaskResult` in answer to a request that cannot create tasks is an invalid response,
 *   and its task id is never followed ([E24]).
 * - Over Streamable HTTP, `tasks/*` requests carry `Mcp-Name` equal to the task id, Base64-wrapped
 *   when the id cannot ride a header as it is ([E8]).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskCancelledError,
  TaskClient,
  TaskFailedError,
  TaskNotFoundError,
  TaskProtocolError,
} from '../../lib/index.js';
import { rejection, within } from '../helpers.js';
import {
  elicitation,
  ExtServer,
  immediateTool,
  rpcError,
  startExtHttpServer,
  taskTool,
  textResult,
  type LoggedMessage,
} from '../support/ext-server/index.js';
import { ACCEPT, closeRigs, declared, EXT, extRig, settle, type ExtRig } from './support.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await closeRigs();
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const POLL_MS = 300;
const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'];

/** The suite's client-scenario tools: a quick task, a plain tool, a task that fails, one that never ends. */
function scriptTools(): ExtServer['options']['tools'] {
  return [
    immediateTool('sync_echo', textResult('sync-ok')),
    taskTool('quick_task', { steps: [{}, { result: textResult('quick-task-result') }] }),
    taskTool('failing_task', {
      steps: [{ error: rpcError(-32603, 'failing_task always fails'), statusMessage: 'deliberate failure' }],
    }),
    taskTool('cancel_task', { advance: 'manual' }),
  ];
}

/** The `tasks/get` requests for `taskId`, in order. */
function reads(rig: ExtRig, taskId: string | undefined): LoggedMessage[] {
  return rig.server.received('tasks/get').filter((entry) => entry.params.taskId === taskId);
}

describe('the conformance client script on one connection', () => {
  it('polls a task to its result, takes a plain result, surfaces a failed task, and cancels with tasks/cancel ([E1]-[E3], [E7], [E14], [E15])', async () => {
    const rig = await extRig({ server: { notifications: 'off', pollIntervalMs: POLL_MS, tools: scriptTools() } });
    await rig.tasks.tools();

    // [E2]: a CreateTaskResult is followed with tasks/get to its inline result ...
    const quick = await rig.tasks.callToolAsTask('quick_task');
    expect(quick.kind).toBe('task');
    const quickResult = quick.result();
    await settle(rig, quick, 50);
    expect((await quickResult).content).toEqual(textResult('quick-task-result').content);
    // ... and a plain CallToolResult on the same connection is taken as it is.
    const sync = await rig.tasks.callToolAsTask('sync_echo');
    expect(sync.kind).toBe('immediate');
    expect((await sync.result()).content).toEqual(textResult('sync-ok').content);

    // [E15]: failed carries the JSON-RPC error; it is surfaced, and the task is not read again.
    const failing = await rig.tasks.callToolAsTask('failing_task');
    const failure = rejection(failing.result(), 60_000);
    await settle(rig, failing, 50);
    const error = await failure;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).toMatchObject({ rpcError: { code: -32603 }, statusMessage: 'deliberate failure' });
    await rig.clock.advance(10 * POLL_MS);
    expect(reads(rig, failing.taskId)).toHaveLength(1);

    // [E7]: a running task is cancelled with tasks/cancel.
    const running = await rig.tasks.callToolAsTask('cancel_task');
    const ended = rejection(running.result(), 60_000);
    await rig.clock.advance(100);
    expect(await running.cancel()).toMatchObject({ status: 'cancelled' });
    expect(await ended).toBeInstanceOf(TaskCancelledError);
    expect(rig.server.params('tasks/cancel').map((p) => p.taskId)).toEqual([running.taskId]);

    // [E14]: consecutive polls of the quick task are a full pollIntervalMs apart (the server
    // answers at once, so the gap from one answer to the next read is the gap between reads).
    const times = reads(rig, quick.taskId).map((entry) => entry.at);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(POLL_MS);
    // [E1]: every tools/call and tasks/* request declares the extension, as an object, on itself.
    for (const method of ['tools/call', ...TASK_METHODS])
      for (const entry of rig.server.received(method))
        expect(declared(entry)?.extensions, method).toEqual({ [EXT]: {} });
    // [E3], [E2], [E13]: no tasks/result, no legacy `task`, no ttl asked for.
    expect(rig.server.count('tasks/result')).toBe(0);
    for (const params of rig.server.params('tools/call')) {
      expect(params).not.toHaveProperty('task');
      expect(JSON.stringify(params)).not.toMatch(/ttl/i);
    }
    // [E7]: no notifications/cancelled names a task-creating tools/call or a task.
    const calls = new Set(rig.server.received('tools/call').map((entry) => entry.id));
    const ids = [quick.taskId, failing.taskId, running.taskId];
    for (const params of rig.server.params('notifications/cancelled')) {
      expect(calls.has(params.requestId as string)).toBe(false);
      expect(ids.some((id) => JSON.stringify(params).includes(String(id)))).toBe(false);
    }
  });
});

describe('a CreateTaskResult to a request that cannot create tasks ([E24])', () => {
  it('answering tools/list is an invalid response (TaskProtocolError), with or without a tools array, and its task is never read', async () => {
    const rig = await extRig();
    const bogus: string[] = [];
    let withTools = false;
    rig.server.on('tools/list', () => {
      const task = rig.server.tasks.create({ advance: 'manual' });
      bogus.push(task.taskId);
      return { resultType: 'task', ...task, ...(withTools ? { tools: [] } : {}) };
    });
    const bare = await rejection(rig.tasks.tools());
    expect(bare).toBeInstanceOf(TaskProtocolError);
    expect(bare).toMatchObject({ method: 'tools/list' });
    withTools = true;
    const hybrid = await rejection(rig.tasks.tools());
    expect(hybrid).toBeInstanceOf(TaskProtocolError);
    expect((hybrid as Error).message).toMatch(/unexpected resultType "task"/);
    await rig.clock.advance(10_000);
    for (const method of TASK_METHODS) expect(rig.server.count(method), method).toBe(0);
    expect(bogus).toHaveLength(2);
  });

  it('answering subscriptions/listen does not start a task: only the real task is read, and it completes', async () => {
    const rig = await extRig({ server: { pollIntervalMs: POLL_MS, tools: scriptTools() } });
    const bogus: string[] = [];
    rig.server.on('subscriptions/listen', () => {
      const task = rig.server.tasks.create({ advance: 'manual' });
      bogus.push(task.taskId);
      return { resultType: 'task', ...task };
    });
    const quick = await rig.tasks.callToolAsTask('quick_task');
    const result = quick.result();
    await settle(rig, quick, 50);
    expect((await result).content).toEqual(textResult('quick-task-result').content);
    await rig.clock.advance(10_000);
    expect(bogus.length).toBeGreaterThan(0);
    for (const method of TASK_METHODS)
      for (const params of rig.server.params(method)) expect(bogus, method).not.toContain(params.taskId);
  });
});

describe('errors the suite checks servers for, as the client meets them', () => {
  it('-32602 on tasks/update (the server no longer knows the task): TaskNotFoundError, the user asked once, nothing read after ([E25])', async () => {
    let asked = 0;
    const rig = await extRig({
      server: { notifications: 'off', pollIntervalMs: POLL_MS },
      client: { onElicitation: () => ((asked += 1), ACCEPT) },
    });
    rig.server.on('tasks/update', (params) => {
      rig.server.tasks.delete(params.taskId as string);
      throw rpcError(-32602, 'Unknown task');
    });
    const handle = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'gone.txt' });
    const outcome = rejection(handle.result(), 60_000);
    await settle(rig, handle, 50);
    const error = await outcome;
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(asked).toBe(1);
    const sent = rig.server.log.length;
    await rig.clock.advance(10 * POLL_MS);
    expect(rig.server.log.length).toBe(sent);
  });
});

describe('Mcp-Name over Streamable HTTP ([E8])', () => {
  it('names the task on tasks/get, tasks/update and tasks/cancel, Base64-wrapped for an id a header cannot carry as it is', async () => {
    let made = 0;
    const server = new ExtServer({
      pollIntervalMs: 20,
      notifications: 'off',
      taskIds: () => `tâche n°${++made}`,
      tools: [
        taskTool('asks', {
          steps: [
            { inputRequests: { q: elicitation('Sure?', { confirm: { type: 'boolean' } }) } },
            { result: textResult('done') },
          ],
        }),
        taskTool('waits', { advance: 'manual', pollIntervalMs: 60_000 }),
      ],
    });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());
    const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url), {
      sdk: 'v2',
      onElicitation: () => ACCEPT,
      minPollIntervalMs: 10,
    });
    cleanups.push(() => tasks.close());

    const asking = await tasks.callToolAsTask('asks');
    expect((await within(asking.result(), 10_000)).content).toEqual(textResult('done').content);
    const waiting = await tasks.callToolAsTask('waits');
    expect(await within(waiting.cancel(), 10_000)).toMatchObject({ status: 'cancelled' });

    const seen = server.log.filter((entry) => TASK_METHODS.includes(entry.method ?? ''));
    expect(new Set(seen.map((entry) => entry.method))).toEqual(new Set(TASK_METHODS));
    for (const entry of seen) {
      const taskId = String(entry.params.taskId);
      expect(taskId).toMatch(/^tâche n°\d$/);
      expect(entry.headers?.['mcp-name'], entry.method).toBe(
        `=?base64?${Buffer.from(taskId, 'utf8').toString('base64')}?=`,
      );
    }
    // The server checks every routing header against the body: nothing was refused.
    expect(endpoint.rejected).toEqual([]);
  });
});
