/**
 * `otelInstrumentation()`: the OpenTelemetry implementation of the library's instrumentation hook
 * (`TaskClientOptions.instrumentation`). Attached to a TaskClient, it traces each call and its
 * task, each task resumed by `resume` (linked to the call that created it, when it traced that
 * call), and each `tasks/list` and `tools/list` request, writes the trace context into the `_meta` of every
 * request they send, records the metrics, and marks retries and lost connections on the spans of
 * the tasks they touch.
 */
import { propagation, trace } from '@opentelemetry/api';
import { TaskOptionError, type ClientInstrument, type InstrumentedClient, type TaskInstrumentation } from '../index.js';
import { readError } from './attributes.js';
import { CallTrace, type ClientTraces } from './call.js';
import type { TraceKit } from './kit.js';
import { CreatingSpans } from './creators.js';
import { traceInput } from './input.js';
import { traceList } from './listing.js';
import { InstrumentSource } from './metrics.js';
import { ATTR, EVENT, SCOPE, TASK_ATTR } from './names.js';
import { ResumedTasks } from './resumed.js';
import type { OtelInstrumentationOptions } from './types.js';

function check(condition: boolean, option: string, message: string): void {
  if (!condition) throw new TaskOptionError(message, { option });
}

function checkOptions(options: OtelInstrumentationOptions): void {
  check(typeof options === 'object' && options !== null, 'options', 'otelInstrumentation options must be an object');
  check(
    options.requests === undefined || options.requests === 'spans' || options.requests === 'events',
    'requests',
    'requests must be "spans" or "events"',
  );
  for (const key of [
    'propagate',
    'recordTaskIds',
    'recordArguments',
    'recordResults',
    'recordStatusMessages',
  ] as const) {
    check(options[key] === undefined || typeof options[key] === 'boolean', key, `${key} must be a boolean`);
  }
  const server = options.server;
  check(
    server === undefined ||
      (typeof server === 'object' && server !== null && typeof server.address === 'string' && server.address !== ''),
    'server',
    'server must be { address, port? } with a non-empty address',
  );
  check(
    server?.port === undefined || (Number.isInteger(server.port) && server.port > 0 && server.port < 65_536),
    'server.port',
    'server.port must be a port number',
  );
}

/**
 * Traces and meters a TaskClient's tool calls with OpenTelemetry, following the OpenTelemetry
 * semantic conventions for MCP. Give it as the TaskClient's `instrumentation` option:
 *
 * ```ts
 * const tasks = new TaskClient(client, { instrumentation: otelInstrumentation() });
 * ```
 *
 * Each call gets a task span `mcp.task {tool}` (kind INTERNAL) from `callToolAsTask` to the task's
 * end, a child of the span current at the call; its `tools/call` a child span `tools/call {tool}`
 * (CLIENT) from sent to answered (for a task, the CreateTaskResult: the MCP conventions' client span
 * covers a request until its response), and each `tasks/get`, `tasks/result`, `tasks/update` and
 * `tasks/cancel` of its task a child span. A task resumed by `resume` gets the same task span, marked
 * `mcp.task.resumed`, from `resume` to the task's end, with a span link to the task span of the call
 * that created the task when this instrumentation traced that call over the same connection or in
 * the same HTTP session (in this process: a resume reference carries no trace context; a task id
 * alone may name tasks of several servers). Each `tasks/list` request (`list()`, `listPage()`) and
 * `tools/list` request (the tool list read for `tools()` and calls) is a span of that name (CLIENT)
 * under the span current at the listing. Every request carries the trace context in its
 * `params._meta` (`traceparent`, `tracestate`), so a server that reads it joins the trace. The
 * metrics are `mcp.client.operation.duration` per request, `mcp.server.operation.duration` per
 * question of the server answered, and the task metrics of docs/observability.md. Spans, metrics and propagation use the global OpenTelemetry providers
 * unless given others. One instrumentation may serve several TaskClients.
 * @throws TaskOptionError for an invalid option.
 */
export function otelInstrumentation(options: OtelInstrumentationOptions = {}): TaskInstrumentation {
  checkOptions(options);
  let kit: TraceKit | undefined;
  // The tracer is taken on first attach (the global tracer provider is a proxy: one registered
  // later is used); the instruments at each use (the global meter provider is none: metrics.ts).
  const kitOf = (): TraceKit => {
    if (kit !== undefined) return kit;
    const meters = new InstrumentSource(options.meterProvider);
    return (kit = {
      tracer: (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE),
      get instruments() {
        return meters.instruments;
      },
      creators: new CreatingSpans(),
      propagator: options.propagate === false ? undefined : (options.propagator ?? propagation),
      reader: options.propagator ?? propagation,
      options: {
        requests: options.requests ?? 'spans',
        recordTaskIds: options.recordTaskIds ?? false,
        recordArguments: options.recordArguments ?? false,
        recordResults: options.recordResults ?? false,
        recordStatusMessages: options.recordStatusMessages ?? false,
        server: options.server,
      },
    });
  };
  return {
    attach: (client: InstrumentedClient): ClientInstrument => {
      const shared = kitOf();
      const traces: ClientTraces = {
        open: new Set(),
        byTask: new Map(),
        resumed: new ResumedTasks(client, shared.options.recordResults === true),
      };
      client.on('error', (error, taskMetrics) => {
        // A retry is reported on `error` with the task's retry count already raised.
        const call = taskMetrics === undefined ? undefined : traces.byTask.get(taskMetrics.taskId);
        if (call === undefined || taskMetrics === undefined || taskMetrics.retries <= call.retries) return;
        call.retries = taskMetrics.retries;
        // What failed, as a failed request's span says it (`timeout`, `send`, the server's code, …).
        const attributes = { [ATTR.errorType]: readError(error).type, [TASK_ATTR.retries]: taskMetrics.retries };
        call.event(EVENT.retry, attributes);
      });
      client.on('connectionLost', () => {
        for (const call of traces.open) call.event(EVENT.connectionLost);
      });
      client.on('connectionRestored', () => {
        for (const call of traces.open) call.event(EVENT.connectionRestored);
      });
      return {
        call: (call) => new CallTrace(shared, traces, call),
        resume: (resume) =>
          new CallTrace(shared, traces, {
            toolName: resume.toolName,
            connection: resume.connection,
            resumedTaskId: resume.taskId,
          }),
        list: () => traceList(shared),
        input: (input) => {
          const { taskId, toolName } = input.context;
          if (taskId !== undefined) return traceInput(shared, input, traces.byTask.get(taskId));
          // Asked before the call has a task (multi round-trip): the call of that tool still
          // waiting for its answer, when it is the only one.
          const waiting = [...traces.open].filter((call) => call.beforeHandle && call.toolName === toolName);
          return traceInput(shared, input, waiting.length === 1 ? waiting[0] : undefined);
        },
      };
    },
  };
}
