/**
 * The instrumentation's own steps, kept from breaking each other or the caller: a tracer, a meter
 * or a propagator that throws is reported to OpenTelemetry's diagnostic logger (`diag`), and the
 * steps after it still run, so that a span it started still ends and a gauge it raised still falls.
 */
import {
  INVALID_SPAN_CONTEXT,
  diag,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';

/** Runs `run`; a throw is reported to `diag` as the failure of `what`, and yields `undefined`. */
export function attempt<T>(what: string, run: () => T): T | undefined {
  try {
    return run();
  } catch (error) {
    diag.error(`mcp-task-client/otel: ${what} failed`, error);
    return undefined;
  }
}

/**
 * `tracer.startSpan(name, options, parent)`. When it throws (the SDK's does when a span
 * processor's `onStart` throws), the failure goes to `diag` and a non-recording span stands in,
 * carrying the span context of `parent` (none for a root span), so that the steps after it run
 * as for any span: what holds the task's span open is let go, and a request still carries the
 * trace context it is part of.
 */
export function startSpan(tracer: Tracer, name: string, options: SpanOptions, parent: Context): Span {
  const span = attempt('tracer.startSpan()', () => tracer.startSpan(name, options, parent));
  if (span !== undefined) return span;
  const inherited = options.root === true ? undefined : trace.getSpanContext(parent);
  return trace.wrapSpanContext(inherited ?? INVALID_SPAN_CONTEXT);
}
