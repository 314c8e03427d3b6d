/**
 * A task's record, its schedule: the methods that change when the task is read next. The poll
 * schedule (poll.ts: the next poll, reads asked for ahead of the cadence, the read in flight and
 * its failures) and the ttl's timer (ttl-watch.ts: put off until the first poll, and where the ttl
 * is a backstop making the next read its last look, [E13]) share the record's read state.
 *
 * A floor of the record between what it shows (record-view.ts) and the other methods that change
 * it (record-input.ts, record.ts); the ownership map heading record.ts names these methods' callers
 * too.
 */
import type { Timer } from '../util/scheduler.js';
import * as Flag from './record-flags.js';
import { RecordView } from './record-view.js';

/** The methods of a task's record that change its schedule (see the module comment). */
export abstract class RecordSchedule extends RecordView {
  // ---- poll.ts: the poll schedule ----

  /** The next poll may run at `at` (tracking began, a fresh observation, a failed poll, a reconnection). */
  pollPlanned(at: number): void {
    // Once settled, the field holds the settlement's time (see `settledAt`).
    if (this.settledWith === undefined) this.nextPollStored = this.storeTime(at, Flag.RawNextPollAt);
  }

  /** A read was asked for ahead of the cadence; it may go at `at` (see {@link RecordView.readSoon}). */
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
    this.flags =
      (this.flags & ~(Flag.LookDue | Flag.LookSent | Flag.PollOnOlderConnection)) | (look ? Flag.LookSent : 0);
    return look;
  }

  /**
   * The poll was answered: the failure counts start again.
   * @returns true when it was the ttl backstop's last look.
   */
  pollAnswered(): boolean {
    const look = this.pollEnded();
    if (this.extras !== undefined) this.extras.failedPolls = this.extras.hardPollFailures = 0;
    return look;
  }

  /**
   * The poll failed (or was dropped with an old connection).
   * @returns true when it was the ttl backstop's last look.
   */
  pollFailed(): boolean {
    return this.pollEnded();
  }

  /** The poll in flight ended; true when it was the last look. */
  private pollEnded(): boolean {
    const look = this.flag(Flag.LookSent);
    this.flags &= ~(Flag.PollInFlight | Flag.LookSent | Flag.PollOnOlderConnection);
    return look;
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

  /**
   * A read was answered while the task is terminal and still without the payload a read must bring.
   * @returns such reads so far.
   */
  readWithoutPayload(): number {
    return (this.more().readsWithoutPayload += 1);
  }

  /** The last look's read did not happen (paused, dropped with an old connection): the next read is. */
  lookPutOff(): void {
    this.setFlag(Flag.LookDue, true);
  }

  /** A `tasks/get` for the task went out (a poll, a last look, a confirming read), counted for metrics. */
  readSent(): void {
    this.pollCount += 1;
  }

  // ---- ttl-watch.ts: the ttl ----

  /** The ttl's timer was armed again (`undefined`: none for this ttl). */
  ttlArmed(timer: Timer | undefined): void {
    this.ttlJob = timer;
    this.flags &= ~Flag.TtlDeferred;
  }

  /** The ttl's timer waits for the first poll's timer. */
  ttlPutOff(): void {
    this.flags |= Flag.TtlDeferred;
  }

  /** The ttl's timer fired. */
  ttlTimerFired(): void {
    this.ttlJob = undefined;
  }

  /** The ttl ran out where it is a backstop: the next read is the last look ([E13]). */
  ttlRanOut(): void {
    this.setFlag(Flag.LookDue, true);
  }
}
