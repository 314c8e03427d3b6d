/**
 * `mcp-task-client/otel` on the 2025-11-25 wire, against the SDK's `McpServer` with its task store
 * (spec/otel/server.ts: it reads the trace context of `_meta` and joins the trace), in process and
 * over Streamable HTTP on 127.0.0.1, with the OpenTelemetry SDK's in-memory exporter and an
 * on-demand metric reader: the task span of each call and its task (`mcp.task {tool}`, INTERNAL,
 * child of the caller's span), a child span per request (`tools/call {tool}` until its answer, each
 * `tasks/*`), the `traceparent` of every request as
 * the server read it, the span events, the outcome and error of a completed, a failed, an aborted,
 * a timed-out, an input_required and a plain call, retries and a reconnection, and the metric
 * points; a task resumed after a restart (a span of its own from `resume` to its end, marked
 * resumed, its requests as children, its question, its deadline, and nothing sent for a handle
 * nobody observes). Runs on both SDK majors.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  metrics,
  propagation,
  trace,
  type SpanContext,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  TaskAbortError,
  TaskClient,
  TaskRpcError,
  TaskTimeoutError,
  taskFingerprint,
  type TaskClientOptions,
  type TaskHandle,
  type TaskReference,
} from '../../lib/index.js';
import { otelInstrumentation, type OtelInstrumentationOptions } from '../../lib/otel.js';
import { connectPair, until } from '../helpers.js';
import { startHttpServer, type HttpIntercept } from '../support/http-server.js';
import { SDK, httpTransport, makeClient, type SpecTransport } from '../support/sdk.js';
import { swallowingEcho } from '../support/swallow.js';
import { SessionlessTaskStore, createTracedServer, type SeenRequest } from './server.js';
import { LateSpans, Telemetry, traceparentOf, useContextManager, watchEndedSpans, withinSpan } from './support.js';

let telemetry: Telemetry;
let stopContext: () => void;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(() => {
  stopContext = useContextManager();
});
afterAll(() => stopContext());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await telemetry?.shutdown();
});

/** The instrumentation on `telemetry`'s providers. */
function instrumentation(options: OtelInstrumentationOptions = {}): TaskClientOptions['instrumentation'] {
  return otelInstrumentation({
    tracerProvider: telemetry.tracerProvider,
    meterProvider: telemetry.meterProvider,
    propagator: telemetry.propagator,
    ...options,
  });
}

/**
 * The protocol version a connection in process reports: SDK v1 keeps the negotiated version only
 * on an HTTP transport, so in process it is unknown there (and left out).
 */
const IN_PROCESS_VERSION = SDK === 'v2' ? { 'mcp.protocol.version': '2025-11-25' } : {};

/**
 * `transport` with each message it delivers passed through `rewrite` first (the SDK client sets
 * its `onmessage` after the wrapper is made, hence the property).
 */
function rewritingIncoming(
  transport: SpecTransport,
  rewrite: (message: Parameters<NonNullable<SpecTransport['onmessage']>>[0]) => typeof message,
): SpecTransport {
  let handler: SpecTransport['onmessage'];
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (next: SpecTransport['onmessage']) => {
      handler = next === undefined ? undefined : (message, extra) => next(rewrite(message), extra);
    },
  });
  return transport;
}

/** Fast polling, so a short task is polled a few times. */
const POLLING = { minPollIntervalMs: 5, initialPollIntervalMs: 10 } as const;

/** What else a test sets up in process: span processors after the exporter's, a wrapper of the client's transport. */
interface InProcessSetup {
  readonly processors?: readonly SpanProcessor[];
  readonly wrap?: (transport: SpecTransport) => SpecTransport;
}

/** The traced server in process, a TaskClient on it with the instrumentation, and what the server saw. */
async function inProcess(
  options: TaskClientOptions = {},
  otel: OtelInstrumentationOptions = {},
  setup: InProcessSetup = {},
) {
  telemetry = new Telemetry(setup.processors);
  const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
  const pair = await connectPair(made.server, { capabilities: { elicitation: {} } }, setup.wrap);
  const tasks = new TaskClient(pair.client, { ...POLLING, instrumentation: instrumentation(otel), ...options });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
    made.store.cleanup();
  });
  return { ...made, tasks, pair };
}

/** The request the server saw with `method`, in order. */
function seenOf(seen: readonly SeenRequest[], method: string): SeenRequest[] {
  return seen.filter((request) => request.method === method);
}

/** Every attribute value and event attribute value of every span, as text (to look for a secret). */
function everything(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => [span.name, span.attributes, span.events.map((event) => [event.name, event.attributes])]),
  );
}

/** The status events of a span, as `status` or `status: message`. */
function statusEvents(span: ReadableSpan): string[] {
  return span.events
    .filter((event) => event.name === 'mcp.task.status')
    .map((event) => {
      const status = event.attributes?.['mcp.task.status'] as string;
      const message = event.attributes?.['mcp.task.status_message'] as string | undefined;
      return message === undefined ? status : `${status}: ${message}`;
    });
}

describe('a completed task', () => {
  it('is one task span mcp.task {tool} under the caller, its tools/call a CLIENT span tools/call {tool} until the CreateTaskResult, a child span per tasks/* request, and the server reads each traceparent', async () => {
    const { tasks, seen, reads } = await inProcess();
    let handle: TaskHandle | undefined;
    const { value: result, parent } = await withinSpan(telemetry, 'agent step', async () => {
      handle = await tasks.callToolAsTask('job', { ms: 80 });
      return handle.result();
    });
    expect(result.content).toEqual([{ type: 'text', text: 'job done' }]);
    const span = telemetry.one('mcp.task job');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.spanContext().traceId).toBe(parent.traceId);
    expect(span.parentSpanContext?.spanId).toBe(parent.spanId);
    expect(span.attributes).toMatchObject({
      'gen_ai.tool.name': 'job',
      ...IN_PROCESS_VERSION,
      'mcp.task.wire': '2025-11-25',
      'mcp.task.outcome': 'completed',
      'mcp.task.status': 'completed',
      'mcp.task.polls': handle!.metrics!.polls,
    });
    // The MCP operation is the tools/call span's alone (counted once as an execute_tool).
    for (const key of ['mcp.method.name', 'gen_ai.operation.name', 'jsonrpc.request.id'])
      expect(span.attributes[key]).toBeUndefined();
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    // In process: no session, no network transport.
    expect(span.attributes['mcp.session.id']).toBeUndefined();
    expect(span.attributes['network.transport']).toBeUndefined();
    if (SDK === 'v1') expect(span.attributes['mcp.protocol.version']).toBeUndefined();
    expect(statusEvents(span)[0]).toBe('working');
    expect(statusEvents(span).at(-1)).toBe('completed');

    // The tools/call: a CLIENT span under the task span, from sent to the CreateTaskResult (the
    // conventions' client span covers a request until its response), ended before the task's first
    // poll; the task's life is the task span's.
    const call = telemetry.one('tools/call job');
    expect(call.kind).toBe(SpanKind.CLIENT);
    expect(call.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'job',
      'gen_ai.operation.name': 'execute_tool',
      ...IN_PROCESS_VERSION,
    });
    expect(String(call.attributes['jsonrpc.request.id'])).toMatch(/^mcp-task-client:/);
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    // The server read the tools/call span's context, and its own span joined the trace under it.
    expect(reads).toEqual([{ traceparent: traceparentOf(call.spanContext()) }]);
    await until(() => telemetry.named('tools/call job').length === 2);
    const serverSpan = telemetry.named('tools/call job').find((s) => s.kind === SpanKind.SERVER)!;
    expect(serverSpan.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(serverSpan.spanContext().traceId).toBe(parent.traceId);

    // One child span per tasks/* request, each the parent of what the server saw in that request.
    const children = telemetry
      .childrenOf(span)
      .filter((child) => child.kind === SpanKind.CLIENT && child.name.startsWith('tasks/'));
    const gets = children.filter((child) => child.name === 'tasks/get');
    expect(gets.length).toBe(handle!.metrics!.polls);
    expect(gets.length).toBeGreaterThan(0);
    expect(children.filter((child) => child.name === 'tasks/result')).toHaveLength(1);
    const ns = (time: [number, number]): bigint => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
    for (const child of children) {
      expect(child.attributes).toMatchObject({ 'mcp.method.name': child.name, 'gen_ai.tool.name': 'job' });
      expect(child.attributes['gen_ai.operation.name']).toBeUndefined();
      expect(String(child.attributes['jsonrpc.request.id'])).toMatch(/^mcp-task-client:/);
      expect(ns(child.startTime)).toBeGreaterThanOrEqual(ns(call.endTime));
    }
    const childParents = new Set(children.map((child) => traceparentOf(child.spanContext())));
    const sentGets = seenOf(seen, 'tasks/get');
    expect(sentGets.length).toBe(gets.length);
    for (const request of [...sentGets, ...seenOf(seen, 'tasks/result')])
      expect(childParents.has(request.traceparent!)).toBe(true);
    expect(seenOf(seen, 'tools/call')[0]!.traceparent).toBe(traceparentOf(call.spanContext()));
    expect(ns(call.endTime)).toBeLessThan(ns(span.endTime));

    // The task id, a secret, is on no span.
    expect(everything(telemetry.spans())).not.toContain(handle!.taskId!);
  });

  it("with recordResults, the result's related-task _meta has its task id fingerprinted, unless recordTaskIds", async () => {
    for (const recordTaskIds of [false, true]) {
      const { tasks } = await inProcess({}, { recordResults: true, recordTaskIds });
      const handle = await tasks.callToolAsTask('job', { ms: 20 });
      const taskId = handle.taskId!;
      const result = await handle.result();
      // The server names the task in the result it hands over (the related-task key).
      expect(JSON.stringify(result)).toContain(taskId);
      const recorded = telemetry.one('mcp.task job').attributes['gen_ai.tool.call.result'] as string;
      expect(recorded).toContain(recordTaskIds ? taskId : taskFingerprint(taskId));
      if (!recordTaskIds) expect(recorded).not.toContain(taskId);
      await telemetry.shutdown();
    }
  });

  it('records mcp.client.operation.duration per request and the task metrics', async () => {
    const { tasks } = await inProcess();
    const handle = await tasks.callToolAsTask('job', { ms: 60 });
    await handle.result();
    const durations = await telemetry.points('mcp.client.operation.duration');
    const byMethod = (method: string) => durations.filter((point) => point.attributes['mcp.method.name'] === method);
    expect(byMethod('tools/call')).toHaveLength(1);
    expect(byMethod('tools/call')[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'job',
      ...IN_PROCESS_VERSION,
    });
    expect(byMethod('tasks/get').reduce((sum, point) => sum + point.count, 0)).toBe(handle.metrics!.polls);
    expect(byMethod('tasks/get')[0]!.attributes['gen_ai.operation.name']).toBeUndefined();
    expect(byMethod('tasks/result')[0]!.count).toBe(1);
    for (const point of durations) expect(point.attributes['mcp.session.id']).toBeUndefined();

    const [task] = await telemetry.points('mcp.client.task.duration');
    expect(task).toMatchObject({
      count: 1,
      attributes: { 'gen_ai.tool.name': 'job', 'mcp.task.outcome': 'completed' },
    });
    expect(task!.sum).toBeCloseTo(handle.metrics!.durationMs / 1000, 6);
    expect(await telemetry.points('mcp.client.task.active')).toEqual([
      { attributes: expect.objectContaining({ 'gen_ai.tool.name': 'job' }), count: 1, sum: 0 },
    ]);
    expect((await telemetry.points('mcp.client.task.polls'))[0]).toMatchObject({
      count: 1,
      sum: handle.metrics!.polls,
    });
    expect((await telemetry.points('mcp.client.task.notifications'))[0]).toMatchObject({ count: 1, sum: 0 });
  });

  it("continues an incoming trace: the caller's remote context (traceparent and tracestate) is the parent, and its tracestate rides on every request", async () => {
    const { tasks, seen } = await inProcess();
    const incoming = telemetry.propagator.extract(
      ROOT_CONTEXT,
      {
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
      },
      defaultTextMapGetter,
    );
    await context.with(incoming, async () => (await tasks.callToolAsTask('job', { ms: 40 })).result());
    const span = telemetry.one('mcp.task job');
    expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
    const sent = seen.filter((request) => request.method === 'tools/call' || request.method.startsWith('tasks/'));
    expect(sent.length).toBeGreaterThan(1);
    for (const request of sent) {
      expect(request.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
      expect(request.tracestate).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    }
  });

  it("mcp.client.task.duration has buckets up to a day; mcp.client.operation.duration keeps the conventions' (up to 300 s)", async () => {
    const { tasks } = await inProcess();
    await (await tasks.callToolAsTask('job', { ms: 20 })).result();
    const conventions = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
    expect(await telemetry.boundaries('mcp.client.operation.duration')).toEqual(conventions);
    expect(await telemetry.boundaries('mcp.client.task.duration')).toEqual([
      ...conventions,
      600,
      1800,
      3600,
      7200,
      14400,
      43200,
      86400,
    ]);
  });

  it('counts a task in flight while it runs', async () => {
    const { tasks } = await inProcess();
    const handle = await tasks.callToolAsTask('job', { ms: 100 });
    expect((await telemetry.points('mcp.client.task.active'))[0]!.sum).toBe(1);
    await handle.result();
    expect((await telemetry.points('mcp.client.task.active'))[0]!.sum).toBe(0);
  });
});

describe('tasks that do not complete', () => {
  it("a failed task (isError result) ends its span in error: tool_error, and no description (the tool's text is recorded only with recordResults)", async () => {
    const { tasks } = await inProcess();
    const handle = await tasks.callToolAsTask('job', { ms: 40, outcome: 'fail' });
    await expect(handle.result()).rejects.toThrow('disk full');
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({
      'mcp.task.outcome': 'failed',
      'error.type': 'tool_error',
      'mcp.task.status': 'failed',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(JSON.stringify([span.status, span.attributes, span.events])).not.toContain('disk full');
    const [point] = await telemetry.points('mcp.client.task.duration');
    expect(point!.attributes).toMatchObject({ 'mcp.task.outcome': 'failed', 'error.type': 'tool_error' });
  });

  it('a failed task (isError result): the tasks/result that brought it has error.type tool_error on its span and its metric point (common.yaml error.type note)', async () => {
    const { tasks } = await inProcess();
    const handle = await tasks.callToolAsTask('job', { ms: 40, outcome: 'fail' });
    await expect(handle.result()).rejects.toThrow('disk full');
    const span = telemetry.one('mcp.task job');
    const [fetched] = telemetry.childrenOf(span).filter((child) => child.name === 'tasks/result');
    expect(fetched!.attributes['error.type']).toBe('tool_error');
    // A successful JSON-RPC answer: no code.
    expect(fetched!.attributes['rpc.response.status_code']).toBeUndefined();
    expect(fetched!.status.code).toBe(SpanStatusCode.ERROR);
    for (const poll of telemetry.childrenOf(span).filter((child) => child.name === 'tasks/get'))
      expect(poll.attributes['error.type']).toBeUndefined();
    const points = await telemetry.points('mcp.client.operation.duration');
    const byMethod = (method: string) => points.filter((point) => point.attributes['mcp.method.name'] === method);
    expect(byMethod('tasks/result').map((point) => point.attributes['error.type'])).toEqual(['tool_error']);
    expect(byMethod('tasks/get').map((point) => point.attributes['error.type'])).toEqual([undefined]);
    // The task's tools/call was answered with a task: no error there.
    expect(byMethod('tools/call').map((point) => point.attributes['error.type'])).toEqual([undefined]);
  });

  it("with requests: 'events', the mcp.request event of the tasks/result that brought an isError result has error.type tool_error", async () => {
    const { tasks } = await inProcess({}, { requests: 'events' });
    const handle = await tasks.callToolAsTask('job', { ms: 40, outcome: 'fail' });
    await expect(handle.result()).rejects.toThrow('disk full');
    const events = telemetry.one('mcp.task job').events.filter((event) => event.name === 'mcp.request');
    const fetched = events.filter((event) => event.attributes?.['mcp.method.name'] === 'tasks/result');
    expect(fetched.map((event) => event.attributes?.['error.type'])).toEqual(['tool_error']);
    const polls = events.filter((event) => event.attributes?.['mcp.method.name'] === 'tasks/get');
    expect(polls.length).toBeGreaterThan(0);
    for (const poll of polls) expect(poll.attributes?.['error.type']).toBeUndefined();
  });

  it('an aborted call cancels the task: the span says so, and tasks/cancel is a child span whose context the server read', async () => {
    const { tasks, seen } = await inProcess();
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask('job', { ms: 60_000, outcome: 'hang' }, { signal: controller.signal });
    controller.abort();
    await expect(handle.result()).rejects.toBeInstanceOf(TaskAbortError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({ 'mcp.task.outcome': 'aborted', 'error.type': 'TaskAbortError' });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    await until(() => telemetry.childrenOf(span).some((child) => child.name === 'tasks/cancel'));
    const cancel = telemetry.childrenOf(span).find((child) => child.name === 'tasks/cancel')!;
    expect(cancel.status.code).toBe(SpanStatusCode.UNSET);
    expect(seenOf(seen, 'tasks/cancel').map((request) => request.traceparent)).toEqual([
      traceparentOf(cancel.spanContext()),
    ]);
  });

  it('a deadline that passes is recorded as a timeout, with the remote cancel as a child span', async () => {
    const { tasks, seen } = await inProcess();
    const handle = await tasks.callToolAsTask('job', { ms: 60_000, outcome: 'hang' }, { timeoutMs: 80 });
    await expect(handle.result()).rejects.toBeInstanceOf(TaskTimeoutError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({ 'mcp.task.outcome': 'timeout', 'error.type': 'TaskTimeoutError' });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    await until(() => seenOf(seen, 'tasks/cancel').length === 1);
    await until(() => telemetry.childrenOf(span).some((child) => child.name === 'tasks/cancel'));
    const [point] = await telemetry.points('mcp.client.task.duration');
    expect(point!.attributes).toMatchObject({ 'mcp.task.outcome': 'timeout', 'error.type': 'TaskTimeoutError' });
  });

  it('a call that fails before it has a task ends its span with that error', async () => {
    const { tasks, seen } = await inProcess();
    await expect(tasks.callToolAsTask('echo', {}, { requireTask: true })).rejects.toThrow('does not support task mode');
    const span = telemetry.one('mcp.task echo');
    expect(span.attributes).toMatchObject({ 'mcp.task.outcome': 'error', 'error.type': 'TaskNotSupportedError' });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(seenOf(seen, 'tools/call')).toEqual([]);
  });
});

/**
 * A task called in process, its connection lost (the SDK client closed), then taken over through
 * `reconnect` by a second server instance on the same task store: the task's handle, the second
 * server and the new pair, and the instrumentation the TaskClient was given (to share with another).
 */
async function reconnectedInProcess(ms: number) {
  telemetry = new Telemetry();
  const shared = instrumentation();
  const first = createTracedServer({
    tracerProvider: telemetry.tracerProvider,
    propagator: telemetry.propagator,
    pollInterval: 30,
  });
  const pair = await connectPair(first.server);
  const tasks = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
  cleanups.push(async () => {
    await tasks.close();
    first.store.cleanup();
  });
  const handle = await tasks.callToolAsTask('job', { ms });
  await pair.client.close();
  const second = createTracedServer({
    tracerProvider: telemetry.tracerProvider,
    propagator: telemetry.propagator,
    store: first.store,
  });
  const again = await connectPair(second.server);
  cleanups.push(() => again.close());
  tasks.reconnect(again.client);
  return { handle, second, again, shared };
}

describe('input, plain calls, retries and reconnections', () => {
  it.each([
    { recordTaskIds: false, shown: 'the task id fingerprinted' },
    { recordTaskIds: true, shown: 'the id as it is' },
  ])(
    "a server request id made from the task's id (task-<taskId>-<n>, D14): jsonrpc.request.id has $shown (recordTaskIds: $recordTaskIds)",
    async ({ recordTaskIds }) => {
      // Gives each question of the server an id built from its task's id, as Python's SDK does,
      // and the answer its original id back.
      const renamed = new Map<string, unknown>();
      const wrap = (transport: SpecTransport): SpecTransport => {
        const send = transport.send.bind(transport);
        transport.send = (message, options) => {
          const reply = message as { id?: unknown };
          const original = typeof reply.id === 'string' ? renamed.get(reply.id) : undefined;
          return send(original === undefined ? message : ({ ...message, id: original } as typeof message), options);
        };
        return rewritingIncoming(transport, (message) => {
          const request = message as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } };
          const related = request.params?._meta?.['io.modelcontextprotocol/related-task'] as
            { taskId?: string } | undefined;
          if (request.method !== 'elicitation/create' || related?.taskId === undefined) return message;
          const id = `task-${related.taskId}-1`;
          renamed.set(id, request.id);
          return { ...message, id };
        });
      };
      const { tasks } = await inProcess({}, { recordTaskIds }, { wrap });
      const handle = await tasks.callToolAsTask(
        'job',
        { ms: 20, outcome: 'ask' },
        { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) },
      );
      expect((await handle.result()).content).toEqual([{ type: 'text', text: 'answered accept' }]);
      const taskId = handle.taskId!;
      expect(renamed.size).toBe(1);
      const id = telemetry.one('elicitation/create').attributes['jsonrpc.request.id'];
      expect(id).toBe(recordTaskIds ? `task-${taskId}-1` : `task-${taskFingerprint(taskId)}-1`);
      if (!recordTaskIds) expect(everything(telemetry.spans())).not.toContain(taskId);
    },
  );

  it("an input_required task: the question is a SERVER span under the server span that asked, linked to the task span, with the id of the server's request", async () => {
    // The ids of the answers the client sends back: the ids of the server's requests.
    const answered: unknown[] = [];
    const wrap = (transport: SpecTransport): SpecTransport => {
      const send = transport.send.bind(transport);
      transport.send = (message, options) => {
        const reply = message as { id?: unknown; result?: { action?: unknown } };
        if (reply.result?.action !== undefined) answered.push(reply.id);
        return send(message, options);
      };
      return transport;
    };
    const { tasks, seen } = await inProcess({}, {}, { wrap });
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) },
    );
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'answered accept' }]);
    const span = telemetry.one('mcp.task job');
    await until(() => telemetry.named('tools/call job').length === 2);
    const serverSpan = telemetry.named('tools/call job').find((s) => s.kind === SpanKind.SERVER)!;
    const question = telemetry.one('elicitation/create');
    expect(question.kind).toBe(SpanKind.SERVER);
    expect(question.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
    expect(question.links.map((link) => link.context.spanId)).toEqual([span.spanContext().spanId]);
    expect(question.attributes).toMatchObject({
      'mcp.method.name': 'elicitation/create',
      'mcp.task.input_outcome': 'answered',
      'mcp.task.input_action': 'accept',
    });
    // The conventions' jsonrpc.request.id (a string): the id the server gave its request.
    expect(answered).toHaveLength(1);
    expect(question.attributes['jsonrpc.request.id']).toBe(String(answered[0]));
    expect(statusEvents(span)).toContain('input_required');
    const names = span.events.map((event) => event.name);
    expect(names.indexOf('mcp.task.input.request')).toBeGreaterThan(names.indexOf('mcp.task.status'));
    expect(span.events.find((event) => event.name === 'mcp.task.input.response')?.attributes).toMatchObject({
      'mcp.task.input_action': 'accept',
    });
    // The blocking tasks/result that carried the question went out with its own context too.
    expect(seenOf(seen, 'tasks/result').every((request) => request.traceparent !== undefined)).toBe(true);
  });

  it("the question's span is current while the callback runs: what the callback traces is its child, not the caller's", async () => {
    const { tasks } = await inProcess();
    const tracer = telemetry.tracerProvider.getTracer('spec-host');
    const handle = await withinSpan(telemetry, 'agent step', () =>
      tasks.callToolAsTask(
        'job',
        { ms: 20, outcome: 'ask' },
        {
          // The host's own work for the answer (asking a person, a model), traced as usual.
          onElicitation: () => {
            tracer.startSpan('ask the user').end();
            return { action: 'accept', content: { confirm: true } };
          },
        },
      ),
    );
    await handle.value.result();
    const question = telemetry.one('elicitation/create');
    const work = telemetry.named('ask the user');
    expect(work).toHaveLength(1);
    expect(work[0]!.parentSpanContext?.spanId).toBe(question.spanContext().spanId);
  });

  it("the server's _meta gives the question's span its parent only: the callback keeps the caller's baggage and context, and the server's baggage is not applied", async () => {
    const propagator = new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    });
    // The server's question carries its span's traceparent, and baggage of its own.
    const wrap = (transport: SpecTransport): SpecTransport =>
      rewritingIncoming(transport, (message) => {
        const request = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
        if (request.method !== 'elicitation/create' || request.params === undefined) return message;
        const meta = { ...request.params._meta, baggage: 'tenant=evil,injected=from-server' };
        return { ...message, params: { ...request.params, _meta: meta } };
      });
    const { tasks } = await inProcess({}, { propagator }, { wrap });
    const key = createContextKey('spec caller key');
    const caller = propagation
      .setBaggage(context.active(), propagation.createBaggage({ tenant: { value: 'acme' } }))
      .setValue(key, 'the caller');
    let seen: { baggage: Record<string, string>; value: unknown; span: SpanContext | undefined } | undefined;
    const handle = await context.with(caller, () =>
      tasks.callToolAsTask(
        'job',
        { ms: 20, outcome: 'ask' },
        {
          onElicitation: () => {
            const active = context.active();
            const entries = propagation.getBaggage(active)?.getAllEntries() ?? [];
            seen = {
              baggage: Object.fromEntries(entries.map(([name, entry]) => [name, entry.value])),
              value: active.getValue(key),
              span: trace.getSpanContext(active),
            };
            return { action: 'accept', content: { confirm: true } };
          },
        },
      ),
    );
    await handle.result();
    const question = telemetry.one('elicitation/create');
    await until(() => telemetry.named('tools/call job').length === 2);
    const serverSpan = telemetry.named('tools/call job').find((s) => s.kind === SpanKind.SERVER)!;
    // Still under the server's span (the conventions' remote parent), linked to the task span.
    expect(question.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
    expect(question.links.map((link) => link.context.spanId)).toEqual([
      telemetry.one('mcp.task job').spanContext().spanId,
    ]);
    expect(seen).toEqual({
      baggage: { tenant: 'acme' },
      value: 'the caller',
      span: question.spanContext(),
    });
  });

  it("a question tied to no call, without the server's trace context: a root span, linked to (never under) the span current where the transport delivered it, another caller's", async () => {
    const { tasks, server } = await inProcess({
      onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
    });
    const unattributed: string[] = [];
    tasks.on('inputUnattributed', (input) => unattributed.push(input.reason));
    // The server asks on its own, naming no task and carrying no `_meta`, while an unrelated span
    // (some caller's agent step) is current where the in-memory transport delivers the request.
    const { value: answer, parent: step } = await withinSpan(telemetry, 'agent step', () =>
      server.server.elicitInput({
        message: 'Anything else?',
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
      }),
    );
    expect(answer.action).toBe('accept');
    expect(unattributed).toEqual(['no-task']);
    const question = telemetry.one('elicitation/create');
    expect(question.kind).toBe(SpanKind.SERVER);
    expect(question.attributes['mcp.task.input_outcome']).toBe('answered');
    // Not the child of the caller's span: a trace of its own, that only links to it.
    expect(question.parentSpanContext).toBeUndefined();
    expect(question.spanContext().traceId).not.toBe(step.traceId);
    expect(question.links.map((link) => link.context.spanId)).toEqual([step.spanId]);
  });

  it('a plain call (the server answers at once) is a call span with one child, its tools/call', async () => {
    const { tasks, seen } = await inProcess();
    const handle = await tasks.callToolAsTask('echo', { text: 'hello' });
    expect(handle.kind).toBe('immediate');
    await until(() => telemetry.named('mcp.task echo').length === 1);
    const span = telemetry.one('mcp.task echo');
    expect(span.attributes).toMatchObject({ 'mcp.task.outcome': 'completed', 'gen_ai.tool.name': 'echo' });
    const call = telemetry.one('tools/call echo');
    expect(telemetry.childrenOf(span)).toEqual([call]);
    expect(call.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool' });
    expect(seenOf(seen, 'tools/call')[0]!.traceparent).toBe(traceparentOf(call.spanContext()));
  });

  it('a plain call answered at once with isError: its span and its tools/call metric point have error.type tool_error', async () => {
    const { tasks } = await inProcess();
    const handle = await tasks.callToolAsTask('echo', { text: 'no such file', fail: true });
    expect(handle.kind).toBe('immediate');
    await expect(handle.result()).rejects.toThrow('no such file');
    await until(() => telemetry.named('mcp.task echo').length === 1);
    const span = telemetry.one('mcp.task echo');
    expect(span.attributes).toMatchObject({ 'error.type': 'tool_error', 'mcp.task.outcome': 'failed' });
    expect(span.attributes['rpc.response.status_code']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    const points = await telemetry.points('mcp.client.operation.duration');
    const calls = points.filter((point) => point.attributes['mcp.method.name'] === 'tools/call');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.attributes).toMatchObject({ 'error.type': 'tool_error', 'gen_ai.operation.name': 'execute_tool' });
    expect(calls[0]!.attributes['rpc.response.status_code']).toBeUndefined();
    // The tool list read for the negotiation is no tool error.
    for (const point of points.filter((item) => item.attributes['mcp.method.name'] === 'tools/list'))
      expect(point.attributes['error.type']).toBeUndefined();
  });

  it('marks a lost connection and its restoration on the task span; the task completes over the new connection', async () => {
    const { handle, second } = await reconnectedInProcess(150);
    await handle.result();
    const names = telemetry.one('mcp.task job').events.map((event) => event.name);
    expect(names.indexOf('mcp.connection.lost')).toBeGreaterThan(-1);
    expect(names.indexOf('mcp.connection.restored')).toBeGreaterThan(names.indexOf('mcp.connection.lost'));
    // The polls after the reconnection still carry the task's trace context.
    expect(seenOf(second.seen, 'tasks/get').length + seenOf(second.seen, 'tasks/result').length).toBeGreaterThan(0);
    expect(
      second.seen
        .filter((request) => request.method.startsWith('tasks/'))
        .every((request) => request.traceparent !== undefined),
    ).toBe(true);
  });
});

describe('requests after the task span ended', () => {
  /** The instrumentation in process with the parent rules watched. */
  async function watched(otel: OtelInstrumentationOptions = {}, setup: InProcessSetup = {}) {
    const late = new LateSpans();
    const ended = watchEndedSpans();
    const made = await inProcess({}, otel, { ...setup, processors: [late] });
    cleanups.push(() => Promise.resolve(ended.stop()));
    return { ...made, late, ended };
  }

  type Receive = NonNullable<SpecTransport['onmessage']>;

  /**
   * A transport wrapper that hands the client each reply `hold` picks only when the function it
   * returns delivers it (the handler the SDK sets, and the library's over it, are wrapped as set).
   */
  function holding(
    hold: (reply: { id?: unknown; result?: { task?: unknown } }) => ((deliver: () => void) => void) | undefined,
  ) {
    return (transport: SpecTransport): SpecTransport => {
      let handler: Receive | undefined;
      Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        get: () => handler,
        set: (next: Receive | undefined) => {
          handler =
            next === undefined
              ? undefined
              : (...args: Parameters<Receive>) => {
                  const later = hold(args[0] as { id?: unknown; result?: { task?: unknown } });
                  if (later === undefined) next(...args);
                  else later(() => next(...args));
                };
        },
      });
      return transport;
    };
  }

  it.each(['spans', 'events'] as const)(
    "a call given up before its task was created (requests: '%s'): the late task's cancel is a span of its own linked to the call's, not a child of the ended span nor an event on it",
    async (requests) => {
      // The CreateTaskResult is held back until the call was given up.
      let held: Array<() => void> | undefined = [];
      const wrap = holding((reply) =>
        held !== undefined && reply.result?.task !== undefined ? (deliver) => held!.push(deliver) : undefined,
      );
      const { tasks, seen, late, ended } = await watched({ requests }, { wrap });
      const controller = new AbortController();
      const call = tasks.callToolAsTask('job', { ms: 60_000, outcome: 'hang' }, { signal: controller.signal });
      await until(() => held!.length === 1);
      controller.abort();
      await expect(call).rejects.toBeInstanceOf(TaskAbortError);
      await until(() => telemetry.named('mcp.task job').length > 0);
      const span = telemetry.one('mcp.task job');
      // Its tools/call, still unanswered (the library waits for it in the background, [R24]), ended
      // with it, marked abandoned: no span of the call outlives the task span.
      const request = telemetry.one('tools/call job');
      expect(request.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
      expect(request.events.map((event) => event.name)).toEqual(['mcp.request.abandoned']);
      const replies = held;
      held = undefined;
      for (const deliver of replies) deliver();
      await until(() => telemetry.named('tasks/cancel').length === 1);
      const cancel = telemetry.one('tasks/cancel');
      expect(cancel.parentSpanContext).toBeUndefined();
      expect(cancel.links.map((link) => link.context.spanId)).toEqual([span.spanContext().spanId]);
      expect(cancel.attributes).toMatchObject({ 'mcp.method.name': 'tasks/cancel', 'gen_ai.tool.name': 'job' });
      expect(seenOf(seen, 'tasks/cancel').map((request) => request.traceparent)).toEqual([
        traceparentOf(cancel.spanContext()),
      ]);
      expect(late.problems).toEqual([]);
      expect(ended.messages).toEqual([]);
    },
  );

  it('a question still open when its task ends: its span and its answer event are recorded while the task span is open', async () => {
    const { tasks, late, ended } = await watched();
    const controller = new AbortController();
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      { signal: controller.signal, onElicitation: () => new Promise<never>(() => {}) },
    );
    await until(() => telemetry.open().includes('elicitation/create'));
    controller.abort();
    await expect(handle.result()).rejects.toBeInstanceOf(TaskAbortError);
    await until(() => telemetry.named('mcp.task job').length > 0);
    const span = telemetry.one('mcp.task job');
    expect(telemetry.one('elicitation/create').attributes['mcp.task.input_outcome']).toBe('abandoned');
    expect(span.events.find((event) => event.name === 'mcp.task.input.response')?.attributes).toMatchObject({
      'mcp.task.input_outcome': 'abandoned',
    });
    // Nothing was sent back: no mcp.server.operation.duration point, as for an abandoned request of the client's.
    expect(await telemetry.points('mcp.server.operation.duration')).toEqual([]);
    expect(late.problems).toEqual([]);
    expect(ended.messages).toEqual([]);
  });

  it('a question still open when its task is detached: the task span ends at detach with the question span marked detached; a later answer is a span of its own linked to the task span', async () => {
    const { tasks, late, ended } = await watched();
    let answer: ((ok: boolean) => void) | undefined;
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      {
        // The callback runs on after detach (the answer the task waits for is kept), maybe for ever.
        onElicitation: () =>
          new Promise((resolve) => {
            answer = (ok) => resolve({ action: 'accept', content: { ok } });
          }),
      },
    );
    await until(() => telemetry.open().includes('elicitation/create'));
    handle.detach();
    // Nothing of the client's is left open for an answer that may never come.
    await until(() => telemetry.named('mcp.task job').length > 0);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes['mcp.task.outcome']).toBe('detached');
    const question = telemetry.one('elicitation/create');
    expect(question.attributes['mcp.task.input_outcome']).toBe('detached');
    expect(span.events.find((event) => event.name === 'mcp.task.input.response')?.attributes).toMatchObject({
      'mcp.task.input_outcome': 'detached',
    });
    // The answer, when it comes, is recorded apart: a span of its own linked to the task's span.
    answer!(true);
    await until(() => telemetry.named('elicitation/create').filter((s) => s.kind === SpanKind.SERVER).length === 2);
    const later = telemetry.named('elicitation/create').find((s) => s !== question && s.kind === SpanKind.SERVER)!;
    expect(later.attributes).toMatchObject({ 'mcp.task.input_outcome': 'answered', 'mcp.task.input_action': 'accept' });
    expect(later.links.map((link) => link.context.spanId)).toEqual([span.spanContext().spanId]);
    expect(later.parentSpanContext?.spanId).not.toBe(span.spanContext().spanId);
    expect(late.problems).toEqual([]);
    expect(ended.messages).toEqual([]);
  });

  it('a question still open when the client closes: the task span and the question span end by close()', async () => {
    const { tasks, late, ended } = await watched();
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      { onElicitation: () => new Promise<never>(() => {}) },
    );
    await until(() => telemetry.open().includes('elicitation/create'));
    await tasks.close();
    expect(handle.settled).toBe(true);
    await until(() => telemetry.named('mcp.task job').length > 0);
    expect(telemetry.one('mcp.task job').attributes['mcp.task.outcome']).toBe('closed');
    expect(telemetry.one('elicitation/create').attributes['mcp.task.input_outcome']).toBe('abandoned');
    expect(late.problems).toEqual([]);
    expect(ended.messages).toEqual([]);
  });
});

/** Calls `echo` (swallowed by swallowingEcho, so never answered) and aborts the call once it was sent. */
async function abortSwallowedEcho(tasks: TaskClient, swallowed: () => boolean): Promise<void> {
  const controller = new AbortController();
  const call = tasks.callToolAsTask('echo', { text: 'hi' }, { signal: controller.signal });
  await until(swallowed);
  controller.abort();
  await expect(call).rejects.toBeInstanceOf(TaskAbortError);
}

describe('notifications the client sends', () => {
  it.each(['spans', 'events'] as const)(
    "requests: '%s': notifications/cancelled of a request given up carries the trace context of a CLIENT span of its own, under the request's span, and has its metric point",
    async (requests) => {
      const late = new LateSpans();
      const { wrap, cancels, swallowed } = swallowingEcho();
      const { tasks } = await inProcess({}, { requests }, { wrap, processors: [late] });
      // A plain call (echo supports no task): cancelled the normal way once given up ([R27]).
      await abortSwallowedEcho(tasks, swallowed);
      await until(() => cancels.length === 1 && telemetry.named('mcp.task echo').length === 1);
      const task = telemetry.one('mcp.task echo');
      const request = telemetry.one('tools/call echo');
      const notice = telemetry.one('notifications/cancelled');
      expect(request.parentSpanContext?.spanId).toBe(task.spanContext().spanId);
      expect(request.events.map((event) => event.name)).toEqual(['mcp.request.abandoned']);
      expect(notice.kind).toBe(SpanKind.CLIENT);
      expect(notice.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(notice.attributes).toMatchObject({
        'mcp.method.name': 'notifications/cancelled',
        'gen_ai.tool.name': 'echo',
      });
      // A notification has no id: the conventions' jsonrpc.request.id is left out.
      expect(notice.attributes['jsonrpc.request.id']).toBeUndefined();
      // The conventions propagate the context in the notification's params._meta, as for a request.
      expect(cancels[0]!.params?.requestId).toBe(request.attributes['jsonrpc.request.id']);
      expect(cancels[0]!.params?._meta?.traceparent).toBe(traceparentOf(notice.spanContext()));
      const points = await telemetry.points('mcp.client.operation.duration');
      expect(points.filter((point) => point.attributes['mcp.method.name'] === 'notifications/cancelled')).toEqual([
        expect.objectContaining({ count: 1, attributes: expect.objectContaining({ 'gen_ai.tool.name': 'echo' }) }),
      ]);
      // Nothing ends after its parent: the request's span waited for its notification, the task span for both.
      expect(late.problems).toEqual([]);
    },
  );

  it('a plain call aborted whose notifications/cancelled is written after the call failed (a POST that needs a round trip): the task span waits for the tools/call span and its notification span, and ends last', async () => {
    const late = new LateSpans();
    const { wrap, cancels, swallowed, releaseCancels } = swallowingEcho({ holdCancels: true });
    const { tasks } = await inProcess({}, {}, { wrap, processors: [late] });
    await abortSwallowedEcho(tasks, swallowed);
    await until(() => cancels.length === 1);
    // The call failed while the notification is still being written: none of the three has ended.
    expect(telemetry.open()).toEqual(
      expect.arrayContaining(['mcp.task echo', 'tools/call echo', 'notifications/cancelled']),
    );
    releaseCancels();
    await until(() => telemetry.named('mcp.task echo').length === 1);
    expect(telemetry.spans().map((span) => span.name)).toEqual([
      'tools/list',
      'notifications/cancelled',
      'tools/call echo',
      'mcp.task echo',
    ]);
    expect(telemetry.one('tools/call echo').events.map((event) => event.name)).toEqual(['mcp.request.abandoned']);
    expect(telemetry.one('mcp.task echo').attributes['mcp.task.outcome']).toBe('aborted');
    expect(late.problems).toEqual([]);
  });

  it('without the instrumentation, notifications/cancelled carries no trace context', async () => {
    const { wrap, cancels, swallowed } = swallowingEcho();
    telemetry = new Telemetry();
    const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
    const pair = await connectPair(made.server, {}, wrap);
    const tasks = new TaskClient(pair.client, POLLING);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      made.store.cleanup();
    });
    await abortSwallowedEcho(tasks, swallowed);
    await until(() => cancels.length === 1);
    expect(cancels[0]!.params?._meta).toBeUndefined();
  });
});

describe('a task resumed after a restart', () => {
  /** A task started and detached by another TaskClient (a process before its restart), with its reference. */
  async function detachedTask(pair: { client: TaskClient['client'] }, args: Record<string, unknown>) {
    const before = new TaskClient(pair.client, POLLING);
    const reference = (await before.callToolAsTask('job', args)).detach()!;
    await before.close();
    return reference;
  }

  it('is a task span mcp.task {tool} of its own, marked resumed, from resume to its end under the caller; its requests are children whose context the server reads; the metrics count it', async () => {
    const { tasks, seen, pair } = await inProcess();
    const reference = await detachedTask(pair, { ms: 150 });
    const already = seen.length;
    let handle: TaskHandle | undefined;
    const { value: result, parent } = await withinSpan(telemetry, 'worker', async () => {
      handle = tasks.resume(reference);
      return handle.result();
    });
    expect(result.content).toEqual([{ type: 'text', text: 'job done' }]);
    const span = telemetry.one('mcp.task job');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.parentSpanContext?.spanId).toBe(parent.spanId);
    expect(span.attributes).toMatchObject({
      'gen_ai.tool.name': 'job',
      ...IN_PROCESS_VERSION,
      'mcp.task.wire': '2025-11-25',
      'mcp.task.resumed': true,
      'mcp.task.outcome': 'completed',
      'mcp.task.status': 'completed',
      'mcp.task.polls': handle!.metrics!.polls,
    });
    // No tools/call was sent for it; the task id stays off the span unless asked for.
    expect(span.attributes['jsonrpc.request.id']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    // Created by a TaskClient nobody traced: there is no creating span to link to.
    expect(span.links).toEqual([]);
    expect(statusEvents(span).at(-1)).toBe('completed');
    const children = telemetry.childrenOf(span);
    expect(children.filter((child) => child.name === 'tasks/get')).toHaveLength(handle!.metrics!.polls);
    expect(children.filter((child) => child.name === 'tasks/result')).toHaveLength(1);
    expect(children.every((child) => child.kind === SpanKind.CLIENT)).toBe(true);
    const sent = seen.slice(already);
    expect(seenOf(sent, 'tools/call')).toEqual([]);
    expect(sent.map((request) => request.traceparent)).toEqual(
      expect.arrayContaining(children.map((child) => traceparentOf(child.spanContext()))),
    );
    expect(sent.length).toBe(children.length);
    expect(everything(telemetry.spans())).not.toContain(reference.taskId);

    const [task] = (await telemetry.points('mcp.client.task.duration')).filter(
      (point) => point.attributes['mcp.task.resumed'] === true,
    );
    expect(task).toMatchObject({
      count: 1,
      attributes: { 'gen_ai.tool.name': 'job', 'mcp.task.outcome': 'completed' },
    });
    expect(task!.sum).toBeCloseTo(handle!.metrics!.durationMs / 1000, 6);
    expect(await telemetry.points('mcp.client.task.active')).toEqual([
      { attributes: expect.objectContaining({ 'mcp.task.resumed': true }), count: 1, sum: 0 },
    ]);
    expect((await telemetry.points('mcp.client.task.polls'))[0]).toMatchObject({
      count: 1,
      sum: handle!.metrics!.polls,
    });
    const gets = (await telemetry.points('mcp.client.operation.duration')).filter(
      (point) => point.attributes['mcp.method.name'] === 'tasks/get',
    );
    expect(gets.reduce((sum, point) => sum + point.count, 0)).toBe(handle!.metrics!.polls);
  });

  it('by bare id it is mcp.task without a tool name; with recordTaskIds its id is on the span', async () => {
    const { tasks, pair } = await inProcess({}, { recordTaskIds: true });
    const reference = await detachedTask(pair, { ms: 40 });
    await tasks.resume(reference.taskId).result();
    const span = telemetry.one('mcp.task');
    expect(span.attributes).toMatchObject({ 'mcp.task.resumed': true, 'mcp.task.id': reference.taskId });
    expect(span.attributes['gen_ai.tool.name']).toBeUndefined();
    const [point] = await telemetry.points('mcp.client.task.duration');
    expect(point!.attributes['gen_ai.tool.name']).toBeUndefined();
  });

  it("its question is a span linked to the resumed task's span", async () => {
    const { tasks, pair } = await inProcess();
    const reference = await detachedTask(pair, { ms: 20, outcome: 'ask' });
    const handle = tasks.resume(reference, { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) });
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'answered accept' }]);
    const span = telemetry.one('mcp.task job');
    const question = telemetry.one('elicitation/create');
    expect(question.links.map((link) => link.context.spanId)).toEqual([span.spanContext().spanId]);
    expect(span.events.map((event) => event.name)).toContain('mcp.task.input.response');
  });

  it("resume's deadline: outcome timeout, the span in error, the remote cancel a child span", async () => {
    const { tasks, seen, pair } = await inProcess();
    const reference = await detachedTask(pair, { ms: 60_000, outcome: 'hang' });
    const handle = tasks.resume(reference, { timeoutMs: 80 });
    await expect(handle.result()).rejects.toBeInstanceOf(TaskTimeoutError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({
      'mcp.task.resumed': true,
      'mcp.task.outcome': 'timeout',
      'error.type': 'TaskTimeoutError',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    await until(() => seenOf(seen, 'tasks/cancel').length === 1);
    await until(() => telemetry.childrenOf(span).some((child) => child.name === 'tasks/cancel'));
    const cancel = telemetry.childrenOf(span).find((child) => child.name === 'tasks/cancel')!;
    expect(seenOf(seen, 'tasks/cancel')[0]!.traceparent).toBe(traceparentOf(cancel.spanContext()));
    const [point] = await telemetry.points('mcp.client.task.duration');
    expect(point!.attributes).toMatchObject({
      'mcp.task.resumed': true,
      'mcp.task.outcome': 'timeout',
      'error.type': 'TaskTimeoutError',
    });
  });

  it('a resumed handle nobody observes sends nothing, traced or not; close() ends its span as closed', async () => {
    const { tasks, seen, pair } = await inProcess();
    const reference = await detachedTask(pair, { ms: 60_000, outcome: 'hang' });
    const already = seen.length;
    tasks.resume(reference);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen.length).toBe(already);
    expect((await telemetry.points('mcp.client.task.active'))[0]!.sum).toBe(1);
    await tasks.close();
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({ 'mcp.task.resumed': true, 'mcp.task.outcome': 'closed' });
    expect(telemetry.childrenOf(span)).toEqual([]);
    expect((await telemetry.points('mcp.client.task.active'))[0]!.sum).toBe(0);
  });

  it('links to the span of the call that created it, when the same instrumentation traced that call (another TaskClient, after detach)', async () => {
    const { pair } = await inProcess();
    const shared = instrumentation();
    const before = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
    const reference = (await before.callToolAsTask('job', { ms: 100 })).detach()!;
    await before.close();
    const after = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
    cleanups.push(() => after.close());
    await after.resume(JSON.parse(JSON.stringify(reference)) as typeof reference).result();
    const [created, resumed] = telemetry
      .named('mcp.task job')
      .sort(
        (a, b) => Number(a.attributes['mcp.task.resumed'] === true) - Number(b.attributes['mcp.task.resumed'] === true),
      );
    expect(created!.attributes).toMatchObject({ 'mcp.task.outcome': 'detached' });
    expect(created!.attributes['mcp.task.resumed']).toBeUndefined();
    expect(resumed!.attributes).toMatchObject({ 'mcp.task.resumed': true, 'mcp.task.outcome': 'completed' });
    expect(resumed!.links.map((link) => link.context)).toEqual([created!.spanContext()]);
    // The resumed span has a trace of its own (here no span was current at resume): the link joins the two.
    expect(resumed!.spanContext().traceId).not.toBe(created!.spanContext().traceId);
  });

  it('in another process: the trace context carried next to the reference links the span around resume, whose child the resumed span is (the recipe of docs/observability.md)', async () => {
    const { pair } = await inProcess();
    const before = new TaskClient(pair.client, { ...POLLING, instrumentation: instrumentation() });
    const carrier: Record<string, string> = {};
    const { value: reference, parent: caller } = await withinSpan(telemetry, 'request', async () => {
      const handle = await before.callToolAsTask('job', { ms: 100 });
      telemetry.propagator.inject(context.active(), carrier, defaultTextMapSetter);
      return handle.detach()!;
    });
    await before.close();
    // Another process: another instrumentation, which traced no call.
    const after = new TaskClient(pair.client, { ...POLLING, instrumentation: instrumentation() });
    cleanups.push(() => after.close());
    const origin = trace.getSpanContext(telemetry.propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter))!;
    const worker = await telemetry.tracerProvider
      .getTracer('worker')
      .startActiveSpan('resume job', { links: [{ context: origin }] }, async (span) => {
        await after.resume(reference).result();
        span.end();
        return span.spanContext();
      });
    const resumed = telemetry.named('mcp.task job').find((span) => span.attributes['mcp.task.resumed'] === true)!;
    expect(resumed.parentSpanContext?.spanId).toBe(worker.spanId);
    expect(resumed.links).toEqual([]);
    const around = telemetry.named('resume job')[0]!;
    expect(around.links.map((link) => link.context.spanId)).toEqual([caller.spanId]);
    // The link reaches the trace of the call that created the task.
    const created = telemetry.named('mcp.task job').find((span) => span.attributes['mcp.task.resumed'] === undefined)!;
    expect(created.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(around.links[0]!.context.traceId).toBe(created.spanContext().traceId);
  });

  it('a server\'s error that quotes the task id ("Task not found: <id>", D12): the request span\'s status description has it fingerprinted, unless recordTaskIds', async () => {
    for (const recordTaskIds of [false, true]) {
      const taskId = `gone-${recordTaskIds ? 'kept' : 'hidden'}-0123456789abcdef`;
      // The error of an unknown task as Python's SDK words it: the id quoted.
      const wrap = (transport: SpecTransport): SpecTransport =>
        rewritingIncoming(transport, (message) => {
          const reply = message as { error?: { code: number; message: string } };
          if (reply.error === undefined) return message;
          return { ...message, error: { ...reply.error, message: `Task not found: ${taskId}` } };
        });
      const { tasks } = await inProcess({}, { recordTaskIds }, { wrap });
      await expect(tasks.resume(taskId).result()).rejects.toThrow('does not know this task');
      const failed = telemetry.spans().filter((span) => span.name.startsWith('tasks/') && span.status.message);
      expect(failed.length, 'a tasks/* span with a description').toBeGreaterThan(0);
      for (const span of failed) {
        expect(span.status.code).toBe(SpanStatusCode.ERROR);
        if (recordTaskIds) expect(span.status.message).toBe(`Task not found: ${taskId}`);
        else expect(span.status.message).toBe(`Task not found: ${taskFingerprint(taskId)}`);
      }
      await telemetry.shutdown();
    }
  });

  it('a task that ended on the server is forgotten: resuming it again links to nothing', async () => {
    const { pair } = await inProcess();
    const shared = instrumentation();
    const first = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
    cleanups.push(() => first.close());
    const handle = await first.callToolAsTask('job', { ms: 20 });
    const reference = handle.toJSON()!;
    await handle.result();
    const second = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
    cleanups.push(() => second.close());
    await second.resume(reference).result();
    const resumed = telemetry.named('mcp.task job').find((span) => span.attributes['mcp.task.resumed'] === true)!;
    expect(resumed.attributes['mcp.task.outcome']).toBe('completed');
    expect(resumed.links).toEqual([]);
  });

  it("two servers that hand out the same task ids, one instrumentation: each resumed task links to the call that created it over its own connection, and a task that ends on one server leaves the other's link", async () => {
    telemetry = new Telemetry();
    const shared = instrumentation();
    const sequential = () => {
      let next = 0;
      return () => `task-${++next}`;
    };
    const pairs = [];
    for (let server = 0; server < 2; server++) {
      const made = createTracedServer({
        tracerProvider: telemetry.tracerProvider,
        propagator: telemetry.propagator,
        taskIds: sequential(),
      });
      const pair = await connectPair(made.server, { capabilities: { elicitation: {} } });
      cleanups.push(async () => {
        await pair.close();
        made.store.cleanup();
      });
      pairs.push(pair);
    }
    // On each server in turn a call creates `task-1` under a span of its own, and is detached.
    const created: Array<{ value: TaskReference; parent: SpanContext }> = [];
    for (const [server, pair] of pairs.entries()) {
      const before = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
      created.push(
        await withinSpan(telemetry, `create on ${server}`, async () =>
          (await before.callToolAsTask('job', { ms: 60 })).detach()!,
        ),
      );
      await before.close();
    }
    expect(created.map(({ value }) => value.taskId)).toEqual(['task-1', 'task-1']);
    // Another TaskClient on each connection resumes its task, the first to its end before the second.
    const resumes = [];
    for (const [server, pair] of pairs.entries()) {
      const after = new TaskClient(pair.client, { ...POLLING, instrumentation: shared });
      cleanups.push(() => after.close());
      resumes.push(
        await withinSpan(telemetry, `resume on ${server}`, () => after.resume(created[server]!.value).result()),
      );
    }
    const calls = telemetry.named('mcp.task job');
    const under = (parent: { spanId: string }) =>
      calls.find((span) => span.parentSpanContext?.spanId === parent.spanId)!;
    for (const server of [0, 1]) {
      const creating = under(created[server]!.parent);
      const resumed = under(resumes[server]!.parent);
      expect(creating.attributes['mcp.task.outcome']).toBe('detached');
      expect(resumed.attributes).toMatchObject({ 'mcp.task.resumed': true, 'mcp.task.outcome': 'completed' });
      expect(resumed.links.map((link) => link.context)).toEqual([creating.spanContext()]);
    }
  });

  it('a task that went on over a new connection after a reconnection, then was detached: resumed over that connection, it links to the call that created it', async () => {
    const { handle, second, again, shared } = await reconnectedInProcess(300);
    // The task's requests go over the new connection; then it is detached.
    await until(() => seenOf(second.seen, 'tasks/get').length > 0);
    const reference = handle.detach()!;
    const after = new TaskClient(again.client, { ...POLLING, instrumentation: shared });
    cleanups.push(() => after.close());
    await after.resume(reference).result();
    const calls = telemetry.named('mcp.task job');
    const created = calls.find((span) => span.attributes['mcp.task.resumed'] === undefined)!;
    const resumed = calls.find((span) => span.attributes['mcp.task.resumed'] === true)!;
    expect(created.attributes['mcp.task.outcome']).toBe('detached');
    expect(resumed.attributes['mcp.task.outcome']).toBe('completed');
    expect(resumed.links.map((link) => link.context)).toEqual([created.spanContext()]);
  });
});

/**
 * The one span of a listing request (`method`): CLIENT, under `parentSpanId`, with the method, a
 * request id and the connection's version, naming no tool and no tool execution, not in error, its
 * trace context the one the server read; and its one duration point, returned.
 */
async function expectListingSpan(
  method: 'tasks/list' | 'tools/list',
  parentSpanId: string,
  seen: readonly SeenRequest[],
) {
  const span = telemetry.one(method);
  expect(span.kind).toBe(SpanKind.CLIENT);
  expect(span.parentSpanContext?.spanId).toBe(parentSpanId);
  expect(span.attributes).toMatchObject({ 'mcp.method.name': method, ...IN_PROCESS_VERSION });
  expect(typeof span.attributes['jsonrpc.request.id']).toBe('string');
  // A listing names no tool and is no tool execution.
  expect(span.attributes['gen_ai.tool.name']).toBeUndefined();
  expect(span.attributes['gen_ai.operation.name']).toBeUndefined();
  expect(span.status.code).toBe(SpanStatusCode.UNSET);
  expect(seenOf(seen, method).map((request) => request.traceparent)).toEqual([traceparentOf(span.spanContext())]);
  const points = (await telemetry.points('mcp.client.operation.duration')).filter(
    (point) => point.attributes['mcp.method.name'] === method,
  );
  expect(points).toMatchObject([{ count: 1 }]);
  return points;
}

describe('listing the tasks', () => {
  it('each tasks/list request is a CLIENT span tasks/list under the caller, whose context the server reads, with its metric point', async () => {
    const { tasks, seen } = await inProcess();
    await (await tasks.callToolAsTask('job', { ms: 20 })).result();
    const { value: page, parent } = await withinSpan(telemetry, 'dashboard', () => tasks.listPage());
    expect(page.tasks.length).toBeGreaterThan(0);
    const lists = await expectListingSpan('tasks/list', parent.spanId, seen);
    expect(lists[0]!.attributes['error.type']).toBeUndefined();
  });

  it('each tools/list request (the tool catalog, read once) is a CLIENT span tools/list under the caller that asked, with its metric point', async () => {
    const { tasks, seen } = await inProcess();
    const { value: tools, parent } = await withinSpan(telemetry, 'catalog', () => tasks.tools());
    expect(tools.map((tool) => tool.name)).toContain('job');
    await expectListingSpan('tools/list', parent.spanId, seen);
    // Cached: a call after it reads no list again, so no second span.
    await (await tasks.callToolAsTask('job', { ms: 5 })).result();
    expect(telemetry.named('tools/list')).toHaveLength(1);
  });

  it('list() traces each page it reads, under the span current while iterating', async () => {
    const { tasks, seen } = await inProcess();
    await (await tasks.callToolAsTask('job', { ms: 20 })).result();
    const { value: listed, parent } = await withinSpan(telemetry, 'sweep', async () => {
      const all = [];
      for await (const task of tasks.list()) all.push(task);
      return all;
    });
    expect(listed.length).toBeGreaterThan(0);
    const spans = telemetry.named('tasks/list');
    expect(spans).toHaveLength(seenOf(seen, 'tasks/list').length);
    expect(spans.every((span) => span.parentSpanContext?.spanId === parent.spanId)).toBe(true);
  });

  it('a refused tasks/list ends its span in error with the JSON-RPC code', async () => {
    const { tasks } = await inProcess();
    const refused = await tasks.listPage('no-such-cursor').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(refused).toBeInstanceOf(TaskRpcError);
    expect(refused).toMatchObject({ kind: 'server', code: -32602 });
    const span = telemetry.one('tasks/list');
    expect(span.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    const [point] = (await telemetry.points('mcp.client.operation.duration')).filter(
      (item) => item.attributes['mcp.method.name'] === 'tasks/list',
    );
    expect(point!.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
  });
});

describe('the hook', () => {
  it('without the instrumentation, no request carries trace context', async () => {
    telemetry = new Telemetry();
    const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
    const pair = await connectPair(made.server);
    const tasks = new TaskClient(pair.client, POLLING);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      made.store.cleanup();
    });
    await (await tasks.callToolAsTask('job', { ms: 40 })).result();
    expect(
      made.seen.filter(
        (request) => request.method !== 'initialize' && request.meta !== undefined && 'traceparent' in request.meta,
      ),
    ).toEqual([]);
  });

  it("a call's own _meta entries win over the trace context", async () => {
    const { tasks, seen } = await inProcess();
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await (await tasks.callToolAsTask('job', { ms: 20 }, { meta: { traceparent: own, note: 'mine' } })).result();
    expect(seenOf(seen, 'tools/call')[0]!.meta).toMatchObject({ traceparent: own, note: 'mine' });
  });

  it("a call's own traceparent keeps the trace context whole: no tracestate of the caller's trace is added to it", async () => {
    const { tasks, seen } = await inProcess();
    const incoming = telemetry.propagator.extract(
      ROOT_CONTEXT,
      {
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        tracestate: 'rojo=00f067aa0ba902b7',
      },
      defaultTextMapGetter,
    );
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await context.with(incoming, async () =>
      (await tasks.callToolAsTask('job', { ms: 20 }, { meta: { traceparent: own } })).result(),
    );
    const call = seenOf(seen, 'tools/call')[0]!;
    expect(call.traceparent).toBe(own);
    expect(call.meta).not.toHaveProperty('tracestate');
    // The task's own requests carry no meta of the call's: the instrumentation's context, whole.
    expect(seenOf(seen, 'tasks/result')[0]).toMatchObject({ tracestate: 'rojo=00f067aa0ba902b7' });
  });

  it('propagate: false sends no trace context but still records spans', async () => {
    const { tasks, seen } = await inProcess({}, { propagate: false });
    await (await tasks.callToolAsTask('job', { ms: 20 })).result();
    expect(seen.filter((request) => request.traceparent !== undefined)).toEqual([]);
    expect(telemetry.named('mcp.task job')).toHaveLength(1);
  });

  it("propagate: false still reads a question's trace context with the propagator given: its span is the child of the server's span", async () => {
    // The propagator option writes and reads ("and reads it from an input request's"); propagate
    // only turns the writing off. No global propagator is registered here.
    const { tasks } = await inProcess({}, { propagate: false });
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) },
    );
    await handle.result();
    await until(() => telemetry.named('tools/call job').length === 2);
    const serverSpan = telemetry.named('tools/call job').find((span) => span.kind === SpanKind.SERVER)!;
    const question = telemetry.one('elicitation/create');
    expect(question.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
    expect(question.links.map((link) => link.context.spanId)).toEqual([
      telemetry.one('mcp.task job').spanContext().spanId,
    ]);
  });

  it("requests: 'events' records each tasks/* request as an event of the task span instead of a child span", async () => {
    const { tasks, seen } = await inProcess({}, { requests: 'events', recordTaskIds: true });
    const handle = await tasks.callToolAsTask('job', { ms: 60 });
    await handle.result();
    const span = telemetry.one('mcp.task job');
    // Its tools/call is a span still: the conventions' client span of the call, until its answer.
    expect(
      telemetry
        .childrenOf(span)
        .filter((child) => child.kind === SpanKind.CLIENT)
        .map((child) => child.name),
    ).toEqual(['tools/call job']);
    const requests = span.events
      .filter((event) => event.name === 'mcp.request')
      .map((event) => event.attributes?.['mcp.method.name']);
    expect(requests.filter((method) => method === 'tasks/get')).toHaveLength(handle.metrics!.polls);
    expect(requests).toContain('tasks/result');
    // Every tasks/* request then carries the task span's own context; the tools/call its span's.
    const sent = seen.filter((request) => request.method.startsWith('tasks/'));
    expect(new Set(sent.map((request) => request.traceparent))).toEqual(new Set([traceparentOf(span.spanContext())]));
    expect(seenOf(seen, 'tools/call')[0]!.traceparent).toBe(
      traceparentOf(telemetry.one('tools/call job').spanContext()),
    );
    expect(span.attributes['mcp.task.id']).toBe(handle.taskId);
  });

  it('an instrumentation that throws is reported on the error event, and the call goes on', async () => {
    const { tasks } = await inProcess({
      instrumentation: {
        attach: () => ({
          call: () => ({
            request: () => {
              throw new Error('broken tracer');
            },
          }),
        }),
      },
    });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    expect((await (await tasks.callToolAsTask('job', { ms: 20 })).result()).content).toEqual([
      { type: 'text', text: 'job done' },
    ]);
    expect(problems[0]).toBe("The instrumentation's request() threw: broken tracer");
  });

  it('a list() hook that throws is reported on the error event, and the listing goes on', async () => {
    const { tasks } = await inProcess({
      instrumentation: {
        attach: () => ({
          list: () => {
            throw new Error('broken tracer');
          },
        }),
      },
    });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    expect((await tasks.listPage()).tasks).toEqual([]);
    expect(problems).toEqual(["The instrumentation's list() threw: broken tracer"]);
  });
});

/** A span processor whose `onEnd` throws: every `span.end()` then throws (once the span is recorded). */
const throwingOnEnd: SpanProcessor = {
  onStart: () => {},
  onEnd: () => {
    throw new Error('broken span processor');
  },
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/** A propagator whose `inject` throws. */
const throwingPropagator: TextMapPropagator = {
  inject: () => {
    throw new Error('broken propagator');
  },
  extract: (within) => within,
  fields: () => [],
};

/** `telemetry`'s tracer provider, its spans' `addEvent` throwing. */
function throwingEvents(): TracerProvider {
  return {
    getTracer: (name, version, options) => {
      const tracer = telemetry.tracerProvider.getTracer(name, version, options);
      const startSpan: Tracer['startSpan'] = (spanName, spanOptions, within) => {
        const span = tracer.startSpan(spanName, spanOptions, within);
        span.addEvent = () => {
          throw new Error('broken addEvent');
        };
        return span;
      };
      return { startSpan, startActiveSpan: tracer.startActiveSpan.bind(tracer) };
    },
  };
}

describe('a tracer, a meter or a propagator that throws', () => {
  it('a plain call whose span.end() throws: no unhandled rejection', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const { tasks } = await inProcess({}, {}, { processors: [throwingOnEnd] });
      const handle = await tasks.callToolAsTask('echo', { text: 'hello' });
      expect(handle.kind).toBe('immediate');
      await handle.result();
      await until(() => telemetry.named('mcp.task echo').length === 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(rejections).toEqual([]);
      expect(telemetry.open()).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('a propagator whose inject throws: the requests go without trace context, and every span started ends', async () => {
    const { tasks, seen } = await inProcess({}, { propagator: throwingPropagator });
    await (await tasks.callToolAsTask('job', { ms: 40 })).result();
    expect(telemetry.open()).toEqual([]);
    const span = telemetry.one('mcp.task job');
    expect(telemetry.childrenOf(span).filter((child) => child.name === 'tasks/get').length).toBeGreaterThan(0);
    expect(seen.filter((request) => request.traceparent !== undefined)).toEqual([]);
  });

  it("a propagator whose extract throws: the question is still traced, under the task's span, and nothing is reported on the error event", async () => {
    const unreadable: TextMapPropagator = {
      inject: (within, carrier, setter) => telemetry.propagator.inject(within, carrier, setter),
      extract: () => {
        throw new Error('broken propagator');
      },
      fields: () => telemetry.propagator.fields(),
    };
    const { tasks } = await inProcess({}, { propagator: unreadable });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) },
    );
    await handle.result();
    await until(() => telemetry.named('mcp.task job').length > 0);
    const span = telemetry.one('mcp.task job');
    const question = telemetry.one('elicitation/create');
    expect(question.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(question.attributes['mcp.task.input_outcome']).toBe('answered');
    expect(problems).toEqual([]);
  });

  it("a span whose addEvent throws: the task's span still ends, and the task is counted out of mcp.client.task.active", async () => {
    const { tasks } = await inProcess({}, { tracerProvider: throwingEvents() });
    await (await tasks.callToolAsTask('job', { ms: 40 })).result();
    await until(() => telemetry.named('mcp.task job').length > 0);
    expect(telemetry.open()).toEqual([]);
    expect(telemetry.one('mcp.task job').attributes['mcp.task.outcome']).toBe('completed');
    expect((await telemetry.points('mcp.client.task.active'))[0]!.sum).toBe(0);
  });

  it("a tracer whose startSpan throws for a request's span and a question's: the task's span still ends, the call goes on, and nothing is reported on the error event", async () => {
    // A span processor whose onStart throws makes the SDK's startSpan throw (MultiSpanProcessor
    // does not catch it): here for every tasks/* request span and the question's span, not the task's.
    const refusing: SpanProcessor = {
      onStart: (span) => {
        if (span.name.startsWith('tasks/') || span.name === 'elicitation/create')
          throw new Error('broken span processor');
      },
      onEnd: () => {},
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    const { tasks, seen } = await inProcess({}, {}, { processors: [refusing] });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    const handle = await tasks.callToolAsTask(
      'job',
      { ms: 20, outcome: 'ask' },
      { onElicitation: () => ({ action: 'accept', content: { confirm: true } }) },
    );
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'answered accept' }]);
    await until(() => telemetry.named('mcp.task job').length > 0);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes['mcp.task.outcome']).toBe('completed');
    expect(span.events.map((event) => event.name)).toContain('mcp.task.input.response');
    expect((await telemetry.points('mcp.client.task.active'))[0]!.sum).toBe(0);
    // The failure went to diag, not to the TaskClient's error event.
    expect(problems).toEqual([]);
    // A request whose span could not start still carries the task span's context.
    expect(seenOf(seen, 'tasks/result').map((request) => request.traceparent)).toContain(
      traceparentOf(span.spanContext()),
    );
  });

  it('a request that fails while it is being set up still ends its span, as a send failure', async () => {
    // A transport whose property the library reads as it sets up a request throws, once armed.
    let armed = false;
    const wrap = (transport: SpecTransport): SpecTransport => {
      Object.defineProperty(transport, 'hasPerRequestStream', {
        get: () => {
          if (!armed) return undefined;
          armed = false;
          throw new Error('broken transport');
        },
      });
      return transport;
    };
    const { tasks } = await inProcess({}, {}, { wrap });
    armed = true;
    await expect(tasks.listPage()).rejects.toThrow('broken transport');
    expect(telemetry.open()).toEqual([]);
    const span = telemetry.one('tasks/list');
    expect(span.attributes['error.type']).toBe('send');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('the global meter provider', () => {
  it('registered after the TaskClient was made (the metrics API has no proxy, unlike the trace API): the points of what ends after go to it, and a task counted in before is not counted out of it', async () => {
    telemetry = new Telemetry();
    const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
    const pair = await connectPair(made.server);
    // No meterProvider: the global one, which the host registers only later (an SDK started after
    // the module that makes the TaskClient was loaded).
    const otel = otelInstrumentation({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
    const tasks = new TaskClient(pair.client, { ...POLLING, instrumentation: otel });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      made.store.cleanup();
      metrics.disable();
    });
    const early = await tasks.callToolAsTask('job', { ms: 80 });
    metrics.setGlobalMeterProvider(telemetry.meterProvider);
    const later = await tasks.callToolAsTask('job', { ms: 20 });
    await later.result();
    await early.result();
    const requests = await telemetry.points('mcp.client.operation.duration');
    expect(requests.filter((point) => point.attributes['mcp.method.name'] === 'tools/call')).toHaveLength(1);
    expect(requests.some((point) => point.attributes['mcp.method.name'] === 'tasks/result')).toBe(true);
    const ended = await telemetry.points('mcp.client.task.duration');
    expect(ended.reduce((sum, point) => sum + point.count, 0)).toBe(2);
    // The early task was counted in before the provider came: it is counted out where it was counted in.
    const active = await telemetry.points('mcp.client.task.active');
    expect(active.reduce((sum, point) => sum + point.sum, 0)).toBe(0);
  });
});

describe('over Streamable HTTP on 127.0.0.1', () => {
  it('records the transport, the server address and the session, retries a 503 tasks/result, and the server reads each traceparent', async () => {
    telemetry = new Telemetry();
    let seen: SeenRequest[] = [];
    let failedOnce = false;
    // The first tasks/result is answered 503: a transient failure, retried.
    const intercept: HttpIntercept = (message) => {
      if (message.method !== 'tasks/result' || failedOnce) return undefined;
      failedOnce = true;
      return 503;
    };
    const http = await startHttpServer(
      {},
      () => {
        const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
        seen = made.seen;
        return { server: made.server, cleanup: () => made.store.cleanup() };
      },
      intercept,
    );
    const client = makeClient({ name: 'spec-client', version: '1.0.0' });
    const transport = httpTransport(http.url);
    await client.connect(transport);
    const tasks = new TaskClient(client, {
      ...POLLING,
      retry: { minDelayMs: 5, maxDelayMs: 10 },
      instrumentation: instrumentation(),
    });
    cleanups.push(async () => {
      await tasks.close();
      await client.close();
      await http.close();
    });
    const handle = await tasks.callToolAsTask('job', { ms: 80 });
    await handle.result();
    const span = telemetry.one('mcp.task job');
    const sessionId = (transport as { sessionId?: string }).sessionId;
    expect(sessionId).toBeTruthy();
    expect(span.attributes).toMatchObject({
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'server.port': Number(http.url.port),
      'mcp.session.id': sessionId,
      'mcp.protocol.version': '2025-11-25',
    });
    const call = telemetry.one('tools/call job');
    expect(call.attributes).toMatchObject({ 'mcp.session.id': sessionId, 'server.port': Number(http.url.port) });
    expect(seenOf(seen, 'tools/call')[0]!.traceparent).toBe(traceparentOf(call.spanContext()));
    const gets = telemetry.childrenOf(span).filter((child) => child.name === 'tasks/get');
    expect(seenOf(seen, 'tasks/get').length).toBeGreaterThan(0);
    const sent = new Set(gets.map((child) => traceparentOf(child.spanContext())));
    for (const request of seenOf(seen, 'tasks/get')) expect(sent.has(request.traceparent!)).toBe(true);
    // The 503: a failed tasks/result span, then a retry event on the task span and a second tasks/result.
    const results = telemetry.childrenOf(span).filter((child) => child.name === 'tasks/result');
    expect(results.map((child) => child.attributes['error.type'])).toEqual(['send', undefined]);
    expect(results[0]!.status.code).toBe(SpanStatusCode.ERROR);
    // The retry event says what failed, as the failed request's span does.
    expect(span.events.find((event) => event.name === 'mcp.task.retry')?.attributes).toMatchObject({
      'error.type': 'send',
      'mcp.task.retries': 1,
    });
    expect(span.attributes['mcp.task.retries']).toBe(1);
    expect(seenOf(seen, 'tasks/result')).toHaveLength(1);
    expect(seenOf(seen, 'tasks/result')[0]!.traceparent).toBe(traceparentOf(results[1]!.spanContext()));
    const durations = await telemetry.points('mcp.client.operation.duration');
    expect(durations.find((point) => point.attributes['error.type'] === 'send')).toMatchObject({
      count: 1,
      attributes: { 'mcp.method.name': 'tasks/result', 'server.address': '127.0.0.1' },
    });
    for (const point of durations) expect(point.attributes['mcp.session.id']).toBeUndefined();
  });

  /**
   * A task called over one HTTP server, its connection lost, and finished over a second server
   * (another port, another session) with the same task store; what each server received.
   */
  async function reconnectedTask(otel: OtelInstrumentationOptions = {}) {
    telemetry = new Telemetry();
    // Two servers on two ports, one task store: the task survives the move from one to the other.
    const store = new SessionlessTaskStore();
    const seenBy = (seen: SeenRequest[]) => () => {
      const made = createTracedServer({
        tracerProvider: telemetry.tracerProvider,
        propagator: telemetry.propagator,
        pollInterval: 30,
        store,
      });
      const push = made.seen.push.bind(made.seen);
      made.seen.push = (...requests) => (seen.push(...requests), push(...requests));
      return { server: made.server, cleanup: () => {} };
    };
    const seenOne: SeenRequest[] = [];
    const seenTwo: SeenRequest[] = [];
    const one = await startHttpServer({}, seenBy(seenOne));
    const two = await startHttpServer({}, seenBy(seenTwo));
    const first = makeClient({ name: 'spec-client', version: '1.0.0' });
    const second = makeClient({ name: 'spec-client', version: '1.0.0' });
    const firstTransport = httpTransport(one.url);
    const secondTransport = httpTransport(two.url);
    await first.connect(firstTransport);
    const tasks = new TaskClient(first, { ...POLLING, instrumentation: instrumentation(otel) });
    cleanups.push(async () => {
      await tasks.close();
      await first.close();
      await second.close();
      await one.close();
      await two.close();
      store.cleanup();
    });
    const handle = await tasks.callToolAsTask('job', { ms: 300 });
    await until(() => seenOf(seenOne, 'tasks/get').length > 0);
    // The first connection is lost; the second takes over.
    await first.close();
    await second.connect(secondTransport);
    tasks.reconnect(second);
    await handle.result();
    const firstSession = (firstTransport as { sessionId?: string }).sessionId;
    const secondSession = (secondTransport as { sessionId?: string }).sessionId;
    expect(firstSession).toBeTruthy();
    expect(secondSession).toBeTruthy();
    expect(secondSession).not.toBe(firstSession);
    return {
      span: telemetry.one('mcp.task job'),
      before: [firstSession, Number(one.url.port)],
      after: [secondSession, Number(two.url.port)],
      seenOne,
      seenTwo,
    };
  }

  it("after a reconnection, each request carries the connection it went over (its session, its server's port); the task span keeps the call's", async () => {
    const { span, before: first, after: second, seenOne, seenTwo } = await reconnectedTask();
    const connectionOf = (span: ReadableSpan) => [span.attributes['mcp.session.id'], span.attributes['server.port']];
    // The task span stands for the tools/call, sent over the first connection.
    expect(connectionOf(span)).toEqual(first);
    // Each request's span names the connection the server that received it was reached over.
    const over = (seen: SeenRequest[]) => new Set(seen.map((request) => request.traceparent));
    const [byOne, byTwo] = [over(seenOne), over(seenTwo)];
    const requests = telemetry.childrenOf(span).filter((child) => child.kind === SpanKind.CLIENT);
    const before = requests.filter((request) => byOne.has(traceparentOf(request.spanContext())));
    const after = requests.filter((request) => byTwo.has(traceparentOf(request.spanContext())));
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(before.length + after.length).toBe(requests.length);
    for (const request of before) expect(connectionOf(request)).toEqual(first);
    for (const request of after) expect(connectionOf(request)).toEqual(second);
    // Their metric points too.
    const points = await telemetry.points('mcp.client.operation.duration');
    const overTwo = points.filter((point) => point.attributes['server.port'] === second[1]);
    expect(overTwo.reduce((sum, point) => sum + point.count, 0)).toBe(after.length);
  });

  it("requests: 'events': an event of a request after the reconnection names its connection where it differs from the span's", async () => {
    const { span, after, seenOne, seenTwo } = await reconnectedTask({ requests: 'events' });
    const events = span.events.filter((event) => event.name === 'mcp.request');
    const tasksRequests = (seen: SeenRequest[]) => seen.filter((request) => request.method.startsWith('tasks/'));
    const overTwo = events.filter((event) => event.attributes?.['mcp.session.id'] === after[0]);
    expect(overTwo.length).toBe(tasksRequests(seenTwo).length);
    expect(overTwo.length).toBeGreaterThan(0);
    for (const event of overTwo) expect(event.attributes?.['server.port']).toBe(after[1]);
    // Those over the first connection repeat nothing of the span's.
    const overOne = events.filter((event) => event.attributes?.['mcp.session.id'] === undefined);
    expect(overOne.length).toBe(tasksRequests(seenOne).length);
    for (const event of overOne) expect(event.attributes?.['server.port']).toBeUndefined();
  });

  it('a task detached, then resumed through a new transport that joins the same HTTP session (a fresh SDK client): it links to the call that created it', async () => {
    telemetry = new Telemetry();
    const shared = instrumentation();
    const http = await startHttpServer({}, () => {
      const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
      return { server: made.server, cleanup: () => made.store.cleanup() };
    });
    const first = makeClient({ name: 'spec-client', version: '1.0.0' });
    await first.connect(httpTransport(http.url));
    const before = new TaskClient(first, { ...POLLING, instrumentation: shared });
    const reference = (await before.callToolAsTask('job', { ms: 100 })).detach()!;
    await before.close();
    expect(reference.sessionId).toEqual(expect.any(String));
    // Another transport, another SDK client, into the same session (it skips initialize).
    const joined = makeClient({ name: 'spec-client', version: '1.0.0' });
    await joined.connect(httpTransport(http.url, reference.sessionId));
    const after = new TaskClient(joined, { ...POLLING, instrumentation: shared });
    cleanups.push(async () => {
      await after.close();
      await joined.close();
      await first.close();
      await http.close();
    });
    await after.resume(reference).result();
    const calls = telemetry.named('mcp.task job');
    const created = calls.find((span) => span.attributes['mcp.task.resumed'] === undefined)!;
    const resumed = calls.find((span) => span.attributes['mcp.task.resumed'] === true)!;
    expect(created.attributes).toMatchObject({ 'mcp.task.outcome': 'detached', 'mcp.session.id': reference.sessionId });
    expect(resumed.attributes).toMatchObject({
      'mcp.task.outcome': 'completed',
      'mcp.session.id': reference.sessionId,
    });
    expect(resumed.links.map((link) => link.context)).toEqual([created.spanContext()]);
  });

  it('a tools/call the HTTP server refuses (401): error.type send and no rpc.response.status_code, the local -32000 is no JSON-RPC answer', async () => {
    telemetry = new Telemetry();
    const intercept: HttpIntercept = (message) => (message.method === 'tools/call' ? 401 : undefined);
    const http = await startHttpServer(
      {},
      () => {
        const made = createTracedServer({ tracerProvider: telemetry.tracerProvider, propagator: telemetry.propagator });
        return { server: made.server, cleanup: () => made.store.cleanup() };
      },
      intercept,
    );
    const client = makeClient({ name: 'spec-client', version: '1.0.0' });
    await client.connect(httpTransport(http.url));
    const tasks = new TaskClient(client, { ...POLLING, instrumentation: instrumentation() });
    cleanups.push(async () => {
      await tasks.close();
      await client.close();
      await http.close();
    });
    const error = await tasks.callToolAsTask('job', { ms: 20 }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(error).toMatchObject({ kind: 'send', code: -32000, transient: false });
    const span = telemetry.one('mcp.task job');
    expect(span.attributes['error.type']).toBe('send');
    expect(span.attributes['rpc.response.status_code']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    const [task] = await telemetry.points('mcp.client.task.duration');
    expect(task!.attributes['error.type']).toBe('send');
    expect(task!.attributes['rpc.response.status_code']).toBeUndefined();
    const call = (await telemetry.points('mcp.client.operation.duration')).find(
      (point) => point.attributes['mcp.method.name'] === 'tools/call',
    );
    expect(call!.attributes['error.type']).toBe('send');
    expect(call!.attributes['rpc.response.status_code']).toBeUndefined();
  });
});
