/**
 * The instruments: the MCP conventions' `mcp.client.operation.duration`, per request, and
 * `mcp.server.operation.duration`, per request of the server's this client answers (input), and
 * the task-level ones of this library (duration by outcome, tasks in flight, polls, notifications
 * and retries per task).
 */
import {
  metrics,
  type Attributes,
  type Histogram,
  type Meter,
  type MeterProvider,
  type UpDownCounter,
} from '@opentelemetry/api';
import { DURATION_BUCKETS, METRIC, SCOPE, TASK_DURATION_BUCKETS } from './names.js';

/**
 * The instruments of the meter provider given, or else of the global one as it is at each use.
 * The metrics API, unlike the trace API (whose global provider is a proxy), hands out the no-op
 * provider until an SDK registers one, and a meter taken from it stays a no-op: a host that starts
 * its OpenTelemetry SDK after the module that makes the TaskClient was loaded would get spans and
 * no metrics. So the global provider is looked up again at each use (a few property reads), and
 * the instruments are made anew when it changed.
 */
export class InstrumentSource {
  private provider: MeterProvider | undefined = undefined;
  private current: Instruments | undefined = undefined;

  constructor(private readonly given: MeterProvider | undefined) {}

  /** The instruments of the provider in force now. */
  get instruments(): Instruments {
    const provider = this.given ?? metrics.getMeterProvider();
    if (this.current === undefined || provider !== this.provider) {
      this.current = new Instruments(provider.getMeter(SCOPE));
      this.provider = provider;
    }
    return this.current;
  }
}

/** The instruments of one instrumentation. */
export class Instruments {
  readonly operationDuration: Histogram;
  readonly serverOperationDuration: Histogram;
  readonly taskDuration: Histogram;
  readonly tasksActive: UpDownCounter;
  readonly taskPolls: Histogram;
  readonly taskNotifications: Histogram;
  readonly taskRetries: Histogram;

  constructor(meter: Meter) {
    this.operationDuration = meter.createHistogram(METRIC.operationDuration, {
      description:
        'The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    // metrics.yaml (lines 41-51 of the reviewed copy): recommended, a histogram in `s`; the
    // conventions' buckets, as the client's.
    this.serverOperationDuration = meter.createHistogram(METRIC.serverOperationDuration, {
      description:
        'MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.taskDuration = meter.createHistogram(METRIC.taskDuration, {
      description: 'The time from the call of an MCP tool (run as a task, or answered at once) to its end, by outcome.',
      unit: 's',
      advice: { explicitBucketBoundaries: TASK_DURATION_BUCKETS },
    });
    this.tasksActive = meter.createUpDownCounter(METRIC.tasksActive, {
      description: 'MCP tasks this client tracks (created and not yet ended).',
      unit: '{task}',
    });
    const counts = { explicitBucketBoundaries: [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] };
    this.taskPolls = meter.createHistogram(METRIC.taskPolls, {
      description: 'tasks/get requests sent for one MCP task, recorded at its end.',
      unit: '{request}',
      advice: counts,
    });
    this.taskNotifications = meter.createHistogram(METRIC.taskNotifications, {
      description: 'Status notifications received for one MCP task, recorded at its end.',
      unit: '{notification}',
      advice: counts,
    });
    this.taskRetries = meter.createHistogram(METRIC.taskRetries, {
      description: 'Requests retried for one MCP task, recorded at its end.',
      unit: '{request}',
      advice: counts,
    });
  }

  /** One request's duration. */
  request(seconds: number, attributes: Attributes): void {
    this.operationDuration.record(seconds, attributes);
  }
}
