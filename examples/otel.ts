/**
 * `npx tsx examples/otel.ts`: one task traced and metered with OpenTelemetry. It starts the example
 * task server over stdio (status notifications off, so the client polls), connects to it with
 * `TaskClient.connect` (SDK v2, which negotiates the protocol version), runs `analyze` inside a
 * span of its own ("agent step"), then prints the trace as a tree of spans with their timings and
 * events, and the metrics. docs/observability.md shows its output.
 *
 * The OpenTelemetry setup at the top is what an application does once (with an OTLP exporter and
 * a periodic metric reader instead of the in-memory ones used here to print the result); the
 * library's part is the one `instrumentation: otelInstrumentation()` option.
 */
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { context, metrics, propagation, trace, type HrTime } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { DataPointType, MeterProvider, MetricReader, type Histogram } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { fileURLToPath } from 'node:url';
import { TaskClient } from '../lib/index.js';
import { otelInstrumentation } from '../lib/otel.js';

/** A metric reader this script collects from when it prints. */
class PrintReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

// 1. OpenTelemetry, once per process: spans, metrics, the W3C propagator, and a context manager so
//    that the span current in your code is the parent of the task's span.
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
const reader = new PrintReader();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

// 2. The TaskClient, instrumented.
const transport = new StdioClientTransport({
  command: process.execPath,
  args: ['--import', 'tsx', fileURLToPath(new URL('./server.ts', import.meta.url))],
  env: { ...(process.env as Record<string, string>), NOTIFY: '0', POLL_INTERVAL: '400' },
  stderr: 'inherit',
});
const tasks = await TaskClient.connect(transport, { sdk: 'v2', instrumentation: otelInstrumentation() });

// 3. A tool call inside a span of your own.
const tracer = trace.getTracer('otel-example');
await tracer.startActiveSpan('agent step', async (span) => {
  const handle = await tasks.callToolAsTask('analyze', { id: 7, steps: 3 });
  const result = await handle.result();
  console.log(
    `result: ${result.content.map((block) => (block.type === 'text' ? block.text : block.type)).join(' ')}\n`,
  );
  span.end();
});
await tasks.close(); // closes the SDK client TaskClient.connect made, and so the server

// 4. What was recorded.
const toMs = (time: HrTime): number => time[0] * 1_000 + time[1] / 1e6;
const spans = exporter.getFinishedSpans();
const origin = Math.min(...spans.map((span) => toMs(span.startTime)));
const KINDS = ['INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const SHOWN = [
  'gen_ai.tool.name',
  'mcp.protocol.version',
  'network.transport',
  'mcp.task.outcome',
  'mcp.task.polls',
  'error.type',
];

/** Prints `span` and its children, each with the attributes of {@link SHOWN} its parent does not repeat. */
function print(span: ReadableSpan, depth: number, parent?: ReadableSpan): void {
  const start = toMs(span.startTime) - origin;
  const duration = toMs(span.endTime) - toMs(span.startTime);
  const pad = '  '.repeat(depth);
  const attributes = SHOWN.filter(
    (key) => span.attributes[key] !== undefined && span.attributes[key] !== parent?.attributes[key],
  ).map((key) => `${key}=${String(span.attributes[key])}`);
  console.log(
    `${pad}${span.name} (${KINDS[span.kind]}) +${start.toFixed(0)} ms, ${duration.toFixed(1)} ms${attributes.length > 0 ? `  ${attributes.join(' ')}` : ''}`,
  );
  for (const event of span.events) {
    const at = toMs(event.time) - origin;
    const detail = Object.entries(event.attributes ?? {})
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(' ');
    console.log(`${pad}  · ${event.name} +${at.toFixed(0)} ms ${detail}`);
  }
  const id = span.spanContext().spanId;
  for (const child of spans
    .filter((s) => s.parentSpanContext?.spanId === id)
    .sort((a, b) => toMs(a.startTime) - toMs(b.startTime)))
    print(child, depth + 1, span);
}

console.log('trace:');
for (const root of spans.filter((span) => span.parentSpanContext === undefined)) print(root, 1);

console.log('\nmetrics:');
const { resourceMetrics } = await reader.collect();
for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
  for (const point of metric.dataPoints) {
    const where = ['mcp.method.name', 'mcp.task.outcome'].flatMap((key) => {
      const value = point.attributes[key];
      return typeof value === 'string' ? [value] : [];
    });
    const value =
      metric.dataPointType === DataPointType.HISTOGRAM
        ? `count ${(point.value as Histogram).count}, sum ${((point.value as Histogram).sum ?? 0).toFixed(3)} ${metric.descriptor.unit}`
        : `${point.value as number} ${metric.descriptor.unit}`;
    console.log(`  ${metric.descriptor.name}${where.length === 0 ? '' : ` {${where.join(' ')}}`}: ${value}`);
  }
}
