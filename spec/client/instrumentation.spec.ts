/**
 * The instrumentation hook (`TaskClientOptions.instrumentation`) on its own, with no telemetry
 * library: attached once per TaskClient, told of each call synchronously in the caller's turn,
 * of each request the call sends (method and JSON-RPC id, its `_meta` entries merged under the
 * request's own, and how it ended), of the call's handle before any later event of it, of a call
 * that fails before it has one, and of each input request handed to a callback; of a task resumed
 * by `resume` (synchronously, with its id and tool), its requests and its handle, without reading
 * it before its caller observes it, and a hook without `resume` leaves it alone; of each page of
 * `tasks/list` (synchronously) and its requests. Against the
 * example server (the SDK's `McpServer` with its task store) in process, on both SDK majors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  TaskAbortError,
  TaskOptionError,
  type CallInstrument,
  type ClientInstrument,
  type InputOutcome,
  type InstrumentedCall,
  type InstrumentedList,
  type InstrumentedResume,
  type OutgoingNotification,
  type OutgoingRequest,
  type RequestFailure,
  type TaskClientOptions,
  type TaskInstrumentation,
} from '../../lib/index.js';
import { createExampleServer } from '../../examples/server.js';
import { connectPair, exampleServerPair, until, type Pair } from '../helpers.js';
import { swallowingEcho } from '../support/swallow.js';

const pairs: Pair[] = [];
afterEach(async () => {
  while (pairs.length > 0) await pairs.pop()?.close();
});

/**
 * A TaskClient watched by `hook`, on the example server behind {@link swallowingEcho}: the plain
 * call's `tools/call` of `echo` is never delivered (so never answered), and each cancel is kept
 * as sent.
 */
async function swallowingClient(hook: TaskInstrumentation) {
  const { wrap, cancels, swallowed } = swallowingEcho();
  const { server, store } = createExampleServer({ notify: false });
  const pair = await connectPair(server, {}, wrap);
  pairs.push({ client: pair.client, close: async () => (await pair.close(), store.cleanup()) });
  const tasks = new TaskClient(pair.client, { instrumentation: hook });
  pairs.push({ client: pair.client, close: () => tasks.close() });
  return { tasks, cancels, swallowed };
}

/** What a recording hook saw. */
interface Seen {
  attached: number;
  calls: InstrumentedCall[];
  requests: Array<OutgoingRequest & { ended?: RequestFailure | 'ok' }>;
  log: string[];
  inputs: Array<{ method: string; delivery: string; outcome?: InputOutcome['kind'] }>;
}

/** A hook that records everything and adds `{ mark: <method> }` to each request's `_meta`. */
function recording(): { hook: TaskInstrumentation; seen: Seen } {
  const seen: Seen = { attached: 0, calls: [], requests: [], log: [], inputs: [] };
  const hook: TaskInstrumentation = {
    attach: (client): ClientInstrument => {
      seen.attached += 1;
      client.on('status', (_metrics, task) => seen.log.push(`client status ${task.status}`));
      return {
        call: (call): CallInstrument => {
          seen.calls.push(call);
          seen.log.push(`call ${call.toolName}`);
          return {
            request: (request) => {
              const entry: Seen['requests'][number] = { ...request };
              seen.requests.push(entry);
              return { meta: { mark: request.method }, end: (failure) => void (entry.ended = failure ?? 'ok') };
            },
            handle: (handle) => {
              seen.log.push(`handle ${handle.kind}`);
              handle.on('status', (_metrics, task) => seen.log.push(`handle status ${task.status}`));
            },
            failed: (error) => seen.log.push(`failed ${(error as Error).name}`),
          };
        },
        input: (input) => {
          const entry: Seen['inputs'][number] = { method: input.method, delivery: input.context.delivery };
          seen.inputs.push(entry);
          return { end: (outcome) => void (entry.outcome = outcome.kind) };
        },
      };
    },
  };
  return { hook, seen };
}

async function client(
  options: TaskClientOptions = {},
): Promise<{ tasks: TaskClient; pair: Awaited<ReturnType<typeof exampleServerPair>> }> {
  const pair = await exampleServerPair(
    { notify: false, pollInterval: 20, stepMs: 30 },
    { capabilities: { elicitation: {} } },
  );
  pairs.push(pair);
  const tasks = new TaskClient(pair.client, { minPollIntervalMs: 5, ...options });
  pairs.push({ client: pair.client, close: () => tasks.close() });
  return { tasks, pair };
}

describe('the instrumentation hook', () => {
  it('is attached once, told of the call synchronously, of each request with its id, and merges its _meta entries', async () => {
    const { hook, seen } = recording();
    const { tasks, pair } = await client({ instrumentation: hook });
    const received: Array<{ method: string; meta: unknown }> = [];
    const transport = pair.client.transport!;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { method?: string; params?: { _meta?: unknown } };
      if (m.method !== undefined) received.push({ method: m.method, meta: m.params?._meta });
      return send(message, options);
    };
    expect(seen.attached).toBe(1);
    const pending = tasks.callToolAsTask('analyze', { id: 1, steps: 2 }, { meta: { own: 'kept', mark: 'mine' } });
    // Synchronously, in the caller's turn, before anything was sent.
    expect(seen.calls.map((call) => call.toolName)).toEqual(['analyze']);
    expect(seen.calls[0]!.arguments).toEqual({ id: 1, steps: 2 });
    expect(seen.calls[0]!.connection).toMatchObject({
      wire: '2025-11-25',
      sessionId: undefined,
      transport: undefined,
      origin: undefined,
    });
    const handle = await pending;
    await handle.result();
    const methods = seen.requests.map((request) => request.method);
    expect(methods[0]).toBe('tools/call');
    expect(methods).toContain('tasks/get');
    expect(methods.at(-1)).toBe('tasks/result');
    expect(seen.requests.every((request) => request.ended === 'ok')).toBe(true);
    expect(new Set(seen.requests.map((request) => request.id)).size).toBe(seen.requests.length);
    // Each request went out with the hook's entry under its own (the call's own win).
    const sent = received.filter((message) => message.method === 'tools/call' || message.method.startsWith('tasks/'));
    expect(sent[0]!.meta).toMatchObject({ own: 'kept', mark: 'mine' });
    for (const message of sent.slice(1)) expect(message.meta).toMatchObject({ mark: message.method });
    // The handle before any later event of it; the client's events as before.
    expect(seen.log.slice(0, 3)).toEqual(['call analyze', 'client status working', 'handle task']);
    expect(seen.log.filter((line) => line.startsWith('handle status')).at(-1)).toBe('handle status completed');
  });

  it('is told of a call that fails before it has a handle, and of a plain call’s immediate handle', async () => {
    const { hook, seen } = recording();
    const { tasks } = await client({ instrumentation: hook });
    await expect(tasks.callToolAsTask('echo', {}, { requireTask: true })).rejects.toThrow('does not support task mode');
    await tasks.callToolAsTask('echo', { text: 'hi' });
    expect(seen.log.filter((line) => !line.startsWith('client'))).toEqual([
      'call echo',
      'failed TaskNotSupportedError',
      'call echo',
      'handle immediate',
    ]);
  });

  it('is told of each input request handed to a callback and how it ended', async () => {
    const { hook, seen } = recording();
    const { tasks } = await client({
      instrumentation: hook,
      onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
    });
    await (await tasks.callToolAsTask('confirm_delete', { path: '/tmp/x' })).result();
    expect(seen.inputs).toEqual([{ method: 'elicitation/create', delivery: 'request', outcome: 'answered' }]);
  });

  it.each([
    ['runs the callback inside it', 'wraps', []],
    [
      'throws before running it: reported, and the callback runs on its own',
      'throws',
      ["The instrumentation's input run() threw: broken run"],
    ],
    [
      'never runs it: reported, and the callback runs on its own',
      'skips',
      ["The instrumentation's input run() did not run the callback"],
    ],
  ] as const)("an input instrument's run() %s, once", async (_title, behaviour, reported) => {
    const log: string[] = [];
    const hook: TaskInstrumentation = {
      attach: () => ({
        input: () => ({
          run: <T>(callback: () => T): T => {
            if (behaviour === 'throws') throw new Error('broken run');
            if (behaviour === 'skips') return undefined as T;
            log.push('run in');
            const value = callback();
            log.push('run out');
            return value;
          },
          end: (outcome) => void log.push(`end ${outcome.kind}`),
        }),
      }),
    };
    const { tasks } = await client({
      instrumentation: hook,
      onElicitation: () => {
        log.push('callback');
        return { action: 'accept', content: { confirm: true } };
      },
    });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    await (await tasks.callToolAsTask('confirm_delete', { path: '/tmp/x' })).result();
    expect(log).toEqual(
      behaviour === 'wraps' ? ['run in', 'callback', 'run out', 'end answered'] : ['callback', 'end answered'],
    );
    expect(problems).toEqual(reported);
  });

  it("tells each connection's transport by its peer: one object for every call and request over one transport, however many TaskClients share its client; another for another transport", async () => {
    const { hook, seen } = recording();
    const { tasks, pair } = await client({ instrumentation: hook });
    const second = new TaskClient(pair.client, { minPollIntervalMs: 5, instrumentation: hook });
    pairs.push({ client: pair.client, close: () => second.close() });
    const other = await client({ instrumentation: hook });
    for (const on of [tasks, second, other.tasks])
      await (await on.callToolAsTask('analyze', { id: 1, steps: 1 })).result();
    const [first, shared, elsewhere] = seen.calls.map((call) => call.connection.peer);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.keys(first!)).toEqual([]);
    expect(shared).toBe(first);
    expect(elsewhere).not.toBe(first);
    // Each request names the transport it goes over: here, its call's.
    const peers = new Set(seen.requests.map((request) => request.connection.peer));
    expect(peers).toEqual(new Set([first, elsewhere]));
  });

  it("reports how a failed request ended: the server's JSON-RPC error, by kind and code", async () => {
    const { hook, seen } = recording();
    const { tasks } = await client({ instrumentation: hook });
    // The task tool's input schema refuses steps: 0; the server answers the tools/call with an error.
    const failure = await tasks.callToolAsTask('analyze', { steps: 0 }).catch((error: unknown) => error);
    expect(seen.requests.map((request) => request.method)).toEqual(['tools/call']);
    expect(seen.requests[0]!.ended).toMatchObject({ kind: 'server', code: -32602 });
    expect(seen.log.at(-1)).toBe(`failed ${(failure as Error).name}`);
  });

  it("is told of the notifications/cancelled of a request given up, before the request ends: its meta goes under the notification's _meta, it learns the notification was written, and one that throws is reported while the notification still goes", async () => {
    for (const throwing of [false, true]) {
      const log: string[] = [];
      const notices: OutgoingNotification[] = [];
      const hook: TaskInstrumentation = {
        attach: () => ({
          call: () => ({
            request: (request) => ({
              end: (failure) => log.push(`${request.method} end ${failure?.kind ?? 'ok'}`),
              notification: (notice) => {
                notices.push(notice);
                log.push(`${notice.method} of ${request.method}`);
                if (throwing) throw new Error('no span for you');
                return { meta: { mark: 'cancel' }, end: (failure) => log.push(`written ${failure?.kind ?? 'ok'}`) };
              },
            }),
          }),
        }),
      };
      const { tasks, cancels, swallowed } = await swallowingClient(hook);
      const errors: string[] = [];
      tasks.on('error', (error) => errors.push(error.message));
      const controller = new AbortController();
      const call = tasks.callToolAsTask('echo', { text: 'hi' }, { signal: controller.signal });
      await until(swallowed);
      controller.abort();
      await expect(call).rejects.toBeInstanceOf(TaskAbortError);
      await until(() => cancels.length === 1 && (throwing || log.includes('written ok')));
      expect(notices).toEqual([
        { method: 'notifications/cancelled', requestId: cancels[0]!.params?.requestId, connection: expect.anything() },
      ]);
      if (throwing) {
        expect(log).toEqual(['notifications/cancelled of tools/call', 'tools/call end aborted']);
        expect(errors).toEqual([expect.stringContaining('notification() threw: no span for you')]);
        expect(cancels[0]!.params?._meta).toBeUndefined();
      } else {
        expect(log).toEqual(['notifications/cancelled of tools/call', 'tools/call end aborted', 'written ok']);
        expect(errors).toEqual([]);
        expect(cancels[0]!.params?._meta).toEqual({ mark: 'cancel' });
      }
    }
  });

  it('a signal aborted by request() itself, as the plain tools/call is set up: the call fails as aborted, and neither the request nor a notifications/cancelled is written', async () => {
    const controller = new AbortController();
    const log: string[] = [];
    const hook: TaskInstrumentation = {
      attach: () => ({
        call: () => ({
          request: (request) => {
            controller.abort(new Error('the user left'));
            return { end: (failure) => log.push(`${request.method} end ${failure?.kind ?? 'ok'}`) };
          },
        }),
      }),
    };
    const { tasks, cancels, swallowed } = await swallowingClient(hook);
    const call = tasks.callToolAsTask('echo', { text: 'hi' }, { signal: controller.signal });
    await expect(call).rejects.toBeInstanceOf(TaskAbortError);
    // Before, the request was failed, cancelled by a notification, and then written all the same.
    expect(swallowed()).toBe(false);
    expect(cancels).toEqual([]);
    expect(log).toEqual(['tools/call end aborted']);
  });

  it('is checked: an object with attach(), and an attach() that throws fails the constructor', async () => {
    const pair = await exampleServerPair();
    pairs.push(pair);
    expect(() => new TaskClient(pair.client, { instrumentation: {} as TaskInstrumentation })).toThrow(TaskOptionError);
    const broken: TaskInstrumentation = {
      attach: () => {
        throw new Error('no exporter');
      },
    };
    expect(() => new TaskClient(pair.client, { instrumentation: broken })).toThrow(
      "The instrumentation's attach() threw: no exporter",
    );
  });

  it('is told of a resumed task synchronously (its id, tool and connection), of its requests and of its handle, and reads nothing early', async () => {
    const { tasks: plain, pair } = await client();
    const started = await plain.callToolAsTask('analyze', { id: 2, steps: 2 });
    const reference = started.detach()!;
    await plain.close();

    const resumes: InstrumentedResume[] = [];
    const requests: Array<OutgoingRequest & { ended?: RequestFailure | 'ok' }> = [];
    const log: string[] = [];
    const hook: TaskInstrumentation = {
      attach: () => ({
        call: (call) => void log.push(`call ${call.toolName}`),
        resume: (resume): CallInstrument => {
          resumes.push(resume);
          log.push(`resume ${resume.toolName ?? '?'}`);
          return {
            request: (request) => {
              const entry: (typeof requests)[number] = { ...request };
              requests.push(entry);
              return { meta: { mark: request.method }, end: (failure) => void (entry.ended = failure ?? 'ok') };
            },
            // Not handle.on(): listening would observe the resumed task.
            handle: (handle) =>
              log.push(`handle ${handle.kind} ${handle.taskId} ${handle.task === undefined ? 'unread' : 'read'}`),
          };
        },
      }),
    };
    const tasks = new TaskClient(pair.client, { minPollIntervalMs: 5, instrumentation: hook });
    pairs.push({ client: pair.client, close: () => tasks.close() });
    const sent: Array<{ method: string; meta: unknown }> = [];
    const transport = pair.client.transport!;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { method?: string; params?: { _meta?: unknown } };
      if (m.method?.startsWith('tasks/') === true) sent.push({ method: m.method, meta: m.params?._meta });
      return send(message, options);
    };

    const handle = tasks.resume(reference);
    // Synchronously, in the caller's turn: the task's id and tool, the connection, then the handle.
    expect(resumes).toEqual([
      {
        taskId: reference.taskId,
        toolName: 'analyze',
        connection: expect.objectContaining({ wire: '2025-11-25', sessionId: undefined }) as unknown,
      },
    ]);
    expect(log).toEqual(['resume analyze', `handle task ${reference.taskId} unread`]);
    // A task this client already tracks keeps its handle: the hook is not told again.
    expect(tasks.resume(reference)).toBe(handle);
    expect(resumes).toHaveLength(1);
    // Nothing is read until the caller observes the handle.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests).toEqual([]);
    expect(sent).toEqual([]);

    await handle.result();
    const methods = requests.map((request) => request.method);
    expect(methods).not.toContain('tools/call');
    expect(methods).toContain('tasks/get');
    expect(methods.at(-1)).toBe('tasks/result');
    expect(requests.every((request) => request.ended === 'ok')).toBe(true);
    expect(sent.map((message) => message.method)).toEqual(methods);
    for (const message of sent) expect(message.meta).toMatchObject({ mark: message.method });

    // By bare id: no tool named.
    const other = await (async () => {
      const more = new TaskClient(pair.client);
      const made = await more.callToolAsTask('analyze', { id: 3, steps: 1 });
      const id = made.detach()!.taskId;
      await more.close();
      return id;
    })();
    const bare = tasks.resume(other);
    expect(resumes.at(-1)).toMatchObject({ taskId: other, toolName: undefined });
    await bare.result();
    // A malformed reference throws before the hook hears of it.
    expect(() => tasks.resume({ taskId: 42 } as never)).toThrow(TaskOptionError);
    expect(resumes).toHaveLength(2);
    expect(log.filter((line) => line.startsWith('call'))).toEqual([]);
  });

  it('is told of each page of tasks/list synchronously (its method and connection) and of its requests; not when the server lists no tasks', async () => {
    const lists: InstrumentedList[] = [];
    const requests: Array<OutgoingRequest & { ended?: RequestFailure | 'ok' }> = [];
    const hook: TaskInstrumentation = {
      attach: () => ({
        list: (list) => {
          lists.push(list);
          return {
            request: (request) => {
              const entry: (typeof requests)[number] = { ...request };
              requests.push(entry);
              return { end: (failure) => void (entry.ended = failure ?? 'ok') };
            },
          };
        },
      }),
    };
    const { tasks } = await client({ instrumentation: hook });
    await (await tasks.callToolAsTask('analyze', { id: 5, steps: 1 })).result();
    // The call read the tool list first (the tool's task support): one page, one request.
    expect(lists).toEqual([{ method: 'tools/list', connection: expect.objectContaining({ wire: '2025-11-25' }) }]);
    expect(requests).toEqual([
      {
        method: 'tools/list',
        id: expect.any(String),
        connection: expect.objectContaining({ wire: '2025-11-25' }),
        ended: 'ok',
      },
    ]);
    // Read once, then cached: the tasks/list pages below are all that is listed from here.
    await tasks.tools();
    expect(lists).toHaveLength(1);
    lists.length = 0;
    requests.length = 0;
    const pending = tasks.listPage();
    // Synchronously, in the caller's turn.
    expect(lists).toEqual([{ method: 'tasks/list', connection: expect.objectContaining({ wire: '2025-11-25' }) }]);
    expect((await pending).tasks.length).toBeGreaterThan(0);
    expect(requests).toEqual([
      {
        method: 'tasks/list',
        id: expect.any(String),
        connection: expect.objectContaining({ wire: '2025-11-25' }),
        ended: 'ok',
      },
    ]);
    for await (const task of tasks.list()) expect(task.taskId).toEqual(expect.any(String));
    expect(lists).toHaveLength(2);
    expect(requests).toHaveLength(2);

    const none = await exampleServerPair({ listAndCancel: false });
    pairs.push(none);
    const unlisted = new TaskClient(none.client, { instrumentation: hook });
    pairs.push({ client: none.client, close: () => unlisted.close() });
    await expect(unlisted.listPage()).rejects.toMatchObject({ name: 'TaskNotSupportedError' });
    expect(lists).toHaveLength(2);
  });

  it('a hook without resume() (made before it existed) leaves resumed tasks unwatched, and they run as before', async () => {
    const { hook, seen } = recording();
    const { tasks: plain, pair } = await client();
    const reference = (await plain.callToolAsTask('analyze', { id: 4, steps: 1 })).detach()!;
    await plain.close();
    const tasks = new TaskClient(pair.client, { minPollIntervalMs: 5, instrumentation: hook });
    pairs.push({ client: pair.client, close: () => tasks.close() });
    const result = await tasks.resume(reference).result();
    expect(result.content).toEqual([expect.objectContaining({ type: 'text' })]);
    expect(seen.calls).toEqual([]);
    expect(seen.requests).toEqual([]);
  });
});
