/**
 * How the engine runs its requests: one attempt in a task's request group (stopped when tracking
 * stops), retries of transient failures (waiting out a lost connection without using attempts
 * up), and detached requests that outlive a task's tracking (a `tasks/cancel` after the handle
 * settled), all stopped when the client closes; and the options a task's request goes out with.
 */
import { TaskClosedError } from '../errors.js';
import type { ErrorClass, InputAnswers, WireRequestOptions } from '../wire/wire.js';
import { EXEMPLAR_RECORD, type TaskRecord } from './record.js';
import { TRACKING_STOPPED } from './record-extras.js';
import { retryAfter, type RetryContext } from './retry.js';
import { Scheduler, systemClock } from '../util/scheduler.js';
import { keepShape } from '../util/shapes.js';
import type { CallInstrument, RetryPolicy } from '../api/index.js';
import type { EngineConfig, RequestScope } from './types.js';

/** A retry policy that never retries. */
const NO_RETRIES: RetryPolicy = { retries: 0, minDelayMs: 0, maxDelayMs: 0, factor: 1, jitter: 0, maxElapsedMs: 0 };

/** What a request of the client (not of a task) rejects with once the client is closed. */
export function closedError(): TaskClosedError {
  return new TaskClosedError('The TaskClient was closed');
}

/**
 * The options of one request of a task: its timeout on the engine's timers, and the task's record
 * as the request's group, so stopping the task stops it without an `AbortSignal` per request. A
 * wire that reads `signal` instead gets the record's own signal, made on first read, which aborts
 * with the group.
 */
export class TaskRequestOptions implements WireRequestOptions {
  constructor(
    readonly timeoutMs: number,
    readonly timers: Scheduler,
    readonly group: TaskRecord,
    readonly weak: boolean | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.group.lifeSignal;
  }

  /** What watches the task's requests (instrumentation), if anything does. */
  get instrument(): CallInstrument | undefined {
    return this.group.instrument;
  }

  /** The input that callbacks answer for the task's call, if it has callbacks of its own ([E35]). */
  get input(): InputAnswers | undefined {
    return this.group.input;
  }
}

// Its hidden class outlives an idle spell (util/shapes.ts).
keepShape(new TaskRequestOptions(0, new Scheduler(systemClock), EXEMPLAR_RECORD, undefined));

/** What {@link Requests} needs of the engine. */
export interface RequestHost {
  readonly config: EngineConfig;
  readonly scheduler: Scheduler;
  isPaused(): boolean;
  whenReconnected(signal: AbortSignal): Promise<void>;
  classify(error: unknown): ErrorClass;
  report(error: unknown, record: TaskRecord | undefined): void;
  /** A request found the server's session gone (an HTTP server restarted). */
  sessionLost(): void;
}

/** The engine's request runner. */
export class Requests {
  /** Aborted on shutdown: stops retries of requests that belong to no task. */
  private readonly life = new AbortController();
  private readonly detached = new Set<AbortController>();
  /** True for a failure worth another attempt. */
  readonly retryable: (error: unknown) => boolean;

  constructor(private readonly host: RequestHost) {
    this.retryable = (error) => {
      const kind = host.classify(error);
      return kind === 'transient' || kind === 'timeout' || kind === 'session';
    };
  }

  /** Aborted when the engine shuts down (the client closed). */
  get lifeSignal(): AbortSignal {
    return this.life.signal;
  }

  /**
   * Runs one request for `record` in the record's request group: stopped (and rejecting with
   * {@link TRACKING_STOPPED}) if tracking stops meanwhile.
   */
  attempt<T>(record: TaskRecord, run: (scope: RequestScope) => Promise<T>): Promise<T> {
    return run(record).then(undefined, (error: unknown) => {
      throw this.attemptFailed(record, error);
    });
  }

  /**
   * Runs a request with retries of transient failures; while the connection is lost, retries wait
   * for it to come back without using up attempts. With a record, attempts stop when tracking
   * stops; without one, when the engine shuts down. The first attempt runs directly: the retry
   * machinery is set up only after it failed.
   */
  retrying<T>(record: TaskRecord | undefined, run: (scope: RequestScope) => Promise<T>): Promise<T> {
    if (record === undefined) {
      return this.attemptDetached(run).then(undefined, (error: unknown) =>
        retryAfter(error, () => this.attemptDetached(run), this.context(undefined, false)),
      );
    }
    return run(record).then(undefined, (error: unknown) => {
      const failure = this.attemptFailed(record, error);
      if (failure === TRACKING_STOPPED) throw failure;
      return retryAfter(failure, () => this.attempt(record, run), this.context(record, false));
    });
  }

  /**
   * Sends a request about `record` that must outlive its tracking (a `tasks/cancel` still has to
   * reach the server after the handle settled): it is not aborted when the record settles, and
   * its retries (none with `once`) go on while the client is open, on weak timers that never keep
   * the process alive.
   */
  background<T>(record: TaskRecord, run: (scope: RequestScope) => Promise<T>, once = false): Promise<T> {
    return this.attemptDetached(run).then(undefined, (error: unknown) =>
      retryAfter(error, () => this.attemptDetached(run), this.context(record, true, once)),
    );
  }

  /** Stops every request that belongs to no task, and their retries. */
  shutdown(): void {
    this.life.abort(closedError());
    for (const controller of this.detached) controller.abort();
    this.detached.clear();
  }

  /** The error a failed attempt for `record` rejects with (the poll path reads it directly). */
  attemptFailed(record: TaskRecord, error: unknown): unknown {
    // Stopped because tracking stopped: the library's own doing, never retried or reported.
    if (record.stopped) return TRACKING_STOPPED;
    this.noticeSessionLoss(error);
    return error;
  }

  /**
   * How the retries of a request for `record` (or for no task) go on. A background request is
   * stopped only by the client's close, waits on weak timers, and reports its failures only while
   * its task is still tracked.
   */
  private context(record: TaskRecord | undefined, background: boolean, once = false): RetryContext {
    const { config: c, scheduler } = this.host;
    const signal = (): AbortSignal => (background || record === undefined ? this.life.signal : record.lifeSignal);
    return {
      retryable: this.retryable,
      policy: once ? NO_RETRIES : c.retry,
      scheduler,
      random: c.random,
      now: () => c.clock.now(),
      signal,
      ...(background
        ? { weak: true }
        : { pause: { isPaused: () => this.host.isPaused(), whenUnpaused: () => this.host.whenReconnected(signal()) } }),
      onRetry: (error) => {
        record?.retried();
        if (!background || record?.settlement === undefined) this.host.report(error, record);
      },
    };
  }

  private attemptDetached<T>(run: (scope: RequestScope) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.detached.add(controller);
    return run(controller.signal).then(
      (value) => {
        this.detached.delete(controller);
        return value;
      },
      (error: unknown) => {
        this.detached.delete(controller);
        if (controller.signal.aborted) throw closedError();
        this.noticeSessionLoss(error);
        throw error;
      },
    );
  }

  /** A lost session is a lost connection, as if the transport had closed: retries then wait for the reconnection. */
  private noticeSessionLoss(error: unknown): void {
    if (!this.host.isPaused() && this.host.classify(error) === 'session') this.host.sessionLost();
  }
}
