/**
 * Task tools in a real AI SDK agent loop (`generateText`, `streamText`, the AI SDK's own mock
 * model from `ai/test`) against the example server (examples/server.ts: the SDK v1 `McpServer`
 * with its task store, 2025-11-25 wire), spawned over stdio and served over Streamable HTTP on
 * 127.0.0.1. Runs once per SDK major of the client. The server records every `tasks/cancel` it
 * accepts (stdio: `CANCEL_LOG`; HTTP: its `onCancel` option).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateText, isStepCount } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskTools, type TaskToolInputContext } from '../../lib/ai.js';
import { TaskClient, TaskNotSupportedError, TaskTimeoutError, type ElicitRequestParams } from '../../lib/index.js';
import { until } from '../helpers.js';
import { startHttpServer } from '../support/http-server.js';
import { httpTransport, makeClient, stdioTransport } from '../support/sdk.js';
import { inOrder, statusesOf, streamAgent } from './agent.js';
import { toolCallingModel, toolResultsIn } from './model.js';
import { askingTasks } from '../support/asking.js';
import { connectScripted, type Json } from '../support/scripted-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleServer = fileURLToPath(new URL('../../examples/server.ts', import.meta.url));
const CAPABILITIES = { elicitation: {}, sampling: {} };

/** A TaskClient on the example server, and the ids of the tasks the server saw cancelled. */
interface Rig {
  readonly tasks: TaskClient;
  cancels(): string[];
  close(): Promise<void>;
}

async function stdioRig(): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'ai-tools-'));
  const log = join(dir, 'cancels.log');
  const client = makeClient({ name: 'ai-spec', version: '1.0.0' }, { capabilities: CAPABILITIES });
  const env = { ...process.env, POLL_INTERVAL: '100', CANCEL_LOG: log } as Record<string, string>;
  await client.connect(
    stdioTransport({
      command: process.execPath,
      args: ['--import', 'tsx', exampleServer],
      cwd: root,
      env,
      stderr: 'ignore',
    }),
  );
  const tasks = new TaskClient(client);
  return {
    tasks,
    cancels: () => {
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
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function httpRig(): Promise<Rig> {
  const cancelled: string[] = [];
  const server = await startHttpServer({ pollInterval: 100, onCancel: (taskId) => cancelled.push(taskId) });
  const client = makeClient({ name: 'ai-spec', version: '1.0.0' }, { capabilities: CAPABILITIES });
  await client.connect(httpTransport(server.url));
  const tasks = new TaskClient(client);
  return {
    tasks,
    cancels: () => cancelled.map((taskId) => `cancel ${taskId}`),
    close: async () => {
      await tasks.close();
      await client.close();
      await server.close();
    },
  };
}

const text = (value: string) => ({ type: 'text', text: value });

describe.each([
  ['stdio', stdioRig],
  ['Streamable HTTP', httpRig],
] as const)('task tools against the example server over %s (2025-11-25)', (_transport, makeRig) => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await makeRig();
  });
  afterAll(async () => {
    await rig.close();
  });

  it('generateText: the tool runs as a task and its final result reaches the model in the next step', async () => {
    const tools = await taskTools(rig.tasks);
    const model = toolCallingModel({ toolName: 'analyze', input: { id: 7, steps: 2, stepMs: 40 } });
    const result = await generateText({ model, tools, prompt: 'Analyze dataset 7.', stopWhen: isStepCount(3) });
    expect(result.text).toBe('done');
    expect(result.steps[0]?.toolResults.map((r) => r.output)).toEqual([
      { type: 'result', content: [text('analysis of 7 done in 2 steps')] },
    ]);
    // The model's second call holds the tool's content, and nothing of the statuses.
    expect(toolResultsIn(model, 1)).toEqual([
      {
        toolCallId: 'call-1',
        toolName: 'analyze',
        output: { type: 'content', value: [text('analysis of 7 done in 2 steps')] },
      },
    ]);
  });

  it('streamText: preliminary results arrive in order (status, message, progress for the whole task, [R35]), then the final result, which the next step gets', async () => {
    const tools = await taskTools(rig.tasks);
    const model = toolCallingModel({ toolName: 'analyze', input: { id: 3, steps: 3, stepMs: 60 } });
    const run = await streamAgent(model, tools);
    const statuses = statusesOf(run.preliminary);
    // The task's snapshots in order: working (with its step messages), then completed.
    expect(statuses.map((s) => s.status).join(' ')).toMatch(/^working( working)*( completed)?$/);
    expect(statuses[0]).toEqual({ type: 'status', status: 'working' });
    expect(
      inOrder(
        statuses.map((s) => s.statusMessage ?? ''),
        ['step 1/3', 'step 2/3'],
      ),
    ).toBe(true);
    // Progress notifications ride along, in order; each status keeps the latest.
    const progress = statuses.flatMap((s) => (s.progress === undefined ? [] : [s.progress.progress]));
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(new Set(progress)).toEqual(new Set([1, 2, 3]));
    expect(statuses.at(-1)?.progress).toEqual({ progress: 3, total: 3, message: 'step 3/3' });
    // The AI SDK repeats the final value as the last preliminary one, then gives it as the result.
    const final = { type: 'result', content: [text('analysis of 3 done in 3 steps')] };
    expect(run.preliminary.at(-1)).toEqual(final);
    expect(run.preliminary.filter((output) => output.type === 'result')).toHaveLength(1);
    expect(run.results.get('call-1')).toEqual(final);
    expect(run.errors.size).toBe(0);
    expect(run.text).toBe('done');
    expect(toolResultsIn(model, 1)).toEqual([
      {
        toolCallId: 'call-1',
        toolName: 'analyze',
        output: { type: 'content', value: [text('analysis of 3 done in 3 steps')] },
      },
    ]);
  });

  it('aborting the stream cancels the remote task: the server saw tasks/cancel', async () => {
    const tools = await taskTools(rig.tasks);
    const before = rig.cancels().length;
    const model = toolCallingModel({ toolName: 'analyze', input: { id: 9, steps: 100, stepMs: 50 } });
    const abort = new AbortController();
    const run = await streamAgent(model, tools, {
      abortSignal: abort.signal,
      onPreliminary: (output) => {
        if (output.type === 'status' && output.statusMessage === 'step 1/100') abort.abort();
      },
    });
    expect(run.aborted).toBe(true);
    expect(run.results.size).toBe(0);
    await until(() => rig.cancels().length === before + 1, 5_000, 'the server to see tasks/cancel');
    await until(() => rig.tasks.active === 0, 5_000, 'the task to settle');
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('a failed task with an isError result ([V18]) is the final output: the model reads the tool error', async () => {
    const tools = await taskTools(rig.tasks);
    // Long enough that the stream shows the task working first even on a loaded machine: a
    // status stream shows the latest snapshot, so a task already failed when it starts shows only that.
    const model = toolCallingModel({ toolName: 'flaky', input: { afterMs: 500, reason: 'quota exceeded' } });
    const run = await streamAgent(model, tools);
    expect(run.errors.size).toBe(0);
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('quota exceeded')], isError: true });
    expect(statusesOf(run.preliminary)[0]?.status).toBe('working');
    expect(toolResultsIn(model, 1)).toEqual([
      { toolCallId: 'call-1', toolName: 'flaky', output: { type: 'error-text', value: 'quota exceeded' } },
    ]);
  });

  it("input_required: the tools' onElicitation answers, with the tool call's id; the UI sees the task wait", async () => {
    const asked: Array<{ params: ElicitRequestParams; context: TaskToolInputContext }> = [];
    const tools = await taskTools(rig.tasks, {
      onElicitation: (params, context) => {
        asked.push({ params, context });
        return { action: 'accept', content: { confirm: true } };
      },
    });
    const model = toolCallingModel({
      toolName: 'confirm_delete',
      input: { path: '/tmp/ai.txt' },
      toolCallId: 'call-7',
    });
    const run = await streamAgent(model, tools);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.params.message).toBe('Delete /tmp/ai.txt?');
    expect(asked[0]?.context).toMatchObject({
      toolCallId: 'call-7',
      aiToolName: 'confirm_delete',
      toolName: 'confirm_delete',
      delivery: 'request',
    });
    expect(statusesOf(run.preliminary)).toContainEqual({
      type: 'status',
      status: 'input_required',
      statusMessage: 'waiting for confirmation of /tmp/ai.txt',
    });
    expect(run.results.get('call-7')).toEqual({ type: 'result', content: [text('deleted /tmp/ai.txt')] });
  });

  it('a per-tool timeoutMs ends the call with TaskTimeoutError and cancels the task', async () => {
    const tools = await taskTools(rig.tasks, { tools: { analyze: { timeoutMs: 400 } } });
    const before = rig.cancels().length;
    const model = toolCallingModel({ toolName: 'analyze', input: { id: 1, steps: 100, stepMs: 50 } });
    const run = await streamAgent(model, tools);
    const error = run.errors.get('call-1');
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 400, remoteCancel: 'cancelled' });
    expect(rig.cancels()).toHaveLength(before + 1);
    expect(run.text).toBe('done');
  });

  it('a tool that cannot run as a task runs as a plain call: no statuses, its result', async () => {
    const tools = await taskTools(rig.tasks);
    expect(tools.echo?.metadata).toMatchObject({ taskSupport: 'forbidden' });
    const model = toolCallingModel({ toolName: 'echo', input: { text: 'hi there' } });
    const run = await streamAgent(model, tools);
    expect(statusesOf(run.preliminary)).toEqual([]);
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('hi there')] });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({ type: 'content', value: [text('hi there')] });
  });
});

describe('task tools against a 2025-11-25 server that keeps waiting after nobody answers its question', () => {
  it('the tool gives its task up at once, as on the tasks extension: the server is told, the task is cancelled, the model reads that the tool needs user input', async () => {
    const pair = await connectScripted({
      tools: [{ name: 'delete', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    const tasks = new TaskClient(pair.client);
    try {
      const refusals: Json[] = [];
      // Each task asks once it exists; the refusal changes nothing here: the task waits for good.
      askingTasks(pair.server, 100, refusals);
      const model = toolCallingModel({ toolName: 'delete', input: {} });
      const run = await streamAgent(model, await taskTools(tasks, { include: ['delete'] }));
      const error = run.errors.get('call-1');
      expect(error).toBeInstanceOf(TaskNotSupportedError);
      expect(error).toMatchObject({ feature: 'elicitation', toolName: 'delete' });
      expect((error as Error).message).toBe(
        'Tool "delete" needs user input (an elicitation), and nobody can answer it here, so its task was cancelled. Calling the tool again would stop at the same question: tell the user it needs their input.',
      );
      expect(((error as Error).cause as Error).message).toMatch(/pass onElicitation to the call or the TaskClient/);
      // The server was told too, with the plain error, before the task was cancelled.
      expect(refusals).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32601 }) })]);
      expect(pair.server.count('tasks/cancel')).toBe(1);
      expect(tasks.active).toBe(0);
    } finally {
      await tasks.close();
      await pair.close();
    }
  });
});
