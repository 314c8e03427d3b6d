/**
 * The state of one tracked task: its latest snapshot, its observers and its settlement. This is
 * the callback core; the promise (`result()`) and async-iterator adapters sit on top of it. It does
 * no I/O: the engine feeds it snapshots and settles it.
 *
 * Merging follows [A11]: a terminal snapshot is sticky ([V5], [V6]); otherwise a snapshot older
 * than the one held (by `lastUpdatedAt`) is dropped, a tie goes to the later arrival, and an
 * identical snapshot yields nothing.
 */
import type { TaskError } from '../errors.js';
import { isTerminalStatus, type CallToolResult, type Task } from '../types.js';
import type { Timer } from '../util/scheduler.js';
import { EPOCH, offsetOf } from '../util/epoch.js';
import { isoMs } from '../util/iso-time.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { GroupMember, RequestGroup, TaskOutcome, TaskWire } from '../wire/wire.js';
import { RecordExtras, rejecting, sameSnapshot, STOPPED_SIGNAL, TRACKING_STOPPED, type KeptAnswer, type MergeVerdict, type Settlement } from './record-extras.js';

export type { TaskObserver };

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
 * One task's state. The engine owns the scheduling fields. The record is also the
 * {@link RequestGroup} of the task's requests: when tracking stops, every one still open is
 * stopped at once (no `AbortSignal` per request).
 */
export class TaskRecord implements RequestGroup {
  /** Latest accepted snapshot. */
  task: Task;
  /** Settlement, once known. */
  settlement: Settlement | undefined;
  /** Clock time of the settlement. */
  settledAt: number | undefined;
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

  private flag(bit: Flag): boolean {
    return (this.flags & bit) !== 0;
  }
  private setFlag(bit: Flag, on: boolean): void {
    this.flags = on ? this.flags | bit : this.flags & ~bit;
  }
  /** The snapshot stream ended (observers were told). */
  private get streamEnded(): boolean {
    return this.flag(Flag.StreamEnded);
  }
  private set streamEnded(on: boolean) {
    this.setFlag(Flag.StreamEnded, on);
  }
  /** A poll (`tasks/get`) of this task is open. */
  get pollInFlight(): boolean {
    return this.flag(Flag.PollInFlight);
  }
  set pollInFlight(on: boolean) {
    this.setFlag(Flag.PollInFlight, on);
  }
  /** True while a `tasks/result` sent after the terminal status was seen is open. */
  get terminalFetch(): boolean {
    return this.flag(Flag.TerminalFetch);
  }
  set terminalFetch(on: boolean) {
    this.setFlag(Flag.TerminalFetch, on);
  }
  /** A placeholder snapshot stands in until the first real one (a resumed task). */
  get provisional(): boolean {
    return this.flag(Flag.Provisional);
  }
  set provisional(on: boolean) {
    this.setFlag(Flag.Provisional, on);
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
  set readSoon(on: boolean) {
    this.setFlag(Flag.ReadSoon, on);
  }
  /** The ttl ran out where it is a backstop: the next read sent is the last look at the task (`ttl-watch.ts`). */
  get lookDue(): boolean {
    return this.flag(Flag.LookDue);
  }
  set lookDue(on: boolean) {
    this.setFlag(Flag.LookDue, on);
  }
  /** False until observation starts (a resumed task waits until someone observes it). */
  get active(): boolean {
    return this.flag(Flag.Active);
  }
  set active(on: boolean) {
    this.setFlag(Flag.Active, on);
  }
  /** True once tracking stopped: the task's requests in flight were stopped, new ones fail at once. */
  get stopped(): boolean {
    return this.flag(Flag.Stopped);
  }
  set stopped(on: boolean) {
    this.setFlag(Flag.Stopped, on);
  }

  // ---- engine bookkeeping ----
  /** The scheduled poll, if any. */
  pollTimer: Timer | undefined;
  /** Earliest time the next poll may run; pushed back by every fresh observation. */
  get nextPollAt(): number {
    return this.timeOf(this.nextPollStored, Flag.RawNextPollAt);
  }
  set nextPollAt(value: number) {
    this.nextPollStored = this.storeTime(value, Flag.RawNextPollAt);
  }
  /** Held as given (0) until first set ({@link Flag.RawNextPollAt} starts set). */
  private nextPollStored = 0;
  /** `tasks/result` requests open for this task. */
  outcomeFetches = 0;
  /** The wire told of the engine's interest in pushed snapshots for this task, until it is withdrawn. */
  watchedOn: TaskWire | undefined;
  /** The engine's connection generation when tracking began (a later one is a new connection). */
  generation = 0;
  /** The final payload, once fetched; never fetched twice (rmcp consumes it). */
  outcome: TaskOutcome | undefined;
  /** Timer of the "close to its ttl" warning, if any. */
  ttlTimer: Timer | undefined;
  /**
   * Local clock time this client first saw the task (its `CreateTaskResult` arrived, or it was
   * resumed): its ttl counts from here (`ttl-watch.ts`).
   */
  get seenAt(): number {
    return this.timeOf(this.seenStored, Flag.RawSeenAt);
  }
  private readonly seenStored: number;
  /**
   * The task's requests in flight (the port adds and removes them), stopped when tracking stops:
   * the usual single one in a field, more (a poll beside a blocking `tasks/result`) in a set.
   */
  private member: GroupMember | undefined;
  /** Why the requests were stopped ({@link TRACKING_STOPPED}), once they were. */
  get stopReason(): unknown {
    return this.stopped ? TRACKING_STOPPED : undefined;
  }
  /** Clock time tracking began. */
  get startedAt(): number {
    return this.timeOf(this.startedStored, Flag.RawStartedAt);
  }
  private readonly startedStored: number;
  /** Counters for metrics. */
  polls = 0;
  notifications = 0;

  /** The task id (fixed: a snapshot naming another task is never applied). */
  get taskId(): string {
    return this.task.taskId;
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

  /** Polls sent so far without a server `pollInterval`, for the gentle backoff (D2). */
  get hintlessPolls(): number {
    return this.extras?.hintlessPolls ?? 0;
  }
  set hintlessPolls(value: number) {
    if (value !== 0 || this.extras !== undefined) this.more().hintlessPolls = value;
  }
  /** Consecutive polls that failed or returned malformed data (for the backoff). */
  get failedPolls(): number {
    return this.extras?.failedPolls ?? 0;
  }
  set failedPolls(value: number) {
    if (value !== 0 || this.extras !== undefined) this.more().failedPolls = value;
  }
  /** Consecutive polls that failed for a non-transient reason, none transient in between (the give-up count). */
  get hardPollFailures(): number {
    return this.extras?.hardPollFailures ?? 0;
  }
  set hardPollFailures(value: number) {
    if (value !== 0 || this.extras !== undefined) this.more().hardPollFailures = value;
  }
  /** Clock time before which no new blocking `tasks/result` is opened (after one failed). */
  get blockingRetryAt(): number {
    return this.extras?.blockingRetryAt ?? 0;
  }
  set blockingRetryAt(value: number) {
    if (value !== 0 || this.extras !== undefined) this.more().blockingRetryAt = value;
  }
  /** Retries of this task's requests, for metrics. */
  get retries(): number {
    return this.extras?.retries ?? 0;
  }
  set retries(value: number) {
    if (value !== 0 || this.extras !== undefined) this.more().retries = value;
  }
  /** Keys of inline input requests already handed out ([E4]: unique over the task's life). */
  get inputKeys(): Set<string> | undefined {
    return this.extras?.inputKeys;
  }
  set inputKeys(value: Set<string> | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().inputKeys = value;
  }
  /**
   * Answers to inline input requests whose `tasks/update` failed, by key, kept to be sent again
   * while the server still lists the key ([E23]); `undefined` when none.
   */
  get undelivered(): Map<string, KeptAnswer> | undefined {
    return this.extras?.undelivered;
  }
  set undelivered(value: Map<string, KeptAnswer> | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().undelivered = value;
  }
  /** Deadline timer (timeoutMs), if any. */
  get deadlineTimer(): Timer | undefined {
    return this.extras?.deadlineTimer;
  }
  set deadlineTimer(value: Timer | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().deadlineTimer = value;
  }
  /** True once the server accepted a `tasks/cancel` for this task (a bare acknowledgement, [E6]). */
  get cancelAcknowledged(): boolean {
    return this.extras?.cancelAcknowledged ?? false;
  }
  set cancelAcknowledged(value: boolean) {
    if (value || this.extras !== undefined) this.more().cancelAcknowledged = value;
  }
  /** Set while a cancel is in progress, so concurrent cancels share it. */
  get cancelling(): Promise<Task> | undefined {
    return this.extras?.cancelling;
  }
  set cancelling(value: Promise<Task> | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().cancelling = value;
  }
  /** Clock time the last read asked for ahead of the cadence ({@link TaskRecord.readSoon}) went out; -Infinity before any. */
  get hastenedAt(): number {
    return this.extras?.hastenedAt ?? -Infinity;
  }
  set hastenedAt(value: number) {
    this.more().hastenedAt = value;
  }

  constructor(
    task: Task,
    /** Name of the tool that created the task. */
    readonly toolName: string,
    startedAt: number,
    /** Clock time this client first saw the task (see {@link TaskRecord.seenAt}). */
    seenAt: number,
    /** Timeout of each short request for this task. */
    readonly requestTimeoutMs: number,
    /** True while `task` is a placeholder not yet read from the server (a resumed task). */
    provisional = false,
  ) {
    this.task = task;
    if (provisional) this.flags |= Flag.Provisional | Flag.Resumed;
    this.startedStored = this.storeTime(startedAt, Flag.RawStartedAt);
    this.seenStored = this.storeTime(seenAt, Flag.RawSeenAt);
  }

  /** Aborted when tracking stops; created on first use (only retries need it). */
  get lifeSignal(): AbortSignal {
    // A record that already settled must not start a wait (or a retry) that nothing will abort.
    if (this.settlement !== undefined) return STOPPED_SIGNAL;
    const extras = this.more();
    extras.life ??= new AbortController();
    return extras.life.signal;
  }

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

  /** Stops every request in flight and any retry wait; later requests of the task fail at once. */
  abortAll(): void {
    this.stopped = true;
    const extras = this.extras;
    extras?.life?.abort(TRACKING_STOPPED);
    const member = this.member;
    const members = extras?.members;
    this.member = undefined;
    if (extras !== undefined) extras.members = undefined;
    member?.stop(TRACKING_STOPPED);
    if (members !== undefined) for (const other of members) other.stop(TRACKING_STOPPED);
  }

  /** True once a terminal snapshot was accepted. */
  get terminal(): boolean {
    return isTerminalStatus(this.task.status);
  }

  /**
   * Offers a snapshot. Accepted changes go to every observer; a terminal one also ends the stream.
   */
  apply(next: Task, holdStream = false): MergeVerdict {
    if (next.taskId !== this.taskId) return 'stale';
    const current = this.task;
    if (this.provisional) {
      // The first real snapshot replaces the placeholder, whatever its timestamps.
      this.provisional = false;
      this.task = next;
      const observers = this.extras?.observers;
      if (observers !== undefined) for (const observer of observers) observer.next(next);
      if (isTerminalStatus(next.status) && !holdStream) this.endStream(undefined);
      return 'changed';
    }
    if (sameSnapshot(current, next)) return 'same';
    const nextMs = isoMs(next.lastUpdatedAt);
    if (this.streamEnded || isTerminalStatus(current.status)) {
      // [A11]: a snapshot that is not newer than the terminal one is ordinary reordering (a poll
      // answered before a notification overtook it, or whole-second timestamps, D4): dropped
      // silently. Only a strictly newer one after a terminal status shows a broken server.
      if (!(nextMs > isoMs(current.lastUpdatedAt))) return 'stale';
      return 'after-terminal';
    }
    if (!isTerminalStatus(next.status) && nextMs < isoMs(current.lastUpdatedAt)) return 'stale';
    // The creation time never changes: the held snapshot's string is kept, the new copy dropped.
    if (next.createdAt === current.createdAt) (next as { createdAt: string }).createdAt = current.createdAt;
    this.task = next;
    const observers = this.extras?.observers;
    if (observers !== undefined) for (const observer of observers) observer.next(next);
    if (isTerminalStatus(next.status) && !holdStream) this.endStream(undefined);
    return 'changed';
  }

  /**
   * Adds an observer: it gets the current snapshot at once, then every change, then `end`. On a
   * record whose stream already ended it gets the last snapshot and `end` at once.
   * @returns a function that removes the observer.
   */
  observe(observer: TaskObserver): () => void {
    if (!this.provisional) observer.next(this.task);
    if (this.streamEnded) {
      observer.end(this.extras?.streamError);
      return () => {};
    }
    const observers = (this.more().observers ??= new Set());
    observers.add(observer);
    return () => {
      observers.delete(observer);
    };
  }

  /** Ends the snapshot stream for every observer (with `error` when tracking stopped early). */
  endStream(error: TaskError | undefined): void {
    if (this.streamEnded) return;
    this.streamEnded = true;
    if (error !== undefined) this.more().streamError = error;
    const held = this.extras?.observers;
    if (held === undefined || held.size === 0) return;
    const observers = [...held];
    held.clear();
    for (const observer of observers) observer.end(error);
  }

  /** Calls `listener` once with the settlement (at once if already settled). */
  onSettled(listener: (settlement: Settlement) => void): () => void {
    if (this.settlement !== undefined) {
      listener(this.settlement);
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
    const settlement = this.settlement;
    if (settlement !== undefined) return settlement.ok ? Promise.resolve(settlement.result) : Promise.reject(settlement.error);
    if (this.settleResult !== undefined) {
      return new Promise((resolve, reject) => this.onSettled((s) => (s.ok ? resolve(s.result) : reject(s.error))));
    }
    return new Promise((resolve) => {
      this.settleResult = resolve;
    });
  }

  /** Settles once; later calls are ignored. Ends the stream (with the error for local failures). */
  settle(settlement: Settlement, at: number, streamError?: TaskError): boolean {
    if (this.settlement !== undefined) return false;
    this.settlement = settlement;
    this.settledAt = at;
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
}
