/**
 * `mcp-task-client/otel`: OpenTelemetry tracing and metrics for a TaskClient's tool calls and
 * their tasks, following the OpenTelemetry semantic conventions for MCP, with the trace context
 * carried in each request's `params._meta` (`@opentelemetry/api` 1.x, an optional peer
 * dependency). See docs/observability.md.
 */
export { otelInstrumentation } from './otel/instrumentation.js';
export type { OtelInstrumentationOptions } from './otel/types.js';
