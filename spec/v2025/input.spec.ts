/**
 * input_required: per-task elicitation and sampling callbacks routed by task id, progress for the
 * task's whole life (issue 4). Against the SDK McpServer in process and over Streamable HTTP on
 * 127.0.0.1, and server-everything over stdio. On SDK v2, both real transports connect with the
 * automatic era negotiation, which must fall back to legacy against these servers.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createExampleServer, type ExampleServerOptions } from '../../examples/server.js';
import {
  TaskAbortError,
  TaskClient,
  TaskFailedError,
  TaskInputError,
  TaskNotSupportedError,
  type TaskClientOptions,
  type TaskMetrics,
} from '../../lib/index.js';
import { connectPair, flush, statuses, until } from '../helpers.js';
import { creating } from '../support/scripted-server.js';
import { scriptedTaskClient } from '../support/scripted-task-client.js';
import { startHttpServer } from '../support/http-server.js';
import {
  connectOptions,
  httpTransport,
  negotiatedEra,
  schemas,
  setUserRequestHandler,
  stdioTransport,
  type SpecClient,
} from '../support/sdk.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Records every response the client sends. */
function recordResponses(sent: JSONRPCMessage[]): (transport: Transport) => Transport {
  return (transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      sent.push(message);
      return send(message, options);
    };
    return transport;
  };
}

async function setup(
  options: { server?: ExampleServerOptions; tasks?: TaskClientOptions; capabilities?: Record<string, object> } = {},
  beforeWrap?: (client: SpecClient) => void,
): Promise<{ tasks: TaskClient; sent: JSONRPCMessage[]; client: SpecClient }> {
  const { server, store } = createExampleServer({ pollInterval: 50, ...options.server });
  const sent: JSONRPCMessage[] = [];
  const pair = await connectPair(
    server,
    { capabilities: options.capabilities ?? { elicitation: {}, sampling: {} } },
    recordResponses(sent),
  );
  beforeWrap?.(pair.client);
  const tasks = new TaskClient(pair.client, options.tasks);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
    store.cleanup();
  });
  return { tasks, sent, client: pair.client };
}

const accept = (confirm: boolean) => ({ action: 'accept' as const, content: { confirm } });

describe('input_required callbacks', () => {
  it('routes an elicitation to its task, tags our answer with the task id [R31], keeps statuses flowing', async () => {
    const { tasks, sent } = await setup();
    const asked: Array<{ taskId: string | undefined; tool: string | undefined; message: unknown }> = [];
    const handle = await tasks.callToolAsTask(
      'confirm_delete',
      { path: '/data/a' },
      {
        onElicitation: (params, ctx) => {
          asked.push({ taskId: ctx.taskId, tool: ctx.toolName, message: params.message });
          expect(ctx.handle).toBe(handle);
          expect(ctx.signal.aborted).toBe(false);
          return accept(true);
        },
      },
    );
    const seen = await statuses(handle);
    // The task may be created already in input_required (its notification can overtake it).
    expect(seen.slice(seen.indexOf('input_required'))).toEqual(['input_required', 'working', 'completed']);
    expect(seen.slice(0, seen.indexOf('input_required')).every((s) => s === 'working')).toBe(true);
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'deleted /data/a' }]);
    expect(asked).toEqual([{ taskId: handle.taskId, tool: 'confirm_delete', message: 'Delete /data/a?' }]);
    const answer = sent.find((m) => 'result' in m && (m.result as { action?: string }).action === 'accept');
    expect((answer as { result: { _meta: Record<string, unknown> } }).result._meta[RELATED]).toEqual({
      taskId: handle.taskId,
    });
    // [R29]: one tasks/result issued on entering input_required and never repeated while it waits;
    // once the task is terminal, a second short one may join it if the first answers late (D5).
    const results = sent.filter((m) => 'method' in m && m.method === 'tasks/result').length;
    expect(results).toBeGreaterThanOrEqual(1);
    expect(results).toBeLessThanOrEqual(2);
  });

  it('two tasks in input_required at once never get each other’s questions', async () => {
    const { tasks } = await setup();
    // Answer the second one first, to make crossed wires visible: /a's callback answers only once
    // /b's has answered (a turn after it returned).
    let answeredB!: () => void;
    const bAnswered = new Promise<void>((resolve) => (answeredB = resolve));
    const calls = await Promise.all(
      ['/a', '/b'].map((path) =>
        tasks.callToolAsTask(
          'confirm_delete',
          { path },
          {
            onElicitation: async (params) => {
              expect(params.message).toBe(`Delete ${path}?`);
              if (path === '/a') {
                await bAnswered;
                return accept(true);
              }
              setImmediate(answeredB);
              return { action: 'decline' as const };
            },
          },
        ),
      ),
    );
    const [a, b] = await Promise.all(calls.map((h) => h.result()));
    expect(a?.content).toEqual([{ type: 'text', text: 'deleted /a' }]);
    expect(b?.content).toEqual([{ type: 'text', text: 'kept /b (decline)' }]);
  });

  it('uses the TaskClient-level callback when the call has none, and answers sampling too', async () => {
    const { tasks } = await setup({
      tasks: {
        onElicitation: () => accept(false),
        onSampling: (params, ctx) => {
          expect(ctx.toolName).toBe('summarize');
          const first = params.messages[0]?.content;
          const text = first === undefined || Array.isArray(first) || first.type !== 'text' ? '' : first.text;
          return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `${text.length} chars` } };
        },
      },
    });
    const kept = await tasks.callToolAsTask('confirm_delete', { path: '/x' });
    expect((await kept.result()).content).toEqual([{ type: 'text', text: 'kept /x (accept)' }]);
    const summary = await tasks.callToolAsTask('summarize', { text: 'hello' });
    expect((await summary.result()).content).toEqual([{ type: 'text', text: 'summary: 16 chars' }]);
  });

  it('a throwing callback: the server gets an error reply, the task fails on its terms, no crash; reported as a TaskInputError', async () => {
    const { tasks, sent } = await setup();
    const problems: string[] = [];
    const reports: unknown[] = [];
    tasks.on('error', (error) => (problems.push(error.message), reports.push(error)));
    const thrown = new Error('the UI is gone');
    const handle = await tasks.callToolAsTask(
      'confirm_delete',
      {},
      {
        onElicitation: () => {
          throw thrown;
        },
      },
    );
    const error = (await handle.result().catch((e: unknown) => e)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.message).toContain('the UI is gone');
    const reply = sent.find((m) => 'error' in m) as { error: { code: number; message: string } } | undefined;
    expect(reply?.error.code).toBe(-32603);
    expect(problems.some((p) => p.includes('the UI is gone'))).toBe(true);
    const report = reports.find((r) => r instanceof TaskInputError);
    expect(report).toMatchObject({
      name: 'TaskInputError',
      feature: 'elicitation',
      cause: thrown,
      taskId: handle.taskId,
      toolName: 'confirm_delete',
      message: 'The elicitation callback failed: the UI is gone',
    });
  });

  for (const [what, make] of [
    [
      'a DOMException (its code is a legacy DOM number)',
      () => new DOMException('The operation timed out.', 'TimeoutError'),
    ],
    ['an error whose code is no integer', () => Object.assign(new Error('The operation timed out.'), { code: 1.5 })],
  ] as const) {
    it(`a callback that throws ${what}: the server gets -32603 "The elicitation callback failed: <message>"`, async () => {
      const { tasks, sent } = await setup();
      const reports: unknown[] = [];
      tasks.on('error', (error) => reports.push(error));
      const handle = await tasks.callToolAsTask(
        'confirm_delete',
        {},
        {
          onElicitation: () => {
            throw make();
          },
        },
      );
      await handle.result().catch(() => {});
      const reply = sent.find((m) => 'error' in m) as { error: { code: number; message: string } } | undefined;
      // Before the fix, it went as it was: -32603 with the bare message, not saying that the callback failed.
      expect(reply?.error).toMatchObject({
        code: -32603,
        message: 'The elicitation callback failed: The operation timed out.',
      });
      expect(reports.find((r) => r instanceof TaskInputError)).toMatchObject({
        message: 'The elicitation callback failed: The operation timed out.',
      });
    });
  }

  it('with no callback anywhere, the server gets a clear JSON-RPC error (not a decline)', async () => {
    const { tasks, sent } = await setup();
    const handle = await tasks.callToolAsTask('confirm_delete', {});
    const error = (await handle.result().catch((e: unknown) => e)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    const reply = sent.find((m) => 'error' in m) as { error: { code: number; message: string } } | undefined;
    expect(reply?.error.code).toBe(-32601);
    expect(reply?.error.message).toContain('No elicitation handler');
  });

  it('abort while the callback waits: its signal fires, the call rejects, the remote task is cancelled', async () => {
    const { tasks, client } = await setup();
    const controller = new AbortController();
    let callbackSignal: AbortSignal | undefined;
    const handle = await tasks.callToolAsTask(
      'confirm_delete',
      {},
      {
        signal: controller.signal,
        onElicitation: (_params, ctx) => {
          callbackSignal = ctx.signal;
          return new Promise(() => {}); // never answers
        },
      },
    );
    await until(() => callbackSignal !== undefined, 5_000, 'the elicitation');
    controller.abort('stop');
    await expect(handle.result()).rejects.toBeInstanceOf(TaskAbortError);
    expect(callbackSignal?.aborted).toBe(true);
    const remote = await client.request(
      { method: 'tasks/get', params: { taskId: handle.taskId } },
      schemas.GetTaskResult,
    );
    expect(remote.status).toBe('cancelled');
  });

  it('fires inputRequired events on the client and the handle', async () => {
    const { tasks } = await setup({ tasks: { onElicitation: () => accept(true) } });
    const clientEvents: TaskMetrics[] = [];
    tasks.on('inputRequired', (metrics) => clientEvents.push(metrics));
    const handle = await tasks.callToolAsTask('confirm_delete', {});
    await handle.result();
    expect(clientEvents.map((m) => m.taskId)).toEqual([handle.taskId]);
    expect(clientEvents[0]?.status).toBe('input_required');
    // On a handle: a task that asks twice fires twice, each time it enters input_required. The
    // statuses come from a scripted server's notifications, one second apart.
    const rig = await scriptedTaskClient((cleanup) => cleanups.push(cleanup));
    creating(rig.server, { taskId: 'twice', pollInterval: 60_000 });
    const twice = await rig.tasks.callToolAsTask('job');
    const handleEvents: string[] = [];
    twice.on('inputRequired', (_metrics, task) => handleEvents.push(task.statusMessage ?? ''));
    for (const patch of [
      { status: 'input_required', statusMessage: 'first' },
      { status: 'input_required', statusMessage: 'still first' },
      { status: 'working', statusMessage: 'answered' },
      { status: 'input_required', statusMessage: 'second' },
    ]) {
      await rig.clock.advance(1_000);
      rig.server.tasks.update('twice', patch, true);
      await flush();
    }
    expect(twice.task?.statusMessage).toBe('second');
    expect(handleEvents).toEqual(['first', 'second']);
    twice.detach();
  });

  it('fails fast when callbacks are given but the SDK client lacks the capability', async () => {
    const { tasks } = await setup({ capabilities: {} });
    await expect(tasks.callToolAsTask('confirm_delete', {}, { onElicitation: () => accept(true) })).rejects.toThrow(
      TaskNotSupportedError,
    );
    const { server } = createExampleServer();
    const pair = await connectPair(server);
    cleanups.push(() => pair.close());
    expect(
      () =>
        new TaskClient(pair.client, {
          onSampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: '' } }),
        }),
    ).toThrow(/did not declare the "sampling" capability/);
  });

  it.each(['before', 'after'] as const)(
    "leaves the user's own SDK elicitation handler (set %s new TaskClient) serving untagged requests",
    async (when) => {
      const { server, store } = createExampleServer();
      server.registerTool('ask_plain', { inputSchema: { q: z.string() } }, async ({ q }) => {
        const answer = await server.server.elicitInput({
          message: q,
          requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
        });
        return { content: [{ type: 'text', text: answer.action }] };
      });
      const pair = await connectPair(server, { capabilities: { elicitation: {} } });
      const userSaw: string[] = [];
      const register = (): void =>
        setUserRequestHandler(pair.client, 'elicitation/create', (request) => {
          userSaw.push(String(request.params.message));
          return { action: 'decline' };
        });
      if (when === 'before') register();
      const tasks = new TaskClient(pair.client, {}); // no client-level callback
      if (when === 'after') register();
      cleanups.push(async () => {
        await tasks.close();
        await pair.close();
        store.cleanup();
      });
      const taskAnswers: string[] = [];
      const task = await tasks.callToolAsTask(
        'confirm_delete',
        {},
        { onElicitation: () => (taskAnswers.push('t'), accept(true)) },
      );
      const plain = await pair.client.callTool({ name: 'ask_plain', arguments: { q: 'plain question' } });
      expect(plain.content).toEqual([{ type: 'text', text: 'decline' }]);
      expect(userSaw).toEqual(['plain question']);
      expect((await task.result()).content).toEqual([{ type: 'text', text: 'deleted /tmp/demo.txt' }]);
      expect(taskAnswers).toEqual(['t']);
    },
  );

  it('routes progress for the progressToken to onProgress for the task’s whole life [R35]', async () => {
    const { tasks } = await setup({ server: { stepMs: 20 } });
    const seen: Array<[number, number | undefined, string | undefined]> = [];
    const handle = await tasks.callToolAsTask(
      'analyze',
      { steps: 3 },
      {
        onProgress: (progress, ctx) => {
          expect(ctx.taskId).toBe(handle.taskId);
          seen.push([progress.progress, progress.total, ctx.toolName]);
        },
      },
    );
    const events: number[] = [];
    handle.on('progress', (_m, p) => events.push(p.progress));
    await handle.result();
    await until(() => seen.length === 3, 2_000, 'progress');
    expect(seen).toEqual([
      [1, 3, 'analyze'],
      [2, 3, 'analyze'],
      [3, 3, 'analyze'],
    ]);
    expect(events.length).toBeGreaterThanOrEqual(2);
  });
});

describe('input over real transports', () => {
  it('elicitation and sampling inside tasks over Streamable HTTP on 127.0.0.1', async () => {
    const http = await startHttpServer({ pollInterval: 50 });
    const tasks = await TaskClient.connect(httpTransport(http.url), {
      ...connectOptions('auto'),
      onElicitation: (params) => ({ action: 'accept', content: { confirm: params.message === 'Delete /srv/x?' } }),
      onSampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'short' } }),
    });
    cleanups.push(async () => {
      await tasks.close();
      await http.close();
    });
    expect(negotiatedEra(tasks.client)).toBe('legacy');
    const [deleted, summary] = await Promise.all([
      tasks.callToolAsTask('confirm_delete', { path: '/srv/x' }).then((h) => h.result()),
      tasks.callToolAsTask('summarize', { text: 'long text' }).then((h) => h.result()),
    ]);
    expect(deleted.content).toEqual([{ type: 'text', text: 'deleted /srv/x' }]);
    expect(summary.content).toEqual([{ type: 'text', text: 'summary: short' }]);
  });

  it('server-everything simulate-research-query with ambiguous: true: the answer appears in the report', async () => {
    const require = createRequire(import.meta.url);
    const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
    const tasks = await TaskClient.connect(
      stdioTransport({
        command: process.execPath,
        args: [everything, 'stdio'],
        stderr: 'ignore',
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
      }),
      {
        ...connectOptions('auto'),
        onElicitation: (params, ctx) => {
          expect(ctx.toolName).toBe('simulate-research-query');
          const schema = (params as { requestedSchema: unknown }).requestedSchema as {
            properties: { interpretation: { oneOf: Array<{ const: string }> } };
          };
          return { action: 'accept', content: { interpretation: schema.properties.interpretation.oneOf[1]!.const } };
        },
      },
    );
    cleanups.push(() => tasks.close());
    expect(negotiatedEra(tasks.client)).toBe('legacy');
    const handle = await tasks.callToolAsTask(
      'simulate-research-query',
      { topic: 'python', ambiguous: true },
      { timeoutMs: 30_000 },
    );
    const seen = await statuses(handle);
    expect(seen).toContain('input_required');
    expect(seen.at(-1)).toBe('completed');
    const text = (await handle.result()).content.find((b) => b.type === 'text');
    const report = text?.type === 'text' ? text.text : '';
    expect(report).toContain('**Clarification**');
    expect(report).not.toContain('default');
  });
});

describe('untagged and foreign input requests (mcp-go style, D14)', () => {
  it("an untagged elicitation goes to the only task's call while the task stays working (spec/v2025/input-untagged.spec.ts has the rest)", async () => {
    const { connectScripted } = await import('../support/scripted-server.js');
    const scripted = await connectScripted({
      tools: [{ name: 'ask', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    const seen: Array<{ taskId: string | undefined; message: unknown }> = [];
    const tasks = new TaskClient(scripted.client, {
      onElicitation: (params, ctx) => {
        seen.push({ taskId: ctx.taskId, message: params.message });
        return { action: 'accept', content: { ok: true } };
      },
    });
    cleanups.push(async () => {
      await tasks.close();
      await scripted.close();
    });
    const server = scripted.server;
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'go-1', pollInterval: 5_000 }));
    const perCall: Array<string | undefined> = [];
    const handle = await tasks.callToolAsTask(
      'ask',
      {},
      { onElicitation: (_p, ctx) => (perCall.push(ctx.taskId), { action: 'decline' }) },
    );
    // mcp-go: elicitation/create straight away, no related-task _meta, task stays working. The
    // only call in flight asked: its callback answers, and the answer stays untagged.
    const untagged = await server.request('elicitation/create', {
      message: 'Proceed?',
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    });
    expect(untagged.result).toEqual({ action: 'decline' });
    // Tagged for a task this client does not know: also the TaskClient-level callback, untagged answer.
    const foreign = await server.request('elicitation/create', {
      message: 'Someone else?',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: 'not-ours' } },
    });
    expect((foreign.result as { _meta?: Record<string, unknown> })._meta?.[RELATED]).toEqual({ taskId: 'not-ours' });
    // Tagged for our task: the per-call callback, answer tagged [R31].
    const ours = await server.request('elicitation/create', {
      message: 'Ours?',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: 'go-1' } },
    });
    expect(ours.result).toMatchObject({ action: 'decline', _meta: { [RELATED]: { taskId: 'go-1' } } });
    expect(seen).toEqual([{ taskId: 'not-ours', message: 'Someone else?' }]);
    expect(perCall).toEqual(['go-1', 'go-1']);
    expect(handle.task?.status).toBe('working');
    handle.detach();
  });

  it('keeps the model-immediate-response hint of the CreateTaskResult ([R39])', async () => {
    const { connectScripted } = await import('../support/scripted-server.js');
    const scripted = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    const tasks = new TaskClient(scripted.client);
    cleanups.push(async () => {
      await tasks.close();
      await scripted.close();
    });
    scripted.server.on('tools/call', () => ({
      ...scripted.server.tasks.createResult({ taskId: 'hint' }),
      _meta: { 'io.modelcontextprotocol/model-immediate-response': 'Working on it; I will report back.' },
    }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.immediateResponse).toBe('Working on it; I will report back.');
    handle.detach();
  });
});

describe('input requests the SDK client would refuse: -32602, and no callback is asked', () => {
  const DECLINE = { action: 'decline' as const };
  const SAMPLED = { role: 'assistant' as const, model: 'spec-model', content: { type: 'text' as const, text: 'hi' } };

  /**
   * The SDK's McpServer in process, whose plain tool `ask` sends the server request it is given
   * (`elicitation/create` or `sampling/createMessage`, params as JSON) while the call is open, and
   * answers with the client's reply (`result`, or `error` with its code and message). The client
   * declares `capabilities`; its TaskClient has callbacks of both kinds and an input watcher, which
   * record every request they are handed.
   */
  async function askingRig(capabilities: Record<string, object>) {
    const server = new McpServer({ name: 'asking', version: '1.0.0' });
    server.registerTool(
      'ask',
      { inputSchema: { method: z.string(), params: z.string() } },
      async ({ method, params }, extra) => {
        let reply: unknown;
        try {
          reply = { result: await extra.sendRequest({ method, params: JSON.parse(params) } as never, ResultSchema) };
        } catch (error) {
          reply = { error: { code: (error as { code?: unknown }).code, message: (error as Error).message } };
        }
        return { content: [{ type: 'text' as const, text: JSON.stringify(reply) }] };
      },
    );
    const pair = await connectPair(server, { capabilities });
    const asked: unknown[] = [];
    const watched: unknown[] = [];
    const tasks = new TaskClient(pair.client, {
      onElicitation: (params) => (asked.push(params), DECLINE),
      onSampling: (params) => (asked.push(params), SAMPLED),
      instrumentation: { attach: () => ({ input: (input) => (watched.push(input.params), undefined) }) },
    });
    const errors: unknown[] = [];
    tasks.on('error', (error) => errors.push(error));
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    /** Has the server send `method` with `params`; resolves with the client's reply. */
    const ask = async (
      method: string,
      params: Record<string, unknown>,
    ): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> => {
      const handle = await tasks.callToolAsTask('ask', { method, params: JSON.stringify(params) });
      const [block] = (await handle.result()).content;
      return JSON.parse(block?.type === 'text' ? block.text : 'null') as never;
    };
    return { ask, asked, watched, errors };
  }

  const FORM = { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };
  const URL_MODE = { mode: 'url', message: 'Sign in', url: 'https://example.com/sign-in', elicitationId: 'e-1' };
  const SAMPLING = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 };

  it('a request whose params break the schema gets -32602 "Invalid … request: …", as from the SDK client; the callback never sees it, nothing is reported', async () => {
    const { ask, asked, watched, errors } = await askingRig({ elicitation: {}, sampling: {} });
    const bad: Array<[string, Record<string, unknown>]> = [
      ['elicitation/create', {}],
      ['elicitation/create', { ...FORM, message: 5 }],
      ['elicitation/create', { ...FORM, mode: 'voice' }],
      ['elicitation/create', { ...FORM, requestedSchema: { type: 'object' } }],
      ['elicitation/create', { ...URL_MODE, elicitationId: undefined }],
      ['sampling/createMessage', { ...SAMPLING, messages: 'hi' }],
      ['sampling/createMessage', { messages: SAMPLING.messages }],
    ];
    for (const [method, params] of bad) {
      const reply = await ask(method, params);
      expect(reply.error, `${method} ${JSON.stringify(params)}`).toMatchObject({ code: -32602 });
      expect(reply.error?.message).toMatch(
        // The server's SDK puts "MCP error -32602: " before the client's message.
        method === 'elicitation/create' ? /: Invalid elicitation request: / : /: Invalid sampling request: /,
      );
    }
    expect(asked).toEqual([]);
    // Not handed to a callback: no input watched, and no error event (the server was told).
    expect(watched).toEqual([]);
    expect(errors).toEqual([]);
    // Well-formed ones are answered as before.
    expect((await ask('elicitation/create', FORM)).result).toEqual(DECLINE);
    expect((await ask('elicitation/create', { message: 'Plain?' })).result).toEqual(DECLINE);
    expect((await ask('sampling/createMessage', SAMPLING)).result).toMatchObject(SAMPLED);
    expect(asked).toHaveLength(3);
    expect(watched).toHaveLength(3);
  });

  it("is refused the same whether it names the call's task, a task nobody tracks, or none (a scripted server)", async () => {
    const { connectScripted } = await import('../support/scripted-server.js');
    const scripted = await connectScripted({
      tools: [{ name: 'ask', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {}, sampling: {} } },
    });
    const asked: unknown[] = [];
    const tasks = new TaskClient(scripted.client, {
      onElicitation: (params) => (asked.push(params), DECLINE),
      onSampling: (params) => (asked.push(params), SAMPLED),
    });
    const errors: unknown[] = [];
    tasks.on('error', (error) => errors.push(error));
    cleanups.push(async () => {
      await tasks.close();
      await scripted.close();
    });
    const server = scripted.server;
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'task-1', pollInterval: 5_000 }));
    const handle = await tasks.callToolAsTask(
      'ask',
      {},
      {
        onElicitation: (params) => (asked.push(params), DECLINE),
        onSampling: (params) => (asked.push(params), SAMPLED),
      },
    );
    for (const tag of [{ [RELATED]: { taskId: 'task-1' } }, { [RELATED]: { taskId: 'not-ours' } }, undefined]) {
      const _meta = tag === undefined ? {} : { _meta: tag };
      for (const [method, params] of [
        ['elicitation/create', { ...FORM, message: undefined }],
        ['elicitation/create', URL_MODE],
        ['sampling/createMessage', { ...SAMPLING, maxTokens: 'ten' }],
      ] as const) {
        const reply = await server.request(method, { ...params, ..._meta });
        expect(reply.error, `${method} ${JSON.stringify(params)} ${JSON.stringify(tag)}`).toMatchObject({
          code: -32602,
        });
      }
      // A well-formed one still reaches a callback.
      expect((await server.request('elicitation/create', { ...FORM, ..._meta })).result).toMatchObject(DECLINE);
    }
    expect(asked).toHaveLength(3);
    expect(errors).toEqual([]);
    handle.detach();
  });

  const MODES: Array<{ declared: Record<string, object>; url: boolean; form: boolean }> = [
    { declared: {}, url: false, form: true },
    { declared: { form: {} }, url: false, form: true },
    { declared: { url: {} }, url: true, form: false },
    { declared: { form: {}, url: {} }, url: true, form: true },
  ];
  it.each(MODES)(
    'elicitation $declared: an elicitation in a mode the client did not declare gets -32602, as from the SDK client (url: $url, form: $form)',
    async ({ declared, url, form }) => {
      const { ask, asked, watched, errors } = await askingRig({ elicitation: declared, sampling: {} });
      const byUrl = await ask('elicitation/create', URL_MODE);
      const byForm = await ask('elicitation/create', FORM);
      const refused = (mode: string) => ({
        code: -32602,
        message: expect.stringMatching(
          new RegExp(`: Client does not support ${mode}-mode elicitation requests`),
        ) as unknown,
      });
      if (url) expect(byUrl.result).toEqual(DECLINE);
      else expect(byUrl.error).toMatchObject(refused('URL'));
      if (form) expect(byForm.result).toEqual(DECLINE);
      else expect(byForm.error).toMatchObject(refused('form'));
      expect(asked).toHaveLength(Number(url) + Number(form));
      expect(watched).toHaveLength(Number(url) + Number(form));
      expect(errors).toEqual([]);
    },
  );
});
