/**
 * The state of one tracked task: its latest snapshot, its observers and its settlement. This is
 * the callback core; the promise (`result()`) and async-iterator adapters sit on top of it. It does
 * no I/O: the engine feeds it snapshots and settles it.
 *
 * Merging follows [A11]: a terminal snapshot is sticky ([V5], [V6]); otherwise a snapshot older
 * than the one held (by `lastUpdatedAt`) is dropped, a tie goes to the later arrival, and an
 * identical snapshot yields nothing.
 *
 * The record is built in five floors: its fields and their compact layout (record-layout.ts),
 * what it shows without changing anything (record-view.ts: the getters and the listeners), the
 * methods that change its schedule (record-schedule.ts: the poll schedule and the ttl's timer),
 * those that change its input listing (record-input.ts: the keys handed out, the answers kept),
 * and here the other methods that change it.
 *
 * Who changes what. Every field is protected and readable through a getter; it changes only through
 * a method named after what happened, and each such method has one caller, an engine module:
 *
 * - observe.ts (tracking, merging): the constructor, `notificationArrived`, `observed`,
 *   `payloadRode`, `instrumented`, `inputAnswered`;
 * - engine.ts (stopping, settling): `stopBegan`, `settled`, `trackingEnded`;
 * - watch.ts (watching the task): `observationBegan`, `watched`, `unwatched`;
 * - reconnect.ts (a reconnection): `connectionReplaced`;
 * - poll.ts (the poll schedule, in record-schedule.ts): `pollPlanned`, `readRequested`, `pollArmed`, `pollTimerFired`,
 *   `pollSent`, `pollAnswered`, `pollFailed`, `pollFailureCounted`, `readWithoutPayload`, `lookPutOff`, `readSent`;
 * - payload.ts (the final payload): `payloadRequested`, `payloadRequestEnded`, `payloadFetched`,
 *   `blockingWaitFailed`, `waitErrorKept`, `graceArmed`, `graceEnded`;
 * - gone-hold.ts (the held "not found"): `goneHeld`, `holdReleased`;
 * - ttl-watch.ts (the ttl, in record-schedule.ts): `ttlArmed`, `ttlPutOff`, `ttlTimerFired`, `ttlRanOut`;
 * - deadline.ts (the caller's deadline): `deadlineArmed`, `deadlinePassed`;
 * - cancel.ts (cancelling): `cancelBegan`, `cancelEnded`, `cancelAcknowledged`;
 * - requests.ts (retries): `retried`;
 * - input-delivery.ts (inline input, in record-input.ts): `inputArrived`, `inputListed`,
 *   `inputDismissed`, `answerKept`, `answerDelivered`, `answerUnlisted`;
 * - the port, through the request group of the task's requests: `join`, `leave`.
 *
 * Above the engine a task is a read-only {@link TaskView}: the facade reads it and listens to it
 * (`observe`, `onSettled`, `resultPromise` add listeners and change nothing), and asks the engine
 * for anything else.
 */
import type { CallInstrument } from '../api/index.js';
import type { TaskError } from '../errors.js';
import { isTerminalStatus, type Task } from '../types.js';
import type { Timer } from '../util/scheduler.js';
import { EPOCH } from '../util/epoch.js';
import { isoMs } from '../util/iso-time.js';
import { keepShape } from '../util/shapes.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { GroupMember, InputAnswers, RequestGroup, TaskPayload } from '../wire/wire.js';
import { rejecting, sameSnapshot, TRACKING_STOPPED, type MergeVerdict, type Settlement } from './record-extras.js';
import * as Flag from './record-flags.js';
import { RecordInput } from './record-input.js';
import type { TaskView } from './task-view.js';

export type { TaskObserver, TaskView };

/**
 * One task's state. The engine's modules change it, each through its own event methods (see the
 * map above). The record is also the {@link RequestGroup} of the task's requests: when tracking
 * stops, every one still open is stopped at once (no `AbortSignal` per request).
 */
export class TaskRecord extends RecordInput implements RequestGroup {
  // ---- observe.ts: tracking, merging ----

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
  payloadRode(payload: TaskPayload): void {
    this.finalPayload = payload;
  }

  /** The task's requests are watched by `instrument` (instrumentation). */
  instrumented(instrument: CallInstrument): void {
    this.more().instrument = instrument;
  }

  /** Callbacks of the task's call answer `input` (its requests declare it, [E35]). */
  inputAnswered(input: InputAnswers): void {
    this.more().input = input;
  }

  // ---- engine.ts: stopping, settling ----

  /**
   * A local stop began (`holdStream`: the stream stays open until the stop settles the task;
   * `cancels`: it means to cancel the remote task).
   */
  stopBegan(holdStream: boolean, cancels: boolean): void {
    this.flags |= Flag.Stopping | (holdStream ? Flag.HoldStream : 0) | (cancels ? Flag.StopCancels : 0);
  }

  /**
   * The task settled: once; later calls are ignored (false). Ends the stream (with `streamError`
   * for local failures), then tells the settle listeners and `result()`.
   */
  settled(settlement: Settlement, at: number, streamError?: TaskError): boolean {
    if (this.settledWith !== undefined) return false;
    this.settledWith = settlement;
    this.nextPollStored = this.storeTime(at, Flag.RawNextPollAt);
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
    this.flags = (this.flags | Flag.Stopped) & ~(Flag.Stopping | Flag.HoldStream);
    extras?.life?.abort(TRACKING_STOPPED);
    const member = this.member;
    const members = extras?.members;
    this.member = undefined;
    if (extras !== undefined) extras.members = undefined;
    member?.stop(TRACKING_STOPPED);
    if (members !== undefined) for (const other of members) other.stop(TRACKING_STOPPED);
  }

  // ---- watch.ts: watching the task ----

  /** Observation began (at once for a created task; for a resumed one, once someone observes it). */
  observationBegan(): void {
    this.setFlag(Flag.Active, true);
  }

  /** The wire in use was told the engine wants pushed snapshots of the task. */
  watched(): void {
    this.setFlag(Flag.Watched, true);
  }

  /** The interest in pushed snapshots is being withdrawn. @returns whether it had been told. */
  unwatched(): boolean {
    const was = this.flag(Flag.Watched);
    this.setFlag(Flag.Watched, false);
    return was;
  }

  // ---- reconnect.ts: a reconnection ----

  /** The connection was replaced: the task was tracked on an older one. */
  connectionReplaced(): void {
    this.flags |= Flag.OlderConnection | (this.pollInFlight ? Flag.PollOnOlderConnection : 0);
  }

  // ---- payload.ts: the final payload ----

  /** A `tasks/result` went out (`terminal`: sent after the terminal status was seen). */
  payloadRequested(terminal: boolean): void {
    if (terminal) this.setFlag(Flag.TerminalFetch, true);
    // At most two are open (a blocking one and a terminal one, `outcome.ts`): two bits hold the
    // count, which never runs past them into the other bits.
    if (this.payloadFetches < 3) this.flags += Flag.OpenFetchesUnit;
  }

  /** A `tasks/result` sent by {@link TaskRecord.payloadRequested} ended, answered or not. */
  payloadRequestEnded(terminal: boolean): void {
    if (this.payloadFetches > 0) this.flags -= Flag.OpenFetchesUnit;
    if (terminal) this.setFlag(Flag.TerminalFetch, false);
  }

  /** A `tasks/result` brought the final payload. */
  payloadFetched(payload: TaskPayload): void {
    this.finalPayload = payload;
  }

  /** The blocking `tasks/result` of the input_required phase failed: no new one before `retryAt`. */
  blockingWaitFailed(retryAt: number): void {
    if (retryAt !== 0 || this.extras !== undefined) this.more().blockingRetryAt = retryAt;
  }

  /**
   * The blocking `tasks/result` answered with a JSON-RPC error after the task was seen failed: kept
   * as its probable own error while a fresh request asks again (`payload.ts`).
   */
  waitErrorKept(payload: TaskPayload): void {
    this.more().waitError = payload;
  }

  /** The grace before a terminal task's payload request was armed (in the poll timer's slot). */
  graceArmed(timer: Timer): void {
    this.pollJob = timer;
  }

  /** The grace ended. */
  graceEnded(): void {
    this.pollJob = undefined;
  }

  // ---- gone-hold.ts: the held "not found" ----

  /**
   * The short `tasks/result` for the terminal task answered "not found" while the blocking one is
   * still open: that answer is held until the blocking one ends, or `timer` fires (in the poll
   * timer's slot, as the grace). It counts as a short request under way: no other is sent meanwhile.
   */
  goneHeld(timer: Timer): void {
    this.flags |= Flag.GoneHeld | Flag.TerminalFetch;
    this.pollJob = timer;
  }

  /** The held "not found" is let go (the blocking request ended, or the bound passed). */
  holdReleased(): void {
    this.flags &= ~(Flag.GoneHeld | Flag.TerminalFetch);
    this.pollJob = undefined;
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

  // ---- cancel.ts: cancelling ----

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
}

/**
 * A record of no task, kept so that the record's hidden class outlives an idle spell
 * (util/shapes.ts); the engine's other exemplars point at it where a record is expected.
 */
export const EXEMPLAR_RECORD: TaskRecord = new TaskRecord(
  { taskId: '-', status: 'working', createdAt: '', lastUpdatedAt: '', ttl: null },
  '',
  EPOCH,
  EPOCH,
  EPOCH,
  0,
);
keepShape(EXEMPLAR_RECORD);
