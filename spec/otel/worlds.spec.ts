/**
 * `mcp-task-client/otel` on both task wires, against the scripted servers of spec/ext/worlds.ts
 * (the 2025-11-25 scripted server and the `io.modelcontextprotocol/tasks` extension server, each
 * with a TaskClient on SDK v2 in automatic negotiation and one ManualClock for both ends): the span
 * of a task, the trace context each request carries in `params._meta` as the server received it
 * (`tools/call`, `tasks/get`, `tasks/result` or the inline result, `tasks/update`, `tasks/cancel`),
 * a task that fails with a JSON-RPC error, one the server cancels, one this client cancels, a
 * deadline, and a question whose own trace context becomes its span's parent; a task detached and
 * resumed (a span of its own, marked resumed, with its question and its deadline). The clock is manual,
 * so task durations are exact. And the extension wire over sessionless Streamable HTTP on
 * 127.0.0.1: the transport's attributes, and no session id (a 2026-07-28 connection has none).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  TaskCancelledError,
  TaskClient,
  TaskFailedError,
  TaskTimeoutError,
  type McpTransport,
  type ResumeOptions,
  type TaskClientConnectOptions,
  type TaskHandle,
  type TaskReference,
} from '../../lib/index.js';
import { otelInstrumentation, type OtelInstrumentationOptions } from '../../lib/otel.js';
import { rejection, within } from '../helpers.js';
import {
  ExtServer,
  connectInMemory,
  fixtureTools,
  immediateTool,
  startExtHttpServer,
  textResult,
  type Json,
} from '../support/ext-server/index.js';
import { extRig, settle } from '../ext/support.js';
import { WORLDS, type World } from '../ext/worlds.js';
import { Telemetry, traceparentOf, useContextManager } from './support.js';

let telemetry: Telemetry;
let stopContext: () => void;
const open: World[] = [];
const cleanups: Array<() => Promise<void>> = [];

beforeAll(() => {
  stopContext = useContextManager();
});
afterAll(() => stopContext());
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await telemetry.shutdown();
});

/** A fresh {@link telemetry}, and an instrumentation that records into it. */
function instrumented(otel: OtelInstrumentationOptions = {}): ReturnType<typeof otelInstrumentation> {
  telemetry = new Telemetry();
  return otelInstrumentation({
    tracerProvider: telemetry.tracerProvider,
    meterProvider: telemetry.meterProvider,
    propagator: telemetry.propagator,
    ...otel,
  });
}

/** A TaskClient (SDK v2, instrumented) on the extension wire over `transport`, closed after the test. */
async function extClient(transport: McpTransport, options: TaskClientConnectOptions = {}): Promise<TaskClient> {
  const tasks = await TaskClient.connect(transport, { ...options, sdk: 'v2', instrumentation: instrumented() });
  cleanups.push(() => tasks.close());
  expect(tasks.wire).toBe('io.modelcontextprotocol/tasks');
  return tasks;
}

/** Moves the clock in 100 ms steps until `done()` (at most `max` ms). */
async function until(world: World, done: () => boolean, max = 30_000): Promise<void> {
  for (let spent = 0; !done() && spent < max; spent += 100) await world.clock.advance(100);
}

/** The `traceparent` in the `_meta` of each `method` request the server received. */
function traceparents(world: World, method: string): Array<string | undefined> {
  return world.params(method).map((params) => ((params._meta ?? {}) as Json).traceparent as string | undefined);
}

describe.each(WORLDS)('on the %s wire', (wire, make) => {
  const ext = wire === 'io.modelcontextprotocol/tasks';

  async function world(
    options: Parameters<typeof make>[0] = {},
    otel: OtelInstrumentationOptions = {},
  ): Promise<World> {
    const w = await make({ ...options, instrumentation: instrumented(otel) });
    open.push(w);
    expect(w.tasks.wire).toBe(wire);
    return w;
  }

  it('a completed task: its span, a child span per request, and the traceparent of each as the server received it', async () => {
    const w = await world({}, { recordStatusMessages: true });
    const handle = await w.tasks.callToolAsTask('job');
    const taskId = handle.taskId!;
    await w.clock.advance(1_000);
    w.setStatus(taskId, 'working', 'step 1');
    await w.clock.advance(1_000);
    w.complete(taskId, textResult('done'));
    const result = handle.result();
    await until(w, () => handle.settled);
    expect((await result).content).toEqual(textResult('done').content);

    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({
      'gen_ai.tool.name': 'job',
      'mcp.protocol.version': ext ? '2026-07-28' : '2025-11-25',
      'mcp.task.wire': wire,
      'mcp.task.outcome': 'completed',
    });
    // The tools/call: a CLIENT span of its own under the task span, until the CreateTaskResult.
    const call = telemetry.one('tools/call job');
    expect(call.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'job',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': ext ? '2026-07-28' : '2025-11-25',
    });
    // It ended at the answer, before the task's first poll.
    const ns = (time: [number, number]): bigint => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
    const firstPoll = telemetry.childrenOf(span).find((child) => child.name === 'tasks/get')!;
    expect(ns(call.endTime)).toBeLessThanOrEqual(ns(firstPoll.startTime));
    // A 2026-07-28 connection has no session; this one is in memory anyway.
    expect(span.attributes['mcp.session.id']).toBeUndefined();
    const statuses = span.events.filter((event) => event.name === 'mcp.task.status');
    expect(
      statuses.map(
        (event) =>
          `${event.attributes?.['mcp.task.status'] as string}:${(event.attributes?.['mcp.task.status_message'] as string | undefined) ?? ''}`,
      ),
    ).toEqual(['working:', 'working:step 1', 'completed:step 1']);
    expect(traceparents(w, 'tools/call')).toEqual([traceparentOf(call.spanContext())]);

    const children = telemetry.childrenOf(span).filter((child) => child !== call);
    const byName = (name: string) => children.filter((child) => child.name === name);
    expect(byName('tasks/get').length).toBe(handle.metrics!.polls);
    // The extension carries the result on tasks/get; 2025-11-25 fetches it with tasks/result.
    expect(byName('tasks/result')).toHaveLength(ext ? 0 : 1);
    for (const method of ['tasks/get', 'tasks/result']) {
      expect(traceparents(w, method)).toEqual(byName(method).map((child) => traceparentOf(child.spanContext())));
    }
    for (const child of children) expect(child.kind).toBe(SpanKind.CLIENT);

    // Exact on the manual clock: the call to the result took 2 s plus the polls to see it.
    const [point] = await telemetry.points('mcp.client.task.duration');
    expect(point).toMatchObject({
      count: 1,
      sum: handle.metrics!.durationMs / 1000,
      attributes: { 'mcp.task.outcome': 'completed', 'mcp.protocol.version': ext ? '2026-07-28' : '2025-11-25' },
    });
    expect(point!.sum).toBeGreaterThanOrEqual(2);
  });

  it("status messages (the server's free text) are left out unless recordStatusMessages is set", async () => {
    const w = await world();
    const handle = await w.tasks.callToolAsTask('job');
    const taskId = handle.taskId!;
    w.setStatus(taskId, 'working', 'reading the ledger of alice@example.com');
    await w.clock.advance(1_000);
    w.complete(taskId, textResult('done'));
    const result = handle.result();
    await until(w, () => handle.settled);
    await result;
    const span = telemetry.one('mcp.task job');
    const statuses = span.events.filter((event) => event.name === 'mcp.task.status');
    expect(statuses.map((event) => event.attributes?.['mcp.task.status'])).toContain('completed');
    for (const event of statuses) expect(event.attributes?.['mcp.task.status_message']).toBeUndefined();
    expect(JSON.stringify(span.events)).not.toContain('alice@example.com');
  });

  it('a task that fails with a JSON-RPC error: error.type and rpc.response.status_code are its code, the status its message', async () => {
    const w = await world();
    const handle = await w.tasks.callToolAsTask('job');
    w.fail(handle.taskId!, { code: -32603, message: 'worker crashed' });
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskFailedError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({
      'mcp.task.outcome': 'failed',
      'error.type': '-32603',
      'rpc.response.status_code': '-32603',
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'worker crashed' });
  });

  it('a task whose final result has isError: the request that brought it (tasks/result; on the extension, the tasks/get carrying it inline) has error.type tool_error, on its span and its metric point', async () => {
    const w = await world();
    const handle = await w.tasks.callToolAsTask('job');
    const taskId = handle.taskId!;
    await w.clock.advance(1_000);
    w.complete(taskId, { content: [{ type: 'text', text: 'disk full' }], isError: true });
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskFailedError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes['error.type']).toBe('tool_error');
    const carrier = ext ? 'tasks/get' : 'tasks/result';
    const children = telemetry.childrenOf(span);
    const flagged = children.filter((child) => child.attributes['error.type'] !== undefined);
    expect(flagged.map((child) => [child.name, child.attributes['error.type'], child.status.code])).toEqual([
      [carrier, 'tool_error', SpanStatusCode.ERROR],
    ]);
    expect(flagged[0]!.attributes['rpc.response.status_code']).toBeUndefined();
    // The polls before it (on the extension, the earlier tasks/get) carry no error.
    expect(children.filter((child) => child.name === 'tasks/get').length).toBeGreaterThan(ext ? 1 : 0);
    const points = await telemetry.points('mcp.client.operation.duration');
    const errored = points.filter((point) => point.attributes['error.type'] !== undefined);
    expect(
      errored.map((point) => [point.attributes['mcp.method.name'], point.attributes['error.type'], point.count]),
    ).toEqual([[carrier, 'tool_error', 1]]);
  });

  it('a task the server cancels ends in error: TaskCancelledError', async () => {
    const w = await world();
    const handle = await w.tasks.callToolAsTask('job');
    w.cancelOnServer(handle.taskId!, 'operator stopped it');
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskCancelledError);
    expect(telemetry.one('mcp.task job').attributes).toMatchObject({
      'mcp.task.outcome': 'cancelled',
      'error.type': 'TaskCancelledError',
      'mcp.task.status': 'cancelled',
    });
  });

  /** A task the server cancels with `message`, settled; the span of its call. */
  async function cancelledByServer(w: World, message: string) {
    const handle = await w.tasks.callToolAsTask('job');
    w.cancelOnServer(handle.taskId!, message);
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskCancelledError);
    return telemetry.one('mcp.task job');
  }

  /** A task whose result is `isError` with `text`, settled; the span of its call. */
  async function failedWithText(w: World, text: string) {
    const handle = await w.tasks.callToolAsTask('job');
    await w.clock.advance(1_000);
    w.complete(handle.taskId!, { content: [{ type: 'text', text }], isError: true });
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskFailedError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes['error.type']).toBe('tool_error');
    return span;
  }

  it("a task the server cancels with a status message: the span's status has no description (the server's free text, recorded only with recordStatusMessages)", async () => {
    const span = await cancelledByServer(await world(), 'stopped reading the ledger of alice@example.com');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(JSON.stringify([span.status, span.attributes, span.events])).not.toContain('alice@example.com');
  });

  it('with recordStatusMessages, the cancelled task span’s status description is the error’s message', async () => {
    const span = await cancelledByServer(await world({}, { recordStatusMessages: true }), 'operator stopped it');
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'Task for tool "job" was cancelled: operator stopped it',
    });
  });

  it("a task whose result is isError: the span's status has no description (the tool's text, recorded only with recordResults)", async () => {
    const span = await failedWithText(await world(), 'no quota left for alice@example.com');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(JSON.stringify([span.status, span.attributes, span.events])).not.toContain('alice@example.com');
  });

  it('with recordResults, the failed task span’s status description is the error’s message', async () => {
    const span = await failedWithText(await world({}, { recordResults: true }), 'disk full');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Tool "job" failed: disk full' });
  });

  // On the extension a question rides on a read, and a detached task is read no more.
  it.skipIf(ext)(
    'a question of a task detached here, asked once its span has ended: its span links to the span of the call that created the task',
    async () => {
      const w = await world({ onElicitation: () => ({ action: 'decline' }) });
      const handle = await w.tasks.callToolAsTask('job');
      const taskId = handle.taskId!;
      handle.detach();
      await until(w, () => telemetry.named('mcp.task job').length > 0);
      const span = telemetry.one('mcp.task job');
      w.ask(taskId, 'Still there?');
      await until(w, () => w.answers(taskId).length > 0);
      const question = telemetry.named('elicitation/create').find((s) => s.kind === SpanKind.SERVER)!;
      expect(question.links.map((link) => link.context.spanId)).toContain(span.spanContext().spanId);
      expect(question.parentSpanContext?.spanId).not.toBe(span.spanContext().spanId);
    },
  );

  it('cancel() sends tasks/cancel as a child span, with its own trace context', async () => {
    const w = await world();
    const handle = await w.tasks.callToolAsTask('job');
    const cancelled = handle.cancel();
    await until(w, () => handle.settled);
    await cancelled;
    const span = telemetry.one('mcp.task job');
    const cancels = telemetry.childrenOf(span).filter((child) => child.name === 'tasks/cancel');
    expect(cancels).toHaveLength(1);
    expect(traceparents(w, 'tasks/cancel')).toEqual([traceparentOf(cancels[0]!.spanContext())]);
    expect(span.attributes['mcp.task.outcome']).toBe('cancelled');
  });

  it('a deadline: outcome timeout, and the remote cancel traced', async () => {
    const w = await world();
    const handle = await w.tasks.callToolAsTask('job', {}, { timeoutMs: 2_500 });
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskTimeoutError);
    const span = telemetry.one('mcp.task job');
    expect(span.attributes).toMatchObject({ 'mcp.task.outcome': 'timeout', 'error.type': 'TaskTimeoutError' });
    expect(traceparents(w, 'tasks/cancel')).toHaveLength(1);
    const [point] = await telemetry.points('mcp.client.task.duration');
    expect(point!.attributes['mcp.task.outcome']).toBe('timeout');
    expect(point!.sum).toBeGreaterThanOrEqual(2.5);
  });

  it("a question carrying the server's trace context: its span's parent is the server's span, linked to the task span", async () => {
    const w = await world({ capabilities: { elicitation: {} } });
    const answers: string[] = [];
    const handle = await w.tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: (params) => {
          answers.push(params.message);
          return { action: 'decline' };
        },
      },
    );
    const taskId = handle.taskId!;
    // The server's own span, as an instrumented server would name it in its question's _meta.
    const serverSpanId = '00f067aa0ba902b7';
    w.ask(taskId, 'Go on?', { traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${serverSpanId}-01` });
    await until(w, () => answers.length === 1 && w.answers(taskId).length === 1);
    expect(w.answers(taskId)).toEqual([expect.objectContaining({ action: 'decline' })]);
    w.complete(taskId, textResult('done'));
    await until(w, () => handle.settled);
    const task = telemetry.one('mcp.task job');
    const question = telemetry.one('elicitation/create');
    expect(question.kind).toBe(SpanKind.SERVER);
    expect(question.parentSpanContext).toMatchObject({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: serverSpanId,
      isRemote: true,
    });
    expect(question.links.map((link) => link.context.spanId)).toEqual([task.spanContext().spanId]);
    expect(question.attributes).toMatchObject({
      'mcp.method.name': 'elicitation/create',
      'mcp.task.input_outcome': 'answered',
      'mcp.task.input_action': 'decline',
    });
    expect(task.events.map((event) => event.name)).toEqual(
      expect.arrayContaining(['mcp.task.input.request', 'mcp.task.input.response']),
    );
    if (ext) {
      // The answer went back with tasks/update, a child span of the task with its own context.
      const updates = telemetry.childrenOf(task).filter((child) => child.name === 'tasks/update');
      expect(updates).toHaveLength(1);
      expect(traceparents(w, 'tasks/update')).toEqual([traceparentOf(updates[0]!.spanContext())]);
    }
  });

  it("each question answered, or failed with a JSON-RPC error sent back, is an mcp.server.operation.duration point (metrics.yaml): its method, tool and connection, error.type when the callback threw, the conventions' buckets", async () => {
    const w = await world({ capabilities: { elicitation: {} } });
    let asked = 0;
    const handle = await w.tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: () => {
          asked += 1;
          if (asked === 2) throw new RangeError('no operator at hand');
          return { action: 'accept', content: { confirm: true } };
        },
      },
    );
    const taskId = handle.taskId!;
    w.ask(taskId, 'First?');
    await until(w, () => w.answers(taskId).length === 1);
    w.ask(taskId, 'Second?');
    await until(w, () => telemetry.named('elicitation/create').length === 2);
    w.complete(taskId, textResult('done'));
    await until(w, () => handle.settled);
    const points = await telemetry.points('mcp.server.operation.duration');
    // On the extension the failed answer is left out of tasks/update ([E31]): nothing was sent for
    // it, so no point, as for an abandoned question.
    expect(points.map((point) => [point.attributes['error.type'], point.count])).toEqual(
      ext
        ? [[undefined, 1]]
        : expect.arrayContaining([
            [undefined, 1],
            ['-32603', 1],
          ]),
    );
    expect(points).toHaveLength(ext ? 1 : 2);
    for (const point of points) {
      expect(point.attributes).toMatchObject({
        'mcp.method.name': 'elicitation/create',
        'gen_ai.tool.name': 'job',
        'mcp.protocol.version': ext ? '2026-07-28' : '2025-11-25',
      });
      // No unbounded value, and no address: the server metric has no address group.
      for (const key of [
        'mcp.session.id',
        'jsonrpc.request.id',
        'server.address',
        'server.port',
        'client.address',
        'client.port',
        'gen_ai.operation.name',
      ])
        expect(point.attributes[key], key).toBeUndefined();
    }
    expect(await telemetry.boundaries('mcp.server.operation.duration')).toEqual([
      0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
    ]);
  });

  it("a callback that throws: on 2025-11-25, the question's span has the JSON-RPC code sent back as rpc.response.status_code and, unless it is one the conventions do not count as an error, as error.type; on the extension (no error goes back), the class name, and no metric point", async () => {
    const w = await world({ capabilities: { elicitation: {} } });
    const thrown = [
      new RangeError('no operator at hand'),
      Object.assign(new Error('the operator is away'), { code: -32001 }),
      Object.assign(new Error('unreadable schema'), { code: -32602 }),
    ];
    let asked = 0;
    const handle = await w.tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: () => {
          throw thrown[asked++]!;
        },
      },
    );
    const taskId = handle.taskId!;
    for (let i = 1; i <= thrown.length; i += 1) {
      w.ask(taskId, `Question ${i}?`);
      await until(w, () => telemetry.named('elicitation/create').length === i);
    }
    w.complete(taskId, textResult('done'));
    await until(w, () => handle.settled);
    const questions = telemetry.named('elicitation/create');
    const read = questions.map((span) => [
      span.attributes['error.type'],
      span.attributes['rpc.response.status_code'],
      span.status.code,
      span.attributes['mcp.task.input_outcome'],
    ]);
    const ERROR = SpanStatusCode.ERROR;
    expect(read).toEqual(
      ext
        ? [
            ['RangeError', undefined, ERROR, 'failed'],
            ['_OTHER', undefined, ERROR, 'failed'],
            ['_OTHER', undefined, ERROR, 'failed'],
          ]
        : [
            ['-32603', '-32603', ERROR, 'failed'],
            ['-32001', '-32001', ERROR, 'failed'],
            // common.yaml: -32602 answering a request the receiver serves is no error.
            [undefined, '-32602', SpanStatusCode.UNSET, 'failed'],
          ],
    );
    // The task span's answer events and the metric points say the same.
    const events = telemetry
      .one('mcp.task job')
      .events.filter((event) => event.name === 'mcp.task.input.response')
      .map((event) => [event.attributes?.['error.type'], event.attributes?.['rpc.response.status_code']]);
    expect(events).toEqual(read.map(([type, code]) => [type, code]));
    // A point for each JSON-RPC error sent back; none on the extension, where nothing was sent.
    const points = await telemetry.points('mcp.server.operation.duration');
    const sentBack = points.map((point) => [
      point.attributes['error.type'],
      point.attributes['rpc.response.status_code'],
    ]);
    if (ext) expect(sentBack).toEqual([]);
    else expect(sentBack).toEqual(expect.arrayContaining(read.map(([type, code]) => [type, code])));
    expect(sentBack).toHaveLength(ext ? 0 : read.length);
  });

  it("an answer of the wrong shape is no answer: on 2025-11-25, the question's span and its mcp.server.operation.duration point have the -32603 sent back instead; on the extension (left out of tasks/update, [E31]), its span fails with TaskInputError, and no point", async () => {
    const w = await world({ capabilities: { elicitation: {} } });
    const reports: Error[] = [];
    w.tasks.on('error', (error) => reports.push(error));
    const handle = await w.tasks.callToolAsTask(
      'job',
      {},
      // What an untyped callback (JavaScript, or a body read off the network) may return.
      { onElicitation: () => ({ action: 'maybe' }) as never },
    );
    const taskId = handle.taskId!;
    w.ask(taskId, 'Go on?');
    await until(w, () => telemetry.named('elicitation/create').length === 1);
    w.complete(taskId, textResult('done'));
    await until(w, () => handle.settled);
    expect(w.answers(taskId)).toEqual([]);
    const question = telemetry.one('elicitation/create');
    expect(question.status.code).toBe(SpanStatusCode.ERROR);
    expect(question.attributes['mcp.task.input_outcome']).toBe('failed');
    expect(question.attributes['mcp.task.input_action']).toBeUndefined();
    expect([question.attributes['error.type'], question.attributes['rpc.response.status_code']]).toEqual(
      ext ? ['TaskInputError', undefined] : ['-32603', '-32603'],
    );
    const [event] = telemetry
      .one('mcp.task job')
      .events.filter((e) => e.name === 'mcp.task.input.response')
      .map((e) => [e.attributes?.['mcp.task.input_outcome'], e.attributes?.['error.type']]);
    expect(event).toEqual(['failed', ext ? 'TaskInputError' : '-32603']);
    const points = await telemetry.points('mcp.server.operation.duration');
    expect(
      points.map((point) => [point.attributes['error.type'], point.attributes['rpc.response.status_code']]),
    ).toEqual(ext ? [] : [['-32603', '-32603']]);
    if (ext) {
      expect(w.params('tasks/update')).toEqual([]);
      expect(reports.map((e) => [e.name, e.message])).toEqual([
        [
          'TaskInputError',
          'The elicitation callback returned an invalid result: action must be "accept", "decline" or "cancel"',
        ],
      ]);
    }
  });

  /** `resume` inside an active span `worker` of the host (ended at once); the handle and that span. */
  function resumeWithin(w: World, reference: TaskReference, options: ResumeOptions = {}) {
    const worker = telemetry.tracerProvider.getTracer('spec-host').startSpan('worker');
    const handle: TaskHandle = context.with(trace.setSpan(ROOT_CONTEXT, worker), () =>
      w.tasks.resume(reference, options),
    );
    worker.end();
    return { handle, worker };
  }

  /** The task spans `mcp.task job`: the call's and the resumed task's. */
  function callAndResumed() {
    const spans = telemetry.named('mcp.task job');
    expect(spans).toHaveLength(2);
    return {
      call: spans.find((span) => span.attributes['mcp.task.resumed'] === undefined)!,
      resumed: spans.find((span) => span.attributes['mcp.task.resumed'] === true)!,
    };
  }

  it('a detached task resumed: a span of its own under the caller, marked resumed, its requests children with their context, its question under it', async () => {
    const w = await world({ capabilities: { elicitation: {} } });
    const first = await w.tasks.callToolAsTask('job');
    const taskId = first.taskId!;
    const reference = first.detach()!;
    const asked: string[] = [];
    const { handle, worker } = resumeWithin(w, reference, {
      onElicitation: (params) => {
        asked.push(params.message);
        return { action: 'decline' };
      },
    });
    const result = handle.result();
    await w.clock.advance(1_000);
    w.ask(taskId, 'Go on?');
    await until(w, () => asked.length === 1 && w.answers(taskId).length === 1);
    w.complete(taskId, textResult('done'));
    await until(w, () => handle.settled);
    expect((await result).content).toEqual(textResult('done').content);

    const { call, resumed } = callAndResumed();
    expect(call.attributes['mcp.task.outcome']).toBe('detached');
    expect(resumed.parentSpanContext?.spanId).toBe(worker.spanContext().spanId);
    expect(resumed.attributes).toMatchObject({
      'gen_ai.tool.name': 'job',
      'mcp.protocol.version': ext ? '2026-07-28' : '2025-11-25',
      'mcp.task.wire': wire,
      'mcp.task.resumed': true,
      'mcp.task.outcome': 'completed',
      'mcp.task.polls': handle.metrics!.polls,
    });
    expect(resumed.attributes['jsonrpc.request.id']).toBeUndefined();
    const children = telemetry.childrenOf(resumed);
    const byName = (name: string) => children.filter((child) => child.name === name);
    expect(byName('tasks/get')).toHaveLength(handle.metrics!.polls);
    expect(byName('tasks/result')).toHaveLength(ext ? 0 : 1);
    expect(byName('tasks/update')).toHaveLength(ext ? 1 : 0);
    for (const child of children.filter((found) => found.kind === SpanKind.CLIENT))
      expect(traceparents(w, child.name), child.name).toContain(traceparentOf(child.spanContext()));
    // The question came without trace context of the server's: its span is the resumed span's child.
    const question = telemetry.one('elicitation/create');
    expect(question.parentSpanContext?.spanId).toBe(resumed.spanContext().spanId);
    expect(resumed.events.map((event) => event.name)).toEqual(
      expect.arrayContaining(['mcp.task.input.request', 'mcp.task.input.response']),
    );

    // Exact on the manual clock: from resume to its end.
    const [point] = (await telemetry.points('mcp.client.task.duration')).filter(
      (found) => found.attributes['mcp.task.resumed'] === true,
    );
    expect(point).toMatchObject({
      count: 1,
      sum: handle.metrics!.durationMs / 1000,
      attributes: { 'mcp.task.outcome': 'completed' },
    });
    expect(point!.sum).toBeGreaterThanOrEqual(1);
  });

  it('a resumed task whose deadline passes: timeout, the span in error, the remote cancel a child span', async () => {
    const w = await world();
    const reference = (await w.tasks.callToolAsTask('job')).detach()!;
    const { handle } = resumeWithin(w, reference, { timeoutMs: 2_500 });
    const result = rejection(handle.result());
    await until(w, () => handle.settled);
    expect(await result).toBeInstanceOf(TaskTimeoutError);
    const { resumed } = callAndResumed();
    expect(resumed.attributes).toMatchObject({ 'mcp.task.outcome': 'timeout', 'error.type': 'TaskTimeoutError' });
    expect(resumed.status.code).toBe(SpanStatusCode.ERROR);
    await until(w, () => telemetry.childrenOf(resumed).some((child) => child.name === 'tasks/cancel'));
    const cancel = telemetry.childrenOf(resumed).find((child) => child.name === 'tasks/cancel')!;
    expect(traceparents(w, 'tasks/cancel')).toEqual([traceparentOf(cancel.spanContext())]);
  });
});

describe('the extension wire: a question before the task exists (multi round-trip)', () => {
  it("is a span of its call, and the call's two tools/call requests are two spans of the call, each carrying its own context", async () => {
    const rig = await extRig({
      client: {
        onElicitation: () => ({ action: 'accept', content: { name: 'Alice' } }),
        instrumentation: instrumented(),
      },
    });
    cleanups.push(() => rig.close());
    const handle = await rig.tasks.callToolAsTask('test_tool_with_task', { x: 1 });
    const result = handle.result();
    await settle(rig, handle);
    expect((await result).content).toEqual(textResult('Hello, Alice!').content);
    const span = telemetry.one('mcp.task test_tool_with_task');
    const question = telemetry.one('elicitation/create');
    expect(question.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(question.attributes).toMatchObject({
      'mcp.task.input_outcome': 'answered',
      'mcp.task.input_action': 'accept',
    });
    // One CLIENT span per tools/call request (the conventions' span per request), each until its
    // answer: the first answered with the question, the second with the task.
    const calls = telemetry
      .named('tools/call test_tool_with_task')
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(rig.server.params('tools/call').map((params) => (params._meta as Json).traceparent)).toEqual(
      calls.map((call) => traceparentOf(call.spanContext())),
    );
    expect(calls.map((call) => call.attributes['jsonrpc.request.id'])).toEqual(
      rig.server.received('tools/call').map((request) => request.id),
    );
    expect(span.attributes['jsonrpc.request.id']).toBeUndefined();
  });
});

describe('the extension wire: a plain call answered at once with isError', () => {
  it('its span and its tools/call metric point have error.type tool_error, with no rpc.response.status_code', async () => {
    const server = new ExtServer({
      tools: [immediateTool('broken', { content: [{ type: 'text', text: 'no such file' }], isError: true })],
      notifications: 'off',
    });
    const tasks = await extClient((await connectInMemory(server)).clientTransport);
    const handle = await tasks.callToolAsTask('broken');
    expect(handle.kind).toBe('immediate');
    expect(await rejection(handle.result())).toBeInstanceOf(TaskFailedError);
    const span = telemetry.one('mcp.task broken');
    expect(span.attributes).toMatchObject({ 'error.type': 'tool_error', 'mcp.task.outcome': 'failed' });
    const calls = (await telemetry.points('mcp.client.operation.duration')).filter(
      (point) => point.attributes['mcp.method.name'] === 'tools/call',
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]!.attributes).toMatchObject({ 'error.type': 'tool_error', 'mcp.protocol.version': '2026-07-28' });
    expect(calls[0]!.attributes['rpc.response.status_code']).toBeUndefined();
  });
});

describe('the extension wire over Streamable HTTP on 127.0.0.1', () => {
  it('records the transport and the server address, no session id, and the server receives each traceparent', async () => {
    const server = new ExtServer({ tools: fixtureTools(), pollIntervalMs: 20, notifications: 'off' });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());
    const tasks = await extClient(new StreamableHTTPClientTransport(endpoint.url), {
      minPollIntervalMs: 10,
      onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
    });
    const handle = await tasks.callToolAsTask('confirm_delete', { filename: 'http.txt' });
    expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'deleted http.txt' }]);
    const span = telemetry.one('mcp.task confirm_delete');
    expect(span.attributes).toMatchObject({
      'mcp.protocol.version': '2026-07-28',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'server.port': Number(endpoint.url.port),
      'mcp.task.outcome': 'completed',
    });
    expect(span.attributes['mcp.session.id']).toBeUndefined();
    // The question's span is an mcp.server span: the MCP server is its peer, client.address and
    // client.port (spans.yaml); server.address would name this side.
    const [question] = telemetry.spans().filter((s) => s.attributes['mcp.method.name'] === 'elicitation/create');
    expect(question!.attributes).toMatchObject({
      'client.address': '127.0.0.1',
      'client.port': Number(endpoint.url.port),
    });
    expect(question!.attributes['server.address']).toBeUndefined();
    expect(question!.attributes['server.port']).toBeUndefined();
    const meta = (method: string): Array<string | undefined> =>
      server.params(method).map((params) => ((params._meta ?? {}) as Json).traceparent as string | undefined);
    expect(meta('tools/call')).toEqual([traceparentOf(telemetry.one('tools/call confirm_delete').spanContext())]);
    for (const method of ['tasks/get', 'tasks/update']) {
      const children = telemetry.childrenOf(span).filter((child) => child.name === method);
      expect(children.length, method).toBeGreaterThan(0);
      expect(meta(method)).toEqual(children.map((child) => traceparentOf(child.spanContext())));
    }
  });
});
