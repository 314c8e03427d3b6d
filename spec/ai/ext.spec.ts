/**
 * Task tools in a real AI SDK agent loop on the 2026-07-28 tasks extension wire
 * (`io.modelcontextprotocol/tasks`), which needs SDK v2 (this suite picks it itself: it is in the
 * sdk-free list of vitest.config.ts). Against the extension example server (examples/ext-server.ts)
 * spawned over stdio and served over Streamable HTTP on 127.0.0.1, both recording what they
 * receive (spec/ai/ext-example-host.ts); and against the scripted extension server for a task that
 * ends `failed` with a JSON-RPC error, which the example server has no tool for.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { taskTools, type TaskToolInputContext } from '../../lib/ai.js';
import {
  TaskClient,
  TaskFailedError,
  TaskInputError,
  TaskNotSupportedError,
  type TaskClientConnectOptions,
} from '../../lib/index.js';
import { until } from '../helpers.js';
import {
  ExtServer,
  fixtureTools,
  mrtrTool,
  outcome,
  startExtHttpServer,
  taskTool as extTaskTool,
} from '../support/ext-server/index.js';
import { inOrder, statusesOf, streamAgent } from './agent.js';
import { startExtExampleHttp } from './ext-example-host.js';
import { toolCallingModel, toolResultsIn } from './model.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const host = fileURLToPath(new URL('./ext-example-host.ts', import.meta.url));
const OPTIONS = { sdk: 'v2', capabilities: { elicitation: {} }, minPollIntervalMs: 20 } as const;

/** A TaskClient on the extension example server, and the methods the server received. */
interface Rig {
  readonly tasks: TaskClient;
  received(): string[];
  close(): Promise<void>;
}

async function stdioRig(): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'ai-ext-'));
  const log = join(dir, 'received.log');
  const env = { ...process.env, EXT_STEP_MS: '100', EXT_LOG: log } as Record<string, string>;
  const tasks = await TaskClient.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', host],
      cwd: root,
      env,
      stderr: 'ignore',
    }),
    OPTIONS,
  );
  return {
    tasks,
    received: () => {
      try {
        return readFileSync(log, 'utf8')
          .split('\n')
          .filter((line) => line !== '');
      } catch {
        return [];
      }
    },
    close: async () => {
      await tasks.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function httpRig(): Promise<Rig> {
  const server = await startExtExampleHttp({ stepMs: 100 });
  const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(server.url), OPTIONS);
  return {
    tasks,
    received: () =>
      server.received.flatMap((message) =>
        typeof message.method === 'string' && message.id !== undefined ? [message.method] : [],
      ),
    close: async () => {
      await tasks.close();
      await server.close();
    },
  };
}

const text = (value: string) => ({ type: 'text', text: value });

describe.each([
  ['stdio', stdioRig],
  ['Streamable HTTP', httpRig],
] as const)('task tools against the extension example server over %s', (_transport, makeRig) => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await makeRig();
    expect(rig.tasks.wire).toBe('io.modelcontextprotocol/tasks');
  });
  afterAll(async () => {
    await rig.close();
  });

  it('streams the statuses in order, input_required answered by onElicitation, and the model gets the final result', async () => {
    const asked: TaskToolInputContext[] = [];
    const tools = await taskTools(rig.tasks, {
      onElicitation: (_params, context) => {
        asked.push(context);
        return { action: 'accept', content: { depth: 'full' } };
      },
    });
    expect(tools.analyze?.metadata).toMatchObject({
      source: 'mcp-task-client',
      toolName: 'analyze',
      taskSupport: 'server-decides',
    });
    const model = toolCallingModel({ toolName: 'analyze', input: { id: 7 } });
    const run = await streamAgent(model, tools);
    const statuses = statusesOf(run.preliminary);
    expect(statuses[0]).toEqual({ type: 'status', status: 'working', statusMessage: 'queued analysis of dataset 7' });
    const seen = statuses.map((s) => `${s.status}: ${s.statusMessage ?? ''}`);
    expect(
      inOrder(seen, [
        'working: queued analysis of dataset 7',
        'input_required: waiting for your choice of report depth',
        'working: writing the report',
      ]),
    ).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      toolCallId: 'call-1',
      aiToolName: 'analyze',
      toolName: 'analyze',
      delivery: 'task-update',
    });
    const final = {
      type: 'result',
      content: [text('analysis of dataset 7: full report ready')],
      structuredContent: { id: 7, depth: 'full' },
    };
    expect(run.results.get('call-1')).toEqual(final);
    expect(toolResultsIn(model, 1)).toEqual([
      {
        toolCallId: 'call-1',
        toolName: 'analyze',
        output: { type: 'content', value: [text('analysis of dataset 7: full report ready')] },
      },
    ]);
  });

  it('a task that completes with an isError result ([E15]) is passed through: the model reads the tool error', async () => {
    const tools = await taskTools(rig.tasks);
    const model = toolCallingModel({ toolName: 'flaky', input: { reason: 'disk full' } });
    const run = await streamAgent(model, tools);
    expect(run.errors.size).toBe(0);
    expect(statusesOf(run.preliminary)[0]).toEqual({ type: 'status', status: 'working', statusMessage: 'trying' });
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('disk full')], isError: true });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({ type: 'error-text', value: 'disk full' });
  });

  it('aborting the stream cancels the remote task: the server received tasks/cancel', async () => {
    const tools = await taskTools(rig.tasks);
    const before = rig.received().filter((method) => method === 'tasks/cancel').length;
    const model = toolCallingModel({ toolName: 'analyze', input: { id: 9 } });
    const abort = new AbortController();
    const run = await streamAgent(model, tools, {
      abortSignal: abort.signal,
      onPreliminary: () => abort.abort(),
    });
    expect(run.aborted).toBe(true);
    expect(run.results.size).toBe(0);
    await until(
      () => rig.received().filter((method) => method === 'tasks/cancel').length === before + 1,
      5_000,
      'tasks/cancel',
    );
    await until(() => rig.tasks.active === 0, 5_000, 'the task to settle');
  });

  it('a plain tool (never a task) runs as a plain call', async () => {
    const tools = await taskTools(rig.tasks);
    const model = toolCallingModel({ toolName: 'echo', input: { text: 'plain' } });
    const run = await streamAgent(model, tools);
    expect(statusesOf(run.preliminary)).toEqual([]);
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('plain')] });
  });
});

describe('task tools against the scripted extension server over Streamable HTTP', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()?.();
  });

  it('a task that completes with an isError result of two text blocks ([E15]): the model reads both', async () => {
    const result = { content: [text('disk full'), text('free 2 GB and retry')], isError: true };
    const server = new ExtServer({
      tools: [extTaskTool('broken', { statusMessage: 'running', steps: [{ result }] })],
      pollIntervalMs: 20,
    });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());
    const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url), OPTIONS);
    cleanups.push(() => tasks.close());
    const model = toolCallingModel({ toolName: 'broken', input: {} });
    const run = await streamAgent(model, await taskTools(tasks));
    expect(run.errors.size).toBe(0);
    expect(run.results.get('call-1')).toEqual({ type: 'result', ...result });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({ type: 'error-text', value: 'disk full\nfree 2 GB and retry' });
  });

  it("input the server asks for before it answers, which the client refuses (an undeclared mode, params that break the schema): the model reads the library's reason, not that the application cannot receive questions", async () => {
    const urlMode = {
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Sign in', url: 'https://example.com/a', elicitationId: 'e1' },
    };
    const noMessage = { method: 'elicitation/create', params: { mode: 'form' } };
    const server = new ExtServer({
      tools: [
        mrtrTool('sign_in', { inputRequests: { k: urlMode }, then: () => outcome.text('never') }),
        mrtrTool('confirm', { inputRequests: { k: noMessage }, then: () => outcome.text('never') }),
      ],
      pollIntervalMs: 20,
    });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());
    // OPTIONS declares elicitation: {}, form mode only.
    const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url), OPTIONS);
    cleanups.push(() => tasks.close());
    const asked: unknown[] = [];
    const tools = await taskTools(tasks, { onElicitation: (params) => (asked.push(params), { action: 'decline' }) });
    for (const [toolName, reason] of [
      ['sign_in', /Client does not support URL-mode elicitation requests/],
      ['confirm', /Invalid elicitation request: message must be a string/],
    ] as const) {
      const model = toolCallingModel({ toolName, input: {} });
      const run = await streamAgent(model, tools);
      const error = run.errors.get('call-1') as TaskNotSupportedError;
      expect(error).toBeInstanceOf(TaskNotSupportedError);
      expect(error).toMatchObject({ feature: 'elicitation', toolName });
      expect(error.message).toMatch(
        new RegExp(`^The server asks for elicitation/create before it answers "${toolName}": `),
      );
      expect(error.message).toMatch(reason);
      expect(error.message).not.toMatch(/not set up to receive|fail the same way/);
      expect(toolResultsIn(model, 1)[0]?.output).toEqual({
        type: 'error-text',
        value: `TaskNotSupportedError: ${error.message}`,
      });
    }
    expect(asked).toEqual([]);
  });

  /** A TaskClient on a scripted extension server with the fixture tools, over Streamable HTTP. */
  async function scripted(
    options: TaskClientConnectOptions = OPTIONS,
    cancel?: 'ignore' | 'fail',
  ): Promise<{ server: ExtServer; tasks: TaskClient }> {
    const server = new ExtServer({
      tools: fixtureTools(),
      pollIntervalMs: 20,
      ...(cancel === undefined ? {} : { cancel }),
    });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());
    const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url), options);
    cleanups.push(() => tasks.close());
    return { server, tasks };
  }

  it('a task that asks for input nobody here answers is cancelled at once: the model reads that the tool needs user input', async () => {
    const { server, tasks } = await scripted();
    const model = toolCallingModel({ toolName: 'confirm_delete', input: { filename: 'a.txt' } });
    const run = await streamAgent(model, await taskTools(tasks, { include: ['confirm_delete'] }), { withinMs: 5_000 });
    const error = run.errors.get('call-1');
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect(error).toMatchObject({ feature: 'elicitation', toolName: 'confirm_delete' });
    // Addressed to the model: what happened, and that calling again will not help. The developer's
    // fix (an onElicitation callback) is in the cause, the TaskClient's report.
    const message =
      'Tool "confirm_delete" needs user input (an elicitation), and nobody can answer it here, so its task was cancelled. Calling the tool again would stop at the same question: tell the user it needs their input.';
    expect((error as Error).message).toBe(message);
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({
      type: 'error-text',
      value: `TaskNotSupportedError: ${message}`,
    });
    expect(JSON.stringify(toolResultsIn(model, 1))).not.toMatch(/onElicitation|taskTools|TaskClient/);
    expect((error as Error).cause).toBeInstanceOf(TaskNotSupportedError);
    expect(((error as Error).cause as Error).message).toMatch(/pass onElicitation to the call or the TaskClient/);
    expect(server.count('tasks/cancel')).toBe(1);
    expect(server.count('tasks/update')).toBe(0);
    expect(tasks.active).toBe(0);
  });

  it('a task whose input callback throws is cancelled at once: the tool fails with the callback error', async () => {
    const { server, tasks } = await scripted();
    const thrown = new Error('nobody is at the keyboard');
    const tools = await taskTools(tasks, {
      include: ['confirm_delete'],
      onElicitation: () => {
        throw thrown;
      },
    });
    const model = toolCallingModel({ toolName: 'confirm_delete', input: { filename: 'a.txt' } });
    const run = await streamAgent(model, tools, { withinMs: 5_000 });
    const error = run.errors.get('call-1');
    expect(error).toMatchObject({
      name: 'TaskError',
      toolName: 'confirm_delete',
      message:
        'Tool "confirm_delete" needs user input (an elicitation), and answering it failed, so its task was cancelled. The elicitation callback failed: nobody is at the keyboard',
    });
    // Its cause is the TaskClient's report, a TaskInputError: told apart by its class, not its text.
    const report = (error as Error).cause;
    expect(report).toBeInstanceOf(TaskInputError);
    expect(report).toMatchObject({ feature: 'elicitation', cause: thrown, toolName: 'confirm_delete' });
    expect(server.count('tasks/cancel')).toBe(1);
    expect(tasks.active).toBe(0);
  });

  it('unanswered input on a server that only acknowledges the cancel ([E6]): the error does not say the task was cancelled, it says it may still run', async () => {
    for (const onElicitation of [
      undefined,
      () => {
        throw new Error('nobody is at the keyboard');
      },
    ]) {
      const { server, tasks } = await scripted(OPTIONS, 'ignore');
      const tools = await taskTools(tasks, {
        include: ['confirm_delete'],
        ...(onElicitation === undefined ? {} : { onElicitation }),
      });
      const model = toolCallingModel({ toolName: 'confirm_delete', input: { filename: 'a.txt' } });
      const run = await streamAgent(model, tools, { withinMs: 5_000 });
      const error = run.errors.get('call-1') as Error;
      expect(error).toMatchObject({ toolName: 'confirm_delete' });
      expect(error.message).toContain('Tool "confirm_delete" needs user input (an elicitation)');
      expect(error.message).not.toContain('was cancelled');
      expect(error.message).toContain(
        'so the tool asked the server to cancel its task, and the server has not confirmed the cancel: the task may still be running',
      );
      // The server acknowledged the cancel and runs the task on.
      expect(server.count('tasks/cancel')).toBe(1);
      const [taskId] = server.tasks.ids();
      expect(server.tasks.detailed(taskId!).status).toBe('input_required');
      expect(tasks.active).toBe(0);
    }
  });

  it('unanswered input on a task that fails while the tool gives it up ([E6]): the error quotes the failure', async () => {
    const { server, tasks } = await scripted(OPTIONS, 'fail');
    const model = toolCallingModel({ toolName: 'confirm_delete', input: { filename: 'a.txt' } });
    const run = await streamAgent(model, await taskTools(tasks, { include: ['confirm_delete'] }), { withinMs: 5_000 });
    const error = run.errors.get('call-1');
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect((error as Error).message).toBe(
      'Tool "confirm_delete" needs user input (an elicitation), and nobody can answer it here, and its task ended failed (Tool "confirm_delete" failed: Worker crashed while stopping). Calling the tool again would stop at the same question: tell the user it needs their input.',
    );
    expect(server.count('tasks/cancel')).toBe(1);
    const [taskId] = server.tasks.ids();
    expect(server.tasks.detailed(taskId!).status).toBe('failed');
    expect(tasks.active).toBe(0);
  });

  it('a task that ends failed with a JSON-RPC error ([E15]) is a tool error with the server message', async () => {
    const server = new ExtServer({ tools: fixtureTools(), pollIntervalMs: 20 });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());
    const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url), OPTIONS);
    cleanups.push(() => tasks.close());
    const tools = await taskTools(tasks, { include: ['protocol_error_job'] });
    expect(Object.keys(tools)).toEqual(['protocol_error_job']);
    const model = toolCallingModel({ toolName: 'protocol_error_job', input: {} });
    const run = await streamAgent(model, tools);
    const error = run.errors.get('call-1');
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).rpcError).toMatchObject({ message: 'Worker crashed' });
    expect((error as TaskFailedError).message).toBe('Tool "protocol_error_job" failed: Worker crashed');
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({
      type: 'error-text',
      value: 'TaskFailedError: Tool "protocol_error_job" failed: Worker crashed',
    });
    expect(server.count('tasks/get')).toBeGreaterThan(0);
  });
});
