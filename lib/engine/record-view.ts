/**
 * What a task's record shows without changing it: the read-only state (the getters) and the
 * listeners (`observe`, `onSettled`, `resultPromise`: they add a listener and change nothing of
 * the task's state). It is the part of the record that the read-only {@link TaskView} (what the
 * layer above the engine holds) exposes.
 * The fields are in record-layout.ts; the methods that change them in record.ts.
 */
import type { CallInstrument } from '../api/index.js';
import type { TaskError } from '../errors.js';
import { isTerminalStatus, type CallToolResult, type Task } from '../types.js';
import type { Timer } from '../util/scheduler.js';
import { capture, captured } from '../util/capture.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { InputAnswers, TaskPayload } from '../wire/wire.js';
import { STOPPED_SIGNAL, TRACKING_STOPPED, type KeptAnswer, type Settlement } from './record-extras.js';
import * as Flag from './record-flags.js';
import { RecordLayout } from './record-layout.js';
import type { TaskView } from './task-view.js';

/** The read-only state of a task's record, and its listeners. */
export abstract class RecordView extends RecordLayout implements TaskView {
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
    return this.settledWith === undefined ? undefined : this.timeOf(this.nextPollStored, Flag.RawNextPollAt);
  }
  /** A poll (`tasks/get`) of this task is open. */
  get pollInFlight(): boolean {
    return this.flag(Flag.PollInFlight);
  }
  /**
   * True while a `tasks/result` sent after the terminal status was seen is open, or its "not
   * found" is held for the blocking one ({@link RecordView.holdsGone}).
   */
  get terminalFetch(): boolean {
    return this.flag(Flag.TerminalFetch);
  }
  /** The "not found" of the short `tasks/result` is held until the blocking one ends (`payload.ts`). */
  get holdsGone(): boolean {
    return this.flag(Flag.GoneHeld);
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
  /** The poll in flight went out over a connection since replaced: its failure is not the task's (`poll.ts`). */
  get pollOnOlderConnection(): boolean {
    return this.flag(Flag.PollOnOlderConnection);
  }
  /** False until observation starts (a resumed task waits until someone observes it). */
  get active(): boolean {
    return this.flag(Flag.Active);
  }
  /** True once tracking stopped: the task's requests in flight were stopped, new ones fail at once. */
  get stopped(): boolean {
    return this.flag(Flag.Stopped);
  }
  /** A local stop (timeout, abort, dispose, close) is under way: polling pauses, the stop settles the task. */
  get stopping(): boolean {
    return this.flag(Flag.Stopping);
  }
  /** A local stop or a cancel is under way, or the server accepted a cancel ({@link TaskView.ending}). */
  get ending(): boolean {
    return this.stopping || this.cancelling !== undefined || this.cancelAccepted;
  }
  /** The stop under way means to cancel the remote task. */
  get stopCancels(): boolean {
    return this.flag(Flag.StopCancels);
  }
  /** The stop under way keeps the snapshot stream open until it settles (to end it with the stop's error). */
  get holdsStream(): boolean {
    return this.flag(Flag.HoldStream);
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
  get payloadFetches(): number {
    return (this.flags & Flag.OpenFetches) / Flag.OpenFetchesUnit;
  }
  /** The wire in use was told of the engine's interest in pushed snapshots for this task, until it is withdrawn. */
  get watchedNow(): boolean {
    return this.flag(Flag.Watched);
  }
  /** Tracking began on a connection that was replaced since (the server may have kept its tasks per session). */
  get olderConnection(): boolean {
    return this.flag(Flag.OlderConnection);
  }
  /** The final payload, once known; never fetched twice (rmcp consumes it). */
  get payload(): TaskPayload | undefined {
    return this.finalPayload;
  }
  /** Timer of the "close to its ttl" warning (or of the ttl's end), if any. */
  get ttlTimer(): Timer | undefined {
    return this.ttlJob;
  }
  /** The ttl's timer is put off until the first poll's timer fires (`ttl-watch.ts`). */
  get ttlDeferred(): boolean {
    return this.flag(Flag.TtlDeferred);
  }
  /**
   * Local clock time this client first saw the task (its `CreateTaskResult` arrived, or it was
   * resumed): the latest the server can have created it. The ttl backstop counts from here
   * (`ttl-watch.ts`).
   */
  get seenAt(): number {
    return this.timeOf(this.seenStored, Flag.RawSeenAt);
  }
  /**
   * Local clock time the request that created the task was sent: the earliest the server can have
   * created it; {@link seenAt} for a resumed task. The expiry warning and the judgement of expiry
   * count from here (`ttl-watch.ts`).
   */
  get sentAt(): number {
    return this.timeOf(this.sentStored, Flag.RawSentAt);
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
  /**
   * The JSON-RPC error that answered the blocking `tasks/result` once the task was known failed
   * (`payload.ts`), if any.
   */
  get waitError(): TaskPayload | undefined {
    return this.extras?.waitError;
  }
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
  /**
   * The input request keys the task has outstanding as last seen (see `RecordExtras.outstanding`);
   * `undefined` when no snapshot has said yet.
   */
  get outstandingInput(): ReadonlySet<string> | undefined {
    return this.extras?.outstanding;
  }
  /** True when the server reused input request `key` for another request: no answer goes under it. */
  inputChanged(key: string): boolean {
    return this.extras?.changedKeys?.has(key) === true;
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
  /** Clock time the last read asked for ahead of the cadence ({@link RecordView.readSoon}) went out; -Infinity before any. */
  get hastenedAt(): number {
    return this.extras?.hastenedAt ?? -Infinity;
  }

  /** What watches the task's requests (instrumentation), if anything does. */
  get instrument(): CallInstrument | undefined {
    return this.extras?.instrument;
  }

  /**
   * The input that callbacks answer for the task's call, when it has callbacks of its own: what its
   * requests declare ([E35]); `undefined`: what the client answers for any call.
   */
  get input(): InputAnswers | undefined {
    return this.extras?.input;
  }

  /** Aborted when tracking stops; created on first use (only retries need it). */
  get lifeSignal(): AbortSignal {
    // A record that already settled must not start a wait (or a retry) that nothing will abort.
    if (this.settledWith !== undefined) return STOPPED_SIGNAL;
    const extras = this.more();
    extras.life ??= new AbortController();
    return extras.life.signal;
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
      if (extras?.settleListeners !== undefined)
        extras.settleListeners = extras.settleListeners.filter((l) => l !== listener);
    };
  }

  /**
   * A new promise of the task's result: fulfilled with the result, or rejected with the
   * settlement's error. The first one asked for is settled through one field (a handle asks once
   * and keeps it); any later one through a settle listener.
   */
  resultPromise(): Promise<CallToolResult> {
    const settlement = this.settledWith;
    if (settlement !== undefined)
      return settlement.ok ? Promise.resolve(settlement.result) : Promise.reject(settlement.error);
    if (this.settleResult !== undefined) {
      return new Promise((resolve, reject) => this.onSettled((s) => (s.ok ? resolve(s.result) : reject(s.error))));
    }
    // No executor closure of its own: one result promise per task (see util/capture.ts).
    const promise = new Promise<CallToolResult>(capture);
    this.settleResult = captured.resolve!;
    captured.resolve = captured.reject = undefined;
    return promise;
  }

  /** Ends the snapshot stream for every observer (with `error` when tracking stopped early). */
  protected endStream(error: TaskError | undefined): void {
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
