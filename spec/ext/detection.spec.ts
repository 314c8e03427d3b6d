/**
 * Which wire a connection gets ([E20]), and how the tasks extension is declared: per request,
 * on `tools/call`, every `tasks/*` request and `subscriptions/listen`, never at the `Client` level
 * ([E1], [E2]).
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskNotSupportedError, TaskProtocolError, TaskRpcError, type McpClient } from '../../lib/index.js';
import { rejection } from '../helpers.js';
import {
  connectInMemory,
  ExtServer,
  fixtureTools,
  rpcError,
  taskTool,
  textResult,
} from '../support/ext-server/index.js';
import { creating, ScriptedServer } from '../support/scripted-server.js';
import {
  CLIENT_CAPABILITIES,
  closeRigs,
  declared,
  EXT,
  extRig,
  lastTaskId,
  ManualClock,
  sdkV2Client,
} from './support.js';

afterEach(closeRigs);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** The two ways to reach a dual-era server on its legacy era. */
const LEGACY_SDKS = [
  { sdk: 'v1', over: 'SDK v1' },
  { sdk: 'v2', over: 'SDK v2 in legacy negotiation' },
] as const;

/** A TaskClient on the legacy era of `server`: over SDK v1, or SDK v2 in legacy negotiation. */
async function legacyTasks(server: ExtServer, sdk: 'v1' | 'v2' = 'v1'): Promise<TaskClient> {
  let client: McpClient;
  if (sdk === 'v2') {
    const v2 = await sdkV2Client(server, {}, 'legacy');
    expect(v2.getProtocolEra()).toBe('legacy');
    client = v2;
  } else {
    const { clientTransport } = await connectInMemory(server);
    const v1 = new V1Client({ name: 'v1', version: '1.0.0' });
    await v1.connect(clientTransport);
    cleanups.push(() => v1.close());
    client = v1;
  }
  const tasks = new TaskClient(client);
  cleanups.push(() => tasks.close());
  return tasks;
}

describe('which wire a connection gets ([E20])', () => {
  for (const settings of [{}, { specVersion: '2026-07-28', stability: 'final' }, { experimental: true }]) {
    it(`uses the extension wire on the modern era when the server advertises it as ${JSON.stringify(settings)}`, async () => {
      const rig = await extRig({ server: { extension: settings } });
      expect(rig.tasks.wire).toBe('io.modelcontextprotocol/tasks');
      const handle = await rig.tasks.callToolAsTask('slow_compute');
      expect(handle.kind).toBe('task');
      expect(handle.wire).toBe('io.modelcontextprotocol/tasks');
    });
  }

  it('runs plain calls only on a modern server that does not advertise the extension; requireTask says why', async () => {
    const rig = await extRig({ server: { extension: null } });
    const handle = await rig.tasks.callToolAsTask('slow_compute', { label: 'plain' });
    expect(handle.kind).toBe('immediate');
    expect(await handle.result()).toMatchObject({ content: [{ type: 'text', text: 'computed plain' }] });
    const error = await rejection(rig.tasks.callToolAsTask('slow_compute', {}, { requireTask: true }));
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect((error as Error).message).toMatch(/io\.modelcontextprotocol\/tasks extension/);
    // [E2]: nothing declared the extension, so the server never made a task; requireTask fails
    // before anything is sent.
    expect(rig.server.tasks.ids()).toEqual([]);
    expect(rig.server.params('tools/call').map((p) => declared(p)?.extensions)).toEqual([undefined]);
  });

  it('tools() says no tool can run as a task on a modern server without the extension (every call is plain)', async () => {
    const rig = await extRig({ server: { extension: null } });
    const tools = await rig.tasks.tools();
    expect(tools.length).toBeGreaterThan(0);
    // Not `server-decides`: without the extension the server cannot make a task of any call ([E20]).
    expect(new Set(tools.map((t) => t.taskSupport))).toEqual(new Set(['forbidden']));
    // The wire names the era's protocol form, as '2025-11-25' does on a legacy server with no tasks.
    expect(rig.tasks.wire).toBe('io.modelcontextprotocol/tasks');
    const handle = await rig.tasks.callToolAsTask('slow_compute');
    expect(handle.kind).toBe('immediate');
    const error = await rejection(rig.tasks.callToolAsTask('slow_compute', {}, { requireTask: true }));
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect(error).toMatchObject({ feature: 'tasks' });
    expect(rig.server.count('tools/call')).toBe(1);
  });

  it('uses the 2025-11-25 wire on a legacy session whose server has capabilities.tasks (SDK v2, automatic negotiation)', async () => {
    const server = new ScriptedServer({ tools: [{ name: 'job', taskSupport: 'optional' }] });
    creating(server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const tasks = await TaskClient.connect(clientSide, { sdk: 'v2' });
    cleanups.push(() => tasks.close());
    expect((tasks.client as unknown as Client).getProtocolEra()).toBe('legacy');
    expect(tasks.wire).toBe('2025-11-25');
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('task');
    expect(handle.wire).toBe('2025-11-25');
    expect(server.params('tools/call')[0]).toMatchObject({ task: {} });
  });

  describe('a dual-era server reached on the legacy era, advertising only the extension', () => {
    for (const { sdk, over } of LEGACY_SDKS)
      it(`over ${over}: plain calls work, requireTask fails with TaskNotSupportedError naming SDK v2 automatic negotiation`, async () => {
        const server = new ExtServer({ tools: fixtureTools(), legacy: true });
        const tasks = await legacyTasks(server, sdk);
        expect(tasks.wire).toBe('2025-11-25');
        const plain = await tasks.callToolAsTask('slow_compute', { label: 'legacy' });
        expect(plain.kind).toBe('immediate');
        expect(await plain.result()).toEqual({
          content: [{ type: 'text', text: 'computed legacy' }],
          structuredContent: { label: 'legacy' },
        });
        const error = await rejection(tasks.callToolAsTask('slow_compute', {}, { requireTask: true }));
        expect(error).toBeInstanceOf(TaskNotSupportedError);
        expect(error).toMatchObject({ feature: 'tasks', toolName: 'slow_compute' });
        expect((error as Error).message).toMatch(/connect with SDK v2 in automatic version negotiation/);
        expect(server.tasks.ids()).toEqual([]);
      });

    it('TaskClient.connect reaches it on the modern era and gets tasks', async () => {
      const server = new ExtServer({ tools: fixtureTools(), legacy: true });
      const { clientTransport } = await connectInMemory(server);
      const tasks = await TaskClient.connect(clientTransport);
      cleanups.push(() => tasks.close());
      expect(tasks.wire).toBe('io.modelcontextprotocol/tasks');
      expect((await tasks.callToolAsTask('slow_compute', {}, { requireTask: true })).kind).toBe('task');
      expect(server.count('initialize')).toBe(0);
    });
  });

  describe('the same server: tools() and task-only tools tell the truth on the legacy era', () => {
    /**
     * The dual-era server, whose legacy listing declares `execution.taskSupport` as a 2025-11-25
     * server's would: `slow_compute` optional, `task_only` required (refused as a plain call with
     * -32021), `greet` none.
     */
    const dualServer = (): ExtServer => {
      const server = new ExtServer({
        tools: [
          ...fixtureTools(),
          taskTool('task_only', { steps: [{ result: textResult('done') }] }, { undeclared: 'reject' }),
        ],
        legacy: true,
      });
      const declared: Record<string, string> = { slow_compute: 'optional', task_only: 'required' };
      server.on('tools/list', (_params, ctx) => {
        expect(ctx.era).toBe('legacy');
        const tools = [...server.tools.values()].map((tool) => ({
          name: tool.name,
          inputSchema: { type: 'object' },
          ...(declared[tool.name] === undefined ? {} : { execution: { taskSupport: declared[tool.name] } }),
        }));
        return { tools };
      });
      return server;
    };
    const fix = /connect with SDK v2 in automatic version negotiation/;

    for (const { sdk, over } of LEGACY_SDKS)
      it(`over ${over}`, async () => {
        const server = dualServer();
        const tasks = await legacyTasks(server, sdk);
        const tools = await tasks.tools();
        const byName = new Map(tools.map((tool) => [tool.name, tool]));
        // No tool can become a task on this connection, whatever it declares; each says why.
        expect(new Set(tools.map((tool) => tool.taskSupport))).toEqual(new Set(['unavailable']));
        expect(byName.get('slow_compute')).toMatchObject({
          taskSupport: 'unavailable',
          declaredTaskSupport: 'optional',
        });
        expect(byName.get('task_only')).toMatchObject({ taskSupport: 'unavailable', declaredTaskSupport: 'required' });
        expect(byName.get('greet')).toMatchObject({ taskSupport: 'unavailable', declaredTaskSupport: 'forbidden' });
        for (const tool of tools) expect(tool.unavailableReason).toMatch(fix);
        // A required tool fails with TaskNotSupportedError naming the fix, before anything is sent.
        const required = await rejection(tasks.callToolAsTask('task_only'));
        expect(required).toBeInstanceOf(TaskNotSupportedError);
        expect(required).toMatchObject({ feature: 'tasks', toolName: 'task_only' });
        expect((required as Error).message).toMatch(/runs only as a task/);
        expect((required as Error).message).toMatch(fix);
        expect(server.count('tools/call')).toBe(0);
        // An optional one runs plain.
        const plain = await tasks.callToolAsTask('slow_compute', { label: 'plain' });
        expect(plain.kind).toBe('immediate');
        expect(server.tasks.ids()).toEqual([]);
      });

    it('a tool the server refuses as a plain call although its listing declares nothing: TaskNotSupportedError naming the fix, with the server’s -32021 as its cause (SDK v1)', async () => {
      // The fixture listing declares no execution.taskSupport; failing_job is refused (-32021) without the extension.
      const server = new ExtServer({ tools: fixtureTools(), legacy: true });
      const tasks = await legacyTasks(server);
      const error = await rejection(tasks.callToolAsTask('failing_job'));
      expect(error).toBeInstanceOf(TaskNotSupportedError);
      expect(error).toMatchObject({
        feature: 'tasks',
        toolName: 'failing_job',
        cause: { name: 'TaskRpcError', code: -32021 },
      });
      expect((error as Error).message).toMatch(fix);
      expect(server.count('tools/call')).toBe(1);
    });
  });

  it('a plain call refused with -32021 naming another capability (elicitation) on the legacy era: the server’s TaskRpcError naming it, not "runs only as a task" ([E11])', async () => {
    // -32021 is generic: only data.requiredCapabilities.extensions naming the extension makes it
    // a refusal of a tool that runs only as a task ([E20]).
    const server = new ExtServer({ tools: fixtureTools(), legacy: true });
    server.on('tools/call', () => {
      throw rpcError(-32021, 'Missing required client capability', { requiredCapabilities: { elicitation: {} } });
    });
    const tasks = await legacyTasks(server);
    expect(tasks.wire).toBe('2025-11-25');
    const error = await rejection(tasks.callToolAsTask('slow_compute'));
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).not.toBeInstanceOf(TaskNotSupportedError);
    expect(error).toMatchObject({ code: -32021, method: 'tools/call', kind: 'server', transient: false });
    expect((error as Error).message).toBe(
      'tools/call failed: Missing required client capability (the server requires a client capability the request did not declare: elicitation)',
    );
    expect(server.count('tools/call')).toBe(1);
  });

  it('tools() on a 2025-11-25 server without the tasks capability: a tool that declares task support is unavailable, saying why', async () => {
    const server = new ScriptedServer({
      capabilities: { tools: {} },
      tools: [{ name: 'job', taskSupport: 'required' }, { name: 'maybe', taskSupport: 'optional' }, { name: 'plain' }],
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const tasks = await TaskClient.connect(clientSide, { sdk: 'v2' });
    cleanups.push(() => tasks.close());
    expect(tasks.wire).toBe('2025-11-25');
    const tools = await tasks.tools();
    expect(
      tools.map(({ name, taskSupport, declaredTaskSupport }) => ({ name, taskSupport, declaredTaskSupport })),
    ).toEqual([
      { name: 'job', taskSupport: 'unavailable', declaredTaskSupport: 'required' },
      { name: 'maybe', taskSupport: 'unavailable', declaredTaskSupport: 'optional' },
      { name: 'plain', taskSupport: 'forbidden', declaredTaskSupport: undefined },
    ]);
    expect(tools[0]?.unavailableReason).toMatch(/does not support task-augmented tools\/call/);
    expect(tools[2]).not.toHaveProperty('unavailableReason');
  });

  it('TaskClient.connect negotiates automatically, with or without sdk: "v2"', async () => {
    for (const options of [{}, { sdk: 'v2' as const }]) {
      const server = new ExtServer({ tools: fixtureTools() });
      const { clientTransport } = await connectInMemory(server);
      const tasks = await TaskClient.connect(clientTransport, options);
      cleanups.push(() => tasks.close());
      expect((tasks.client as unknown as Client).getProtocolEra()).toBe('modern');
      expect(tasks.wire).toBe('io.modelcontextprotocol/tasks');
      expect(server.log[0]?.method).toBe('server/discover');
    }
  });

  it('uses the extension wire on an SDK v2 client pinned to 2026-07-28', async () => {
    const server = new ExtServer({ tools: fixtureTools() });
    const { clientTransport } = await connectInMemory(server);
    const client = new Client(
      { name: 'pinned', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(clientTransport);
    cleanups.push(() => client.close());
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    expect(tasks.wire).toBe('io.modelcontextprotocol/tasks');
    expect((await tasks.callToolAsTask('slow_compute')).wire).toBe('io.modelcontextprotocol/tasks');
  });
});

describe('per-request opt-in ([E1], [E2])', () => {
  it('declares the extension and the input the callbacks answer on tools/call, every tasks/* request and subscriptions/listen, and not roots, which nothing here answers ([E31], [E35])', async () => {
    const rig = await extRig({
      server: { cancel: 'ignore', tools: [taskTool('manual', { advance: 'manual' })] },
      client: {
        onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
        onSampling: () => ({ role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' }),
        capabilities: { roots: { listChanged: true } },
      },
    });
    const asking = await rig.tasks.callToolAsTask('confirm_delete', { filename: 'x' });
    const result = asking.result();
    while (!asking.settled) await rig.clock.advance(500);
    await result;
    const running = await rig.tasks.callToolAsTask('manual');
    await rig.clock.advance(100);
    await running.cancel();
    // The SDK client declares roots, but a roots/list in inputRequests would reach none of its handlers.
    const full = { elicitation: {}, sampling: {}, extensions: { [EXT]: {} } };
    const methods = ['tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel', 'subscriptions/listen'];
    for (const method of methods) {
      const sent = rig.server.received(method);
      expect(sent.length, method).toBeGreaterThan(0);
      for (const entry of sent) expect(declared(entry), method).toEqual(full);
    }
  });

  it('an instrumentation that adds _meta entries of the envelope’s names does not replace the declaration: the envelope wins ([E1])', async () => {
    const rig = await extRig({
      client: {
        instrumentation: {
          attach: () => ({
            call: () => ({
              request: () => ({
                meta: {
                  [CLIENT_CAPABILITIES]: {},
                  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
                },
                end: () => {},
              }),
            }),
          }),
        },
      },
    });
    const handle = await rig.tasks.callToolAsTask('slow_compute');
    expect(handle.kind).toBe('task');
    const [call] = rig.server.received('tools/call');
    expect(declared(call!)).toEqual({ extensions: { [EXT]: {} } });
    expect((call!.params._meta as Record<string, unknown>).traceparent).toMatch(/^00-/);
  });

  it('never opts in at the Client level: discover declares no extension, and the user’s own plain callTool gets a plain result, no task', async () => {
    const rig = await extRig({ client: { onElicitation: () => ({ action: 'decline' }) } });
    expect(declared(rig.server.received('server/discover')[0]!)).toEqual({ elicitation: {} });
    const sdk = rig.tasks.client as unknown as Client;
    const plain = await sdk.callTool({ name: 'slow_compute', arguments: { label: 'mine' } });
    expect(plain).toEqual({ content: [{ type: 'text', text: 'computed mine' }], structuredContent: { label: 'mine' } });
    expect(rig.server.tasks.ids()).toEqual([]);
    expect(declared(rig.server.received('tools/call')[0]!)).toEqual({ elicitation: {} });
    // The library's own call, on the same SDK client, opts in and gets a task.
    expect((await rig.tasks.callToolAsTask('slow_compute')).kind).toBe('task');
    expect(rig.server.tasks.ids()).toHaveLength(1);
  });

  it('gives an immediate handle when the server answers a declaring call at once', async () => {
    const rig = await extRig();
    const handle = await rig.tasks.callToolAsTask('greet', { name: 'now' });
    expect(handle.kind).toBe('immediate');
    expect(handle.wire).toBe('io.modelcontextprotocol/tasks');
    expect(handle.taskId).toBeUndefined();
    expect(await handle.result()).toMatchObject({ content: [{ type: 'text', text: 'Hello, now!' }] });
    expect(declared(rig.server.received('tools/call')[0]!)?.extensions).toEqual({ [EXT]: {} });
    expect(rig.server.count('tasks/get')).toBe(0);
  });

  it('sends no legacy params.task: the server alone decides ([E2])', async () => {
    const rig = await extRig();
    await rig.tasks.callToolAsTask('slow_compute', {}, { ttlMs: 1_000 });
    expect(rig.server.params('tools/call')[0]).not.toHaveProperty('task');
  });

  it('rejects a task the server returns to a call that did not declare the extension ([E2])', async () => {
    const rig = await extRig({ server: { extension: null } });
    rig.server.on('tools/call', () => ({ resultType: 'task', ...rig.server.tasks.create({ advance: 'manual' }) }));
    const error = await rejection(rig.tasks.callToolAsTask('anything'));
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as Error).message).toMatch(/did not declare the tasks extension/);
  });

  it('a CreateTaskResult refused as malformed (an unknown status) does not leave its task running: one tasks/cancel for its id', async () => {
    const rig = await extRig();
    let made = '';
    rig.server.on('tools/call', () => {
      const task = rig.server.tasks.create({ advance: 'manual' });
      made = task.taskId;
      return { resultType: 'task', ...task, status: 'exploding' };
    });
    const error = await rejection(rig.tasks.callToolAsTask('anything'));
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect((error as TaskProtocolError).method).toBe('tools/call');
    await rig.clock.advance(100);
    expect(rig.server.params('tasks/cancel').map((p) => p.taskId)).toEqual([made]);
    expect(rig.server.tasks.inspect(made).cancelRequested).toBe(true);
    expect(rig.tasks.active).toBe(0);
  });

  describe('a reply that is neither a task nor a tool result is refused, never read as an empty success', () => {
    it.each([
      {
        shape: 'a flat task without resultType',
        form: (task: Record<string, unknown>) => ({ ...task }),
        cancels: true,
      },
      { shape: 'the 2025-11-25 nested form', form: (task: Record<string, unknown>) => ({ task }), cancels: true },
      { shape: 'an empty object', form: () => ({}), cancels: false },
      { shape: 'resultType "complete" without content', form: () => ({ resultType: 'complete' }), cancels: false },
    ])('$shape: TaskProtocolError, and a task id it names gets one tasks/cancel', async ({ form, cancels }) => {
      const rig = await extRig();
      let made = '';
      rig.server.on('tools/call', () => {
        const task = rig.server.tasks.create({ advance: 'manual' });
        made = task.taskId;
        return form(task);
      });
      const error = await rejection(rig.tasks.callToolAsTask('anything'));
      expect(error).toBeInstanceOf(TaskProtocolError);
      expect((error as Error).message).toMatch(/neither a task .* nor a tool result/);
      await rig.clock.advance(100);
      expect(rig.server.params('tasks/cancel').map((p) => p.taskId)).toEqual(cancels ? [made] : []);
      expect(rig.tasks.active).toBe(0);
    });
  });

  it('a CreateTaskResult refused as malformed that arrives after the call was given up (aborted) still gets one tasks/cancel for its id', async () => {
    const rig = await extRig();
    let made = '';
    let reply: (() => void) | undefined;
    rig.server.on('tools/call', async () => {
      await new Promise<void>((resolve) => (reply = resolve));
      const task = rig.server.tasks.create({ advance: 'manual' });
      made = task.taskId;
      return { resultType: 'task', ...task, status: 'exploding' };
    });
    const controller = new AbortController();
    const call = rejection(rig.tasks.callToolAsTask('anything', {}, { signal: controller.signal }));
    await rig.clock.advance(10);
    expect(rig.server.count('tools/call')).toBe(1);
    controller.abort();
    const error = await call;
    expect((error as Error).message).toMatch(/cancelled as soon as its id arrives/);
    reply?.();
    await rig.clock.advance(100);
    expect(rig.server.params('tasks/cancel').map((p) => p.taskId)).toEqual([made]);
    expect(rig.server.tasks.inspect(made).cancelRequested).toBe(true);
    expect(rig.tasks.active).toBe(0);
  });

  it('accepts a task id of 10,000 characters (an opaque token: the spec sets no limit) and uses it on every request', async () => {
    const taskId = `tok_${'A'.repeat(9_996)}`;
    const rig = await extRig({
      server: { taskIds: () => taskId, tools: [taskTool('manual', { advance: 'manual' })] },
    });
    const handle = await rig.tasks.callToolAsTask('manual');
    expect(handle.taskId).toBe(taskId);
    rig.server.tasks.complete(taskId, textResult('done'));
    const result = handle.result();
    while (!handle.settled) await rig.clock.advance(500);
    expect((await result).content).toEqual(textResult('done').content);
    expect(rig.server.params('tasks/get').every((p) => p.taskId === taskId)).toBe(true);
  });

  it('keeps the declaration per request when the TaskClient wraps an SDK v2 client made elsewhere', async () => {
    const server = new ExtServer({ tools: [taskTool('manual', { advance: 'manual' })] });
    const client = await sdkV2Client(server, { elicitation: {} });
    const clock = new ManualClock();
    // Its onElicitation answers: the requests declare elicitation ([E35]; spec/ext/capabilities.spec.ts).
    const tasks = new TaskClient(client, { clock, onElicitation: () => ({ action: 'decline' }) });
    cleanups.push(() => tasks.close());
    const handle = await tasks.callToolAsTask('manual');
    await clock.advance(1_000);
    server.tasks.complete(lastTaskId(server), textResult('done'));
    const result = handle.result();
    await clock.advance(1_000);
    await result;
    for (const entry of server.log.filter((e) => e.kind === 'request' && e.method !== 'server/discover')) {
      expect(declared(entry), entry.method).toEqual({ elicitation: {}, extensions: { [EXT]: {} } });
    }
    expect(declared(server.received('server/discover')[0]!)).toEqual({ elicitation: {} });
  });
});
