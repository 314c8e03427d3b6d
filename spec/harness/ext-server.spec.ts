/**
 * The scripted server for the 2026-07-28 tasks extension (spec/support/ext-server), driven WITHOUT
 * this library: raw JSON-RPC over an in-memory pair, the SDK v2 Client (era negotiation), stdio,
 * Streamable HTTP, and the competitor `@modelcontextprotocol/ext-tasks` 0.2.2 client in its native
 * 2026 ("v2") mode. Rule references: SEP-2663 = the extension spec (`ext-tasks/specification`),
 * CONF = the conformance check ids (see /work/notes/ext-wire.md §13).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  createTaskSessionFromClient,
  withTasks,
  type ConnectedMcpSessionPort,
  type JsonRpcResponse,
} from '@modelcontextprotocol/ext-tasks/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { until, within } from '../helpers.js';
import {
  connectInMemory,
  elicitation,
  envelope,
  ExtServer,
  fixtureTools,
  META,
  mrtrTool,
  NO_REPLY,
  outcome,
  raw,
  rawInMemory,
  RawClient,
  sampling,
  startExtHttpServer,
  taskTool,
  TASKS_EXTENSION,
  textResult,
  type ExtServerOptions,
  type Json,
  type RawClientOptions,
} from '../support/ext-server/index.js';
import { parseCliOptions } from '../support/ext-server/cli-options.js';
import { openStream, postMessage } from '../support/ext-server/raw-http.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const stdioEntry = fileURLToPath(new URL('../support/ext-server/stdio.ts', import.meta.url));
const exampleEntry = fileURLToPath(new URL('../../examples/ext-server.ts', import.meta.url));
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const undeclared = { _meta: envelope({ extension: false }) };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A hand-moved clock. */
class Clock {
  time = Date.parse('2026-09-01T10:00:00.250Z');
  now = (): number => this.time;
}

/** A server with the fixture tools (plus `extra`) and a raw client on an in-memory pair. */
async function rig(
  options: ExtServerOptions = {},
  clientOptions: RawClientOptions = {},
): Promise<{ server: ExtServer; client: RawClient; clock: Clock }> {
  const clock = new Clock();
  const server = new ExtServer({ now: clock.now, ...options, tools: [...fixtureTools(), ...(options.tools ?? [])] });
  const client = await rawInMemory(server, clientOptions);
  cleanups.push(() => client.close());
  return { server, client, clock };
}
async function errorCode(client: RawClient, method: string, params: Json = {}): Promise<number | undefined> {
  return (await client.request(method, params)).error?.code;
}
async function startTask(client: RawClient, name: string, args: Json = {}): Promise<string> {
  const created = await client.call('tools/call', { name, arguments: args });
  expect(created.resultType).toBe('task');
  return String(created.taskId);
}

describe('ext-server over a raw in-memory pair: era and negotiation', () => {
  it('answers server/discover with 2026-07-28 and the extension under capabilities.extensions (CONF tasks-extension-advertised)', async () => {
    const { client } = await rig();
    const found = await client.call('server/discover', { _meta: envelope({ extension: false }) });
    expect(found).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      ttlMs: 0,
      cacheScope: 'private',
    });
    expect(found.capabilities).toEqual({ tools: {}, extensions: { [TASKS_EXTENSION]: {} } });
    expect((found._meta as Json)[META.serverInfo]).toEqual({ name: 'ext-scripted-server', version: '1.0.0' });
    const custom = await rig({ extension: { specVersion: '2026-07-28', stability: 'final' } });
    expect(((await custom.client.call('server/discover')).capabilities as Json).extensions).toEqual({
      [TASKS_EXTENSION]: { specVersion: '2026-07-28', stability: 'final' },
    });
    const none = await rig({ extension: null });
    expect((await none.client.call('server/discover')).capabilities).toEqual({ tools: {} });
  });

  it('rejects unsupported versions with -32022 and data.supported, and malformed envelopes with -32602', async () => {
    const { client } = await rig();
    const reply = await client.request('tools/call', {
      name: 'greet',
      _meta: envelope({ protocolVersion: '1900-01-01' }),
    });
    expect(reply.error).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'], requested: '1900-01-01' } });
    expect(await errorCode(client, 'server/discover', { _meta: envelope({ protocolVersion: '2025-11-25' }) })).toBe(
      -32022,
    );
    expect(await errorCode(client, 'tools/list', { _meta: {} })).toBe(-32602);
    expect(await errorCode(client, 'tools/list', { _meta: { [META.protocolVersion]: '2026-07-28' } })).toBe(-32602);
    // A legacy initialize (no _meta; the key is present only to skip the raw client's framing).
    const init = await client.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
      _meta: undefined,
    });
    expect(init.error).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'] } });
  });

  it('serves the legacy era on initialize when dual-era: extension advertised, never applied', async () => {
    const { client } = await rig({ legacy: true }, { framing: false });
    const init = await client.call('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { tasks: {} },
      clientInfo: { name: 'old', version: '1' },
    });
    expect(init).toEqual({
      protocolVersion: '2025-11-25',
      capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
      serverInfo: { name: 'ext-scripted-server', version: '1.0.0' },
    });
    await client.notify('notifications/initialized');
    const result = await client.call('tools/call', { name: 'slow_compute', arguments: { label: 'old' } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'computed old' }], structuredContent: { label: 'old' } });
    expect(await errorCode(client, 'tasks/get', { taskId: 'x' })).toBe(-32601);
    expect((await client.call('tools/list')).tools).toBeInstanceOf(Array);
    expect((await client.request('initialize', { protocolVersion: '2099-01-01' })).result?.protocolVersion).toBe(
      '2025-11-25',
    );
  });

  it('never returns a task to a request that did not declare the extension (CONF sep-2663-server-rejects-undeclared-client)', async () => {
    const { server, client } = await rig();
    const plain = await client.call('tools/call', {
      name: 'slow_compute',
      arguments: { label: 'sync' },
      ...undeclared,
    });
    expect(plain).toEqual({
      content: [{ type: 'text', text: 'computed sync' }],
      structuredContent: { label: 'sync' },
      resultType: 'complete',
    });
    // A client declaring only the legacy `capabilities.tasks` is non-declaring too.
    const legacyCaps = {
      _meta: envelope({ extension: false, capabilities: { tasks: { requests: { tools: { call: {} } } } } }),
    };
    expect((await client.call('tools/call', { name: 'slow_compute', arguments: {}, ...legacyCaps })).resultType).toBe(
      'complete',
    );
    const required = await client.request('tools/call', { name: 'failing_job', ...undeclared });
    expect(required.error).toEqual({
      code: -32021,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
    const taskId = await startTask(client, 'slow_compute');
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(await errorCode(client, method, { taskId, inputResponses: {}, ...undeclared })).toBe(-32021);
    }
    expect(
      await errorCode(client, 'subscriptions/listen', { notifications: { taskIds: [taskId] }, ...undeclared }),
    ).toBe(-32021);
    expect(server.tasks.ids()).toEqual([taskId]);
  });
});

describe('ext-server over a raw in-memory pair: tasks', () => {
  it('creates flat, durable tasks and ignores a legacy params.task (CONF sep-2663-result-type-task-on-create, tasks-wire-field-renames)', async () => {
    const { client } = await rig();
    const created = await client.call('tools/call', {
      name: 'slow_compute',
      arguments: { polls: 2 },
      task: { ttl: 5 },
    });
    expect(Object.keys(created).sort()).toEqual([
      'createdAt',
      'lastUpdatedAt',
      'pollIntervalMs',
      'resultType',
      'status',
      'statusMessage',
      'taskId',
      'ttlMs',
    ]);
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 60_000, pollIntervalMs: 1_000 });
    expect(created.createdAt).toMatch(ISO);
    const first = await client.call('tasks/get', { taskId: created.taskId });
    expect(first).toMatchObject({
      resultType: 'complete',
      taskId: created.taskId,
      status: 'working',
      statusMessage: 'computing job (2/2)',
    });
    const done = await client.call('tasks/get', { taskId: created.taskId });
    expect(done).toMatchObject({
      status: 'completed',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'computed job' }] },
    });
    expect(await client.call('tools/call', { name: 'greet', arguments: { name: 'x' }, task: { ttl: 1 } })).toEqual({
      content: [{ type: 'text', text: 'Hello, x!' }],
      resultType: 'complete',
    });
    expect(await client.call('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).toMatchObject({
      resultType: 'complete',
    });
  });

  it('moves tasks on command: statuses, inline result with or without its own resultType, failed with a JSON-RPC error', async () => {
    const { server, client, clock } = await rig({
      tools: [taskTool('manual', { advance: 'manual' })],
      wholeSeconds: true,
    });
    const taskId = await startTask(client, 'manual');
    clock.time += 1_500;
    server.tasks.update(taskId, { statusMessage: 'half way' });
    expect(await client.call('tasks/get', { taskId })).toMatchObject({
      status: 'working',
      statusMessage: 'half way',
      createdAt: '2026-09-01T10:00:00Z',
      lastUpdatedAt: '2026-09-01T10:00:01Z',
    });
    server.tasks.complete(taskId, textResult('bad input', { isError: true }));
    expect(await client.call('tasks/get', { taskId })).toMatchObject({
      status: 'completed',
      result: { resultType: 'complete', isError: true },
    });
    const bare = await rig({ tools: [taskTool('manual', { advance: 'manual' })], stampInnerResultType: false });
    const bareId = await startTask(bare.client, 'manual');
    bare.server.tasks.complete(bareId, textResult('ok'));
    expect((await bare.client.call('tasks/get', { taskId: bareId })).result).toEqual(textResult('ok'));
    const failing = await startTask(client, 'protocol_error_job');
    const failed = await client.call('tasks/get', { taskId: failing });
    expect(failed).toMatchObject({
      status: 'failed',
      statusMessage: 'Tool execution failed: worker crashed',
      error: { code: -32603, message: 'Worker crashed' },
    });
    expect(failed).not.toHaveProperty('result');
    const toolError = await startTask(client, 'failing_job');
    expect(await client.call('tasks/get', { taskId: toolError })).toMatchObject({
      status: 'completed',
      result: { isError: true },
    });
  });

  it('asks for input, accepts partial answers, ignores stray keys and records every update (CONF tasks-mrtr-partial-fulfillment)', async () => {
    const { server, client } = await rig();
    const taskId = await startTask(client, 'multi_input');
    const asking = await client.call('tasks/get', { taskId });
    expect(asking.status).toBe('input_required');
    expect(Object.keys(asking.inputRequests as Json)).toEqual(['name', 'confirm']);
    expect((asking.inputRequests as Json).name).toEqual(elicitation('Your name?', { name: { type: 'string' } }));
    expect(
      await client.call('tasks/update', {
        taskId,
        inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
      }),
    ).toEqual({ resultType: 'complete' });
    const half = await client.call('tasks/get', { taskId });
    expect(half).toMatchObject({
      status: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    expect(half.inputRequests).not.toHaveProperty('name');
    await client.call('tasks/update', {
      taskId,
      inputResponses: {
        name: { action: 'decline' },
        bogus: {},
        confirm: { action: 'accept', content: { confirm: true } },
      },
    });
    expect((await client.call('tasks/get', { taskId })).result).toMatchObject({
      content: [{ text: 'answers: confirm,name' }],
    });
    const view = server.tasks.inspect(taskId);
    expect(view.updates).toHaveLength(2);
    expect(view.answers).toEqual({
      name: { action: 'accept', content: { name: 'Ada' } },
      confirm: { action: 'accept', content: { confirm: true } },
    });
    expect(() => server.tasks.requestInput(taskId, { name: elicitation('again?', {}) })).toThrow(/already used/);
  });

  it('carries sampling entries and programmatic input requests; unknown task ids get -32602', async () => {
    const { server, client } = await rig({ tools: [taskTool('manual', { advance: 'manual' })] });
    const summary = await startTask(client, 'summarize');
    expect((await client.call('tasks/get', { taskId: summary })).inputRequests).toEqual({
      summary: sampling('Summarise the document in one line.'),
    });
    await client.call('tasks/update', {
      taskId: summary,
      inputResponses: { summary: { role: 'assistant', content: { type: 'text', text: 'short' }, model: 'm' } },
    });
    expect((await client.call('tasks/get', { taskId: summary })).result).toMatchObject({
      content: [{ text: 'summary: short' }],
    });
    const manual = await startTask(client, 'manual');
    server.tasks.requestInput(
      manual,
      { a: elicitation('A?', { a: { type: 'string' } }), b: sampling('B?') },
      'need two answers',
    );
    expect(await client.call('tasks/get', { taskId: manual })).toMatchObject({
      status: 'input_required',
      statusMessage: 'need two answers',
    });
    await client.call('tasks/cancel', { taskId: manual });
    const cancelled = server.tasks.detailed(manual);
    expect(
      await client.call('tasks/update', {
        taskId: manual,
        inputResponses: { a: { action: 'accept', content: { a: 'late' } } },
      }),
    ).toEqual({ resultType: 'complete' });
    expect(server.tasks.detailed(manual)).toEqual(cancelled);
    expect(server.tasks.inspect(manual)).toMatchObject({
      answers: {},
      updates: [{ a: { action: 'accept', content: { a: 'late' } } }],
      issuedKeys: ['a', 'b'],
      cancelRequested: true,
    });
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel'])
      expect(await errorCode(client, method, { taskId: 'nope', inputResponses: {} })).toBe(-32602);
    expect(await errorCode(client, 'tasks/update', { taskId: manual })).toBe(-32602);
    expect(await errorCode(client, 'tasks/result', { taskId: manual })).toBe(-32601);
    expect(await errorCode(client, 'tasks/list')).toBe(-32601);
  });

  it('runs MRTR before the task: input_required + requestState, then a task reflecting the answer (CONF sep-2663-mrtr-synchronous-before-task-creation)', async () => {
    const { client } = await rig({
      requireInputCapabilities: true,
      tools: [
        mrtrTool('quick', {
          inputRequests: { ok: elicitation('OK?', { ok: { type: 'boolean' } }) },
          withState: false,
          then: () => outcome.text('fine'),
        }),
      ],
    });
    const withElicitation = { _meta: envelope({ capabilities: { elicitation: {} } }) };
    const round = await client.call('tools/call', { name: 'test_tool_with_task', arguments: {}, ...withElicitation });
    expect(round).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create' } },
    });
    expect(round).not.toHaveProperty('taskId');
    const state = String(round.requestState);
    const missing = await client.call('tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: {},
      requestState: state,
      ...withElicitation,
    });
    expect(missing.resultType).toBe('input_required');
    expect(
      await errorCode(client, 'tools/call', {
        name: 'test_tool_with_task',
        inputResponses: { user_name: {} },
        requestState: 'forged',
        ...withElicitation,
      }),
    ).toBe(-32602);
    const answers = { user_name: { action: 'accept', content: { name: 'Alice' } } };
    const created = await client.call('tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: answers,
      requestState: state,
      ...withElicitation,
    });
    expect(created.resultType).toBe('task');
    expect(created).not.toHaveProperty('requestState');
    expect(created).not.toHaveProperty('inputRequests');
    expect((await client.call('tasks/get', { taskId: created.taskId, ...withElicitation })).result).toMatchObject({
      content: [{ text: 'Hello, Alice!' }],
    });
    expect(
      await client.call('tools/call', {
        name: 'quick',
        arguments: {},
        inputResponses: { ok: { action: 'accept', content: { ok: true } } },
        ...withElicitation,
      }),
    ).toMatchObject({ resultType: 'complete', content: [{ text: 'fine' }] });
    expect((await client.request('tools/call', { name: 'quick', arguments: {} })).error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
  });

  it('acknowledges cancel in every mode: cancelled now, next poll, ignored (ends completed), or completed first', async () => {
    const states: Record<string, unknown[]> = {};
    for (const mode of ['cancel', 'deferred', 'ignore', 'complete'] as const) {
      const { client } = await rig({ cancel: mode });
      const taskId = await startTask(client, 'slow_compute', { polls: 3 });
      const ack = await client.call('tasks/cancel', { taskId });
      expect(ack).toEqual({ resultType: 'complete' });
      const seen: unknown[] = [];
      for (let i = 0; i < 3; i += 1) seen.push((await client.call('tasks/get', { taskId })).status);
      states[mode] = seen;
      expect(await client.call('tasks/cancel', { taskId })).toEqual({ resultType: 'complete' });
    }
    expect(states).toEqual({
      cancel: ['cancelled', 'cancelled', 'cancelled'],
      deferred: ['cancelled', 'cancelled', 'cancelled'],
      ignore: ['working', 'working', 'completed'],
      complete: ['completed', 'completed', 'completed'],
    });
  });

  it('changes pollIntervalMs over time, by schedule or by step', async () => {
    const { server, client } = await rig({
      pollIntervalMs: [100, 200, 400],
      tools: [
        taskTool('steps', { pollIntervalMs: 50, steps: [{ pollIntervalMs: 75 }, {}, { result: textResult('x') }] }),
      ],
    });
    const taskId = await startTask(client, 'slow_compute', { polls: 5 });
    const seen = [server.tasks.detailed(taskId).pollIntervalMs];
    for (let i = 0; i < 3; i += 1) seen.push((await client.call('tasks/get', { taskId })).pollIntervalMs as number);
    expect(seen).toEqual([100, 200, 400, 400]);
    const stepped = await client.call('tools/call', { name: 'steps' });
    expect(stepped.pollIntervalMs).toBe(50);
    expect((await client.call('tasks/get', { taskId: stepped.taskId })).pollIntervalMs).toBe(75);
  });

  it('applies ttlMs and the TTL backstop: keep, fail or delete after createdAt + ttlMs', async () => {
    for (const expiry of ['keep', 'fail', 'delete'] as const) {
      const { client, clock } = await rig({
        expiry,
        ttlMs: 1_000,
        tools: [taskTool('forever', { advance: 'manual' })],
      });
      const taskId = await startTask(client, 'forever');
      clock.time += 999;
      expect((await client.call('tasks/get', { taskId })).status).toBe('working');
      clock.time += 1;
      const after = await client.request('tasks/get', { taskId });
      if (expiry === 'keep') expect(after.result?.status).toBe('working');
      if (expiry === 'fail') expect(after.result).toMatchObject({ status: 'failed', error: { code: -32603 } });
      if (expiry === 'delete')
        expect(after.error).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });
    }
    const unlimited = await rig({ ttlMs: null, expiry: 'delete' });
    const taskId = await startTask(unlimited.client, 'slow_compute');
    unlimited.clock.time += 1e9;
    expect((await unlimited.client.call('tasks/get', { taskId })).ttlMs).toBeNull();
  });

  it('sends tasks/get with resultType "task" or none when asked to, and timed steps follow the injected clock', async () => {
    const { server, client, clock } = await rig({
      getResultType: 'task',
      tools: [
        taskTool('timed', { advance: { everyMs: 100 }, steps: [{ statusMessage: 'a' }, { result: textResult('t') }] }),
      ],
    });
    const taskId = await startTask(client, 'timed');
    expect(await client.call('tasks/get', { taskId })).toMatchObject({ resultType: 'task', status: 'working' });
    clock.time += 250;
    server.tick();
    server.getResultType = 'omit';
    const done = await client.call('tasks/get', { taskId });
    expect(done).toMatchObject({ status: 'completed' });
    expect(done).not.toHaveProperty('resultType');
  });
});

describe('ext-server over a raw in-memory pair: subscriptions and scripting', () => {
  it('acknowledges subscriptions/listen and pushes full DetailedTask notifications; switchable; ends on notifications/cancelled', async () => {
    const { server, client } = await rig({ tools: [taskTool('manual', { advance: 'manual' })] });
    const taskId = await startTask(client, 'manual');
    const listen = client.fire(
      'subscriptions/listen',
      { notifications: { taskIds: [taskId, 'unknown'], toolsListChanged: true } },
      'sub-1',
    );
    await until(() => client.notifications.length === 1);
    expect(client.notifications[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [META.subscriptionId]: 'sub-1' }, notifications: { taskIds: [taskId] } },
    });
    server.tasks.update(taskId, { statusMessage: 'step 1' });
    server.tasks.requestInput(taskId, { q: elicitation('Q?', { q: { type: 'string' } }) });
    const pushed = client.received('notifications/tasks').map((n) => n.params as Json);
    expect(pushed.map((p) => p.status)).toEqual(['working', 'input_required']);
    const { _meta, ...task } = pushed[1]!;
    expect(_meta).toEqual({ [META.subscriptionId]: 'sub-1' });
    expect(task).toEqual(server.tasks.detailed(taskId));
    server.notifications = 'ack-only';
    server.tasks.update(taskId, { statusMessage: 'silent' });
    server.notifications = 'on';
    await client.notify('notifications/cancelled', { requestId: 'sub-1' });
    await until(() => server.subscriptions.size === 0);
    server.tasks.complete(taskId, textResult('done'));
    expect(client.received('notifications/tasks')).toHaveLength(2);
    void listen.reply;
  });

  it('acknowledges with no task ids when notifications are off, and ends subscriptions gracefully', async () => {
    const { server, client } = await rig({ notifications: 'off' });
    const taskId = await startTask(client, 'slow_compute');
    const listen = client.fire('subscriptions/listen', { notifications: { taskIds: [taskId] } }, 7);
    await until(() => client.notifications.length === 1);
    expect((client.notifications[0]!.params as Json).notifications).toEqual({});
    await client.call('tasks/get', { taskId });
    expect(client.received('notifications/tasks')).toEqual([]);
    server.endSubscriptions();
    expect(await within(listen.reply)).toEqual({
      result: { resultType: 'complete', _meta: { [META.subscriptionId]: 7 } },
    });
  });

  it('keeps a log and takes overrides: NO_REPLY answered later, raw replies, count/params', async () => {
    const { server, client } = await rig();
    server.on('tasks/get', (_params, ctx) => {
      setTimeout(() => ctx.reply({ resultType: 'complete', taskId: 'late', status: 'working' }), 5);
      return NO_REPLY;
    });
    server.on('tools/list', () => raw({ jsonrpc: '2.0', id: 'wrong-id', result: {} }));
    expect(await within(client.call('tasks/get', { taskId: 'late' }))).toMatchObject({ taskId: 'late' });
    void client.request('tools/list');
    await until(() => server.sent.some((s) => s.message.id === 'wrong-id'));
    expect(server.count('tasks/get')).toBe(1);
    expect(server.params('tasks/get')[0]).toMatchObject({ taskId: 'late', _meta: envelope() });
    expect(server.counts()).toEqual({ 'tasks/get': 1, 'tools/list': 1 });
    expect(server.log[0]).toMatchObject({
      kind: 'request',
      method: 'tasks/get',
      at: Date.parse('2026-09-01T10:00:00.250Z'),
    });
  });
});

describe('ext-server with the SDK v2 Client', () => {
  it('connects with versionNegotiation auto (and pinned): era modern; tasks/get via request() with an explicit schema', async () => {
    for (const mode of ['auto', { pin: '2026-07-28' }] as const) {
      const server = new ExtServer({ tools: fixtureTools() });
      const { clientTransport } = await connectInMemory(server);
      const client = new Client(
        { name: 'sdk-v2', version: '2.4.0' },
        { versionNegotiation: { mode }, capabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
      await client.connect(clientTransport);
      cleanups.push(() => client.close());
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getServerCapabilities()?.extensions).toEqual({ [TASKS_EXTENSION]: {} });
      const { taskId } = server.tasks.create({ steps: [{ result: textResult('sdk') }] });
      const task = await client.request(
        { method: 'tasks/get', params: { taskId } },
        z.looseObject({ taskId: z.string(), status: z.string(), result: z.unknown() }),
      );
      expect(task).toMatchObject({ taskId, status: 'completed', result: { content: [{ type: 'text', text: 'sdk' }] } });
      expect(server.params('tasks/get')[0]!._meta).toMatchObject({
        [META.protocolVersion]: '2026-07-28',
        [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
  });

  it('lets a legacy SDK v1 client in through initialize on a dual-era server (extension advertised, no capabilities.tasks)', async () => {
    const server = new ExtServer({ tools: fixtureTools(), legacy: true });
    const { clientTransport } = await connectInMemory(server);
    const client = new V1Client({ name: 'sdk-v1', version: '1.32.2' });
    await client.connect(clientTransport);
    cleanups.push(() => client.close());
    expect(client.getServerCapabilities()).toEqual({ tools: {}, extensions: { [TASKS_EXTENSION]: {} } });
    expect(await client.callTool({ name: 'greet', arguments: { name: 'v1' } })).toEqual({
      content: [{ type: 'text', text: 'Hello, v1!' }],
    });
  });
});

describe('ext-server over stdio', () => {
  it('serves raw newline-delimited JSON: discover, a task with input, and subscription notifications tagged by id', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', stdioEntry, '--poll-interval-ms=20'],
      cwd: root,
      stderr: 'ignore',
    });
    const client = new RawClient(transport);
    await client.start();
    cleanups.push(() => client.close());
    expect((await client.call('server/discover')).supportedVersions).toEqual(['2026-07-28']);
    const taskId = await startTask(client, 'confirm_delete', { filename: 'a.txt' });
    void client.fire('subscriptions/listen', { notifications: { taskIds: [taskId] } }, 'listen-1');
    expect(await client.call('tasks/get', { taskId })).toMatchObject({ status: 'input_required', pollIntervalMs: 20 });
    await client.call('tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect((await client.call('tasks/get', { taskId })).result).toMatchObject({ content: [{ text: 'deleted a.txt' }] });
    await until(() => client.received('notifications/tasks').length === 3);
    expect(
      client
        .received('notifications/tasks')
        .map((n) => [(n.params as Json).status, ((n.params as Json)._meta as Json)[META.subscriptionId]]),
    ).toEqual([
      ['input_required', 'listen-1'],
      ['working', 'listen-1'],
      ['completed', 'listen-1'],
    ]);
  });

  it('maps command-line flags to server options', () => {
    expect(
      parseCliOptions([
        '--legacy',
        '--extension={"stability":"final"}',
        '--notifications=ack-only',
        '--cancel=ignore',
        '--poll-interval-ms=5,10',
        '--ttl-ms=null',
        '--tick-ms=20',
        '--http=0',
      ]),
    ).toEqual({
      server: {
        legacy: true,
        extension: { stability: 'final' },
        notifications: 'ack-only',
        cancel: 'ignore',
        pollIntervalMs: [5, 10],
        ttlMs: null,
      },
      tickMs: 20,
      httpPort: 0,
      verbose: false,
    });
    expect(() => parseCliOptions(['--cancel=maybe'])).toThrow(/--cancel must be one of/);
    expect(() => parseCliOptions(['--nope'])).toThrow(/unknown flag/);
  });

  it('lets the SDK v2 Client negotiate the modern era over stdio (auto probe)', async () => {
    const client = new Client(
      { name: 'sdk-v2', version: '2.4.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', stdioEntry],
        cwd: root,
        stderr: 'ignore',
      }),
    );
    cleanups.push(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
    expect((await client.callTool({ name: 'greet', arguments: { name: 'stdio' } })).content).toEqual([
      { type: 'text', text: 'Hello, stdio!' },
    ]);
    await expect(
      client.request({ method: 'tasks/get', params: { taskId: 'missing' } }, z.looseObject({})),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('runs the example analyze server: statuses, one elicitation via inputRequests, completion', async () => {
    const client = new RawClient(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', exampleEntry],
        cwd: root,
        // Each step lasts this long: the polls below (every 10 ms) must see each step's status
        // message even on a loaded machine, where a round trip can take tens of milliseconds.
        env: { PATH: process.env.PATH ?? '', EXT_STEP_MS: '300' },
        stderr: 'ignore',
      }),
    );
    await client.start();
    cleanups.push(() => client.close());
    const taskId = await startTask(client, 'analyze', { id: 7 });
    const messages = new Set<string>();
    let task: Json = {};
    async function pollUntil(status: string): Promise<void> {
      for (let i = 0; i < 400 && task.status !== status; i += 1) {
        task = await client.call('tasks/get', { taskId });
        if (typeof task.statusMessage === 'string') messages.add(task.statusMessage);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    await pollUntil('input_required');
    expect(Object.keys(task.inputRequests as Json)).toEqual(['depth']);
    await client.call('tasks/update', {
      taskId,
      inputResponses: { depth: { action: 'accept', content: { depth: 'full' } } },
    });
    await pollUntil('completed');
    expect(task.result).toMatchObject({
      content: [{ text: 'analysis of dataset 7: full report ready' }],
      structuredContent: { id: 7, depth: 'full' },
    });
    expect([...messages]).toEqual(
      expect.arrayContaining(['loading dataset 7', 'computing statistics', 'writing the report']),
    );
  });
});

describe('ext-server over Streamable HTTP (sessionless, 127.0.0.1)', () => {
  async function http(options: ExtServerOptions = {}, responseMode: 'json' | 'sse' = 'json') {
    const server = new ExtServer({ ...options, tools: [...fixtureTools(), ...(options.tools ?? [])] });
    const endpoint = await startExtHttpServer(server, { responseMode });
    cleanups.push(() => endpoint.close());
    return { server, endpoint };
  }
  const request = (method: string, params: Json = {}, id: number | string = 1): Json => ({
    jsonrpc: '2.0',
    id,
    method,
    params: { ...params, _meta: params._meta ?? envelope() },
  });

  it('lets the SDK v2 Client negotiate the modern era and drive tasks/* with Mcp-Name, over JSON and SSE answers', async () => {
    for (const mode of ['json', 'sse'] as const) {
      const { server, endpoint } = await http({}, mode);
      const client = new Client(
        { name: 'sdk-v2', version: '2.4.0' },
        { versionNegotiation: { mode: 'auto' }, capabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
      await client.connect(new StreamableHTTPClientTransport(endpoint.url));
      cleanups.push(() => client.close());
      expect(client.getProtocolEra()).toBe('modern');
      const { taskId } = server.tasks.create({
        steps: [{ inputRequests: { q: elicitation('Q?', { q: { type: 'string' } }) } }, { result: textResult('http') }],
      });
      const ack = z.looseObject({});
      const task = z.looseObject({ status: z.string(), result: z.unknown().optional() });
      expect((await client.request({ method: 'tasks/get', params: { taskId } }, task)).status).toBe('input_required');
      await client.request(
        {
          method: 'tasks/update',
          params: { taskId, inputResponses: { q: { action: 'accept', content: { q: 'a' } } } },
        },
        ack,
      );
      expect(await client.request({ method: 'tasks/get', params: { taskId } }, task)).toMatchObject({
        status: 'completed',
        result: { content: [{ text: 'http' }] },
      });
      await client.request({ method: 'tasks/cancel', params: { taskId } }, ack);
      for (const entry of server.log.filter((e) => e.method?.startsWith('tasks/')))
        expect(entry.headers?.['mcp-name']).toBe(taskId);
      expect(endpoint.rejected).toEqual([]);
    }
  });

  it('checks the standard headers: -32020 with HTTP 400 on a wrong or missing Mcp-Name / Mcp-Method (CONF sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get)', async () => {
    const { server, endpoint } = await http();
    const { taskId } = server.tasks.create({ advance: 'manual' });
    const get = request('tasks/get', { taskId });
    expect(await postMessage(endpoint.url, get)).toMatchObject({
      status: 200,
      response: { result: { taskId, status: 'working' } },
    });
    const wrong = await postMessage(endpoint.url, get, { 'mcp-name': 'someone-else' });
    expect(wrong).toMatchObject({ status: 400, response: { id: 1, error: { code: -32020 } } });
    expect(
      (await postMessage(endpoint.url, request('tasks/cancel', { taskId }), { 'mcp-name': null })).response?.error,
    ).toMatchObject({ code: -32020, message: expect.stringMatching(/Mcp-Name header is missing/) });
    expect(
      (await postMessage(endpoint.url, request('tools/call', { name: 'greet' }), { 'mcp-method': 'tasks/get' })).status,
    ).toBe(400);
    expect(
      (await postMessage(endpoint.url, get, { 'mcp-protocol-version': '2025-11-25' })).response?.error,
    ).toMatchObject({ code: -32020 });
    expect(
      (await postMessage(endpoint.url, get, { 'mcp-name': `=?base64?${Buffer.from(taskId).toString('base64')}?=` }))
        .status,
    ).toBe(200);
    expect(endpoint.rejected.map((r) => r.message.method)).toEqual([
      'tasks/get',
      'tasks/cancel',
      'tools/call',
      'tasks/get',
    ]);
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('maps modern errors to HTTP statuses, refuses GET, accepts notifications with 202', async () => {
    const { endpoint } = await http();
    expect(await postMessage(endpoint.url, request('tasks/result', { taskId: 'x' }))).toMatchObject({
      status: 404,
      response: { error: { code: -32601 } },
    });
    expect(
      await postMessage(endpoint.url, request('tools/list', { _meta: envelope({ protocolVersion: '2030-01-01' }) })),
    ).toMatchObject({ status: 400, response: { error: { code: -32022, data: { supported: ['2026-07-28'] } } } });
    expect(
      await postMessage(endpoint.url, request('tasks/get', { taskId: 'x', _meta: envelope({ extension: false }) })),
    ).toMatchObject({ status: 400, response: { error: { code: -32021 } } });
    expect(await postMessage(endpoint.url, request('tasks/get', { taskId: 'x' }))).toMatchObject({
      status: 200,
      response: { error: { code: -32602 } },
    });
    expect(
      (await postMessage(endpoint.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }))
        .status,
    ).toBe(202);
    expect((await postMessage(endpoint.url, {}, {}, 'GET')).status).toBe(405);
    expect((await postMessage(endpoint.url, request('tools/list'), { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    const sse = await http({}, 'sse');
    expect(
      await postMessage(sse.endpoint.url, request('tools/call', { name: 'greet', arguments: { name: 's' } })),
    ).toMatchObject({
      status: 200,
      contentType: 'text/event-stream',
      response: { result: { content: [{ text: 'Hello, s!' }] } },
    });
  });

  it('streams subscriptions/listen as SSE: acknowledgement, notifications/tasks, graceful end on close', async () => {
    const { server, endpoint } = await http();
    const { taskId } = server.tasks.create({ advance: 'manual' });
    const stream = await openStream(
      endpoint.url,
      request('subscriptions/listen', { notifications: { taskIds: [taskId] } }, 'l1'),
    );
    expect(stream.status).toBe(200);
    expect((await stream.next((m) => m.method === 'notifications/subscriptions/acknowledged')).params).toEqual({
      _meta: { [META.subscriptionId]: 'l1' },
      notifications: { taskIds: [taskId] },
    });
    server.tasks.complete(taskId, textResult('pushed'));
    expect((await stream.next((m) => m.method === 'notifications/tasks')).params).toMatchObject({
      taskId,
      status: 'completed',
      result: { content: [{ text: 'pushed' }] },
      _meta: { [META.subscriptionId]: 'l1' },
    });
    server.endSubscriptions();
    expect(await stream.next((m) => m.id === 'l1')).toEqual({
      jsonrpc: '2.0',
      id: 'l1',
      result: { resultType: 'complete', _meta: { [META.subscriptionId]: 'l1' } },
    });
    await within(stream.ended);
    const second = await openStream(
      endpoint.url,
      request('subscriptions/listen', { notifications: { taskIds: [taskId] } }, 'l2'),
    );
    await second.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    second.close();
    await until(() => server.subscriptions.size === 0);
    const refused = await postMessage(
      endpoint.url,
      request('subscriptions/listen', { notifications: { taskIds: [taskId] }, _meta: envelope({ extension: false }) }),
    );
    expect(refused).toMatchObject({
      status: 400,
      contentType: 'application/json',
      response: { error: { code: -32021 } },
    });
  });

  it('serves legacy clients through initialize when dual-era (SDK v1 and SDK v2 default), and modern ones through discover', async () => {
    const { server, endpoint } = await http({ legacy: true });
    const v1 = new V1Client({ name: 'sdk-v1', version: '1.32.2' });
    await v1.connect(new V1HttpTransport(endpoint.url));
    cleanups.push(() => v1.close());
    expect(v1.getServerCapabilities()).toEqual({ tools: {}, extensions: { [TASKS_EXTENSION]: {} } });
    expect(await v1.callTool({ name: 'slow_compute', arguments: { label: 'v1' } })).toMatchObject({
      content: [{ text: 'computed v1' }],
    });
    const v2 = new Client({ name: 'sdk-v2', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } });
    await v2.connect(new StreamableHTTPClientTransport(endpoint.url));
    cleanups.push(() => v2.close());
    expect(v2.getProtocolEra()).toBe('modern');
    expect(server.log.map((e) => e.method)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/call',
      'server/discover',
    ]);
  });
});

describe('cross-check with @modelcontextprotocol/ext-tasks 0.2.2 in its 2026 ("v2") mode', () => {
  /** A raw dispatcher on its own in-memory link: ext-tasks frames the `_meta` itself. */
  async function rawDispatch(server: ExtServer): Promise<(request: unknown) => Promise<JsonRpcResponse>> {
    const raw = await rawInMemory(server, { framing: false });
    cleanups.push(() => raw.close());
    return async (request) => {
      const { method, params } = request as { method: string; params?: Json };
      const reply = await raw.request(method, params ?? {});
      return reply.error !== undefined
        ? { kind: 'error', error: reply.error as never }
        : { kind: 'result', result: reply.result as never };
    };
  }
  const answerElicitation = async (): Promise<never> => ({ action: 'accept', content: { confirm: true } }) as never;

  it('drives working -> input_required -> tasks/update -> completed through an SDK Client adapter with rawDispatch + v2RequestFraming', async () => {
    const server = new ExtServer({ tools: fixtureTools(), pollIntervalMs: 10 });
    const { clientTransport } = await connectInMemory(server);
    const client = new Client({ name: 'ext-tasks-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(clientTransport);
    const inputs: string[] = [];
    const session = createTaskSessionFromClient(client, {
      endpointId: 'ext-server-memory',
      rawDispatch: await rawDispatch(server),
      v2RequestFraming: {
        protocolVersion: '2026-07-28',
        clientInfo: { name: 'ext-tasks-host', version: '1.0.0' },
        clientCapabilities: { elicitation: {} },
      },
      onInputRequest: async (request, context) => {
        inputs.push(`${request.kind}:${context.delivery}:${context.inputId ?? ''}`);
        return answerElicitation();
      },
    });
    cleanups.push(async () => {
      await session.close();
      await client.close();
    });
    expect(session.capabilities).toMatchObject({ execution: true, inputResponses: true, inventory: 'known-handles' });
    const execution = await session.callTool('confirm_delete', { filename: 'b.txt' });
    expect(execution.kind).toBe('task');
    const outcome = await within(execution.result(), 5_000);
    expect(outcome).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'deleted b.txt' }] },
    });
    expect(inputs).toEqual(['elicitation:task-update:confirm']);
    const taskId = (execution as { handle: { taskId: string } }).handle.taskId;
    expect(server.tasks.inspect(taskId).updates).toEqual([
      { confirm: { action: 'accept', content: { confirm: true } } },
    ]);
    expect(
      server.received('tasks/get').every((e) => (e.params._meta as Json)[META.protocolVersion] === '2026-07-28'),
    ).toBe(true);
  });

  it('works through a hand-built ConnectedMcpSessionPort (withTasks) too, including MRTR before the task', async () => {
    const server = new ExtServer({ tools: fixtureTools(), pollIntervalMs: 10 });
    const raw = await rawInMemory(server, { framing: false });
    cleanups.push(() => raw.close());
    const base = envelope({ capabilities: { elicitation: {} }, clientInfo: { name: 'port', version: '1' } });
    const port: ConnectedMcpSessionPort = {
      endpointId: 'hand-built',
      taskCapabilities: { generation: 'v2', capabilities: {} },
      invalidated: false,
      dispatch: async (request) => {
        const { method, params = {} } = request as { method: string; params?: Json };
        const meta = { ...base, ...(params._meta as Json | undefined) };
        meta[META.clientCapabilities] = {
          ...(base[META.clientCapabilities] as Json),
          ...(meta[META.clientCapabilities] as Json),
        };
        const reply = await raw.request(method, { ...params, _meta: meta });
        return reply.error !== undefined
          ? { kind: 'error', error: reply.error as never }
          : { kind: 'result', result: reply.result as never };
      },
      onServerRequest: () => () => undefined,
      onNotification: () => () => undefined,
      onInvalidated: () => () => undefined,
    };
    const deliveries: string[] = [];
    const session = withTasks(port, {
      onInputRequest: async (request, context) => {
        deliveries.push(context.delivery);
        return { action: 'accept', content: { name: 'Grace' } } as never;
      },
    });
    cleanups.push(() => session.close());
    const execution = await session.callTool('test_tool_with_task', {});
    expect(execution.kind).toBe('task');
    expect(await within(execution.result(), 5_000)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'Hello, Grace!' }] },
    });
    expect(deliveries).toEqual(['request-retry']);
    const immediate = await session.callTool('greet', { name: 'port' });
    expect(immediate.kind).toBe('immediate');
    expect(await immediate.result()).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'Hello, port!' }] },
    });
  });

  it('sees a non-empty extension settings object as "no tasks" (ext-tasks 0.2.2 wants exactly {}); the server then answers synchronously', async () => {
    const server = new ExtServer({ tools: fixtureTools(), extension: { stability: 'final' } });
    const { clientTransport } = await connectInMemory(server);
    const client = new Client({ name: 'ext-tasks-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(clientTransport);
    const session = createTaskSessionFromClient(client, {
      endpointId: 'non-empty-settings',
      rawDispatch: await rawDispatch(server),
      v2RequestFraming: {
        protocolVersion: '2026-07-28',
        clientInfo: { name: 'ext-tasks-host', version: '1.0.0' },
        clientCapabilities: {},
      },
    });
    cleanups.push(async () => {
      await session.close();
      await client.close();
    });
    expect(session.capabilities.execution).toBe(false);
    const execution = await session.callTool('slow_compute', { label: 'plain' });
    expect(execution.kind).toBe('immediate');
    expect(await execution.result()).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'computed plain' }] },
    });
    expect(server.tasks.ids()).toEqual([]);
  });
});
