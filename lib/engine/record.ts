/**
 * The state of one tracked task: its latest snapshot, its observers and its settlement. This is
 * the callback core; the promise (`result()`) and async-iterator adapters sit on top of it. It does
 * no I/O: the engine feeds it snapshots and settles it.
 *
 * Merging follows [A11]: a terminal snapshot is sticky ([V5], [V6]); otherwise a snapshot older
 * than the one held (by `lastUpdatedAt`) is dropped, a tie goes to the later arrival, and an
 * identical snapshot yields nothing.
 *
 * Who changes what. Every field is private and readable through a getter; it changes only through
 * a method named after what happened, and each such method has one caller, an engine module:
 *
 * - engine.ts (tracking, merging, settling): the constructor, `notificationArrived`, `observed`,
 *   `payloadRode`, `instrumented`, `observationBegan`, `watched`, `unwatched`, `settled`, `trackingEnded`;
 * - poll.ts (the poll schedule): `pollPlanned`, `readRequested`, `pollArmed`, `pollTimerFired`,
 *   `pollSent`, `pollAnswered`, `pollFailed`, `pollFailureCounted`, `lookPutOff`, `readSent`;
 * - outcome.ts (the final payload): `payloadRequested`, `payloadRequestEnded`, `payloadFetched`,
 *   `blockingWaitFailed`, `graceArmed`, `graceEnded`;
 * - ttl-watch.ts (the ttl): `ttlArmed`, `ttlTimerFired`, `ttlRanOut`;
 * - deadline.ts (the caller's deadline): `deadlineArmed`, `deadlinePassed`;
 * - stop.ts (cancelling): `cancelBegan`, `cancelEnded`, `cancelAcknowledged`;
 * - requests.ts (retries): `retried`;
 * - input-delivery.ts (inline input): `inputArrived`, `answerKept`, `answerDelivered`, `answerUnlisted`;
 * - the port, through the request group of the task's requests: `join`, `leave`.
 *
 * Above the engine a task is a read-only {@link TaskView}: the facade reads it and listens to it
 * (`observe`, `onSettled`, `resultPromise` add listeners and change nothing), and asks the engine
 * for anything else.
 */
import type { CallInstrument } from '../api/index.js';
import type { TaskError } from '../errors.js';
import { isTerminalStatus, type CallToolResult, type Task } from '../types.js';
import type { Timer } from '../util/scheduler.js';
import { EPOCH, offsetOf } from '../util/epoch.js';
import { isoMs } from '../util/iso-time.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { GroupMember, InlineInput, RequestGroup, TaskOutcome, TaskWire } from '../wire/wire.js';
import { RecordExtras, rejecting, sameSnapshot, STOPPED_SIGNAL, TRACKING_STOPPED, type KeptAnswer, type MergeVerdict, type Settlement } from './record-extras.js';
import type { TaskView } from './task-view.js';

export type { TaskObserver, TaskView };

/** The bits of {@link TaskRecord}'s flags. */
const enum Flag {
  StreamEnded = 1,
  PollInFlight = 2,
  TerminalFetch = 4,
  Active = 8,
  Stopped = 16,
  Provisional = 32,
  /** The time field's value is held as given, not as an offset from `EPOCH` (`util/epoch.ts`). */
  RawNextPollAt = 64,
  RawSeenAt = 128,
  RawStartedAt = 256,
  Resumed = 512,
  ReadSoon = 1024,
  LookDue = 2048,
}

/**
 * One task's state. The engine's modules change it, each through its own event methods (see the
 * map above). The record is also the {@link RequestGroup} of the task's requests: when tracking
 * stops, every one still open is stopped at once (no `AbortSignal` per request).
 */
export class TaskRecord implements RequestGroup, TaskView {
  // The fields, their order and their packing are the record's memory layout (benchmarked per
  // in-flight task): the state few tasks need lives in `extras`, the yes/no state in `flags`, and
  // clock times as offsets (`util/epoch.ts`).
  /** Latest accepted snapshot. */
  private latest: Task;
  private settledWith: Settlement | undefined;
  private settledTime: number | undefined;
  /**
   * Settles `result()`'s promise, once asked for: its resolve function only (no listener closure,
   * and the reject function is left to the garbage collector); a failure resolves it with a
   * thenable that rejects ({@link rejecting}).
   */
  private settleResult: ((result: CallToolResult | PromiseLike<CallToolResult>) => void) | undefined;
  /** The state few tasks need, made on first use (every in-flight task carries the fields above). */
  private extras: RecordExtras | undefined;
  /** The record's yes/no state, one bit each ({@link Flag}): one small integer, not a field each. */
  private flags: number = Flag.RawNextPollAt;
  private pollJob: Timer | undefined;
  /** Held as given (0) until first set ({@link Flag.RawNextPollAt} starts set). */
  private nextPollStored = 0;
  private openFetches = 0;
  private watchWire: TaskWire | undefined;
  /** The engine's connection generation when tracking began (a later one is a new connection). */
  readonly generation: number;
  private payload: TaskOutcome | undefined;
  private ttlJob: Timer | undefined;
  private readonly seenStored: number;
  /**
   * The task's requests in flight (the port adds and removes them), stopped when tracking stops:
   * the usual single one in a field, more (a poll beside a blocking `tasks/result`) in a set.
   */
  private member: GroupMember | undefined;
  private readonly startedStored: number;
  private pollCount = 0;
  private notificationCount = 0;

  constructor(
    task: Task,
    /** Name of the tool that created the task. */
    readonly toolName: string,
    startedAt: number,
    /** Clock time this client first saw the task (see {@link TaskRecord.seenAt}). */
    seenAt: number,
    /** Timeout of each short request for this task. */
    readonly requestTimeoutMs: number,
    generation: number,
    /** True while `task` is a placeholder not yet read from the server (a resumed task). */
    provisional = false,
  ) {
    this.latest = task;
    this.generation = generation;
    if (provisional) this.flags |= Flag.Provisional | Flag.Resumed;
    this.startedStored = this.storeTime(startedAt, Flag.RawStartedAt);
    this.seenStored = this.storeTime(seenAt, Flag.RawSeenAt);
  }

  private flag(bit: Flag): boolean {
    return (this.flags & bit) !== 0;
  }
  private setFlag(bit: Flag, on: boolean): void {
    this.flags = on ? this.flags | bit : this.flags & ~bit;
  }

  /** A time field's value (clock times are kept compact: `util/epoch.ts`). */
  private timeOf(stored: number, raw: Flag): number {
    return (this.flags & raw) !== 0 ? stored : stored + EPOCH;
  }

  /** What a time field stores for `value`, with its flag set to match (`util/epoch.ts`). */
  private storeTime(value: number, raw: Flag): number {
    const offset = offsetOf(value);
    const exact = offset === offset;
    this.setFlag(raw, !exact);
    return exact ? offset : value;
  }

  private more(): RecordExtras {
    return (this.extras ??= new RecordExtras());
  }

  // ---- what the state is (read-only) ----

  /** Latest accepted snapshot. */
  get task(): Task {
    return this.latest;
  }
  /** The task id (fixed: a snapshot naming another task is never applied). */
  get taskId(): string {
    return this.latest.taskId;
  }
  /** True once a terminal snapshot was accepted. */
  get terminal(): boolean {
    return isTerminalStatus(this.latest.status);
  }
  /** Settlement, once known. */
  get settlement(): Settlement | undefined {
    return this.settledWith;
  }
  /** Clock time of the settlement. */
  get settledAt(): number | undefined {
    return this.settledTime;
  }
  /** A poll (`tasks/get`) of this task is open. */
  get pollInFlight(): boolean {
    return this.flag(Flag.PollInFlight);
  }
  /** True while a `tasks/result` sent after the terminal status was seen is open. */
  get terminalFetch(): boolean {
    return this.flag(Flag.TerminalFetch);
  }
  /** A placeholder snapshot stands in until the first real one (a resumed task). */
  get provisional(): boolean {
    return this.flag(Flag.Provisional);
  }
  /** Tracked from a reference (`resume()`), not created by this client. */
  get resumed(): boolean {
    return this.flag(Flag.Resumed);
  }
  /**
   * A read was asked for ahead of the poll cadence (a notification left out what only a read
   * brings, or the ttl ran out): it goes as soon as the pacing allows (`poll.ts`), and no fresh
   * observation puts it off. Cleared when a read goes out.
   */
  get readSoon(): boolean {
    return this.flag(Flag.ReadSoon);
  }
  /** The ttl ran out where it is a backstop: the next read sent is the last look at the task (`ttl-watch.ts`). */
  get lookDue(): boolean {
    return this.flag(Flag.LookDue);
  }
  /** False until observation starts (a resumed task waits until someone observes it). */
  get active(): boolean {
    return this.flag(Flag.Active);
  }
  /** True once tracking stopped: the task's requests in flight were stopped, new ones fail at once. */
  get stopped(): boolean {
    return this.flag(Flag.Stopped);
  }
  /** Why the requests were stopped ({@link TRACKING_STOPPED}), once they were. */
  get stopReason(): unknown {
    return this.stopped ? TRACKING_STOPPED : undefined;
  }
  /** The scheduled poll, if any (or, for a terminal task, the grace before its payload request). */
  get pollTimer(): Timer | undefined {
    return this.pollJob;
  }
  /** Earliest time the next poll may run; pushed back by every fresh observation. */
  get nextPollAt(): number {
    return this.timeOf(this.nextPollStored, Flag.RawNextPollAt);
  }
  /** `tasks/result` requests open for this task. */
  get outcomeFetches(): number {
    return this.openFetches;
  }
  /** The wire told of the engine's interest in pushed snapshots for this task, until it is withdrawn. */
  get watchedOn(): TaskWire | undefined {
    return this.watchWire;
  }
  /** The final payload, once known; never fetched twice (rmcp consumes it). */
  get outcome(): TaskOutcome | undefined {
    return this.payload;
  }
  /** Timer of the "close to its ttl" warning (or of the ttl's end), if any. */
  get ttlTimer(): Timer | undefined {
    return this.ttlJob;
  }
  /**
   * Local clock time this client first saw the task (its `CreateTaskResult` arrived, or it was
   * resumed): its ttl counts from here (`ttl-watch.ts`).
   */
  get seenAt(): number {
    return this.timeOf(this.seenStored, Flag.RawSeenAt);
  }
  /** Clock time tracking began. */
  get startedAt(): number {
    return this.timeOf(this.startedStored, Flag.RawStartedAt);
  }
  /** `tasks/get` requests sent for the task, for metrics. */
  get polls(): number {
    return this.pollCount;
  }
  /** Status notifications received for the task, for metrics. */
  get notifications(): number {
    return this.notificationCount;
  }
  /** Polls sent so far without a server `pollInterval`, for the gentle backoff (D2). */
  get hintlessPolls(): number {
    return this.extras?.hintlessPolls ?? 0;
  }
  /** Consecutive polls that failed or returned malformed data (for the backoff). */
  get failedPolls(): number {
    return this.extras?.failedPolls ?? 0;
  }
  /** Consecutive polls that failed for a non-transient reason, none transient in between (the give-up count). */
  get hardPollFailures(): number {
    return this.extras?.hardPollFailures ?? 0;
  }
  /** Clock time before which no new blocking `tasks/result` is opened (after one failed). */
  get blockingRetryAt(): number {
    return this.extras?.blockingRetryAt ?? 0;
  }
  /** Retries of this task's requests, for metrics. */
  get retries(): number {
    return this.extras?.retries ?? 0;
  }
  /**
   * Answers to inline input requests whose `tasks/update` failed, by key, kept to be sent again
   * while the server still lists the key ([E23]); `undefined` when none.
   */
  get undelivered(): ReadonlyMap<string, KeptAnswer> | undefined {
    return this.extras?.undelivered;
  }
  /** Deadline timer (timeoutMs), if any. */
  get deadlineTimer(): Timer | undefined {
    return this.extras?.deadlineTimer;
  }
  /** True once the server accepted a `tasks/cancel` for this task (a bare acknowledgement, [E6]). */
  get cancelAccepted(): boolean {
    return this.extras?.cancelAcknowledged ?? false;
  }
  /** Set while a cancel is in progress, so concurrent cancels share it. */
  get cancelling(): Promise<Task> | undefined {
    return this.extras?.cancelling;
  }
  /** Clock time the last read asked for ahead of the cadence ({@link TaskRecord.readSoon}) went out; -Infinity before any. */
  get hastenedAt(): number {
    return this.extras?.hastenedAt ?? -Infinity;
  }

  /** What watches the task's requests (instrumentation), if anything does. */
  get instrument(): CallInstrument | undefined {
    return this.extras?.instrument;
  }

  /** Aborted when tracking stops; created on first use (only retries need it). */
  get lifeSignal(): AbortSignal {
    // A record that already settled must not start a wait (or a retry) that nothing will abort.
    if (this.settledWith !== undefined) return STOPPED_SIGNAL;
    const extras = this.more();
    extras.life ??= new AbortController();
    return extras.life.signal;
  }

  // ---- engine.ts: tracking, merging, settling ----

  /** A status notification for the task arrived (counted for metrics; `observed` merges it). */
  notificationArrived(): void {
    this.notificationCount += 1;
  }

  /**
   * A snapshot of the task was observed: it is merged ([A11]). Accepted changes go to every
   * observer; a terminal one also ends the stream, unless `holdStream` (a stop under way ends it).
   */
  observed(next: Task, holdStream = false): MergeVerdict {
    if (next.taskId !== this.taskId) return 'stale';
    const current = this.latest;
    if (this.provisional) {
      // The first real snapshot replaces the placeholder, whatever its timestamps.
      this.setFlag(Flag.Provisional, false);
      this.latest = next;
      const observers = this.extras?.observers;
      if (observers !== undefined) for (const observer of observers) observer.next(next);
      if (isTerminalStatus(next.status) && !holdStream) this.endStream(undefined);
      return 'changed';
    }
    if (sameSnapshot(current, next)) return 'same';
    const nextMs = isoMs(next.lastUpdatedAt);
    if (this.flag(Flag.StreamEnded) || isTerminalStatus(current.status)) {
      // [A11]: a snapshot that is not newer than the terminal one is ordinary reordering (a poll
      // answered before a notification overtook it, or whole-second timestamps, D4): dropped
      // silently. Only a strictly newer one after a terminal status shows a broken server.
      if (!(nextMs > isoMs(current.lastUpdatedAt))) return 'stale';
      return 'after-terminal';
    }
    if (!isTerminalStatus(next.status) && nextMs < isoMs(current.lastUpdatedAt)) return 'stale';
    // The creation time never changes: the held snapshot's string is kept, the new copy dropped.
    if (next.createdAt === current.createdAt) (next as { createdAt: string }).createdAt = current.createdAt;
    this.latest = next;
    const observers = this.extras?.observers;
    if (observers !== undefined) for (const observer of observers) observer.next(next);
    if (isTerminalStatus(next.status) && !holdStream) this.endStream(undefined);
    return 'changed';
  }

  /** The final payload rode on a terminal snapshot ([E3]), or on the `CreateTaskResult`. */
  payloadRode(outcome: TaskOutcome): void {
    this.payload = outcome;
  }

  /** The task's requests are watched by `instrument` (instrumentation). */
  instrumented(instrument: CallInstrument): void {
    this.more().instrument = instrument;
  }

  /** Observation began (at once for a created task; for a resumed one, once someone observes it). */
  observationBegan(): void {
    this.setFlag(Flag.Active, true);
  }

  /** `wire` was told the engine wants pushed snapshots of the task. */
  watched(wire: TaskWire): void {
    this.watchWire = wire;
  }

  /** The interest in pushed snapshots is being withdrawn. @returns the wire it was told to, if any. */
  unwatched(): TaskWire | undefined {
    const wire = this.watchWire;
    this.watchWire = undefined;
    return wire;
  }

  /**
   * The task settled: once; later calls are ignored (false). Ends the stream (with `streamError`
   * for local failures), then tells the settle listeners and `result()`.
   */
  settled(settlement: Settlement, at: number, streamError?: TaskError): boolean {
    if (this.settledWith !== undefined) return false;
    this.settledWith = settlement;
    this.settledTime = at;
    this.endStream(streamError);
    const listeners = this.extras?.settleListeners;
    if (listeners !== undefined) this.extras!.settleListeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(settlement);
    const settleResult = this.settleResult;
    if (settleResult !== undefined) {
      this.settleResult = undefined;
      settleResult(settlement.ok ? settlement.result : rejecting(settlement.error));
    }
    return true;
  }

  /**
   * Tracking ended (after {@link TaskRecord.settled}; the engine cancelled the timers): the timers
   * and kept answers are forgotten, every request in flight and any retry wait is stopped, and
   * later requests of the task fail at once.
   */
  trackingEnded(): void {
    this.pollJob = this.ttlJob = undefined;
    const extras = this.extras;
    if (extras !== undefined) extras.deadlineTimer = extras.undelivered = undefined;
    this.setFlag(Flag.Stopped, true);
    extras?.life?.abort(TRACKING_STOPPED);
    const member = this.member;
    const members = extras?.members;
    this.member = undefined;
    if (extras !== undefined) extras.members = undefined;
    member?.stop(TRACKING_STOPPED);
    if (members !== undefined) for (const other of members) other.stop(TRACKING_STOPPED);
  }

  // ---- poll.ts: the poll schedule ----

  /** The next poll may run at `at` (tracking began, a fresh observation, a failed poll, a reconnection). */
  pollPlanned(at: number): void {
    this.nextPollStored = this.storeTime(at, Flag.RawNextPollAt);
  }

  /** A read was asked for ahead of the cadence; it may go at `at` (see {@link TaskRecord.readSoon}). */
  readRequested(at: number): void {
    this.setFlag(Flag.ReadSoon, true);
    this.pollPlanned(at);
  }

  /** The next poll's timer was armed. */
  pollArmed(timer: Timer): void {
    this.pollJob = timer;
  }

  /** The poll timer fired. */
  pollTimerFired(): void {
    this.pollJob = undefined;
  }

  /**
   * A poll was sent at `now` (`hintless`: without a server `pollInterval`, counted for the gentle
   * backoff, D2). A read asked for ahead of the cadence went with it.
   * @returns true when this read is the ttl backstop's last look (the flag is cleared).
   */
  pollSent(now: number, hintless: boolean): boolean {
    this.setFlag(Flag.PollInFlight, true);
    if (hintless) this.more().hintlessPolls += 1;
    if (this.readSoon) {
      this.setFlag(Flag.ReadSoon, false);
      this.more().hastenedAt = now;
    }
    const look = this.lookDue;
    this.setFlag(Flag.LookDue, false);
    return look;
  }

  /** The poll was answered: the failure counts start again. */
  pollAnswered(): void {
    this.setFlag(Flag.PollInFlight, false);
    if (this.extras !== undefined) this.extras.failedPolls = this.extras.hardPollFailures = 0;
  }

  /** The poll failed (or was dropped with an old connection). */
  pollFailed(): void {
    this.setFlag(Flag.PollInFlight, false);
  }

  /**
   * A failed poll counts for the backoff; a `hard` (non-transient) one also for giving up, a
   * transient one starts that count again.
   * @returns the hard failures in a row.
   */
  pollFailureCounted(hard: boolean): number {
    const extras = this.more();
    extras.failedPolls += 1;
    extras.hardPollFailures = hard ? extras.hardPollFailures + 1 : 0;
    return extras.hardPollFailures;
  }

  /** The last look's read did not happen (paused, dropped with an old connection): the next read is. */
  lookPutOff(): void {
    this.setFlag(Flag.LookDue, true);
  }

  /** A `tasks/get` for the task went out (a poll, a last look, a confirming read), counted for metrics. */
  readSent(): void {
    this.pollCount += 1;
  }

  // ---- outcome.ts: the final payload ----

  /** A `tasks/result` went out (`terminal`: sent after the terminal status was seen). */
  payloadRequested(terminal: boolean): void {
    if (terminal) this.setFlag(Flag.TerminalFetch, true);
    this.openFetches += 1;
  }

  /** A `tasks/result` sent by {@link TaskRecord.payloadRequested} ended, answered or not. */
  payloadRequestEnded(terminal: boolean): void {
    this.openFetches -= 1;
    if (terminal) this.setFlag(Flag.TerminalFetch, false);
  }

  /** A `tasks/result` brought the final payload. */
  payloadFetched(outcome: TaskOutcome): void {
    this.payload = outcome;
  }

  /** The blocking `tasks/result` of the input_required phase failed: no new one before `retryAt`. */
  blockingWaitFailed(retryAt: number): void {
    if (retryAt !== 0 || this.extras !== undefined) this.more().blockingRetryAt = retryAt;
  }

  /** The grace before a terminal task's payload request was armed (in the poll timer's slot). */
  graceArmed(timer: Timer): void {
    this.pollJob = timer;
  }

  /** The grace ended. */
  graceEnded(): void {
    this.pollJob = undefined;
  }

  // ---- ttl-watch.ts: the ttl ----

  /** The ttl's timer was armed again (`undefined`: none for this ttl). */
  ttlArmed(timer: Timer | undefined): void {
    this.ttlJob = timer;
  }

  /** The ttl's timer fired. */
  ttlTimerFired(): void {
    this.ttlJob = undefined;
  }

  /** The ttl ran out where it is a backstop: the next read is the last look ([E13]). */
  ttlRanOut(): void {
    this.setFlag(Flag.LookDue, true);
  }

  // ---- deadline.ts: the caller's deadline ----

  /** The deadline's timer was armed. */
  deadlineArmed(timer: Timer): void {
    this.more().deadlineTimer = timer;
  }

  /** The deadline passed (its timer fired). */
  deadlinePassed(): void {
    if (this.extras !== undefined) this.extras.deadlineTimer = undefined;
  }

  // ---- stop.ts: cancelling ----

  /** A cancel began; concurrent cancels share `cancel` until it ends. */
  cancelBegan(cancel: Promise<Task>): void {
    this.more().cancelling = cancel;
  }

  /** The cancel under way ended. */
  cancelEnded(): void {
    if (this.extras !== undefined) this.extras.cancelling = undefined;
  }

  /** The server accepted a `tasks/cancel` for the task. */
  cancelAcknowledged(): void {
    this.more().cancelAcknowledged = true;
  }

  // ---- requests.ts: retries ----

  /** A request of the task is tried again. */
  retried(): void {
    this.more().retries += 1;
  }

  // ---- input-delivery.ts: inline input ----

  /**
   * Input requests rode on a snapshot ([E3]). Their keys are remembered: each is handed out once
   * over the task's life ([E4]).
   * @returns those not seen before.
   */
  inputArrived(input: readonly InlineInput[]): InlineInput[] {
    const seen = (this.more().inputKeys ??= new Set());
    const fresh = input.filter((item) => !seen.has(item.key));
    for (const item of fresh) seen.add(item.key);
    return fresh;
  }

  /** A `tasks/update` failed to deliver `answer` to the request `key`: it is kept to be sent again ([E23]). */
  answerKept(key: string, answer: KeptAnswer): void {
    (this.more().undelivered ??= new Map()).set(key, answer);
  }

  /** A `tasks/update` delivered `answer` to the request `key`: it is no longer kept (unless replaced meanwhile). */
  answerDelivered(key: string, answer: KeptAnswer): void {
    const kept = this.extras?.undelivered;
    if (kept?.get(key) !== answer) return;
    kept.delete(key);
    if (kept.size === 0) this.extras!.undelivered = undefined;
  }

  /** A poll no longer lists the request `key`: its kept answer is dropped. */
  answerUnlisted(key: string): void {
    const kept = this.extras?.undelivered;
    if (kept === undefined) return;
    kept.delete(key);
    if (kept.size === 0) this.extras!.undelivered = undefined;
  }

  // ---- the port: the request group ----

  /** A request of this task is open (called by the port). */
  join(member: GroupMember): void {
    if (this.member === undefined) this.member = member;
    else (this.more().members ??= new Set()).add(member);
  }

  /** A request of this task ended (called by the port). */
  leave(member: GroupMember): void {
    if (this.member === member) this.member = undefined;
    else this.extras?.members?.delete(member);
  }

  // ---- listeners (the facade's handles, the engine's stops): they change nothing ----

  /**
   * Adds an observer: it gets the current snapshot at once, then every change, then `end`. On a
   * record whose stream already ended it gets the last snapshot and `end` at once.
   * @returns a function that removes the observer.
   */
  observe(observer: TaskObserver): () => void {
    if (!this.provisional) observer.next(this.latest);
    if (this.flag(Flag.StreamEnded)) {
      observer.end(this.extras?.streamError);
      return () => {};
    }
    const observers = (this.more().observers ??= new Set());
    observers.add(observer);
    return () => {
      observers.delete(observer);
    };
  }

  /** Calls `listener` once with the settlement (at once if already settled). */
  onSettled(listener: (settlement: Settlement) => void): () => void {
    if (this.settledWith !== undefined) {
      listener(this.settledWith);
      return () => {};
    }
    (this.more().settleListeners ??= []).push(listener);
    return () => {
      const extras = this.extras;
      if (extras?.settleListeners !== undefined) extras.settleListeners = extras.settleListeners.filter((l) => l !== listener);
    };
  }

  /**
   * A new promise of the task's result: fulfilled with the result, or rejected with the
   * settlement's error. The first one asked for is settled through one field (a handle asks once
   * and keeps it); any later one through a settle listener.
   */
  resultPromise(): Promise<CallToolResult> {
    const settlement = this.settledWith;
    if (settlement !== undefined) return settlement.ok ? Promise.resolve(settlement.result) : Promise.reject(settlement.error);
    if (this.settleResult !== undefined) {
      return new Promise((resolve, reject) => this.onSettled((s) => (s.ok ? resolve(s.result) : reject(s.error))));
    }
    return new Promise((resolve) => {
      this.settleResult = resolve;
    });
  }

  /** Ends the snapshot stream for every observer (with `error` when tracking stopped early). */
  private endStream(error: TaskError | undefined): void {
    if (this.flag(Flag.StreamEnded)) return;
    this.setFlag(Flag.StreamEnded, true);
    if (error !== undefined) this.more().streamError = error;
    const held = this.extras?.observers;
    if (held === undefined || held.size === 0) return;
    const observers = [...held];
    held.clear();
    for (const observer of observers) observer.end(error);
  }
}
