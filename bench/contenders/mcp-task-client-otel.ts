/**
 * Contender: mcp-task-client with OpenTelemetry on (`mcp-task-client/otel`), set up as an
 * application does with the OpenTelemetry SDK: the AsyncLocalStorage context manager, the W3C
 * trace-context propagator, a tracer provider that samples every span and hands it to a batch
 * processor (whose exporter drops it: the export itself is the application's cost, not the
 * library's), and a meter provider with a reader (every point is aggregated). Compared with the
 * `mcp-task-client` row of the same run, it gives what tracing a task costs; that row, with no
 * instrumentation, is the library as everyone else runs it.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import * as Lib from '../../lib/index.js';
import { otelInstrumentation } from '../../lib/otel.js';
import { WORK_TOOL } from '../server.js';
import type { ContenderFactory } from './types.js';

/** An exporter that drops every span. */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: () => Promise.resolve(),
};

/** A reader nobody collects from: points are aggregated, never exported. */
class IdleReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export const createMcpTaskClientOtel: ContenderFactory = async (connection) => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: dropping })] });
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  const tasks = new Lib.TaskClient(connection.client as Lib.McpClient, {
    instrumentation: otelInstrumentation({ tracerProvider, meterProvider }),
  });
  return {
    start: async (ms) => {
      const handle = await tasks.callToolAsTask(WORK_TOOL, { ms });
      if (handle.kind !== 'task' || handle.taskId === undefined)
        throw new Error('mcp-task-client did not create a task');
      return { taskId: handle.taskId, result: handle.result() };
    },
    close: async () => {
      await tasks.close();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
};
