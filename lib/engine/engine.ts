/**
 * The task engine: observation, scheduling and settlement for every task of one client. It merges
 * pushed snapshots with polls, decides when to poll and when to fetch the final payload, and
 * settles each {@link TaskRecord}. It speaks to the server only through a {@link TaskWire} and
 * knows nothing of any wire format.
 */
import {
  TaskCancelledError,
  TaskError,
  TaskExpiredError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
} from '../errors.js';
import { failedError } from '../failure.js';
import { isTerminalStatus, type Clock, type Task } from '../types.js';
import type { TaskWire } from '../wire/wire.js';
import { TaskRecord, type Settlement } from './record.js';
import { isTransient, withRetry } from './retry.js';
import { Scheduler } from './scheduler.js';
import { pollDelay, type PollTiming, type RetryPolicy } from './timing.js';

/** The -32602 "invalid params" code: for `tasks/*` it means unknown or expired task ([V26]). */
const INVALID_PARAMS = -32602;
/** Longest timer delay; used as "no timeout" for a blocking `tasks/result`. */
const NO_TIMEOUT = 2_147_483_647;
/** Server/client clock skew tolerated when telling expiry from early vanishing. */
const EXPIRY_SKEW_MS = 1_000;

/** Engine settings (already validated and defaulted by the client). */
export interface EngineConfig extends PollTiming {
  readonly clock: Clock;
  readonly random: () => number;
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;
  /** Consecutive non-transient poll failures (or malformed replies) before the task is failed. */
  readonly maxPollFailures: number;
  /** Notifications kept for tasks whose `CreateTaskResult` has not arrived yet. */
  readonly maxEarlyNotifications: number;
}

/** Where a snapshot came from. */
export type SnapshotSource = 'create' | 'poll' | 'notification' | 'cancel' | 'result';

/** What the engine reports to its owner. */
export interface EngineEvents {
  /** A record accepted a changed snapshot; `previous` is the one it replaced. */
  status(record: TaskRecord, source: SnapshotSource, previous: Task): void;
  /** A record settled (it is no longer tracked). */
  settled(record: TaskRecord): void;
  /** Something went wrong that did not (yet) fail a task. */
  problem(error: TaskError, record: TaskRecord | undefined): void;
}

/** Options of {@link TaskEngine.track}. */
export interface TrackOptions {
  /** When the call began (for elapsed times). @default now */
  readonly startedAt?: number | undefined;
  /** Timeout of each short request for this task. @default the engine's `requestTimeoutMs` */
  readonly requestTimeoutMs?: number | undefined;
}

/** Why the engine stopped tracking a record before it settled on its own. */
export interface StopIntent {
  /** Keep the snapshot stream open until the stop settles (so it can end with the stop's error). */
  readonly holdStream: boolean;
}

/** Observation, scheduling and state for all tasks of one client. */
export class TaskEngine {
  readonly scheduler: Scheduler;
  private readonly records = new Map<string, TaskRecord>();
  private readonly early = new Map<string, Task[]>();
  private earlyCount = 0;
  private creating = 0;
  private readonly stopping = new WeakMap<TaskRecord, StopIntent>();
  /** Aborted on shutdown: stops retries of requests that belong to no task. */
  private readonly life = new AbortController();
  private readonly detachedInflight = new Set<AbortController>();

  constructor(
    private wireRef: TaskWire,
    readonly config: EngineConfig,
    private readonly events: EngineEvents,
  ) {
    this.scheduler = new Scheduler(config.clock, (error) => this.report(error, undefined));
  }

  /** The wire in use. */
  get wire(): TaskWire {
    return this.wireRef;
  }

  /** Number of tasks being tracked. */
  get size(): number {
    return this.records.size;
  }

  /** The records being tracked. */
  tracked(): IterableIterator<TaskRecord> {
    return this.records.values();
  }

  /** The tracked record for `taskId`, if any. */
  get(taskId: string): TaskRecord | undefined {
    return this.records.get(taskId);
  }

  /**
   * Marks a task creation as under way, so notifications for not-yet-known tasks are kept until
   * its `CreateTaskResult` arrives (they can overtake it over stdio). Call the returned function
   * when the creation settled.
   */
  beginCreate(): () => void {
    this.creating += 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.creating -= 1;
      if (this.creating === 0) {
        this.early.clear();
        this.earlyCount = 0;
      }
    };
  }

  /**
   * Starts tracking `task`. Notifications that arrived before it are applied, and the first poll
   * waits one poll interval (the spec leaves it open, [A16]; polling at once wastes a request).
   */
  track(task: Task, toolName: string, options: TrackOptions = {}): TaskRecord {
    const existing = this.records.get(task.taskId);
    if (existing !== undefined) {
      this.observe(existing, task, 'create');
      return existing;
    }
    const record = new TaskRecord(
      task,
      toolName,
      options.startedAt ?? this.config.clock.now(),
      options.requestTimeoutMs ?? this.config.requestTimeoutMs,
    );
    this.records.set(task.taskId, record);
    const queued = this.early.get(task.taskId);
    if (queued !== undefined) {
      this.early.delete(task.taskId);
      this.earlyCount -= queued.length;
      for (const snapshot of queued) this.observe(record, snapshot, 'notification');
    }
    record.nextPollAt = this.config.clock.now() + this.delay(record);
    this.react(record);
    this.ensurePoll(record);
    return record;
  }

  /** Handles a pushed snapshot (`notifications/tasks/status`). Unknown tasks are ignored. */
  push(task: Task): void {
    const record = this.records.get(task.taskId);
    if (record !== undefined) {
      record.notifications += 1;
      this.observe(record, task, 'notification');
      return;
    }
    // mcp-go broadcasts every task to every session: keep unknown ids only while a creation is
    // under way, and only a bounded number of them.
    if (this.creating === 0) return;
    if (this.earlyCount >= this.config.maxEarlyNotifications) {
      const oldest = this.early.keys().next().value;
      if (oldest !== undefined) {
        this.earlyCount -= this.early.get(oldest)?.length ?? 0;
        this.early.delete(oldest);
      }
    }
    const list = this.early.get(task.taskId);
    if (list === undefined) this.early.set(task.taskId, [task]);
    else list.push(task);
    this.earlyCount += 1;
  }

  /** Offers a snapshot to a record and reacts to what changed. */
  observe(record: TaskRecord, task: Task, source: SnapshotSource): void {
    if (record.settlement !== undefined) return;
    const previous = record.task;
    const verdict = record.apply(task, this.stopping.get(record)?.holdStream ?? false);
    if (verdict === 'stale') return;
    if (verdict === 'after-terminal') {
      if (!isTerminalStatus(task.status)) {
        this.report(
          new TaskProtocolError(`Server reported "${task.status}" after terminal "${record.task.status}"; ignored`, {
            method: source === 'notification' ? 'notifications/tasks/status' : 'tasks/get',
            task: record.task,
            toolName: record.toolName,
          }),
          record,
        );
      }
      return;
    }
    // Any current snapshot is a fresh observation: the next poll moves a full interval away.
    record.nextPollAt = this.config.clock.now() + this.delay(record);
    if (verdict === 'changed') this.events.status(record, source, previous);
    this.react(record);
  }

  private delay(record: TaskRecord): number {
    const c = this.config;
    return pollDelay(record.task, record.hintlessPolls, record.failedPolls, c, c.retry, c.random);
  }

  /** Decides what a record needs after its snapshot changed. */
  private react(record: TaskRecord): void {
    if (record.settlement !== undefined) return;
    const status = record.task.status;
    if (status === 'cancelled') {
      this.scheduler.cancel(record.pollTimer);
      // A stop in progress (timeout, abort) settles with its own error.
      if (!this.stopping.has(record)) this.finish(record);
      return;
    }
    if (isTerminalStatus(status)) {
      this.scheduler.cancel(record.pollTimer);
      if (record.outcome !== undefined) this.finish(record);
      else this.fetchOutcome(record);
      return;
    }
    // [R29]: on input_required, call tasks/result so queued input requests can be delivered;
    // one request at a time (inspector#1174), and polling goes on meanwhile ([R15]).
    if (status === 'input_required' && this.wireRef.inputViaResult) this.fetchOutcome(record);
    this.ensurePoll(record);
  }

  /** Makes sure a poll is scheduled for a live, non-terminal record. */
  ensurePoll(record: TaskRecord): void {
    if (record.settlement !== undefined || record.terminal || this.stopping.has(record) || this.paused) return;
    const timer = record.pollTimer;
    if (timer?.live) {
      if (timer.at <= record.nextPollAt) return;
      this.scheduler.cancel(timer);
    }
    record.pollTimer = this.scheduler.schedule(record.nextPollAt, () => {
      record.pollTimer = undefined;
      // Notifications push nextPollAt back without touching the heap; re-arm if so.
      if (this.config.clock.now() < record.nextPollAt) this.ensurePoll(record);
      else this.poll(record);
    });
  }

  private poll(record: TaskRecord): void {
    if (record.pollInFlight || record.settlement !== undefined || record.terminal || this.paused) return;
    record.pollInFlight = true;
    if (record.task.pollInterval === undefined) record.hintlessPolls += 1;
    record.nextPollAt = this.config.clock.now() + this.delay(record);
    this.attempt(record, (signal) => this.readTask(record, signal)).then(
      (task) => {
        record.pollInFlight = false;
        record.failedPolls = 0;
        this.observe(record, task, 'poll');
        this.ensurePoll(record);
      },
      (error: unknown) => {
        record.pollInFlight = false;
        this.pollFailed(record, error);
      },
    );
  }

  private pollFailed(record: TaskRecord, error: unknown): void {
    if (record.settlement !== undefined) return;
    if (isNotFound(error)) {
      this.vanished(record, error);
      return;
    }
    record.failedPolls += 1;
    const wrapped = asTaskError(error, record);
    this.report(wrapped, record);
    // A poll that times out is simply retried at the next tick; only repeated hard failures
    // (a server that cannot serve tasks/get, or keeps sending garbage) fail the task.
    if (!isTransient(error) && record.failedPolls >= this.config.maxPollFailures) {
      this.settle(record, { ok: false, error: wrapped });
      return;
    }
    record.nextPollAt = this.config.clock.now() + this.delay(record);
    this.ensurePoll(record);
  }

  /** Runs one request for `record` with its own abort controller, aborted if tracking stops. */
  attempt<T>(record: TaskRecord, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    record.inflight.add(controller);
    return run(controller.signal).finally(() => {
      record.inflight.delete(controller);
    });
  }

  /**
   * Runs a request with retries of transient failures. With a record, its attempts are aborted
   * when tracking stops; without one, when the engine shuts down.
   */
  retrying<T>(record: TaskRecord | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const c = this.config;
    return withRetry(() => (record === undefined ? this.attemptDetached(run) : this.attempt(record, run)), {
      policy: c.retry,
      scheduler: this.scheduler,
      random: c.random,
      now: () => c.clock.now(),
      signal: record === undefined ? this.life.signal : record.lifeSignal,
      onRetry: (error) => {
        if (record !== undefined) record.retries += 1;
        this.report(asTaskError(error, record), record);
      },
    });
  }

  private attemptDetached<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.detachedInflight.add(controller);
    return run(controller.signal).finally(() => this.detachedInflight.delete(controller));
  }

  /** Reads a task (`tasks/get`) for `record`, counting the request in its metrics. */
  readTask(record: TaskRecord, signal: AbortSignal): Promise<Task> {
    record.polls += 1;
    return this.wireRef.getTask(record.taskId, { timeoutMs: record.requestTimeoutMs, signal });
  }

  /** Fetches the final payload once (`tasks/result`), then settles. */
  private fetchOutcome(record: TaskRecord): void {
    if (record.outcome !== undefined || record.outcomeInFlight || record.settlement !== undefined) return;
    record.outcomeInFlight = true;
    // While the task runs, tasks/result blocks until it ends ([V16]): no request timeout then;
    // the deadline, if any, stops it. For a terminal task it answers at once.
    const timeoutMs = record.terminal ? record.requestTimeoutMs : NO_TIMEOUT;
    this.retrying(record, (signal) => this.wireRef.getOutcome(record.taskId, { timeoutMs, signal })).then(
      (outcome) => {
        record.outcomeInFlight = false;
        if (record.settlement !== undefined) return;
        record.outcome = outcome;
        if (record.terminal) this.finish(record);
        else void this.confirmTerminal(record);
      },
      (error: unknown) => {
        record.outcomeInFlight = false;
        if (record.settlement !== undefined) return;
        if (isNotFound(error)) this.vanished(record, error);
        else if (record.terminal || error instanceof TaskProtocolError) {
          this.settle(record, { ok: false, error: asTaskError(error, record) });
        } else {
          // Waiting for input failed (e.g. the connection dropped); polling goes on and the next
          // input_required observation asks again.
          this.report(asTaskError(error, record), record);
          this.ensurePoll(record);
        }
      },
    );
  }

  /**
   * The payload arrived while the snapshot was not terminal (the input_required path): read the
   * real terminal snapshot once, or infer it from the payload if the read fails.
   */
  private async confirmTerminal(record: TaskRecord): Promise<void> {
    let task: Task | undefined;
    try {
      task = await this.retrying(record, (signal) => this.readTask(record, signal));
    } catch (error) {
      this.report(asTaskError(error, record), record);
    }
    if (record.settlement !== undefined) return;
    if (task !== undefined) this.observe(record, task, 'result');
    if (record.settlement !== undefined || record.terminal) return;
    const outcome = record.outcome;
    const failed = outcome?.kind === 'error' || outcome?.result.isError === true;
    this.observe(
      record,
      {
        ...record.task,
        status: failed ? 'failed' : 'completed',
        lastUpdatedAt: new Date(this.config.clock.now()).toISOString(),
      },
      'result',
    );
  }

  /** Settles a terminal record from its status and payload. */
  private finish(record: TaskRecord): void {
    const task = record.task;
    const common = { task, toolName: record.toolName };
    if (task.status === 'cancelled') {
      const reason = task.statusMessage === undefined ? '' : `: ${task.statusMessage}`;
      this.settle(record, {
        ok: false,
        error: new TaskCancelledError(`Task for tool "${record.toolName}" was cancelled${reason}`, common),
      });
      return;
    }
    const outcome = record.outcome;
    if (outcome === undefined) return;
    // [V18]: isError counts as failed even if a server calls the task completed.
    if (outcome.kind === 'result' && task.status === 'completed' && outcome.result.isError !== true) {
      this.settle(record, { ok: true, result: outcome.result });
      return;
    }
    const payload = outcome.kind === 'result' ? { result: outcome.result } : { rpcError: outcome.error };
    this.settle(record, { ok: false, error: failedError(record.toolName, task, payload) });
  }

  /** The server no longer knows the task ([V11], [V12], D9, D12). */
  vanished(record: TaskRecord, error: unknown): void {
    const task = record.task;
    const created = Date.parse(task.createdAt);
    const common = { task, toolName: record.toolName, cause: error };
    const expired =
      task.ttl !== null && Number.isFinite(created) && this.config.clock.now() + EXPIRY_SKEW_MS >= created + task.ttl;
    this.settle(record, {
      ok: false,
      error: expired
        ? new TaskExpiredError(`Task expired: its ttl of ${task.ttl} ms elapsed and the server dropped it`, common)
        : new TaskNotFoundError('The server no longer knows this task (it vanished before its ttl elapsed)', common),
    });
  }

  /**
   * Sends `tasks/cancel` and reports the truth ([V23]): when the server says the task is already
   * terminal (-32602), the task is re-read and that snapshot is returned.
   * @throws TaskNotSupportedError when the server did not declare `tasks.cancel` ([R5]).
   * @throws TaskRpcError when the cancel request fails.
   */
  cancel(record: TaskRecord): Promise<Task> {
    if (record.settlement !== undefined || record.terminal) return Promise.resolve(record.task);
    if (!this.wireRef.capabilities().cancel) {
      return Promise.reject(
        new TaskNotSupportedError('The server does not support tasks/cancel (no tasks.cancel capability)', {
          feature: 'cancel',
          task: record.task,
          toolName: record.toolName,
        }),
      );
    }
    record.cancelling ??= this.sendCancel(record).finally(() => {
      record.cancelling = undefined;
    });
    return record.cancelling;
  }

  private async sendCancel(record: TaskRecord): Promise<Task> {
    const timeoutMs = record.requestTimeoutMs;
    let task: Task;
    try {
      task = await this.retrying(record, (signal) => this.wireRef.cancelTask(record.taskId, { timeoutMs, signal }));
    } catch (error) {
      if (!isNotFound(error)) throw asTaskError(error, record);
      // Already terminal (or gone): read what really happened.
      try {
        task = await this.retrying(record, (signal) => this.readTask(record, signal));
      } catch (readError) {
        if (!isNotFound(readError)) throw asTaskError(readError, record);
        this.vanished(record, readError);
        return record.task;
      }
    }
    this.observe(record, task, 'cancel');
    return record.task;
  }

  /**
   * Stops the record's own progress (polls) while a local stop (timeout, abort, dispose) is under
   * way; `intent.holdStream` keeps iterators open so they can end with the stop's error.
   */
  beginStop(record: TaskRecord, intent: StopIntent): void {
    this.stopping.set(record, intent);
    this.scheduler.cancel(record.pollTimer);
  }

  /** True when a local stop is under way for `record`. */
  isStopping(record: TaskRecord): boolean {
    return this.stopping.has(record);
  }

  /**
   * Settles a record and stops tracking it: timers cancelled, requests in flight aborted.
   * @param streamError ends iterators with this error (local failures); `undefined` ends them normally.
   */
  settle(record: TaskRecord, settlement: Settlement, streamError?: TaskError): void {
    if (!record.settle(settlement, this.config.clock.now(), streamError)) return;
    this.scheduler.cancel(record.pollTimer);
    this.scheduler.cancel(record.deadlineTimer);
    record.pollTimer = undefined;
    record.deadlineTimer = undefined;
    record.abortAll();
    this.stopping.delete(record);
    if (this.records.get(record.taskId) === record) this.records.delete(record.taskId);
    this.events.settled(record);
  }

  /** True while observation is paused (connection lost). */
  paused = false;

  /** Reports a problem that did not fail a task. */
  report(error: unknown, record: TaskRecord | undefined): void {
    this.events.problem(asTaskError(error, record), record);
  }

  /** Stops every timer (records must be settled by the caller first). */
  shutdown(): void {
    this.life.abort();
    for (const controller of this.detachedInflight) controller.abort();
    this.detachedInflight.clear();
    this.scheduler.clear();
    this.early.clear();
    this.earlyCount = 0;
  }

  /** Swaps the wire (after a reconnection) and resumes observation of every record. */
  replaceWire(wire: TaskWire): void {
    this.wireRef = wire;
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof TaskRpcError && error.code === INVALID_PARAMS;
}

/** Wraps anything in a {@link TaskError} that names the record's task. */
export function asTaskError(error: unknown, record: TaskRecord | undefined): TaskError {
  if (error instanceof TaskError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TaskError(message, { task: record?.task, toolName: record?.toolName, cause: error });
}
