/**
 * Each running task's ttl, on both wires: when it ends, the warning before that ([V11]: the task
 * may vanish then), where the ttl is a backstop ([E13]) one last look at the task once it ran out
 * and giving it up if it still runs, and whether a task the server no longer knows had expired.
 *
 * The ttl counts on the local clock. The server starts it when it creates the task, somewhere
 * between the moment the creating `tools/call` was sent ({@link TaskRecord.sentAt}) and the moment
 * its `CreateTaskResult` arrived ({@link TaskRecord.seenAt}); a slow answer can put seconds between
 * the two. The warning and the judgement that a task the server no longer knows had expired count
 * from the earlier one ({@link earliestExpiryOf}): the server may drop the task from then on. The
 * backstop, which gives a task up, counts from the later one ({@link expiryOf}), so it never comes
 * early. The server's `createdAt` and `lastUpdatedAt` are readings of its own clocks, which may be
 * minutes away from ours, or from each other (nodes behind a load balancer, a clock set right while
 * the task runs), so they never decide that a task expired. A resumed task has no send time: both
 * count from the resume, late by the task's whole age then, never early.
 *
 * Where the ttl is a backstop, the server's timestamps can only keep a task, compared with each
 * other, never with our clock: a last look that finds the task still running with a `lastUpdatedAt`
 * later than the one held when the ttl ran out shows a server that still has the task and updates
 * it (D23: FastMCP 4 sends its queue's result retention, refreshed while the task is polled, as the
 * ttl, and stamps `lastUpdatedAt` on every read). Its backstop starts again: one more ttl from that
 * look (warned about once more), so a task the server stops updating is given up one ttl later.
 *
 * The last look is not a request of its own: it asks the poll loop for a read ahead of its cadence
 * (`poll.ts`), paced like every such read, and hears back how that read went ({@link TtlWatch.looked}).
 */
import type { Task } from '../types.js';
import { isoMs } from '../util/iso-time.js';
import type { WireFeatures } from '../wire/wire.js';
import type { TaskRecord } from './record.js';
import type { Scheduler } from '../util/scheduler.js';
import type { EngineConfig } from './types.js';

/** What the watch needs of its engine. */
export interface TtlWatchHost {
  readonly config: EngineConfig;
  readonly scheduler: Scheduler;
  /** The wire's features now (the wire may be replaced). */
  features(): WireFeatures;
  isStopping(record: TaskRecord): boolean;
  /** The ttl of a running task is near its end. */
  expiring(record: TaskRecord, expiresAt: number): void;
  /** Asks for one read of the task ahead of the poll cadence (as soon as the pacing allows). */
  readSoon(record: TaskRecord): void;
  /** Gives the task up as expired (`cause`: the server's answer that it no longer knows it, if so). */
  expired(record: TaskRecord, cause: unknown): void;
}

/**
 * Local clock time by which `record`'s task has surely reached the end of its ttl (counted from
 * when this client first saw it); `undefined` when the ttl is unlimited (`null`) or not usable. A
 * ttl of 0 (or less) is not usable: no conformant server sends one, and a server that means
 * "unlimited" by it would otherwise have every task warned about and, where the ttl is a backstop,
 * given up at once.
 */
export function expiryOf(record: TaskRecord): number | undefined {
  const ttl = record.task.ttl;
  return ttl !== null && ttl > 0 ? record.seenAt + ttl : undefined;
}

/**
 * Local clock time from which `record`'s task may have reached the end of its ttl (counted from
 * when its creating request was sent); `undefined` as for {@link expiryOf}.
 */
export function earliestExpiryOf(record: TaskRecord): number | undefined {
  const ttl = record.task.ttl;
  return ttl !== null && ttl > 0 ? record.sentAt + ttl : undefined;
}

/**
 * True when a task the server no longer knows had most likely reached its ttl (`skewMs`: how much
 * sooner than our reckoning the server may have dropped it). Only for a resumed task, whose age
 * this client cannot know, does the server's own `createdAt` count as well: a skew-prone reading,
 * good enough to word an error the server already caused, never used to give a task up.
 */
export function probablyExpired(record: TaskRecord, now: number, skewMs: number): boolean {
  const expiresAt = earliestExpiryOf(record);
  if (expiresAt === undefined) return false;
  if (now + skewMs >= expiresAt) return true;
  if (!record.resumed) return false;
  const task: Task = record.task;
  const created = isoMs(task.createdAt);
  return Number.isFinite(created) && now + skewMs >= created + (task.ttl ?? Infinity);
}

/**
 * How much later than its request timeout a read may be taken to settle (a late timer, the
 * promise callbacks after it) when the ttl timer waits for it ({@link TtlWatch.waitsForRead}).
 */
const READ_SLACK_MS = 1_000;

/** Where the backstop of a task stands once its ttl first ran out (see {@link TtlWatch.looked}). */
interface Backstop {
  /** `lastUpdatedAt` (ms, the server's clock) held when the backstop last ran out. */
  updatedMs: number;
  /** Local clock time of the last look that kept the task: its ttl counts from there. */
  renewedAt: number | undefined;
}

/** The ttl timers of one engine's tasks (one function each for every task: no closure per task). */
export class TtlWatch {
  /** The backstops that ran out at least once (few tasks: kept off the record, dropped with it). */
  private readonly backstops = new WeakMap<TaskRecord, Backstop>();

  constructor(private readonly host: TtlWatchHost) {}

  /** {@link expiryOf}, or one ttl after the last look that kept the task. */
  private end(record: TaskRecord): number | undefined {
    const renewedAt = this.backstops.get(record)?.renewedAt;
    const ttl = record.task.ttl;
    if (renewedAt === undefined || ttl === null || !(ttl > 0)) return expiryOf(record);
    return renewedAt + ttl;
  }

  /**
   * {@link earliestExpiryOf}, or one ttl after the last look that kept the task (the server renewed
   * the task while it answered that read: a moment off, far less than the warning's margin).
   */
  private earliestEnd(record: TaskRecord): number | undefined {
    const renewedAt = this.backstops.get(record)?.renewedAt;
    const ttl = record.task.ttl;
    if (renewedAt === undefined || ttl === null || !(ttl > 0)) return earliestExpiryOf(record);
    return renewedAt + ttl;
  }

  /**
   * Arms the warning for a running task nearing the end of its ttl ([V11]). A ttl that changed
   * (to unlimited, `null`, included) replaces the timers armed for the old one; an unusable one
   * arms nothing (see {@link expiryOf}).
   */
  arm(record: TaskRecord): void {
    const { scheduler } = this.host;
    scheduler.cancel(record.ttlTimer);
    const expiresAt = this.earliestEnd(record);
    if (expiresAt === undefined || record.terminal) {
      record.ttlArmed(undefined);
      return;
    }
    record.ttlArmed(scheduler.call(this.warningAt(record, expiresAt), this.near, record));
  }

  /**
   * {@link TtlWatch.arm} for a task just tracked whose first poll is due at `firstPollAt`: when
   * the warning comes after that poll, its timer is armed only once the poll's timer fires
   * ({@link TtlWatch.catchUp}), so a task that ends before its first poll (most short ones)
   * never has one. Nothing is late: the poll's timer fires at its time even while the connection
   * is lost, and a stop that cancels it arms the ttl first; the read that timer sends may keep it
   * put off until the read ends ({@link TtlWatch.waitsForRead}).
   */
  armAfter(record: TaskRecord, firstPollAt: number): void {
    const expiresAt = this.earliestEnd(record);
    if (expiresAt !== undefined && !record.terminal && this.warningAt(record, expiresAt) > firstPollAt)
      record.ttlPutOff();
    else this.arm(record);
  }

  /**
   * A poll timer fired, a stop began, or a read ({@link TtlWatch.waitsForRead}) ended: a ttl timer
   * put off by {@link TtlWatch.armAfter} is armed now.
   */
  catchUp(record: TaskRecord): void {
    if (record.ttlDeferred) this.arm(record);
  }

  /**
   * True when the ttl timer put off by {@link TtlWatch.armAfter} can also wait for the read the
   * poll timer that fired now is sending: that read settles (answered, failed, or timed out after
   * `readBoundMs`, its request timeout) well before the warning is due, and then catches up
   * ({@link TtlWatch.catchUp}). A task whose first read finds it ended (most short ones) then
   * never has a ttl timer.
   */
  waitsForRead(record: TaskRecord, readBoundMs: number): boolean {
    if (!record.ttlDeferred || record.terminal) return false;
    const expiresAt = this.earliestEnd(record);
    if (expiresAt === undefined) return false;
    return this.warningAt(record, expiresAt) > this.host.config.clock.now() + readBoundMs + READ_SLACK_MS;
  }

  /** When the warning of a task that expires at `expiresAt` is due. */
  private warningAt(record: TaskRecord, expiresAt: number): number {
    const { config } = this.host;
    const ttl = record.task.ttl!;
    const margin = config.ttlWarningMs ?? Math.min(60_000, Math.max(1_000, ttl / 10));
    return Math.max(config.clock.now(), expiresAt - margin);
  }

  /** A running task's ttl is near its end. */
  private readonly near = (record: TaskRecord): void => {
    record.ttlTimerFired();
    const expiresAt = this.end(record);
    const earliest = this.earliestEnd(record);
    if (record.settlement !== undefined || record.terminal || expiresAt === undefined || earliest === undefined) return;
    this.host.expiring(record, earliest);
    // [E13]: where the ttl is a backstop, a task still running when it elapses is given up as
    // expired (the server may fail or delete it at any time after). Counted from when this client
    // saw the task (or from the last look that kept it), it never ends before the server's.
    if (this.host.features().ttlBackstop) record.ttlArmed(this.host.scheduler.call(expiresAt, this.over, record));
  };

  /**
   * A running task's backstop ttl ran out ([E13]: the client may consider it no longer usable).
   * One last read first, observed like a poll: a result that has just come is delivered, not lost,
   * and a ttl the server extended (or made unlimited) keeps the task. The read is asked of the poll
   * loop, so it waits for a lost connection to come back like every poll (no handle fails because
   * the connection was lost) and keeps to the poll interval. The `lastUpdatedAt` held now is what
   * that read must move past to keep the task ({@link TtlWatch.looked}).
   */
  private readonly over = (record: TaskRecord): void => {
    record.ttlTimerFired();
    if (record.settlement !== undefined || record.terminal || this.host.isStopping(record)) return;
    const updatedMs = isoMs(record.task.lastUpdatedAt);
    const backstop = this.backstops.get(record);
    if (backstop === undefined) this.backstops.set(record, { updatedMs, renewedAt: undefined });
    else backstop.updatedMs = updatedMs;
    record.ttlRanOut();
    this.host.readSoon(record);
  };

  /**
   * The last look's read ended, `answered` (its snapshot already observed) or failed otherwise than
   * by the task being unknown (which the poll loop settles as vanished). A task that could not be
   * asked about, or still running past its ttl with the `lastUpdatedAt` it had when the ttl ran out,
   * is given up as expired. One whose ttl moved meanwhile (extended, or made unlimited, by this read
   * or a notification) is kept. So is one the answer shows still running with a later
   * `lastUpdatedAt` (the server's stamps compared with each other, never with our clock: D23): the
   * server still has the task and updates it, and its backstop starts again, one ttl from now.
   */
  looked(record: TaskRecord, answered: boolean): void {
    if (record.settlement !== undefined || record.terminal || this.host.isStopping(record)) return;
    const now = this.host.config.clock.now();
    const expiresAt = this.end(record);
    if (expiresAt === undefined || expiresAt > now) {
      // A snapshot that moved the ttl armed its timers again (none for an unusable ttl).
      if (record.ttlTimer === undefined) this.arm(record);
      return;
    }
    const backstop = this.backstops.get(record);
    // An unreadable stamp (NaN) never counts as moved.
    if (answered && backstop !== undefined && isoMs(record.task.lastUpdatedAt) > backstop.updatedMs) {
      backstop.renewedAt = now;
      this.arm(record);
      return;
    }
    this.host.expired(record, undefined);
  }
}
