/**
 * Misuse gets a clear, typed error from the call that received it (reliability review, items
 * 16, 17 and 19); ownership of an SDK client belongs to the TaskClient that connected it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer } from '../../examples/server.js';
import {
  TaskAbortError,
  TaskClient,
  TaskClosedError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskTimeoutError,
  type CloseOptions,
  type TaskClientOptions,
} from '../../lib/index.js';
import { flush, rejection, unhandledDuring, within } from '../helpers.js';
import { creating, rpcError, type ScriptedServerOptions } from '../support/scripted-server.js';
import { scriptedTaskClient } from '../support/scripted-task-client.js';
import { connectOptions, createLinkedPair } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup(options: ScriptedServerOptions = {}, taskOptions: TaskClientOptions = {}) {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), options, taskOptions);
}

describe('options are validated by the call that receives them', () => {
  it.each([Number.NaN, 0, -1, 1.5, Infinity])(
    'updates({ bufferSize: %s }) throws TaskOptionError',
    async (bufferSize) => {
      const { server, tasks } = await setup();
      creating(server);
      const handle = await tasks.callToolAsTask('job');
      let error: unknown;
      try {
        handle.updates({ bufferSize });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(TaskOptionError);
      expect((error as TaskOptionError).option).toBe('bufferSize');
    },
  );

  it.each([1.5, -1, Number.NaN])('retry.retries %s throws TaskOptionError from the constructor', async (retries) => {
    const { client } = await setup();
    expect(() => new TaskClient(client, { retry: { retries } })).toThrow(TaskOptionError);
  });

  it('the constructor refuses null options, a retry that is not an object and a clock without its functions, naming the option', async () => {
    const { client } = await setup();
    const option = (make: () => unknown): unknown => {
      try {
        make();
      } catch (error) {
        return error instanceof TaskOptionError ? error.option : error;
      }
      return 'accepted';
    };
    expect(option(() => new TaskClient(client, null as never))).toBe('options');
    for (const retry of [5, 'fast', null, true])
      expect(option(() => new TaskClient(client, { retry: retry as never }))).toBe('retry');
    for (const clock of [{}, 5, { now: () => 0 }])
      expect(option(() => new TaskClient(client, { clock: clock as never }))).toBe('clock');
    // The error names the option the caller set, not its default partner.
    expect(option(() => new TaskClient(client, { minPollIntervalMs: 3_600_001 }))).toBe('minPollIntervalMs');
    // A floor of 2 minutes fits under the default ceiling (1 hour).
    expect(option(() => new TaskClient(client, { minPollIntervalMs: 120_000 }))).toBe('accepted');
    expect(option(() => new TaskClient(client, { maxPollIntervalMs: 50 }))).toBe('maxPollIntervalMs');
  });

  it('TaskClient.connect refuses null options and an sdk other than v1 or v2, before connecting', async () => {
    const [clientSide] = createLinkedPair();
    await expect(TaskClient.connect(clientSide, null as never)).rejects.toMatchObject({
      name: 'TaskOptionError',
      option: 'options',
    });
    await expect(TaskClient.connect(clientSide, { sdk: 'V2' as never })).rejects.toMatchObject({
      name: 'TaskOptionError',
      option: 'sdk',
    });
  });

  it('TaskClient.connect rejects what is not a transport with TaskOptionError (option "transport"), before connecting; an SDK Client given instead is named', async () => {
    const refusal = async (transport: unknown): Promise<TaskOptionError> => {
      const error = await rejection(TaskClient.connect(transport as never));
      expect(error).toBeInstanceOf(TaskOptionError);
      expect(error).toMatchObject({ option: 'transport' });
      return error as TaskOptionError;
    };
    for (const transport of [null, undefined, 'x', 42, true]) {
      expect((await refusal(transport)).message).toMatch(
        /^TaskClient\.connect needs an MCP transport .*, got (null|undefined|string|number|boolean)$/,
      );
    }
    for (const transport of [{}, [], { start: () => Promise.resolve() }, { start: 1, send: 2, close: 3 }]) {
      expect((await refusal(transport)).message).toMatch(
        /needs an MCP transport .*this object has no (start\(\), )?send\(\), close\(\)$/,
      );
    }
    const { client } = await setup();
    expect((await refusal(client)).message).toMatch(
      /not an SDK Client: wrap a connected Client with new TaskClient\(client\)/,
    );
    // Options are checked too, and the transport is left untouched.
    const [clientSide] = createLinkedPair();
    await expect(TaskClient.connect(clientSide, 'x' as never)).rejects.toMatchObject({
      name: 'TaskOptionError',
      option: 'options',
    });
    expect(clientSide.onmessage).toBeUndefined();
  });

  it('new TaskClient(x) throws TaskOptionError (option "client") for what is not a connected SDK Client, and points a transport to TaskClient.connect', () => {
    const refusal = (client: unknown): TaskOptionError => {
      let error: unknown;
      try {
        new TaskClient(client as never);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(TaskOptionError);
      expect(error).toMatchObject({ option: 'client' });
      return error as TaskOptionError;
    };
    for (const client of [null, undefined, 'x', 42, {}, { close: () => Promise.resolve() }]) {
      expect(refusal(client).message).toMatch(
        /^TaskClient needs a Client from @modelcontextprotocol\/sdk \(1\.x\) or @modelcontextprotocol\/client \(2\.x\), got /,
      );
    }
    const [clientSide] = createLinkedPair();
    expect(refusal(clientSide).message).toMatch(/not a transport: use TaskClient\.connect\(transport\)/);
  });

  it.each([
    'io.modelcontextprotocol/clientCapabilities',
    'io.modelcontextprotocol/protocolVersion',
    'io.modelcontextprotocol/clientInfo',
  ])(
    'callToolAsTask refuses meta["%s"] (the library writes the per-request envelope itself, [E1]) before sending anything',
    async (key) => {
      const { server, tasks } = await setup();
      creating(server);
      const error = await rejection(tasks.callToolAsTask('job', {}, { meta: { [key]: {}, trace: 'kept' } }));
      expect(error).toBeInstanceOf(TaskOptionError);
      expect(error).toMatchObject({ option: 'meta' });
      expect((error as Error).message).toContain(key);
      expect(server.count('tools/call')).toBe(0);
      // Other entries are the caller's to set.
      const handle = await tasks.callToolAsTask('job', {}, { meta: { trace: 'kept' } });
      expect(handle.kind).toBe('task');
      expect((server.params('tools/call')[0]!._meta as Record<string, unknown>).trace).toBe('kept');
    },
  );

  it('resume() refuses a toolName that is not a string', async () => {
    const { tasks } = await setup();
    expect(() => tasks.resume('some-task', { toolName: 42 as never })).toThrow(TaskOptionError);
  });

  it('a huge retry.factor with retry.minDelayMs 0 never makes a delay that stalls the timers: failed polls are retried and the task completes', async () => {
    const { server, tasks, clock } = await setup(
      {},
      { retry: { minDelayMs: 0, factor: 1e200 }, requestTimeoutMs: 100 },
    );
    creating(server, { taskId: 'huge-factor', pollInterval: 200 });
    let polls = 0;
    const get = server.tasks.handlers['tasks/get']!;
    server.on('tasks/get', (params, ctx) => {
      polls += 1;
      if (polls <= 4) throw rpcError(-32603, 'not yet');
      return get(params, ctx);
    });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    for (let i = 0; i < 100 && polls < 5; i += 1) await clock.advance(1_000);
    expect(polls).toBeGreaterThanOrEqual(5);
    server.tasks.finish(
      'huge-factor',
      'completed',
      { result: { content: [{ type: 'text', text: 'done' }] } },
      {},
      true,
    );
    await clock.advance(10_000);
    await expect(within(result)).resolves.toMatchObject({ content: [{ type: 'text', text: 'done' }] });
  });

  it('resume() refuses a task id longer than the library accepts from a server, before sending anything', async () => {
    const { server, tasks } = await setup();
    const before = server.log.length;
    expect(() => tasks.resume('x'.repeat(65_537))).toThrow(TaskOptionError);
    expect(() =>
      tasks.resume({
        v: 2,
        taskId: 'x'.repeat(70_000),
        toolName: 'job',
        createdAt: '',
        ttl: null,
        server: 'scripted-server@1.0.0',
        wire: '2025-11-25',
      }),
    ).toThrow(TaskOptionError);
    expect(server.log.length).toBe(before);
  });
});

describe('invalid options are refused before anything happens', () => {
  it.each([
    ['null', null],
    ['a string', 'now'],
    ['cancelRunning: "yes"', { cancelRunning: 'yes' }],
    ['cancelRunning: 1', { cancelRunning: 1 }],
  ])('close(%s) rejects with TaskOptionError and leaves the client working, closable later', async (_, options) => {
    const { server, tasks } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result();
    let settled = false;
    result.then(
      () => (settled = true),
      () => (settled = true),
    );
    const error = await rejection(tasks.close(options as CloseOptions));
    expect(error).toBeInstanceOf(TaskOptionError);
    await flush();
    // Nothing was closed: the handle still waits, calls still work.
    expect(settled).toBe(false);
    expect(tasks.active).toBe(1);
    const second = await tasks.callToolAsTask('job');
    expect(second.kind).toBe('task');
    expect(tasks.active).toBe(2);
    // A valid close() then closes it for good.
    await within(tasks.close({ cancelRunning: false }));
    await expect(rejection(result)).resolves.toBeInstanceOf(TaskClosedError);
    expect(tasks.active).toBe(0);
    await expect(second.result()).rejects.toBeInstanceOf(TaskClosedError);
    await expect(tasks.callToolAsTask('job')).rejects.toBeInstanceOf(TaskClosedError);
  });

  it.each([['x'], [{}], [5], [null]])(
    'result({ signal: %j }) rejects with TaskOptionError and observes nothing',
    async (signal) => {
      const { server, tasks } = await setup();
      const handle = tasks.resume('task-9');
      const before = server.log.length;
      const unhandled = await unhandledDuring(async () => {
        const result = handle.result({ signal: signal as unknown as AbortSignal });
        expect(result).toBeInstanceOf(Promise);
        const error = await rejection(result);
        expect(error).toBeInstanceOf(TaskOptionError);
        expect((error as TaskOptionError).option).toBe('signal');
        await flush();
        // The resumed task was not observed: nothing was sent.
        expect(server.log.length).toBe(before);
        // No shared result promise was left behind to reject unhandled when close() ends the task.
        await tasks.close();
      });
      expect(unhandled).toEqual([]);
    },
  );

  it('result({ signal }) with a signal already aborted rejects with TaskAbortError, and nothing rejects unhandled when the task ends later', async () => {
    const { tasks } = await setup();
    const handle = tasks.resume('task-9');
    const unhandled = await unhandledDuring(async () => {
      const error = await rejection(handle.result({ signal: AbortSignal.abort('gave up') }));
      expect(error).toBeInstanceOf(TaskAbortError);
      // close() ends the task: the shared result promise made for that call rejects, handled.
      await tasks.close();
    });
    expect(unhandled).toEqual([]);
  });

  it('timeoutMs: 0 sends nothing: TaskTimeoutError with remoteCancel no-task, no tools/call', async () => {
    const { server, tasks } = await setup({ tools: [{ name: 'job', taskSupport: 'required' }] });
    creating(server);
    await tasks.tools();
    const error = await rejection(tasks.callToolAsTask('job', {}, { timeoutMs: 0 }));
    expect(error).toBeInstanceOf(TaskTimeoutError);
    expect((error as TaskTimeoutError).remoteCancel).toBe('no-task');
    expect(server.count('tools/call')).toBe(0);
    expect(tasks.active).toBe(0);
  });

  it('result(null) rejects with TaskOptionError', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'r', pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const error = await rejection(handle.result(null as unknown as undefined));
    expect((error as TaskOptionError).option).toBe('options');
  });

  it.each([['x'], [{}], [5], [null]])(
    'updates({ signal: %j }) throws TaskOptionError and subscribes nothing',
    async (signal) => {
      const { server, tasks } = await setup();
      const resumed = tasks.resume('task-9');
      const before = server.log.length;
      expect(() => resumed.updates({ signal: signal as unknown as AbortSignal })).toThrow(TaskOptionError);
      await flush();
      // The resumed task was not observed: nothing was sent.
      expect(server.log.length).toBe(before);
      creating(server, { taskId: 'u', pollInterval: 60_000 });
      const handle = await tasks.callToolAsTask('job');
      let error: unknown;
      try {
        handle.updates({ signal: signal as unknown as AbortSignal });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(TaskOptionError);
      expect((error as TaskOptionError).option).toBe('signal');
      expect((error as TaskOptionError).taskId).toBe('u');
    },
  );

  it('callToolAsTask, resume and updates refuse null options with TaskOptionError', async () => {
    const { server, tasks } = await setup();
    creating(server, { taskId: 'n', pollInterval: 60_000 });
    await expect(tasks.callToolAsTask('job', {}, null as unknown as undefined)).rejects.toBeInstanceOf(TaskOptionError);
    expect(() => tasks.resume('task-9', null as unknown as undefined)).toThrow(TaskOptionError);
    const handle = await tasks.callToolAsTask('job');
    expect(() => handle.updates(null as unknown as undefined)).toThrow(TaskOptionError);
  });
});

describe('requireTask names the real reason', () => {
  it('a tool missing from tools/list: the message says it is not listed', async () => {
    const { tasks } = await setup({ tools: [{ name: 'other', taskSupport: 'required' }] });
    const error = await tasks.callToolAsTask('missing', {}, { requireTask: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect((error as Error).message).toMatch(/not listed/);
    expect((error as Error).message).not.toMatch(/taskSupport is absent/);
  });

  it('a listed tool without task support: the message names its taskSupport', async () => {
    const { tasks } = await setup({ tools: [{ name: 'plain', taskSupport: 'forbidden' }] });
    const error = await tasks.callToolAsTask('plain', {}, { requireTask: true }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/taskSupport is forbidden/);
  });
});

describe('ownership of the SDK client', () => {
  it('close() of a TaskClient wrapping a client that another TaskClient connected leaves that client open', async () => {
    const { server, store } = createExampleServer({ stepMs: 5 });
    const [clientSide, serverSide] = createLinkedPair();
    await server.connect(serverSide);
    cleanups.push(async () => {
      await server.close();
      store.cleanup();
    });
    // SDK v2: the library's default era negotiation (auto), falling back to legacy.
    const owner = await TaskClient.connect(clientSide, connectOptions('auto'));
    cleanups.push(() => owner.close());
    const borrower = new TaskClient(owner.client);
    await borrower.close();
    // The owner's client still works.
    const handle = await owner.callToolAsTask('analyze', { id: 1, steps: 1 });
    await expect(within(handle.result())).resolves.toMatchObject({ content: expect.any(Array) });
    await owner.close();
    expect(owner.client.transport).toBeUndefined();
  });
});

describe('options and capabilities checked before anything is sent', () => {
  it('TaskClient.connect() validates options before opening a connection', async () => {
    const [clientSide] = createLinkedPair();
    let started = false;
    clientSide.start = async () => {
      started = true;
    };
    await expect(TaskClient.connect(clientSide, { ...connectOptions(), minPollIntervalMs: -1 })).rejects.toBeInstanceOf(
      TaskOptionError,
    );
    await expect(
      TaskClient.connect(clientSide, {
        ...connectOptions(),
        capabilities: {},
        onElicitation: undefined,
        maxConcurrentTasks: 0,
      }),
    ).rejects.toBeInstanceOf(TaskOptionError);
    expect(started).toBe(false);
  });

  it('per-call input callbacks without the capability fail fast with TaskNotSupportedError', async () => {
    const { tasks } = await setup();
    await expect(
      tasks.callToolAsTask(
        'job',
        {},
        { onSampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: '' } }) },
      ),
    ).rejects.toBeInstanceOf(TaskNotSupportedError);
  });

  it("a per-call onElicitation on a client TaskClient.connect made without the capability: the error says to declare it in connect()'s options, not to use connect()", async () => {
    const { server, store } = createExampleServer({ stepMs: 5 });
    const [clientSide, serverSide] = createLinkedPair();
    await server.connect(serverSide);
    cleanups.push(async () => {
      await server.close();
      store.cleanup();
    });
    // No TaskClient-level onElicitation and no `capabilities`: connect() declares no elicitation.
    const tasks = await TaskClient.connect(clientSide, connectOptions('auto'));
    cleanups.push(() => tasks.close());
    const error = await rejection(
      tasks.callToolAsTask('confirm_delete', {}, { onElicitation: () => ({ action: 'decline' }) }),
    );
    expect(error).toBeInstanceOf(TaskNotSupportedError);
    expect(error).toMatchObject({ feature: 'elicitation', toolName: 'confirm_delete' });
    // It said "Create the Client with capabilities: { elicitation: {} }, or use TaskClient.connect()",
    // to a host that had used TaskClient.connect().
    expect((error as Error).message).toContain(
      'capabilities: { elicitation: {} } in the options of new Client() or of TaskClient.connect()',
    );
  });
});
