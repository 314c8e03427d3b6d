/**
 * `taskTools` and `taskTool` in process, against the example server (and a small `McpServer` for
 * a plain tool that reports an error): the listing and its options, what a tool's `execute`
 * yields when the AI SDK stops reading it early, two calls running side by side, sampling through
 * the tools' callback, `isError` results, and the round trip of a saved UI message through
 * `convertToModelMessages`. Runs once per SDK major of the client.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  asSchema,
  convertToModelMessages,
  generateText,
  isStepCount,
  type ToolExecutionOptions,
  type UIMessage,
} from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { taskTool, taskTools, type TaskTool, type TaskToolInputContext, type TaskToolOutput } from '../../lib/ai.js';
import {
  TaskClient,
  TaskFailedError,
  TaskOptionError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskTimeoutError,
  taskFingerprint,
  type TaskClientOptions,
} from '../../lib/index.js';
import {
  connectScripted,
  rpcError,
  type HandlerContext,
  type Json,
  type ScriptedPairOptions,
} from '../support/scripted-server.js';
import { questionFor } from '../support/asking.js';
import { connectPair, exampleServerPair, rejection, until, within } from '../helpers.js';
import { statusesOf, streamAgent } from './agent.js';
import { toolCallingModel, toolResultsIn } from './model.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const text = (value: string) => ({ type: 'text', text: value });

/** The example server in process, its TaskClient, and the task ids it saw cancelled. */
async function rig(clientCapabilities: Record<string, object> = {}, options: TaskClientOptions = {}) {
  const cancelled: string[] = [];
  const pair = await exampleServerPair(
    { pollInterval: 50, onCancel: (taskId) => cancelled.push(taskId) },
    { capabilities: clientCapabilities },
  );
  const tasks = new TaskClient(pair.client, options);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { pair, tasks, cancelled, store: pair.store };
}

/** A scripted server (`options`) and a TaskClient on it, both closed after the test. */
async function scripted(options: ScriptedPairOptions) {
  const pair = await connectScripted(options);
  const tasks = new TaskClient(pair.client);
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { pair, tasks };
}

/** Runs a tool's `execute` as the AI SDK does, outside an agent loop. */
function execute(tool: TaskTool, input: Record<string, unknown>, toolCallId = 'call-x'): AsyncIterator<TaskToolOutput> {
  const options: ToolExecutionOptions<unknown> = { toolCallId, messages: [], context: undefined };
  const result = tool.execute?.(input, options as never);
  if (result === undefined || !(Symbol.asyncIterator in Object(result)))
    throw new Error('execute did not return an async iterable');
  return (result as AsyncIterable<TaskToolOutput>)[Symbol.asyncIterator]();
}

describe('the tool set', () => {
  it('has every tool the server lists, with its description, JSON Schema and task support in metadata', async () => {
    const { tasks } = await rig();
    const tools = await taskTools(tasks);
    expect(Object.keys(tools).sort()).toEqual([
      'analyze',
      'batch',
      'confirm_delete',
      'echo',
      'flaky',
      'order',
      'summarize',
    ]);
    const analyze = tools.analyze!;
    expect(analyze.type).toBe('dynamic');
    expect(analyze.description).toBe('A long analysis that reports each step in its status message.');
    expect(analyze.metadata).toEqual({
      source: 'mcp-task-client',
      toolName: 'analyze',
      taskSupport: 'optional',
      title: 'Analyze',
    });
    expect(tools.batch?.metadata).toMatchObject({ taskSupport: 'required' });
    expect(tools.echo?.metadata).toEqual({ source: 'mcp-task-client', toolName: 'echo', taskSupport: 'forbidden' });
    const schema = await asSchema(analyze.inputSchema).jsonSchema;
    expect(schema).toMatchObject({
      type: 'object',
      properties: { id: { type: 'number' }, steps: { type: 'integer', minimum: 1 } },
    });
  });

  it("lists through the TaskClient's cached list: a tool set per request costs no tools/list until the server says its tools changed", async () => {
    const { pair, tasks } = await scripted({ tools: [{ name: 'first', inputSchema: { type: 'object' } }] });
    await taskTools(tasks);
    await taskTools(tasks);
    await taskTool(tasks, 'first');
    expect(pair.server.count('tools/list')).toBe(1);
    pair.server.notify('notifications/tools/list_changed');
    await until(async () => Object.keys(await taskTools(tasks)).length === 1 && pair.server.count('tools/list') === 2);
  });

  it('include, exclude, tasksOnly, prefix and per-tool names pick and name the tools', async () => {
    const { tasks } = await rig();
    expect(Object.keys(await taskTools(tasks, { include: ['echo', 'analyze'] })).sort()).toEqual(['analyze', 'echo']);
    expect(Object.keys(await taskTools(tasks, { exclude: ['order', 'summarize', 'confirm_delete'] })).sort()).toEqual([
      'analyze',
      'batch',
      'echo',
      'flaky',
    ]);
    expect(Object.keys(await taskTools(tasks, { tasksOnly: true }))).not.toContain('echo');
    const named = await taskTools(tasks, {
      include: ['analyze', 'echo'],
      prefix: 'reports_',
      tools: { analyze: { name: 'analyze_dataset', description: 'Analyse a dataset.' } },
    });
    expect(Object.keys(named).sort()).toEqual(['analyze_dataset', 'reports_echo']);
    expect(named.analyze_dataset?.description).toBe('Analyse a dataset.');
    expect(named.analyze_dataset?.metadata).toMatchObject({ toolName: 'analyze' });
    // The model calls the renamed tool; the server's tool runs.
    const model = toolCallingModel({ toolName: 'analyze_dataset', input: { id: 4, steps: 1, stepMs: 10 } });
    await generateText({ model, tools: named, prompt: 'go', stopWhen: isStepCount(3) });
    expect(toolResultsIn(model, 1)[0]).toMatchObject({
      toolName: 'analyze_dataset',
      output: { type: 'content', value: [text('analysis of 4 done in 1 steps')] },
    });
  });

  it('tasksOnly leaves out tools that cannot run as tasks here: forbidden, and unavailable (no tasks capability)', async () => {
    const { tasks } = await scripted({
      capabilities: { tools: {} },
      tools: [
        { name: 'could_be_a_task', taskSupport: 'optional', inputSchema: { type: 'object' } },
        { name: 'plain', inputSchema: { type: 'object' } },
      ],
    });
    const all = await taskTools(tasks);
    expect(all.could_be_a_task?.metadata).toMatchObject({ taskSupport: 'unavailable' });
    expect(all.plain?.metadata).toMatchObject({ taskSupport: 'forbidden' });
    expect(Object.keys(await taskTools(tasks, { tasksOnly: true }))).toEqual([]);
  });

  it("gives every tool a name model providers accept, calls the server's own name, and keeps __proto__ a plain key", async () => {
    const long = `${'analyse_'.repeat(9)}x`;
    const names = ['files.read', 'files_read', 'files/read', long, `${long}y`, '1st', '__proto__', ''];
    const { pair, tasks } = await scripted({
      tools: names.map((name) => ({ name, taskSupport: 'forbidden' as const, inputSchema: { type: 'object' } })),
    });
    pair.server.on('tools/call', (params) => ({ content: [text(`ran ${String(params.name)}`)] }));
    const tools = await taskTools(tasks);
    expect(Object.getPrototypeOf(tools)).toBeNull();
    const keys = Object.keys(tools);
    expect(keys).toHaveLength(names.length);
    for (const key of keys) expect(key).toMatch(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/);
    const serverName = (key: string) => tools[key]?.metadata?.toolName as string;
    const byServerName = new Map(keys.map((key) => [serverName(key), key]));
    // Already safe: kept. Cleaned into a name another tool has: its own hash at the end.
    expect(byServerName.get('files_read')).toBe('files_read');
    expect(byServerName.get('files.read')).toMatch(/^files_read_[0-9a-f]{8}$/);
    expect(byServerName.get('files/read')).toMatch(/^files_read_[0-9a-f]{8}$/);
    expect(byServerName.get('files.read')).not.toBe(byServerName.get('files/read'));
    // Too long: cut to 64, ending with a hash of the whole name, so two names that start alike stay apart.
    expect(byServerName.get(long)).toHaveLength(64);
    expect(byServerName.get(long)).toMatch(/^analyse_analyse_.*_[0-9a-f]{8}$/);
    expect(byServerName.get(`${long}y`)).not.toBe(byServerName.get(long));
    expect(byServerName.get('1st')).toBe('_1st');
    expect(byServerName.get('__proto__')).toBe('__proto__');
    expect(byServerName.get('')).toBe('tool');
    // The same listing gives the same names.
    expect(Object.keys(await taskTools(tasks))).toEqual(keys);
    expect(Object.keys(await taskTools(tasks, { include: ['files.read'], prefix: 'my.' }))).toEqual(['my_files_read']);
    // The model calls the safe name; the server is called by its own.
    for (const name of ['files.read', '__proto__']) {
      const model = toolCallingModel({ toolName: byServerName.get(name)!, input: {} });
      await generateText({ model, tools, prompt: 'go', stopWhen: isStepCount(3) });
      expect(toolResultsIn(model, 1)[0]?.output).toEqual({ type: 'content', value: [text(`ran ${name}`)] });
    }
    expect(await rejection(taskTools(tasks, { tools: { 'files.read': { name: 'files.read' } } }))).toMatchObject({
      name: 'TaskOptionError',
      option: 'tools',
    });
  });

  it('refuses options that name tools the server does not list, names that clash, and malformed options, with TaskOptionError', async () => {
    const { tasks } = await rig();
    expect(await rejection(taskTools(tasks, { include: ['analyse'] }))).toMatchObject({
      name: 'TaskOptionError',
      option: 'include',
      // The names it does list come with it, so that the typo shows.
      message:
        'The server lists no tool named "analyse" (it lists "analyze", "batch", "flaky", "confirm_delete", "summarize", "order", "echo")',
    });
    expect(await rejection(taskTools(tasks, { tools: { nope: { timeoutMs: 1 } } }))).toMatchObject({
      name: 'TaskOptionError',
      option: 'tools',
    });
    expect(await rejection(taskTools(tasks, { tools: { echo: { name: 'analyze' } } }))).toMatchObject({
      name: 'TaskOptionError',
      option: 'tools',
      message: 'Tools "analyze" and "echo" would both be named "analyze"',
    });
    expect(await rejection(taskTools(tasks, { include: 'analyze' as never }))).toBeInstanceOf(TaskOptionError);
    expect(await rejection(taskTools(tasks, { prefix: 3 as never }))).toMatchObject({ option: 'prefix' });
    expect(await rejection(taskTool(tasks, 'nope'))).toMatchObject({
      name: 'TaskOptionError',
      option: 'name',
      message: expect.stringMatching(
        /^The server lists no tool named "nope" \(it lists "analyze", "batch", .*"echo"\)$/,
      ),
    });
    for (const bad of [0, -1, 2.5, Number.NaN, '100']) {
      expect(await rejection(taskTools(tasks, { maxErrorLength: bad as never }))).toMatchObject({
        name: 'TaskOptionError',
        option: 'maxErrorLength',
      });
    }
    // A bad deadline or ttl is refused here, not at each call the model makes.
    for (const option of ['timeoutMs', 'ttlMs'] as const) {
      for (const bad of [-1, Number.NaN, Infinity, '100']) {
        expect(await rejection(taskTools(tasks, { [option]: bad as never }))).toMatchObject({
          name: 'TaskOptionError',
          option,
        });
      }
      expect(await rejection(taskTools(tasks, { tools: { echo: { [option]: -1 } } }))).toMatchObject({ option });
      expect(await rejection(taskTool(tasks, 'echo', { [option]: -1 }))).toMatchObject({ option });
    }
    expect(
      await rejection(taskTools(tasks, { tools: { echo: { maxErrorLength: 0 } } })),
      'a per-tool maxErrorLength is checked too',
    ).toMatchObject({ option: 'maxErrorLength' });
    expect(await rejection(taskTool(tasks, 'echo', { maxErrorLength: 0 }))).toMatchObject({
      option: 'maxErrorLength',
    });
  });

  it('a per-tool entry that is not an object, a callback that is not a function, a description that is not a string and a progress that is not a boolean are a TaskOptionError', async () => {
    const { tasks } = await rig();
    // Not a TypeError thrown while the tool set is built.
    for (const bad of [null, 'fast', 7, ['x']]) {
      expect(await rejection(taskTools(tasks, { tools: { echo: bad as never } }))).toMatchObject({
        name: 'TaskOptionError',
        option: 'tools',
      });
    }
    // Refused here, not found out when a task first asks for input (the tool wraps each callback).
    for (const option of ['onElicitation', 'onSampling'] as const) {
      expect(await rejection(taskTools(tasks, { [option]: 'ask the user' as never }))).toMatchObject({
        name: 'TaskOptionError',
        option,
      });
      expect(await rejection(taskTools(tasks, { tools: { echo: { [option]: 5 as never } } }))).toMatchObject({
        option,
      });
      expect(await rejection(taskTool(tasks, 'echo', { [option]: {} as never }))).toMatchObject({ option });
    }
    expect(await rejection(taskTools(tasks, { description: 5 as never }))).toMatchObject({ option: 'description' });
    expect(await rejection(taskTool(tasks, 'echo', { progress: 'no' as never }))).toMatchObject({
      option: 'progress',
    });
  });

  it('requireTask, cancelOnAbort and cancelOnTimeout that are not booleans fail the setup with TaskOptionError, not each call', async () => {
    const { tasks } = await rig();
    for (const option of ['requireTask', 'cancelOnAbort', 'cancelOnTimeout'] as const) {
      expect(await rejection(taskTools(tasks, { [option]: 'yes' as never }))).toMatchObject({
        name: 'TaskOptionError',
        option,
      });
      expect(await rejection(taskTools(tasks, { tools: { echo: { [option]: 1 as never } } }))).toMatchObject({
        name: 'TaskOptionError',
        option,
      });
      expect(await rejection(taskTool(tasks, 'echo', { [option]: null as never }))).toMatchObject({
        name: 'TaskOptionError',
        option,
      });
    }
  });

  it("taskTool's name option is the key the host puts the tool under: the input callbacks are told it; one that is not a safe name is refused", async () => {
    const { tasks } = await rig({ sampling: {} });
    const asked: TaskToolInputContext[] = [];
    const summarize = await taskTool(tasks, 'summarize', {
      name: 'summarize_text',
      onSampling: (_params, context) => {
        asked.push(context);
        return { role: 'assistant', content: { type: 'text', text: 'short' }, model: 'mock' };
      },
    });
    const model = toolCallingModel({ toolName: 'summarize_text', input: { text: 'long text' }, toolCallId: 'call-n' });
    const run = await streamAgent(model, { summarize_text: summarize });
    expect(asked.map((c) => [c.toolCallId, c.aiToolName, c.toolName])).toEqual([
      ['call-n', 'summarize_text', 'summarize'],
    ]);
    expect(run.results.get('call-n')).toEqual({ type: 'result', content: [text('summary: short')] });
    for (const bad of ['summarize.text', '1st', 'x'.repeat(65), 7]) {
      expect(await rejection(taskTool(tasks, 'summarize', { name: bad as never }))).toMatchObject({
        name: 'TaskOptionError',
        option: 'name',
      });
    }
  });

  it('taskTool makes one tool, with its own options', async () => {
    const { tasks, cancelled } = await rig();
    const analyze = await taskTool(tasks, 'analyze', { timeoutMs: 150 });
    const model = toolCallingModel({ toolName: 'analyze', input: { steps: 50, stepMs: 50 } });
    const run = await streamAgent(model, { analyze });
    expect(run.errors.get('call-1')).toMatchObject({
      name: 'TaskTimeoutError',
      timeoutMs: 150,
      remoteCancel: 'cancelled',
    });
    expect(cancelled).toHaveLength(1);
  });

  it('a tools/list that is not a list is a TaskProtocolError; one that pages in circles is read once round', async () => {
    const { pair, tasks } = await scripted({ tools: [{ name: 'echo' }] });
    pair.server.on('tools/list', () => ({ tools: 'none' }));
    const malformed = await rejection(taskTools(tasks));
    expect(malformed).toBeInstanceOf(TaskProtocolError);
    expect(malformed).toMatchObject({ method: 'tools/list' });
    pair.server.on('tools/list', () => ({
      tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
      nextCursor: 'again',
    }));
    const before = pair.server.count('tools/list');
    expect(Object.keys(await taskTools(tasks))).toEqual(['echo']);
    // The first page, then the page its cursor names; that page names the same cursor: stop.
    expect(pair.server.params('tools/list').slice(before)).toEqual([{}, { cursor: 'again' }]);
  });

  it('reads every page of tools/list, and gives a tool without properties an empty object schema', async () => {
    const { pair, tasks } = await scripted({
      tools: [
        { name: 'echo', inputSchema: { type: 'object' } },
        {
          name: 'analyze',
          description: 'second page',
          inputSchema: { type: 'object', properties: { id: { type: 'number' } } },
        },
      ],
      toolsPageSize: 1,
    });
    const tools = await taskTools(tasks);
    expect(pair.server.params('tools/list').map((p) => p.cursor)).toEqual([undefined, 'page-1']);
    expect(Object.keys(tools)).toEqual(['echo', 'analyze']);
    expect(await asSchema(tools.echo!.inputSchema).jsonSchema).toEqual({ type: 'object', properties: {} });
    expect(await asSchema(tools.analyze!.inputSchema).jsonSchema).toEqual({
      type: 'object',
      properties: { id: { type: 'number' } },
    });
    expect(tools.analyze!.description).toBe('second page');
  });
});

describe('running a tool', () => {
  it('a reader that stops early cancels the task; with cancelOnAbort: false the task runs on', async () => {
    const { tasks, cancelled, store } = await rig();
    const analyze = await taskTool(tasks, 'analyze');
    const first = execute(analyze, { steps: 50, stepMs: 50 });
    expect(await within(first.next())).toEqual({ done: false, value: { type: 'status', status: 'working' } });
    await within(first.return!(), 5_000);
    expect(cancelled).toHaveLength(1);
    expect(tasks.active).toBe(0);

    const kept = await taskTool(tasks, 'analyze', { cancelOnAbort: false });
    const second = execute(kept, { steps: 50, stepMs: 50 });
    await within(second.next());
    await within(second.return!());
    expect(cancelled).toHaveLength(1);
    expect(tasks.active).toBe(0);
    const running = (await store.listTasks()).tasks.filter((task) => task.status === 'working');
    expect(running).toHaveLength(1);
  });

  it("a reader that stops early follows the TaskClient's cancelOnAbort: false when the tool sets none; a tool's own true wins", async () => {
    const { tasks, cancelled, store } = await rig({}, { cancelOnAbort: false });
    const analyze = await taskTool(tasks, 'analyze');
    const first = execute(analyze, { steps: 50, stepMs: 50 });
    await within(first.next());
    await within(first.return!(), 5_000);
    expect(cancelled).toHaveLength(0);
    expect(tasks.active).toBe(0);
    const running = (await store.listTasks()).tasks.filter((task) => task.status === 'working');
    expect(running).toHaveLength(1);

    const cancelling = await taskTool(tasks, 'analyze', { cancelOnAbort: true });
    const second = execute(cancelling, { steps: 50, stepMs: 50 });
    await within(second.next());
    await within(second.return!(), 5_000);
    expect(cancelled).toHaveLength(1);
    expect(tasks.active).toBe(0);
  });

  it('two calls of one TaskClient run in parallel: each gets its own statuses and result, and aborting one leaves the other running', async () => {
    const { tasks, cancelled, store } = await rig();
    const analyze = await taskTool(tasks, 'analyze');
    /** Runs one call to its end, as the AI SDK does, with its own abort signal. */
    const run = async (input: Record<string, unknown>, toolCallId: string, signal: AbortSignal) => {
      const options = { toolCallId, messages: [], context: undefined, abortSignal: signal };
      const outputs: TaskToolOutput[] = [];
      try {
        for await (const output of analyze.execute!(input, options as never) as AsyncIterable<TaskToolOutput>) {
          outputs.push(output);
          onOutput.get(toolCallId)?.(output);
        }
        return { outputs, error: undefined };
      } catch (error) {
        return { outputs, error };
      }
    };
    const onOutput = new Map<string, (output: TaskToolOutput) => void>();
    const kept = new AbortController();
    const stopped = new AbortController();
    // The second call is aborted once it has reported its second step: the first runs on.
    onOutput.set('call-b', (output) => {
      if (output.type === 'status' && output.statusMessage === 'step 2/50') stopped.abort(new Error('user left'));
    });
    const [a, b] = await within(
      Promise.all([
        run({ id: 1, steps: 4, stepMs: 60 }, 'call-a', kept.signal),
        run({ id: 2, steps: 50, stepMs: 60 }, 'call-b', stopped.signal),
      ]),
      10_000,
    );
    // Each call's statuses are its own task's: step n/4 for the first, step n/50 for the second.
    const messages = (outputs: readonly TaskToolOutput[]) =>
      outputs
        .flatMap((output) => (output.type === 'status' ? [output.statusMessage, output.progress?.message] : []))
        .filter((message): message is string => message !== undefined);
    expect(messages(a.outputs)).toContain('step 3/4');
    expect(messages(a.outputs).filter((message) => !/^step \d\/4$/.test(message))).toEqual([]);
    expect(messages(b.outputs)).toContain('step 2/50');
    expect(messages(b.outputs).filter((message) => /^step \d+\/4$/.test(message))).toEqual([]);
    expect(a.error).toBeUndefined();
    expect(a.outputs.at(-1)).toEqual({ type: 'result', content: [text('analysis of 1 done in 4 steps')] });
    expect(b.error).toMatchObject({ name: 'AbortError', remoteCancel: 'cancelled' });
    expect(b.outputs.some((output) => output.type === 'result')).toBe(false);
    // Only the aborted call's task was cancelled; the other completed.
    expect(cancelled).toHaveLength(1);
    const states = (await store.listTasks()).tasks.map((task) => task.status).sort();
    expect(states).toEqual(['cancelled', 'completed']);
    expect(tasks.active).toBe(0);
  });

  describe("the AI SDK's own timeout (timeout.toolMs) is a timeout, not an abort", () => {
    it('the model reads a TaskTimeoutError, and the task is cancelled', async () => {
      const { tasks, cancelled } = await rig();
      const model = toolCallingModel({ toolName: 'analyze', input: { steps: 50, stepMs: 50 } });
      const run = await streamAgent(model, await taskTools(tasks, { include: ['analyze'] }), {
        timeout: { toolMs: 300 },
      });
      const error = run.errors.get('call-1') as TaskTimeoutError;
      expect(error).toBeInstanceOf(TaskTimeoutError);
      expect(error).toMatchObject({ toolName: 'analyze', remoteCancel: 'cancelled' });
      expect(error.elapsedMs).toBeGreaterThanOrEqual(250);
      expect(error.message).toMatch(
        /^Task for tool "analyze" timed out after \d+ ms \(a timeout of the AI SDK\); the remote task was cancelled$/,
      );
      expect((error.cause as Error).name).toBe('AbortError');
      expect(toolResultsIn(model, 1)[0]?.output).toEqual({
        type: 'error-text',
        value: `TaskTimeoutError: ${error.message}`,
      });
      expect(cancelled).toHaveLength(1);
      expect(tasks.active).toBe(0);
    });

    it("cancelOnTimeout applies, not cancelOnAbort: false leaves the task running, true cancels it where the TaskClient's cancelOnAbort is false", async () => {
      const { tasks, cancelled, store } = await rig({}, { cancelOnAbort: false });
      const left = toolCallingModel({ toolName: 'analyze', input: { steps: 50, stepMs: 50 } });
      const running = await streamAgent(
        left,
        await taskTools(tasks, { include: ['analyze'], cancelOnTimeout: false, cancelOnAbort: true }),
        { timeout: { toolMs: 300 } },
      );
      expect(running.errors.get('call-1')).toMatchObject({
        name: 'TaskTimeoutError',
        remoteCancel: 'disabled',
        message: expect.stringMatching(/\(a timeout of the AI SDK\); the remote task was left running$/),
      });
      expect(cancelled).toEqual([]);
      expect((await store.listTasks()).tasks.map((task) => task.status)).toEqual(['working']);

      const stopped = toolCallingModel({ toolName: 'analyze', input: { steps: 50, stepMs: 50 } });
      const run = await streamAgent(stopped, await taskTools(tasks, { include: ['analyze'], cancelOnTimeout: true }), {
        timeout: { toolMs: 300 },
      });
      expect(run.errors.get('call-1')).toMatchObject({
        name: 'TaskTimeoutError',
        remoteCancel: 'cancelled',
        message: expect.stringMatching(/\(a timeout of the AI SDK\); the remote task was cancelled$/),
      });
      expect(cancelled).toHaveLength(1);
      expect(tasks.active).toBe(0);
    });
  });

  it('an aborted AI SDK signal before the call sends no tools/call', async () => {
    const { tasks, store } = await rig();
    const analyze = await taskTool(tasks, 'analyze');
    const abort = new AbortController();
    abort.abort(new Error('user left'));
    const options = {
      toolCallId: 'c',
      messages: [],
      context: undefined,
      abortSignal: abort.signal,
    } as ToolExecutionOptions<unknown>;
    const iterator = (analyze.execute!({}, options as never) as AsyncIterable<TaskToolOutput>)[Symbol.asyncIterator]();
    expect(await rejection(iterator.next())).toMatchObject({ name: 'AbortError' });
    expect((await store.listTasks()).tasks).toEqual([]);
  });

  it("sampling is answered by the tools' onSampling, told the tool call", async () => {
    const { tasks } = await rig({ sampling: {} });
    const asked: TaskToolInputContext[] = [];
    const tools = await taskTools(tasks, {
      include: ['summarize'],
      onSampling: (_params, context) => {
        asked.push(context);
        return { role: 'assistant', content: { type: 'text', text: 'tasks poll' }, model: 'mock' };
      },
    });
    const model = toolCallingModel({ toolName: 'summarize', input: { text: 'long text' }, toolCallId: 'call-s' });
    const run = await streamAgent(model, tools);
    expect(asked.map((c) => [c.toolCallId, c.aiToolName, c.toolName])).toEqual([['call-s', 'summarize', 'summarize']]);
    expect(statusesOf(run.preliminary).map((s) => s.status)).toContain('input_required');
    expect(run.results.get('call-s')).toEqual({ type: 'result', content: [text('summary: tasks poll')] });
  });

  it('on 2025-11-25, input no callback answers gets a JSON-RPC error; a server that fails the task on it ends the task before the tool gives it up: no tasks/cancel is sent, and the model reads the failure', async () => {
    const { pair, tasks } = await scripted({
      tools: [{ name: 'delete', taskSupport: 'required' }],
      clientOptions: { capabilities: { elicitation: {} } },
    });
    const { server } = pair;
    // Settles once the server has failed the task for the refusal of its question.
    let refused: Promise<void> | undefined;
    const refusals: Json[] = [];
    server.on('tools/call', () => {
      const created = server.tasks.createResult({ status: 'input_required', pollInterval: 50 });
      const taskId = String((created.task as { taskId: string }).taskId);
      setTimeout(() => {
        refused = server.request('elicitation/create', questionFor(taskId)).then((reply) => {
          refusals.push(reply);
          const why = String((reply.error as { message?: unknown } | undefined)?.message);
          server.tasks.finish(taskId, 'failed', { result: { content: [text(`Cannot ask: ${why}`)], isError: true } });
        });
      }, 0);
      return created;
    });
    // The client's reply and its read of the task race; the server takes requests about the task
    // only once it has handled the reply, so that the task has failed by then, whatever the timing.
    const afterRefusal =
      (handler: (params: Json, ctx: HandlerContext) => unknown) =>
      async (params: Json, ctx: HandlerContext): Promise<unknown> => {
        await refused;
        return handler(params, ctx);
      };
    server.on('tasks/get', afterRefusal(server.tasks.handlers['tasks/get']!));
    server.on('tasks/cancel', afterRefusal(server.tasks.handlers['tasks/cancel']!));
    const model = toolCallingModel({ toolName: 'delete', input: {} });
    const run = await streamAgent(model, await taskTools(tasks));
    expect(refusals).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32601 }) })]);
    // The tool gave the task up (nobody here answers), but a task found ended is not cancelled.
    expect(server.count('tasks/cancel')).toBe(0);
    expect(run.errors.size).toBe(0);
    const output = run.results.get('call-1') as TaskToolOutput;
    expect(output).toMatchObject({ type: 'result', isError: true });
    const read = toolResultsIn(model, 1)[0]?.output as { type: string; value: string };
    expect(read.type).toBe('error-text');
    // What the model reads says what happened, not which option a developer should pass.
    expect(read.value).toMatch(
      /^Cannot ask: No elicitation handler for task sha256:[0-9a-f]+: this client cannot answer elicitation requests/,
    );
    expect(read.value).not.toMatch(/pass onElicitation|TaskClient/);
    expect(tasks.active).toBe(0);
  });

  it("onElicitation on the tools without the client's elicitation capability: the model reads that the tool cannot be used here, the cause says what to declare", async () => {
    const { tasks } = await rig();
    const model = toolCallingModel({ toolName: 'confirm_delete', input: { path: '/x' } });
    const tools = await taskTools(tasks, { include: ['confirm_delete'], onElicitation: () => ({ action: 'decline' }) });
    const run = await streamAgent(model, tools);
    const error = run.errors.get('call-1') as TaskNotSupportedError;
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect(error).toMatchObject({ feature: 'elicitation', toolName: 'confirm_delete' });
    expect(error.message).toBe(
      'Tool "confirm_delete" cannot be used here: this application is not set up to receive its questions for the user (elicitation). Calling it again will fail the same way.',
    );
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({
      type: 'error-text',
      value: `TaskNotSupportedError: ${error.message}`,
    });
    expect((error.cause as Error).message).toMatch(/did not declare the "elicitation" capability/);
  });

  it('progress: false asks for no progress and yields statuses without it', async () => {
    const { tasks } = await rig();
    const tools = await taskTools(tasks, { include: ['analyze'], progress: false });
    const run = await streamAgent(toolCallingModel({ toolName: 'analyze', input: { steps: 2, stepMs: 20 } }), tools);
    const statuses = statusesOf(run.preliminary);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((s) => s.progress === undefined)).toBe(true);
  });

  it('structured content rides in the final result', async () => {
    const { tasks } = await rig();
    const tools = await taskTools(tasks, { include: ['batch'] });
    const run = await streamAgent(toolCallingModel({ toolName: 'batch', input: { items: ['x'], itemMs: 10 } }), tools);
    expect(run.results.get('call-1')).toEqual({
      type: 'result',
      content: [text('processed 1 items')],
      structuredContent: { processed: ['x'] },
    });
  });

  it('an isError result of a plain call is the final output, and the model reads it as a tool error', async () => {
    const server = new McpServer({ name: 'plain', version: '1.0.0' });
    server.registerTool('lookup', { description: 'Looks a key up.', inputSchema: {} }, () => ({
      content: [{ type: 'text' as const, text: 'no such key' }],
      isError: true,
    }));
    const pair = await connectPair(server);
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const tools = await taskTools(tasks);
    const model = toolCallingModel({ toolName: 'lookup', input: {} });
    const run = await streamAgent(model, tools);
    expect(run.errors.size).toBe(0);
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('no such key')], isError: true });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({ type: 'error-text', value: 'no such key' });
  });

  it('a task that ends failed with an isError result (2025-11-25, [V18]) is the final output: the model reads every text block', async () => {
    const { pair, tasks } = await scripted({
      tools: [{ name: 'broken', taskSupport: 'required', inputSchema: { type: 'object' } }],
    });
    pair.server.on('tools/call', () => {
      const created = pair.server.tasks.createResult({ pollInterval: 20 });
      const taskId = String((created.task as { taskId: string }).taskId);
      const result = { content: [text('disk full'), text('free 2 GB and retry')], isError: true };
      setTimeout(() => pair.server.tasks.finish(taskId, 'failed', { result }), 30);
      return created;
    });
    const tools = await taskTools(tasks);
    const model = toolCallingModel({ toolName: 'broken', input: {} });
    const run = await streamAgent(model, tools);
    expect(run.errors.size).toBe(0);
    expect(run.results.get('call-1')).toEqual({
      type: 'result',
      content: [text('disk full'), text('free 2 GB and retry')],
      isError: true,
    });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({ type: 'error-text', value: 'disk full\nfree 2 GB and retry' });
  });

  it("a task that ends failed with an isError result without text (2025-11-25): the model reads the server's status message, led by the failure", async () => {
    const { pair, tasks } = await scripted({
      tools: [{ name: 'render', taskSupport: 'required', inputSchema: { type: 'object' } }],
    });
    const PNG = 'iVBORw0KGgo=';
    const image = { type: 'image', data: PNG, mimeType: 'image/png' };
    const results: Array<Record<string, unknown>> = [
      { content: [], isError: true },
      { content: [image], isError: true },
      { content: [text('')], isError: true },
    ];
    pair.server.on('tools/call', () => {
      // The status message names the task: the model reads its fingerprint.
      const taskId = `render-task-secret-${results.length}`;
      const created = pair.server.tasks.createResult({ taskId, pollInterval: 20 });
      const result = results.shift()!;
      const statusMessage = `quota exceeded for ${taskId}`;
      setTimeout(() => pair.server.tasks.finish(taskId, 'failed', { result }, { statusMessage }), 30);
      return created;
    });
    const tools = await taskTools(tasks);
    const reason = /^Tool "render" failed: quota exceeded for sha256:[0-9a-f]+$/;
    // No content: the reason is the whole error text.
    const empty = toolCallingModel({ toolName: 'render', input: {} });
    const first = await streamAgent(empty, tools);
    expect(first.errors.size).toBe(0);
    expect(first.results.get('call-1')).toEqual({
      type: 'result',
      content: [{ type: 'text', text: expect.stringMatching(reason) }],
      isError: true,
    });
    expect(toolResultsIn(empty, 1)[0]?.output).toEqual({ type: 'error-text', value: expect.stringMatching(reason) });
    // Only an image: the reason comes before it.
    const pictured = toolCallingModel({ toolName: 'render', input: {} });
    await streamAgent(pictured, tools);
    expect(toolResultsIn(pictured, 1)[0]?.output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'The tool reported an error:' },
        { type: 'text', text: expect.stringMatching(reason) },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
      ],
    });
    // An empty text says nothing either (the model reads the texts joined, the empty one last).
    const blank = toolCallingModel({ toolName: 'render', input: {} });
    await streamAgent(blank, tools);
    const output = toolResultsIn(blank, 1)[0]?.output as { type: string; value: string };
    expect(output.type).toBe('error-text');
    expect(output.value.trimEnd()).toMatch(reason);
  });

  it('a task result with malformed content blocks does not crash the agent run: the model reads them as JSON', async () => {
    const { pair, tasks } = await scripted({
      tools: [{ name: 'render', taskSupport: 'required', inputSchema: { type: 'object' } }],
    });
    // Blocks of a tasks/result are not checked by the SDK: an image without its mimeType, a
    // resource without its contents.
    const content = [text('chart below'), { type: 'image', data: 'AA==' }, { type: 'resource' }];
    pair.server.on('tools/call', () => {
      const created = pair.server.tasks.createResult({ pollInterval: 20 });
      const taskId = String((created.task as { taskId: string }).taskId);
      setTimeout(() => pair.server.tasks.finish(taskId, 'completed', { result: { content } }), 30);
      return created;
    });
    const model = toolCallingModel({ toolName: 'render', input: {} });
    const run = await streamAgent(model, await taskTools(tasks));
    expect(run.parts).not.toContain('error');
    expect(run.text).toBe('done');
    expect(run.results.get('call-1')).toEqual({ type: 'result', content });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({
      type: 'content',
      value: [text('chart below'), text('{"type":"image","data":"AA=="}'), text('{"type":"resource"}')],
    });
  });

  describe('the error text the model reads is bounded (maxErrorLength)', () => {
    /** A TaskClient whose tool `crunch` runs as a task that fails with a JSON-RPC error of `message`. */
    async function failing(message: string) {
      const { pair, tasks } = await scripted({
        tools: [{ name: 'crunch', taskSupport: 'required', inputSchema: { type: 'object' } }],
      });
      pair.server.on('tools/call', () => {
        const created = pair.server.tasks.createResult({ pollInterval: 20 });
        const taskId = String((created.task as { taskId: string }).taskId);
        setTimeout(() => pair.server.tasks.finish(taskId, 'failed', { error: rpcError(-32603, message) }), 30);
        return created;
      });
      return tasks;
    }

    it('a server error message longer than 4000 characters reaches the model cut, in a copy of the error with its fields', async () => {
      const long = `Worker crashed: ${'x'.repeat(10_000)}`;
      const tasks = await failing(long);
      const model = toolCallingModel({ toolName: 'crunch', input: {} });
      const run = await streamAgent(model, await taskTools(tasks));
      const error = run.errors.get('call-1') as TaskFailedError;
      expect(error).toBeInstanceOf(TaskFailedError);
      expect(error.message).toHaveLength(4_000);
      expect(error.message.startsWith('Tool "crunch" failed: Worker crashed: xxx')).toBe(true);
      expect(error.message.endsWith('x…')).toBe(true);
      // The full text stays in the error's fields.
      expect(error.rpcError).toMatchObject({ code: -32603, message: long });
      expect(error).toMatchObject({ name: 'TaskFailedError', toolName: 'crunch' });
      expect(toolResultsIn(model, 1)[0]?.output).toEqual({
        type: 'error-text',
        value: `TaskFailedError: ${error.message}`,
      });
    });

    it('a per-tool maxErrorLength cuts to its own length; Infinity cuts nothing', async () => {
      const long = 'y'.repeat(5_000);
      const tasks = await failing(long);
      const cut = toolCallingModel({ toolName: 'crunch', input: {} });
      const run = await streamAgent(cut, await taskTools(tasks, { tools: { crunch: { maxErrorLength: 40 } } }));
      expect((run.errors.get('call-1') as Error).message).toBe(`Tool "crunch" failed: ${'y'.repeat(17)}…`);
      const whole = toolCallingModel({ toolName: 'crunch', input: {} });
      const full = await streamAgent(whole, await taskTools(tasks, { maxErrorLength: Infinity }));
      expect((full.errors.get('call-1') as Error).message).toBe(`Tool "crunch" failed: ${long}`);
    });

    it('a cut never splits a surrogate pair', async () => {
      const tasks = await failing(`${'z'.repeat(16)}😀😀😀`);
      const model = toolCallingModel({ toolName: 'crunch', input: {} });
      // "Tool "crunch" failed: " is 22 characters: 38 + 1 leaves the emoji's high half at the cut.
      const run = await streamAgent(model, await taskTools(tasks, { maxErrorLength: 40 }));
      expect((run.errors.get('call-1') as Error).message).toBe(`Tool "crunch" failed: ${'z'.repeat(16)}…`);
    });
  });

  it("a result's text is bounded by wrapping the tool's toModelOutput (the guide's recipe): the UI keeps it whole", async () => {
    const server = new McpServer({ name: 'plain', version: '1.0.0' });
    server.registerTool('dump', { description: 'Dumps a log.', inputSchema: {} }, () => ({
      content: [{ type: 'text' as const, text: 'l'.repeat(50) }],
    }));
    const pair = await connectPair(server);
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const MAX_CHARS = 10;
    const cut = (value: string): string => (value.length > MAX_CHARS ? `${value.slice(0, MAX_CHARS)}… (cut)` : value);
    const tools = await taskTools(tasks);
    for (const [name, tool] of Object.entries(tools)) {
      const toModelOutput = tool.toModelOutput;
      if (toModelOutput === undefined) continue;
      tools[name] = {
        ...tool,
        toModelOutput: async (options) => {
          const output = await toModelOutput(options);
          if (output.type === 'text' || output.type === 'error-text') return { ...output, value: cut(output.value) };
          if (output.type !== 'content') return output;
          return {
            ...output,
            value: output.value.map((part) => (part.type === 'text' ? { ...part, text: cut(part.text) } : part)),
          };
        },
      };
    }
    const model = toolCallingModel({ toolName: 'dump', input: {} });
    const run = await streamAgent(model, tools);
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('l'.repeat(50))] });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({
      type: 'content',
      value: [{ type: 'text', text: `${'l'.repeat(10)}… (cut)` }],
    });
  });

  it('a status or progress message that names the task shows its fingerprint instead of its id', async () => {
    const secret = 'task-secret-0001';
    const { pair, tasks } = await scripted({
      tools: [{ name: 'crunch', taskSupport: 'required', inputSchema: { type: 'object' } }],
    });
    pair.server.on('tools/call', (params) => {
      const progressToken = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
      const created = pair.server.tasks.createResult({
        taskId: secret,
        pollInterval: 20,
        statusMessage: `queued as ${secret}`,
      });
      setTimeout(() => {
        pair.server.notify('notifications/progress', {
          progressToken,
          progress: 1,
          total: 2,
          message: `${secret}: half`,
        });
        setTimeout(() => pair.server.tasks.finish(secret, 'completed', { result: { content: [text('done')] } }), 60);
      }, 30);
      return created;
    });
    const run = await streamAgent(toolCallingModel({ toolName: 'crunch', input: {} }), await taskTools(tasks));
    const statuses = statusesOf(run.preliminary);
    expect(statuses[0]).toEqual({
      type: 'status',
      status: 'working',
      statusMessage: `queued as ${taskFingerprint(secret)}`,
    });
    expect(statuses.map((status) => status.progress?.message)).toContain(`${taskFingerprint(secret)}: half`);
    expect(JSON.stringify(run.preliminary)).not.toContain(secret);
    expect(run.results.get('call-1')).toEqual({ type: 'result', content: [text('done')] });
  });

  it('a saved conversation goes back to the model through convertToModelMessages: the final content, or a note that the task had not finished', async () => {
    const { tasks } = await rig();
    const tools = await taskTools(tasks, { include: ['analyze'] });
    const part = (output: TaskToolOutput) =>
      ({
        type: 'dynamic-tool',
        toolName: 'analyze',
        toolCallId: 'c1',
        state: 'output-available',
        input: { id: 1 },
        output,
      }) as const;
    const messages: UIMessage[] = [
      { id: 'u', role: 'user', parts: [{ type: 'text', text: 'go' }] },
      {
        id: 'a',
        role: 'assistant',
        parts: [part({ type: 'result', content: [{ type: 'text', text: 'analysis of 1 done in 3 steps' }] })],
      },
    ];
    const converted = await convertToModelMessages(messages, { tools });
    const toolMessage = converted.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: 'c1',
        output: { type: 'content', value: [text('analysis of 1 done in 3 steps')] },
      }),
    ]);
    const unfinished: UIMessage[] = [
      messages[0]!,
      { id: 'a', role: 'assistant', parts: [part({ type: 'status', status: 'working', statusMessage: 'step 2/3' })] },
    ];
    const again = await convertToModelMessages(unfinished, { tools });
    expect(again.find((message) => message.role === 'tool')?.content).toEqual([
      expect.objectContaining({
        output: {
          type: 'text',
          value: 'The task had not finished: it was last seen working (step 2/3), without a result.',
        },
      }),
    ]);
  });
});
