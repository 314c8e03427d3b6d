/**
 * What every trace of one instrumentation shares: its tracer, its instruments, the spans of the
 * calls that created tasks, its propagator and its options.
 */
import type { TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { CreatingSpans } from './creators.js';
import type { Instruments } from './metrics.js';
import type { OtelInstrumentationOptions } from './types.js';

/** What every call of one instrumentation shares. */
export interface TraceKit {
  readonly tracer: Tracer;
  /** The instruments of the meter provider in force (the global one may come after the TaskClient). */
  readonly instruments: Instruments;
  /** The spans of the calls that created tasks (a resumed task's span links to its creator's). */
  readonly creators: CreatingSpans;
  /** Writes the trace context into a request's `_meta`; `undefined` when propagation is off. */
  readonly propagator: TextMapPropagator | undefined;
  /** Reads the trace context of a question's `_meta`: the propagator given, or the global one (even when propagation is off). */
  readonly reader: TextMapPropagator;
  readonly options: Required<
    Pick<
      OtelInstrumentationOptions,
      'requests' | 'recordTaskIds' | 'recordArguments' | 'recordResults' | 'recordStatusMessages'
    >
  > &
    Pick<OtelInstrumentationOptions, 'server'>;
}
