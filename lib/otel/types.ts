/**
 * The options of `otelInstrumentation()`.
 */
import type { MeterProvider, TextMapPropagator, TracerProvider } from '@opentelemetry/api';

/** Options of {@link otelInstrumentation}. */
export interface OtelInstrumentationOptions {
  /**
   * Where spans go.
   * @defaultValue the global tracer provider (`trace.getTracerProvider()`, set by your OpenTelemetry SDK)
   */
  readonly tracerProvider?: TracerProvider | undefined;
  /**
   * Where metrics go.
   * @defaultValue the global meter provider (`metrics.getMeterProvider()`), as it is at each
   * use: one registered after the TaskClient was made is used from then on
   */
  readonly meterProvider?: MeterProvider | undefined;
  /**
   * What writes the trace context into each request's `params._meta` (with the W3C propagators:
   * `traceparent`, `tracestate`, `baggage`) and reads it from an input request's.
   * @defaultValue the global propagator (`propagation`, set by your OpenTelemetry SDK)
   */
  readonly propagator?: TextMapPropagator | undefined;
  /**
   * Put the trace context into the `_meta` of the requests sent (`tools/call` and the task's
   * `tasks/*` requests), so that a server that reads it joins the trace.
   * @defaultValue true
   */
  readonly propagate?: boolean | undefined;
  /**
   * How a task's `tasks/get`, `tasks/result`, `tasks/update` and `tasks/cancel` requests are
   * recorded: `spans`, a child span each (CLIENT, named by the method); `events`, an `mcp.request`
   * event each on the task's span (fewer spans for long polling tasks). Metrics are the same either way.
   * A `tasks/list` request belongs to no task: it is a span either way; so is a `tools/call`, the
   * MCP conventions' span of the call, which covers the request until its answer.
   * @defaultValue 'spans'
   */
  readonly requests?: 'spans' | 'events' | undefined;
  /**
   * Record the task id as `mcp.task.id`. Off by default: on many servers whoever holds a task id
   * can read its result or cancel it.
   * @defaultValue false
   */
  readonly recordTaskIds?: boolean | undefined;
  /**
   * Record the tool's arguments as `gen_ai.tool.call.arguments` (JSON). They may hold secrets.
   * @defaultValue false
   */
  readonly recordArguments?: boolean | undefined;
  /**
   * Record a completed tool call's result as `gen_ai.tool.call.result` (JSON). It may hold secrets.
   * @defaultValue false
   */
  readonly recordResults?: boolean | undefined;
  /**
   * Record each status message on the status events (`mcp.task.status_message`), the task id
   * replaced by its fingerprint. Off by default: a status message is the server's free text and
   * may quote user data (a file name, an address), and the MCP conventions do not ask for it (the
   * attribute is this library's own). The status itself is always recorded.
   * @defaultValue false
   */
  readonly recordStatusMessages?: boolean | undefined;
  /**
   * The server's address and port as `server.address` and `server.port`, for a server behind a
   * proxy or one the transport does not show.
   * @defaultValue the host and port of the HTTP transport's URL; none on stdio
   */
  readonly server?:
    | {
        /** Host name or IP address. */
        readonly address: string;
        /** Port. */
        readonly port?: number | undefined;
      }
    | undefined;
}
