/**
 * One call's trace: the task span of the call and its task (`mcp.task {tool}`, INTERNAL, from
 * `callToolAsTask` to settlement, or to the end of its last request or question then in flight),
 * the span events of the task's life, and the call's metric points. Its requests are its children:
 * each `tools/call` a CLIENT span `tools/call {tool}` from sent to answered (for a task, the
 * CreateTaskResult), as the MCP conventions' client span covers a request until its response, and
 * each `tasks/*` a CLIENT span too (or an event, call-requests.ts); how its end reads on the span is
 * call-end.ts. A task resumed by `TaskClient.resume` gets the same task span, marked
 * `mcp.task.resumed`, from `resume` to settlement, without a `tools/call` (resumed.ts follows its
 * life through the client's events), linked to the task span of the call that created it when the
 * same instrumentation traced that call (creators.ts).
 */
import {
  SpanKind,
  context,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';
import type {
  CallInstrument,
  CallToolResult,
  InstrumentedConnection,
  OutgoingRequest,
  RequestFailure,
  RequestInstrument,
  Task,
  TaskHandle,
  TaskMetrics,
  TaskOutcomeKind,
} from '../index.js';
import { connectionAttributes, isErrorOutcome, json, metricAttributesOf, scrubbed } from './attributes.js';
import { annotate, outcomeOfError, readingOf, type EndingCall } from './call-end.js';
import { callRequest, type RequestingCall } from './call-requests.js';
import type { TraceKit } from './kit.js';
import type { Instruments } from './metrics.js';
import { ATTR, EVENT, METRIC, TASK_ATTR, TASK_SPAN } from './names.js';
import { attempt, startSpan } from './safe.js';
import type { ResumedTasks, ResumedTrace, Settlement } from './resumed.js';

/** The traces of one TaskClient's calls still open, and of its tasks by id (for client-wide events). */
export interface ClientTraces {
  readonly open: Set<CallTrace>;
  readonly byTask: Map<string, CallTrace>;
  /** The resumed tasks, followed through the client's events. */
  readonly resumed: ResumedTasks;
}

/** What a trace starts from: a call (an `InstrumentedCall` fits), or a resumed task (`resumedTaskId`). */
export interface TraceStart {
  /** The tool; `undefined` for a task resumed by bare id. */
  readonly toolName: string | undefined;
  readonly connection: InstrumentedConnection;
  /** A call's arguments. */
  readonly arguments?: Readonly<Record<string, unknown>> | undefined;
  /** The id of a resumed task, known from the start. */
  readonly resumedTaskId?: string | undefined;
}

/** Watches one call. */
export class CallTrace implements CallInstrument, ResumedTrace, RequestingCall, EndingCall {
  /** The task span: the call and its task. */
  readonly span: Span;
  /** The caller's context with the call's span current: the parent of everything of the call. */
  readonly context: Context;
  /**
   * Connection and tool attributes of the call's span, as the call began (each request's span and
   * metric point has those of the connection it goes over instead).
   */
  readonly attributes: Attributes;
  /**
   * The task metrics' points: the same without the session id (not a metric attribute), marked
   * `mcp.task.resumed` for a resumed task. Fixed for the task's life, so that its end counts out
   * of `mcp.client.task.active` exactly what its start counted in.
   */
  private readonly taskAttributes: Attributes;
  private readonly startedAt = performance.now();
  /** The tool called; `undefined` for a task resumed by bare id. */
  readonly toolName: string | undefined;
  /** True for a task resumed by `TaskClient.resume`. */
  readonly resumed: boolean;
  /**
   * The scopes of the connections the call went over (`CreatingSpans.scope`: an HTTP session, else
   * a transport): the one it began on, then each one its requests went over (a reconnection brings
   * another). With the task id, each names its task among the creating spans (a task id alone may
   * name tasks of several servers).
   */
  private readonly scopes = new Set<string>();
  /** The task's id, once known. */
  taskId: string | undefined = undefined;
  /** True once the call settled (or failed): its span ends as soon as nothing of it is in flight. */
  private ended = false;
  /** True once the span ended. */
  private spanEnded = false;
  /**
   * The call's requests and questions in flight (children of its span, or its events to come), each
   * with what ends it early (`cut`) when the span may not wait for it.
   */
  private readonly inFlight = new Set<{ readonly cut: (() => boolean) | undefined; readonly always: boolean }>();
  /** The instruments the task was counted into `mcp.client.task.active` with: its end counts it out of the same. */
  private countedIn: Instruments | undefined = undefined;
  private immediate = false;
  /** The server's JSON-RPC error to the last `tools/call`, for the span's status description. */
  callError: RequestFailure | undefined = undefined;
  /** Retries seen so far (the `error` event tells each one). */
  retries = 0;
  /** The call's arguments as JSON, with `recordArguments` (for its `tools/call` span too). */
  argumentsJson: string | undefined = undefined;

  constructor(
    readonly kit: TraceKit,
    private readonly traces: ClientTraces,
    start: TraceStart,
  ) {
    const parent = context.active();
    const toolName = start.toolName;
    const taskId = start.resumedTaskId;
    this.toolName = toolName;
    this.resumed = taskId !== undefined;
    const scope = kit.creators.scope(start.connection);
    this.scopes.add(scope);
    this.attributes = connectionAttributes(start.connection, kit.options.server);
    if (toolName !== undefined) this.attributes[ATTR.toolName] = toolName;
    const shared = metricAttributesOf(this.attributes);
    this.taskAttributes = this.resumed ? { ...shared, [TASK_ATTR.resumed]: true } : shared;
    // No `mcp.method.name`, `gen_ai.operation.name` nor `jsonrpc.request.id`: those are the
    // `tools/call` request span's (a child), which alone stands for the MCP operation (so that the
    // tool call is counted once where `execute_tool` spans are counted).
    const attributes: Attributes = { [TASK_ATTR.wire]: start.connection.wire, ...this.attributes };
    if (this.resumed) attributes[TASK_ATTR.resumed] = true;
    if (taskId !== undefined && kit.options.recordTaskIds) attributes[TASK_ATTR.id] = taskId;
    if (kit.options.recordArguments && start.arguments !== undefined) {
      const args = json(start.arguments);
      if (args !== undefined) {
        attributes[ATTR.arguments] = args;
        this.argumentsJson = args;
      }
    }
    // Named as the conventions name spans, `{operation} {target}`; without a tool, the name alone.
    const name = toolName === undefined ? TASK_SPAN : `${TASK_SPAN} ${toolName}`;
    // A resumed task links to the span of the call that created it, when this instrumentation traced
    // it in the same scope: the same HTTP session (even over another transport that joined it), else
    // the same transport (the same id on another server, or another connection, may be another task).
    const creator = taskId === undefined ? undefined : kit.creators.of(scope, taskId);
    // INTERNAL: it stands for no one request (its requests are its CLIENT children).
    const options: SpanOptions = { kind: SpanKind.INTERNAL, attributes };
    if (creator !== undefined) options.links = [{ context: creator }];
    this.span = startSpan(kit.tracer, name, options, parent);
    this.context = trace.setSpan(parent, this.span);
    traces.open.add(this);
    if (taskId !== undefined) {
      // Known from the start: its retries and its questions find this span at once.
      this.taskId = taskId;
      traces.byTask.set(taskId, this);
    }
  }

  request(request: OutgoingRequest): RequestInstrument {
    this.wentOver(request.connection);
    return callRequest(this, request);
  }

  /**
   * A request of the call goes over `connection`: after a reconnection, the task is known in the
   * new one's scope too, and a call that created it is remembered there (so that a task detached
   * after a reconnection, and resumed over the new connection, links to it).
   */
  private wentOver(connection: InstrumentedConnection): void {
    if (this.ended) return;
    const scope = this.kit.creators.scope(connection);
    if (this.scopes.has(scope)) return;
    this.scopes.add(scope);
    const taskId = this.taskId;
    if (!this.resumed && taskId !== undefined) this.remember(taskId, [scope]);
  }

  /** The call created task `taskId`: it is remembered in each of `scopes`. */
  private remember(taskId: string, scopes: Iterable<string>): void {
    attempt('span.spanContext()', () => {
      const span = this.span.spanContext();
      for (const scope of scopes) this.kit.creators.remember(scope, taskId, span);
    });
  }

  /**
   * Holds the span open for a request or a question of the call: until the returned release runs,
   * the span does not end, so that a child in flight when the task settles ends inside it (a child
   * never ends after its parent) and its events still land. `undefined` once the call has settled:
   * what starts then is recorded apart (a span linked to this one). `cut`, for a hold that may last
   * past the task's end without bound (a question a person may never answer), ends what it holds
   * early when the task is detached (see finish()), or, with `always`, whenever the call ends
   * first (a `tools/call` still unanswered when its call is given up, which the library goes on
   * waiting for in the background, [R24]); its release then changes nothing. `cut` returns whether
   * what it holds has ended: a `tools/call` already given up, whose cancel is still being written,
   * ends once that write is done or failed, and its hold is kept until then (its release).
   */
  hold(cut?: () => boolean, always = false): (() => void) | undefined {
    if (this.ended) return undefined;
    const held = { cut, always };
    this.inFlight.add(held);
    return () => {
      if (this.inFlight.delete(held)) this.endSpan();
    };
  }

  /** An event on the call's span, unless it ended (the SDK would drop it). */
  event(name: string, attributes?: Attributes): void {
    if (!this.spanEnded) attempt('span.addEvent()', () => this.span.addEvent(name, attributes));
  }

  /** Ends the span once the call settled and nothing of it is in flight any more. */
  private endSpan(): void {
    if (!this.ended || this.inFlight.size > 0 || this.spanEnded) return;
    this.spanEnded = true;
    attempt('span.end()', () => this.span.end());
  }

  /** `gen_ai.tool.name`, when the tool is known: on every request of the call besides its connection's. */
  get toolAttributes(): Attributes {
    return this.toolName === undefined ? {} : { [ATTR.toolName]: this.toolName };
  }

  handle(handle: TaskHandle): void {
    if (this.resumed) {
      this.followResumed(handle);
      return;
    }
    if (handle.kind === 'immediate') {
      this.immediate = true;
      // A plain result: the call is over. An `isError` result rejects, as a failed task would.
      // `finish` never throws (each of its steps is guarded), so this chain never rejects.
      handle.result().then(
        (result) => this.finish('completed', undefined, undefined, result),
        (error: unknown) => this.finish('failed', error, undefined),
      );
      return;
    }
    const taskId = handle.taskId;
    this.taskId = taskId;
    this.traces.byTask.set(taskId, this);
    const metrics = handle.metrics;
    const endedAlready = handle.settled && metrics !== undefined;
    if (!endedAlready) {
      // Its end is listened for first: whatever of the tracer or the meter throws below, the span ends.
      handle.on('settled', (done) => this.settled(done));
      handle.on('status', (_metrics, task) => this.status(task));
      handle.on('progress', (_metrics, progress) => {
        const attributes: Attributes = { [TASK_ATTR.progress]: progress.progress };
        if (progress.total !== undefined) attributes[TASK_ATTR.progressTotal] = progress.total;
        this.event(EVENT.progress, attributes);
      });
      handle.on('expiring', (_metrics, expiry) => this.expiring(expiry.remainingMs));
      if (this.kit.options.recordResults) handle.on('completed', (done) => this.recordResult(done.result));
    }
    this.remember(taskId, this.scopes);
    this.track();
    if (this.kit.options.recordTaskIds)
      attempt('span.setAttribute()', () => this.span.setAttribute(TASK_ATTR.id, taskId));
    if (handle.task !== undefined) this.status(handle.task);
    // It ended before the handle was made (its end came with its creation).
    if (endedAlready) this.finish(outcomeOfError(metrics.error), metrics.error, metrics);
  }

  /** Counts the task in `mcp.client.task.active` (once counted, its end counts it out). */
  private track(): void {
    attempt(METRIC.tasksActive, () => {
      const instruments = this.kit.instruments;
      instruments.tasksActive.add(1, this.taskAttributes);
      this.countedIn = instruments;
    });
  }

  /**
   * A resumed task's handle: followed through the client's events, not the handle's (listening
   * to a handle observes it, and a resumed one is read only once its caller observes it).
   */
  private followResumed(handle: TaskHandle): void {
    this.track();
    const metrics = handle.metrics;
    if (handle.settled && metrics !== undefined) {
      this.finish(outcomeOfError(metrics.error), metrics.error, metrics);
      return;
    }
    if (this.taskId !== undefined) this.traces.resumed.follow(this.taskId, this);
  }

  /** The task is close to the end of its ttl. */
  expiring(remainingMs: number): void {
    const attributes = { [TASK_ATTR.expiresInMs]: Math.round(remainingMs) };
    this.event(EVENT.expiring, attributes);
  }

  /** The task ended (its `settled` event). */
  settled(done: Settlement): void {
    this.finish(done.outcome, done.error, done);
  }

  /** True until the call has its handle (a task, or a plain result). */
  get beforeHandle(): boolean {
    return !this.ended && this.taskId === undefined && !this.immediate;
  }

  failed(error: unknown): void {
    this.finish(outcomeOfError(error), error, undefined);
  }

  /** A status event for `task`. */
  status(task: Task): void {
    const attributes: Attributes = { [TASK_ATTR.status]: task.status };
    const message = task.statusMessage;
    if (message !== undefined && this.kit.options.recordStatusMessages)
      attributes[TASK_ATTR.statusMessage] = scrubbed(message, this.taskId);
    this.event(EVENT.status, attributes);
  }

  /**
   * Records a completed task's result (with `recordResults`). On 2025-11-25 the result's `_meta`
   * names its task (the related-task key, [R32]): its id is fingerprinted unless `recordTaskIds`.
   */
  recordResult(result: CallToolResult): void {
    const raw = json(result);
    const text = raw === undefined || this.kit.options.recordTaskIds ? raw : scrubbed(raw, this.taskId);
    if (text !== undefined && !this.spanEnded)
      attempt('span.setAttribute()', () => this.span.setAttribute(ATTR.result, text));
  }

  /**
   * Ends the call's span and records its metric points, once. Never throws: each step is guarded,
   * so that a span processor or a meter that throws leaves the others done (the span ended, the
   * task counted out) and rejects no promise.
   */
  private finish(
    outcome: TaskOutcomeKind,
    error: unknown,
    metrics: TaskMetrics | undefined,
    result?: CallToolResult,
  ): void {
    if (this.ended) return;
    this.ended = true;
    this.traces.open.delete(this);
    const taskId = this.taskId;
    if (taskId !== undefined) {
      if (this.traces.byTask.get(taskId) === this) this.traces.byTask.delete(taskId);
      if (this.resumed) this.traces.resumed.forget(taskId, this);
      for (const scope of this.scopes) this.kit.creators.ended(scope, taskId, outcome);
    }
    const points: Attributes = { ...this.taskAttributes, [TASK_ATTR.outcome]: outcome };
    const reading = isErrorOutcome(outcome) ? readingOf(this, error) : undefined;
    if (reading !== undefined) points[ATTR.errorType] = reading.type;
    attempt('the task span', () => annotate(this, outcome, error, reading, metrics, result));
    const counted = this.countedIn;
    if (counted !== undefined) attempt(METRIC.tasksActive, () => counted.tasksActive.add(-1, this.taskAttributes));
    const instruments = attempt('the meter', () => this.kit.instruments);
    if (metrics !== undefined && instruments !== undefined) {
      attempt(METRIC.taskPolls, () => instruments.taskPolls.record(metrics.polls, points));
      attempt(METRIC.taskNotifications, () => instruments.taskNotifications.record(metrics.notifications, points));
      attempt(METRIC.taskRetries, () => instruments.taskRetries.record(metrics.retries, points));
    }
    const seconds = metrics !== undefined ? metrics.durationMs / 1000 : (performance.now() - this.startedAt) / 1000;
    if (instruments !== undefined) attempt(METRIC.taskDuration, () => instruments.taskDuration.record(seconds, points));
    // Its requests and questions still in flight end first (the library gives up its own requests
    // as the task settles: only a background one, the last look or a cancel, is left to wait for,
    // and a request's wait is bounded by its timeout). A detached task's questions are not given
    // up: their callbacks run on, so the answer the task waits for is kept, and a person may never
    // answer. Waiting for them would keep the span in memory and unexported, maybe for ever, and a
    // task resumed later would link to a span never exported. So the span ends now, and each of
    // them is cut first: its span ends with it, marked, and its answer, if one comes, is a span of
    // its own linked to this one (input.ts). Cutting at once rather than after a bound (a timeout)
    // keeps "no child ends after its parent, every span ends" with no timer: the cut is needed at
    // the bound anyway.
    // A `tools/call` still unanswered (the call given up before its task was created: the library
    // waits for the answer in the background, to cancel the task it may bring) is cut likewise,
    // whatever the outcome: its span ends with the call's, marked abandoned.
    // One already given up, whose cancel (`notifications/cancelled`, a POST that needs a round
    // trip on Streamable HTTP) is still being written, is not ended by its cut: its span ends once
    // that write is done or failed (a write, no wait for an answer), and its hold is kept until
    // then, so that the call's span ends after it and after the notification's span under it. (A
    // cut that throws lets go of its hold.)
    for (const held of this.inFlight) {
      if (held.cut === undefined || (!held.always && outcome !== 'detached')) continue;
      const ended = attempt('a request or question in flight', held.cut);
      if (ended !== false) this.inFlight.delete(held);
    }
    this.endSpan();
  }
}
