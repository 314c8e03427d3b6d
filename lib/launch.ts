/**
 * Starting one call: negotiate task mode for the tool ([R6]-[R9]), send `tools/call` (task-augmented
 * or plain), race it against the caller's signal and deadline, and arm the deadline and abort that
 * stop the task later ([R24]: only ever with `tasks/cancel`).
 */
import { armStops, stopError, type StopScope } from './stops.js';
import type { TaskEngine } from './engine/engine.js';
import type { TaskRecord } from './engine/record.js';
import { TaskNotSupportedError, TaskProtocolError, TaskRpcError } from './errors.js';
import type { TaskHandle } from './handle.js';
import { DEFAULT_PLAIN_CALL_TIMEOUT_MS, type ResolvedCallOptions } from './options.js';
import type { ToolCatalog } from './tool-catalog.js';
import type { Task } from './types.js';
import { Stopped, childController, raceStop } from './util/race.js';
import type { StartOutcome, TaskSupport } from './wire/wire.js';

/** The release of a slot that holds nothing (no concurrency limit). */
export const NO_RELEASE = (): void => {};

/** JSON-RPC codes a server may use to refuse task augmentation for a tool ([A1], [V3]). */
const AUGMENTATION_REFUSED: ReadonlySet<number> = new Set([-32600, -32601]);

/** What a launch needs from its client. */
export interface LaunchContext {
  readonly engine: TaskEngine;
  readonly catalog: ToolCatalog;
  /** Wraps a tracked record in a handle and registers it. */
  adopt(record: TaskRecord, call: ResolvedCallOptions, immediateResponse: string | undefined): TaskHandle;
  /** Wraps a plain result in an immediate handle. */
  immediate(name: string, result: StartOutcome & { kind: 'immediate' }): TaskHandle;
  /**
   * Takes a concurrency slot, waiting in line if needed; rejects with a `Stopped` when the signal
   * or deadline wins, or with `TaskQueueFullError`. The returned function frees the slot.
   */
  slot(toolName: string, signal: AbortSignal | undefined, deadlineAt: number | undefined): Promise<() => void>;
  /** Resolves once connected (waiting for a `reconnect` factory while the connection is lost). */
  ready(): Promise<void>;
  /** Aborted when the client closes: the call then rejects at once with `TaskClosedError`. */
  readonly closed: AbortSignal;
}

/** One call being started. */
export class Launch implements StopScope {
  readonly startedAt: number;
  private readonly deadlineAt: number | undefined;

  constructor(
    private readonly context: LaunchContext,
    readonly toolName: string,
    private readonly args: Record<string, unknown>,
    readonly call: ResolvedCallOptions,
  ) {
    this.startedAt = context.engine.config.clock.now();
    this.deadlineAt = call.timeoutMs === undefined ? undefined : this.startedAt + call.timeoutMs;
  }

  get engine(): TaskEngine {
    return this.context.engine;
  }

  private get name(): string {
    return this.toolName;
  }

  /** Runs the call up to the server's answer. */
  async run(): Promise<TaskHandle> {
    const { call } = this;
    if (call.signal?.aborted) throw stopError(this, { kind: 'abort', reason: call.signal.reason }, 'no-task');
    let release: (() => void) | undefined;
    try {
      // Waiting for a slot counts against the deadline.
      release = await this.context.slot(this.toolName, call.signal, this.deadlineAt);
      // A call made while the connection is lost waits for the reconnection (within its deadline).
      await this.race(this.context.ready());
      const handle = await this.negotiateAndStart();
      const record = handle.kind === 'task' ? this.engine.get(handle.taskId ?? '') : undefined;
      if (record === undefined || release === NO_RELEASE) release();
      else record.onSettled(release);
      return handle;
    } catch (error) {
      release?.();
      if (error instanceof Stopped) throw stopError(this, error.stop, 'no-task');
      throw error;
    }
  }

  /** Negotiates task mode for the tool ([R6]-[R9]) and starts the call accordingly. */
  private async negotiateAndStart(): Promise<TaskHandle> {
    const { call, name } = this;
    const caps = this.engine.wire.capabilities();
    const support = caps.toolsCall ? await this.race(this.context.catalog.taskSupport(name)) : undefined;
    if (caps.toolsCall && (support === 'optional' || support === 'required')) return this.startTask(support);
    if (call.requireTask) {
      throw new TaskNotSupportedError(
        !caps.toolsCall
          ? 'The server does not support task-augmented tools/call (no tasks.requests.tools.call capability)'
          : support === undefined
            ? `Tool "${name}" is not listed by the server (tools/list), so it cannot be called as a task`
            : `Tool "${name}" does not support task mode (execution.taskSupport is ${support})`,
        { feature: caps.toolsCall ? 'tool' : 'tasks', toolName: name },
      );
    }
    return this.callPlain();
  }

  private race<T>(promise: Promise<T>): Promise<T> {
    return raceStop(promise, this.engine.scheduler, this.call.signal, this.deadlineAt, this.context.closed);
  }

  /** Time left before the deadline, or the plain-call default. */
  private budget(): number {
    return this.deadlineAt === undefined
      ? DEFAULT_PLAIN_CALL_TIMEOUT_MS
      : Math.max(1, this.deadlineAt - this.engine.config.clock.now());
  }

  private async startTask(support: TaskSupport): Promise<TaskHandle> {
    const { engine, call, name } = this;
    const endCreate = engine.beginCreate();
    // [R24]: a task-augmented request is never aborted by us, so the SDK request gets no signal.
    // Its own timeout only covers a server that never answers; the SDK then sends
    // notifications/cancelled, the one way left while no task id is known ([A5]).
    const request = engine.wire.callTool(
      { name, arguments: this.args, task: { ttl: call.ttlMs }, meta: call.meta, progressToken: call.progressToken },
      { timeoutMs: this.budget() + call.requestTimeoutMs },
    );
    let outcome: StartOutcome;
    try {
      outcome = await this.race(request);
    } catch (error) {
      if (error instanceof Stopped) {
        // Abandoned before the answer: if a task gets created anyway, cancel it once its id is
        // known, unless the caller opted out of remote cancels for this kind of stop (a close
        // always cancels it).
        const kind = error.stop.kind;
        const cancel = kind === 'closed' || (kind === 'abort' ? call.cancelOnAbort : call.cancelOnTimeout);
        request.then(
          (late) => {
            endCreate();
            if (late.kind === 'task' && cancel) this.cancelOrphan(late.task);
          },
          () => endCreate(),
        );
        throw stopError(this, error.stop, cancel ? 'pending' : 'disabled');
      }
      endCreate();
      if (
        error instanceof TaskRpcError &&
        AUGMENTATION_REFUSED.has(error.code) &&
        support === 'optional' &&
        !call.requireTask
      ) {
        return this.callPlain();
      }
      throw error;
    }
    try {
      return this.accept(outcome);
    } finally {
      endCreate();
    }
  }

  private async callPlain(): Promise<TaskHandle> {
    // A plain request is cancelled the normal way (notifications/cancelled), through a child
    // signal so the caller's signal keeps no SDK listener afterwards ([S4]).
    const child = childController(this.call.signal);
    try {
      const request = this.engine.wire.callTool(
        { name: this.name, arguments: this.args, meta: this.call.meta, progressToken: this.call.progressToken },
        { timeoutMs: this.budget(), signal: child.signal },
      );
      return this.accept(await this.race(request));
    } catch (error) {
      // The SDK reports its own request timeout as -32001; with a deadline that is our timeout.
      if (error instanceof TaskRpcError && error.code === -32001 && this.deadlineAt !== undefined) {
        throw stopError(this, { kind: 'timeout' }, 'no-task');
      }
      throw error;
    } finally {
      child.release();
    }
  }

  /** Turns the server's answer into a handle; a task (even one not asked for) is tracked. */
  private accept(outcome: StartOutcome): TaskHandle {
    if (outcome.kind === 'immediate') return this.context.immediate(this.name, outcome);
    if (this.context.closed.aborted) {
      // Created after close() began: never tracked, cancelled once.
      this.cancelOrphan(outcome.task);
      throw stopError(this, { kind: 'closed' }, this.engine.wire.capabilities().cancel ? 'unknown' : 'not-supported');
    }
    if (this.engine.get(outcome.task.taskId) !== undefined) {
      // [V4]: task ids are unique; a reused one must not merge two calls into one task.
      throw new TaskProtocolError('Malformed tools/call reply from server: the task id is already in use', {
        method: 'tools/call',
        task: outcome.task,
        toolName: this.name,
      });
    }
    const record = this.engine.track(outcome.task, this.name, {
      startedAt: this.startedAt,
      requestTimeoutMs: this.call.requestTimeoutMs,
    });
    const handle = this.context.adopt(record, this.call, outcome.immediateResponse);
    armStops(this, record);
    return handle;
  }

  /** Cancels a task created after its caller gave up (best effort; never throws). */
  private cancelOrphan(task: Task): void {
    const wire = this.engine.wire;
    if (!wire.capabilities().cancel) return;
    wire
      .cancelTask(task.taskId, { timeoutMs: this.call.requestTimeoutMs })
      .catch((error: unknown) => this.engine.report(error, undefined));
  }
}
