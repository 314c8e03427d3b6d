/**
 * The instrumentation's own steps, kept from breaking each other or the caller: a tracer, a meter
 * or a propagator that throws is reported to OpenTelemetry's diagnostic logger (`diag`), and the
 * steps after it still run, so that a span it started still ends and a gauge it raised still falls.
 */
import { diag } from '@opentelemetry/api';

/** Runs `run`; a throw is reported to `diag` as the failure of `what`, and yields `undefined`. */
export function attempt<T>(what: string, run: () => T): T | undefined {
  try {
    return run();
  } catch (error) {
    diag.error(`mcp-task-client/otel: ${what} failed`, error);
    return undefined;
  }
}
