/**
 * The task engine: observation, scheduling and state for every task of one client. It merges
 * pushed snapshots with polls, decides when to poll, pauses while the connection is lost and
 * goes on once reconnected, and settles each {@link TaskRecord}. It speaks to the server only
 * through a {@link TaskWire} and knows nothing of any wire format. Tracking a task and merging its
 * snapshots live in `observe.ts`, the poll loop in `poll.ts`, fetching the final payload in
 * `payload.ts`, cancelling in `cancel.ts` and giving up in `give-up.ts`, a task's observation
 * beginning and its watch on the wire in `watch.ts`, what a reconnection does to the tasks in
 * `reconnect.ts`.
 */
import { TaskClosedError, asTaskError, type TaskError } from '../errors.js';
import type { Task } from '../types.js';
import type {
  ErrorClass,
  InputAnswers,
  TaskWire,
  WireFeatures,
  WireRequestOptions,
  WireSnapshot,
} from '../wire/wire.js';
import type { CallInstrument } from '../api/index.js';
import type { JsonObject } from '../types.js';
import { EarlyBuffer } from './early.js';
import { deliverAnswers, inputDismissed } from './input-delivery.js';
import { Pause } from './pause.js';
import { vanished } from './payload.js';
import { delay, ensurePoll, pollSink, pollTimerFired, react, readSoon, readTask, timerSendsRead } from './poll.js';
import { readAllAgain, wireReplaced } from './reconnect.js';
import { TaskRecord } from './record.js';
import { TRACKING_STOPPED, type Settlement } from './record-extras.js';
import { closedError, Requests, TaskRequestOptions } from './requests.js';
import { Scheduler } from '../util/scheduler.js';
import { TtlWatch } from './ttl-watch.js';
import type { EngineConfig, EngineEvents, RequestScope, SnapshotSource, StopIntent, TrackOptions } from './types.js';
import { armDeadline, deadlinePassed, type Deadline, type DeadlineEngine } from './deadline.js';
import { cancelTask } from './cancel.js';
import { giveUp, type GiveUp, type GiveUpResult } from './give-up.js';
import type { TaskView } from './task-view.js';
import { observe, push, track, type ObserveEngine } from './observe.js';
import { activate, unwatch } from './watch.js';

export type { EngineConfig, EngineEvents, RequestScope, SnapshotSource, StopIntent, TrackOptions } from './types.js';
export type { Deadline, GiveUp, GiveUpResult, TaskView };

/**
 * The record behind a view this engine handed out. Above the engine a task is only a read-only
 * {@link TaskView}; the engine's operations take it and act on the record (every view is one).
 */
function own(view: TaskView): TaskRecord {
  if (view instanceof TaskRecord) return view;
  throw new TypeError('Not the view of a tracked task');
}

/**
 * Observation, scheduling and state for all tasks of one client. Its operations on one task (what
 * the layer above asks for) take the task's read-only {@link TaskView}; its modules change the
 * task's record, each through its own event methods (see `record.ts`).
 */
export class TaskEngine implements ObserveEngine, DeadlineEngine {
  readonly scheduler: Scheduler;
  /** The tasks being tracked, by id. */
  readonly records = new Map<string, TaskRecord>();
  /** Notifications for tasks not yet known, kept while a creation is under way. */
  readonly early: EarlyBuffer;
  readonly requests: Requests;
  private readonly pauseState = new Pause();
  /** Bumped when the wire is replaced: answers to requests sent before belong to the old one. */
  generation = 0;
  private featureCache: WireFeatures | undefined = undefined;
  /** The ttl timers of the tasks (`ttl-watch.ts`). */
  readonly ttl: TtlWatch;

  constructor(
    private wireRef: TaskWire,
    readonly config: EngineConfig,
    readonly events: EngineEvents,
  ) {
    this.scheduler = new Scheduler(config.clock, (error) => this.report(error, undefined));
    this.requests = new Requests({
      config,
      scheduler: this.scheduler,
      isPaused: () => this.pauseState.paused,
      whenReconnected: (signal) => this.whenReconnected(signal),
      classify: (error) => this.classify(error),
      report: (error, record) => this.report(error, record),
      sessionLost: () => this.events.sessionLost(this.wireRef),
    });
    this.retryable = this.requests.retryable;
    this.early = new EarlyBuffer(config.maxEarlyNotifications, () => this.events.creationsSettled());
    this.ttl = new TtlWatch({
      config,
      scheduler: this.scheduler,
      features: () => this.features,
      isStopping: (record) => this.isStopping(record),
      expiring: (record, expiresAt) => this.events.expiring(record, expiresAt),
      readSoon: (record) => readSoon(this, record),
      expired: (record, cause) => vanished(this, record, cause),
    });
  }

  /** Aborted when the engine shuts down (the client closed). */
  get lifeSignal(): AbortSignal {
    return this.requests.lifeSignal;
  }

  /** The wire in use. */
  get wire(): TaskWire {
    return this.wireRef;
  }

  /** What the wire in use can do (read once per wire; {@link TaskEngine.refreshFeatures} re-reads). */
  get features(): WireFeatures {
    return (this.featureCache ??= this.wireRef.features());
  }

  /** Forgets the cached features (the wire learned capabilities, e.g. from a resume reference). */
  refreshFeatures(): void {
    this.featureCache = undefined;
  }

  /** What an error means, by the wire's reading; the library's own stops are `stopped`. */
  classify(error: unknown): ErrorClass {
    if (error === TRACKING_STOPPED || error instanceof TaskClosedError) return 'stopped';
    return this.wireRef.classify(error);
  }

  /** True for a failure worth another attempt. */
  readonly retryable: (error: unknown) => boolean;

  /**
   * Options of one request: its short timeout, on the engine's timers, stopped by `scope`: a
   * signal, or a task's record (all the task's requests stop when its tracking stops). A record's
   * requests are watched by its own instrument; others by `instrument`, when given. With
   * `quietTimeout`, the timeout tells the server nothing (a request that may create a task). A
   * record's requests declare the input its call answers; others `input`, when given ([E35]).
   */
  requestOptions(
    timeoutMs: number,
    scope?: RequestScope,
    weak?: boolean,
    instrument?: CallInstrument,
    quietTimeout = false,
    input?: InputAnswers,
  ): WireRequestOptions {
    if (scope instanceof TaskRecord) return new TaskRequestOptions(timeoutMs, this.scheduler, scope, weak);
    const options: WireRequestOptions =
      instrument === undefined
        ? { timeoutMs, timers: this.scheduler, signal: scope, weak, quietTimeout }
        : { timeoutMs, timers: this.scheduler, signal: scope, weak, quietTimeout, instrument };
    // [E35]: a call with callbacks of its own declares what they answer (the usual call has none).
    return input === undefined ? options : { ...options, input };
  }

  /** Number of tasks being tracked. */
  get size(): number {
    return this.records.size;
  }

  /** The tasks being tracked. */
  tracked(): IterableIterator<TaskView> {
    return this.records.values();
  }

  /** The tracked task `taskId`, if any. */
  get(taskId: string): TaskView | undefined {
    return this.records.get(taskId);
  }

  /**
   * Marks a task creation as under way, so notifications for not-yet-known tasks are kept until
   * its `CreateTaskResult` arrives. Each is ended by exactly one {@link TaskEngine.endCreate}.
   */
  beginCreate(): void {
    this.early.begin();
  }

  /** A task creation marked by {@link TaskEngine.beginCreate} settled. */
  endCreate(): void {
    this.early.end();
  }

  /** True while a task creation is under way (its `CreateTaskResult` may still be on its way). */
  get creating(): boolean {
    return this.early.busy;
  }

  /**
   * Starts tracking `task`. Notifications that arrived before it are applied, and the first poll
   * waits one poll interval (see `track` in `observe.ts`).
   */
  track(snapshot: WireSnapshot, toolName: string, options: TrackOptions = {}): TaskView {
    return track(this, snapshot, toolName, options);
  }

  /** Starts observing a provisional task (a resumed one): it is read at once (see `watch.ts`). */
  activate(view: TaskView): void {
    activate(this, own(view));
  }

  /** Handles a pushed snapshot (a status notification). Unknown tasks are ignored. */
  push(snapshot: WireSnapshot): void {
    push(this, snapshot);
  }

  /** Offers a snapshot to a record and reacts to what changed (see `observe.ts`). */
  observe(record: TaskRecord, snapshot: WireSnapshot, source: SnapshotSource): void {
    observe(this, record, snapshot, source);
  }

  /** The read the ttl backstop waited for ended, `answered` or failed (see `ttl-watch.ts`). */
  looked(record: TaskRecord, answered: boolean): void {
    this.ttl.looked(record, answered);
  }

  /** Delay before the next poll of a task. */
  pollDelay(view: TaskView): number {
    return delay(this, own(view));
  }

  /**
   * Sends answers to inline input requests of `record` by key ([E5]; a partial set is fine), and
   * keeps any the server did not get, to send again while polls still list the key ([E23]);
   * failures are reported. See `input-delivery.ts`.
   */
  deliverInput(view: TaskView, responses: Record<string, JsonObject>): void {
    deliverAnswers(this, own(view), responses);
  }

  /**
   * The prompt of the input request `key` was dismissed unanswered, the task having stopped listing
   * it: a later read that lists it again asks it again. See `input-delivery.ts`.
   */
  inputDismissed(view: TaskView, key: string): void {
    inputDismissed(own(view), key);
  }

  /** Decides what a record needs after its snapshot changed (or was confirmed); see `poll.ts`. */
  react(record: TaskRecord): void {
    react(this, record);
  }

  /** Makes sure a poll is scheduled for a live record that needs one (see `poll.ts`). */
  ensurePoll(record: TaskRecord): void {
    ensurePoll(this, record);
  }

  /** A record's poll timer fired (one function for every record: no closure per poll). */
  readonly pollDue = (record: TaskRecord): void => {
    // A ttl timer put off until now is armed, unless it can wait for the read this timer sends.
    const waits =
      record.ttlDeferred && timerSendsRead(this, record) && this.ttl.waitsForRead(record, record.requestTimeoutMs);
    if (!waits) this.ttl.catchUp(record);
    pollTimerFired(this, record);
    if (waits && !record.pollInFlight) this.ttl.catchUp(record);
  };

  /** Told of every poll's outcome, with its record (`poll.ts`). */
  readonly polls = pollSink(this);

  /** A read sent by a poll ended (answered and observed, or failed): see {@link TtlWatch.waitsForRead}. */
  readEnded(record: TaskRecord): void {
    if (record.settlement === undefined) this.ttl.catchUp(record);
  }

  /** Reads a task (`tasks/get`) for `record`, counting the request in its metrics. */
  readTask(record: TaskRecord, scope: RequestScope): Promise<WireSnapshot> {
    return readTask(this, record, scope);
  }

  /** Runs one request for `record` in its request group (see {@link Requests.attempt}). */
  attempt<T>(record: TaskRecord, run: (scope: RequestScope) => Promise<T>): Promise<T> {
    return this.requests.attempt(record, run);
  }

  /** Runs a request with retries of transient failures (see {@link Requests.retrying}). */
  retrying<T>(record: TaskRecord | undefined, run: (scope: RequestScope) => Promise<T>): Promise<T> {
    return this.requests.retrying(record, run);
  }

  /** Sends a request about `record` that outlives its tracking (see {@link Requests.background}). */
  background<T>(record: TaskRecord, run: (scope: RequestScope) => Promise<T>, once = false): Promise<T> {
    return this.requests.background(record, run, once);
  }

  /** Stops the record's polls while a local stop (timeout, abort, dispose) is under way. */
  beginStop(record: TaskRecord, intent: StopIntent): void {
    // The stop cancels the poll's timer: a ttl timer that waited for it is armed now.
    this.ttl.catchUp(record);
    record.stopBegan(intent.holdStream, intent.cancels);
    // A terminal task's timer slot holds the grace before its payload request: keep it.
    if (!record.terminal) this.scheduler.cancel(record.pollTimer);
    this.events.stopping(record, new Promise((resolve) => record.onSettled(resolve)));
  }

  /** True when a local stop is under way for `record`. */
  isStopping(record: TaskRecord): boolean {
    return record.stopping;
  }

  /**
   * Settles a record and stops tracking it: timers cancelled, requests in flight aborted.
   * @param streamError - ends iterators with this error (local failures); `undefined` ends them normally.
   */
  settle(record: TaskRecord, settlement: Settlement, streamError?: TaskError): void {
    if (!record.settled(settlement, this.config.clock.now(), streamError)) return;
    this.scheduler.cancel(record.pollTimer);
    this.scheduler.cancel(record.deadlineTimer);
    this.scheduler.cancel(record.ttlTimer);
    unwatch(this, record);
    record.trackingEnded();
    if (this.records.get(record.taskId) === record) this.records.delete(record.taskId);
    this.events.settled(record);
  }

  /** True while the connection is lost: nothing is polled, retries wait. */
  get paused(): boolean {
    return this.pauseState.paused;
  }

  /** The connection is lost: stop polling until {@link TaskEngine.reconnected}. */
  pause(): void {
    this.pauseState.pause();
  }

  /**
   * The connection is back (possibly over a new `wire`): every unsettled record is read again at
   * once, and waiting retries go on.
   */
  reconnected(wire: TaskWire = this.wireRef): void {
    // Requests still open on an old connection stay there (a server may tie pending input to
    // them); if they fail after the switch, they are sent again over the new one.
    if (wire !== this.wireRef) {
      this.generation += 1;
      this.featureCache = undefined;
      wireReplaced(this, this.records.values(), wire);
    }
    this.wireRef = wire;
    if (this.pauseState.unpause()) readAllAgain(this, this.records.values());
  }

  /** Resolves when the connection is back; rejects with the signal's reason if it aborts first. */
  whenReconnected(signal: AbortSignal): Promise<void> {
    return this.pauseState.whenUnpaused(signal);
  }

  /**
   * Stops tracking a task without touching the remote task (`detach()`): it settles with `error`,
   * and its iterators end normally.
   */
  detach(view: TaskView, error: TaskError): void {
    this.settle(own(view), { ok: false, error });
  }

  /** Cancels a task with `tasks/cancel`, after a last look (see `cancelTask` in `cancel.ts`). */
  cancel(view: TaskView): Promise<Task> {
    const record = own(view);
    const cancel = cancelTask(this, record);
    if (record.cancelling !== undefined) this.events.stopping(record, cancel);
    return cancel;
  }

  /** Gives a task up locally: cancels it remotely if asked, and settles it (see `giveUp` in `give-up.ts`). */
  giveUp(view: TaskView, how: GiveUp): Promise<GiveUpResult> {
    return giveUp(this, own(view), how);
  }

  /** Arms the deadline of `deadline.task` for clock time `at` (see `deadline.ts`). */
  armDeadline(deadline: Deadline, at: number): void {
    armDeadline(this, own(deadline.task), at, deadline);
  }

  /** A deadline's timer fired (one function for every task: no closure per deadline). */
  readonly deadlineDue = (deadline: Deadline): void => deadlinePassed(this, own(deadline.task), deadline);

  /** Reports a problem that did not fail a task (never the library's own stops). */
  report(error: unknown, record: TaskView | undefined): void {
    if (error === TRACKING_STOPPED || this.requests.lifeSignal.aborted) return;
    this.events.problem(asTaskError(error, record), record);
  }

  /**
   * Stops every timer and request (records must be settled by the caller first). With
   * `requestsStayOpen` (the connection outlives this engine: an SDK client of the user's), the
   * requests still open on it (a given-up call's `tools/call`, held for the task its late answer
   * may name; an orphan `tasks/cancel`) keep their timeouts, which then hold nothing open
   * ({@link Scheduler.retire}): each still ends, answered or timed out, rather than waiting on the
   * connection for ever.
   */
  shutdown(requestsStayOpen = false): void {
    this.requests.shutdown();
    if (requestsStayOpen) this.scheduler.retire();
    else this.scheduler.clear();
    this.early.clear();
    this.pauseState.clear(closedError());
  }
}
