/**
 * The OpenTelemetry side of the otel suites: the SDK's tracer provider with an in-memory span
 * exporter, a meter provider with a reader collected on demand, the W3C trace-context propagator,
 * and the AsyncLocalStorage context manager (so that a span made active by the test is the parent
 * the instrumentation finds). Plus readers of what was recorded: spans by name, parent links, and
 * metric points.
 */
import { DiagLogLevel, SpanKind, context, diag, trace, type Attributes, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { DataPointType, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';

/** A metric reader the test collects from when it wants. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Keeps the spans started and not ended yet. */
class OpenSpans implements SpanProcessor {
  readonly open = new Set<Span | ReadableSpan>();
  onStart(span: Span): void {
    this.open.add(span);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Records what breaks the parent rules in the instrumentation's own spans: one started, or ended,
 * after its parent ended. Give it to a {@link Telemetry} as a processor.
 */
export class LateSpans implements SpanProcessor {
  readonly problems: string[] = [];
  private readonly ended = new Map<string, string>();
  onStart(span: Span): void {
    this.check(span, 'started');
  }
  onEnd(span: ReadableSpan): void {
    this.check(span, 'ended');
    if (span.instrumentationScope.name === 'mcp-task-client') this.ended.set(span.spanContext().spanId, span.name);
  }
  private check(span: Span | ReadableSpan, what: string): void {
    // The instrumentation's spans only (a test server's own span may outlive the client's).
    if (span.instrumentationScope.name !== 'mcp-task-client') return;
    const parent = span.parentSpanContext?.spanId;
    const name = parent === undefined ? undefined : this.ended.get(parent);
    if (name !== undefined) this.problems.push(`${span.name} ${what} after its parent ${name} ended`);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Collects what OpenTelemetry's diagnostic logger is told of operations on ended spans (an event
 * added, an attribute set, a span ended again): the SDK drops them, and says so only there.
 * Returns the messages and the removal of the logger.
 */
export function watchEndedSpans(): { readonly messages: string[]; stop(): void } {
  const messages: string[] = [];
  const note = (message: string): void => {
    if (/ended Span|end\(\) on a span once/.test(message)) messages.push(message);
  };
  diag.setLogger(
    { error: note, warn: note, info: () => {}, debug: () => {}, verbose: () => {} },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  return { messages, stop: () => diag.disable() };
}

/** The kind of this client's spans named `name`: a task span, a question (of the server's), or a request. */
function kindOf(name: string): SpanKind {
  if (name === 'mcp.task' || name.startsWith('mcp.task ')) return SpanKind.INTERNAL;
  return name.includes('/create') || name.includes('/createMessage') ? SpanKind.SERVER : SpanKind.CLIENT;
}

/** One metric point: its attributes and value (a histogram's count and sum, or a sum's value). */
export interface Point {
  readonly attributes: Attributes;
  readonly count: number;
  readonly sum: number;
}

/**
 * The providers a test gives the instrumentation, and what they recorded. `processors` run after
 * the exporter's (one that throws in `onEnd` makes `span.end()` throw once the span is recorded).
 */
export class Telemetry {
  readonly exporter = new InMemorySpanExporter();
  private readonly started = new OpenSpans();
  readonly tracerProvider: TracerProvider;

  constructor(processors: readonly SpanProcessor[] = []) {
    this.tracerProvider = new TracerProvider({
      spanProcessors: [this.started, new SimpleSpanProcessor({ exporter: this.exporter }), ...processors],
    });
  }
  private readonly reader = new OnDemandReader();
  readonly meterProvider = new MeterProvider({ readers: [this.reader] });
  readonly propagator = new W3CTraceContextPropagator();

  /** Every ended span. */
  spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** The names of the spans started and not ended. */
  open(): string[] {
    return [...this.started.open].map((span) => span.name);
  }

  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[] {
    return this.spans().filter((span) => span.name === name);
  }

  /**
   * The one ended span named `name` of this client (kind INTERNAL for a task span `mcp.task …`,
   * SERVER for a question, else CLIENT; the server's spans are kept apart).
   */
  one(name: string, kind: SpanKind = kindOf(name)): ReadableSpan {
    const found = this.named(name).filter(
      (span) => span.kind === kind && span.instrumentationScope.name === 'mcp-task-client',
    );
    if (found.length !== 1)
      throw new Error(
        `expected one span "${name}", found ${found.length}: ${this.spans()
          .map((s) => s.name)
          .join(', ')}`,
      );
    return found[0]!;
  }

  /** The ended spans whose parent is `parent`. */
  childrenOf(parent: ReadableSpan): ReadableSpan[] {
    const id = parent.spanContext().spanId;
    return this.spans().filter((span) => span.parentSpanContext?.spanId === id);
  }

  /** The points of metric `name`. */
  async points(name: string): Promise<Point[]> {
    const { resourceMetrics } = await this.reader.collect();
    const points: Point[] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name !== name) continue;
        for (const point of metric.dataPoints as Array<DataPoint<number | Histogram>>) {
          if (metric.dataPointType === DataPointType.HISTOGRAM) {
            const value = point.value as Histogram;
            points.push({ attributes: point.attributes, count: value.count, sum: value.sum ?? 0 });
          } else {
            points.push({ attributes: point.attributes, count: 1, sum: point.value as number });
          }
        }
      }
    }
    return points;
  }

  /** The bucket boundaries of histogram `name` (of its first point). */
  async boundaries(name: string): Promise<number[] | undefined> {
    const { resourceMetrics } = await this.reader.collect();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name !== name || metric.dataPointType !== DataPointType.HISTOGRAM) continue;
        const point = metric.dataPoints[0];
        if (point !== undefined) return point.value.buckets.boundaries;
      }
    }
    return undefined;
  }

  /** Ends everything. */
  async shutdown(): Promise<void> {
    await this.tracerProvider.shutdown();
    await this.meterProvider.shutdown();
  }
}

/** Installs the AsyncLocalStorage context manager for the suite; returns its removal. */
export function useContextManager(): () => void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return () => context.disable();
}

/** The `traceparent` a span context is written as (W3C trace context, version 00). */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${spanContext.traceFlags.toString(16)}`;
}

/** Runs `run` inside a new active span `name` of `telemetry`'s tracer, ending it after; returns its result and the span. */
export async function withinSpan<T>(
  telemetry: Telemetry,
  name: string,
  run: () => Promise<T>,
): Promise<{ value: T; parent: SpanContext }> {
  const tracer = telemetry.tracerProvider.getTracer('spec-host');
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return { value: await run(), parent: span.spanContext() };
    } finally {
      span.end();
    }
  });
}

/** The span current in the active context (for asserting the context manager works). */
export function activeSpanContext(): SpanContext | undefined {
  return trace.getSpan(context.active())?.spanContext();
}
