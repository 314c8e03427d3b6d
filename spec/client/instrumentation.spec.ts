/**
 * The instrumentation hook (`TaskClientOptions.instrumentation`) on its own, with no telemetry
 * library: attached once per TaskClient, told of each call synchronously in the caller's turn,
 * of each request the call sends (method and JSON-RPC id, its `_meta` entries merged under the
 * request's own, and how it ended), of the call's handle before any later event of it, of a call
 * that fails before it has one, and of each input request handed to a callback. Against the
 * example server (the SDK's `McpServer` with its task store) in process, on both SDK majors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskClient,
  TaskOptionError,
  type CallInstrument,
  type ClientInstrument,
  type InputOutcome,
  type InstrumentedCall,
  type OutgoingRequest,
  type RequestFailure,
  type TaskClientOptions,
  type TaskInstrumentation,
} from '../../lib/index.js';
import { exampleServerPair, type Pair } from '../helpers.js';

const pairs: Pair[] = [];
afterEach(async () => {
  while (pairs.length > 0) await pairs.pop()?.close();
});

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

  it("reports how a failed request ended: the server's JSON-RPC error, by kind and code", async () => {
    const { hook, seen } = recording();
    const { tasks } = await client({ instrumentation: hook });
    // The task tool's input schema refuses steps: 0; the server answers the tools/call with an error.
    const failure = await tasks.callToolAsTask('analyze', { steps: 0 }).catch((error: unknown) => error);
    expect(seen.requests.map((request) => request.method)).toEqual(['tools/call']);
    expect(seen.requests[0]!.ended).toMatchObject({ kind: 'server', code: -32602 });
    expect(seen.log.at(-1)).toBe(`failed ${(failure as Error).name}`);
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
});
