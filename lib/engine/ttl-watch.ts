/**
 * Watching each running task's ttl: the skew-proof bound of its creation time kept up to date
 * from every snapshot (`ttl.ts`), a warning when the ttl nears its end ([V11]: the task may vanish
 * then), and where the ttl is a backstop ([E13]), one last look at the task once it elapsed and
 * giving it up if it still runs.
 */
import type { Task } from '../types.js';
import type { ErrorClass, WireFeatures, WireSnapshot } from '../wire/wire.js';
import type { TaskRecord } from './record.js';
import type { Scheduler } from './scheduler.js';
import { createdNoLaterThan, localExpiry } from './ttl.js';
import type { EngineConfig, SnapshotSource } from './types.js';

/** A creation bound tighter than the held one by less than this does not re-arm the ttl timers. */
const TTL_ANCHOR_STEP_MS = 1_000;

/** What the watch needs of its engine. */
export interface TtlWatchHost {
  readonly config: EngineConfig;
  readonly scheduler: Scheduler;
  /** The wire's features now (the wire may be replaced). */
  features(): WireFeatures;
  isStopping(record: TaskRecord): boolean;
  /** The ttl of a running task is near its end. */
  expiring(record: TaskRecord, expiresAt: number): void;
  /** True while the connection is lost. */
  paused(): boolean;
  /** Resolves when the connection is back; rejects when `signal` aborts. */
  whenResumed(signal: AbortSignal): Promise<void>;
  /** One read of the task (`tasks/get`), in its request group. */
  read(record: TaskRecord): Promise<WireSnapshot>;
  /** Offers a snapshot read for the task, as a poll's. */
  observe(record: TaskRecord, snapshot: WireSnapshot): void;
  classify(error: unknown): ErrorClass;
  /** Gives the task up as expired (`cause`: the server's answer that it no longer knows it, if so). */
  expired(record: TaskRecord, cause: unknown): void;
}

/** The ttl timers of one engine's tasks (one function each for every task: no closure per task). */
export class TtlWatch {
  constructor(private readonly host: TtlWatchHost) {}

  /** Sets the first bound of a newly tracked task's creation time, from its first snapshot. */
  start(record: TaskRecord, now: number): void {
    record.createdBy = createdNoLaterThan(record.task, now);
  }

  /**
   * Tightens the creation bound of `record` with a snapshot the server sent (even a stale one):
   * it shows when the task was created, on our clock. A payload read that stands in for a
   * snapshot (`result`) may carry a local timestamp; without a ttl nothing needs the bound; the
   * same timestamps read later never tighten it.
   * @param previous the snapshot the record held before this one was applied.
   * @returns true when the bound moved enough that the ttl timers should be armed again.
   */
  bound(record: TaskRecord, task: Task, previous: Task, source: SnapshotSource): boolean {
    const sameStamps = Number.isFinite(record.createdBy) && task.lastUpdatedAt === previous.lastUpdatedAt && task.createdAt === previous.createdAt;
    const createdBy = source === 'result' || task.ttl === null || sameStamps ? Infinity : createdNoLaterThan(task, this.host.config.clock.now());
    const tighter = createdBy < record.createdBy - TTL_ANCHOR_STEP_MS;
    if (createdBy < record.createdBy) record.createdBy = createdBy;
    return tighter;
  }

  /**
   * Arms the warning for a running task nearing the end of its ttl ([V11]). The ttl runs on the
   * local clock from the creation bound; a ttl that changed (to unlimited, `null`, included)
   * replaces the timers armed for the old one. A ttl of 0 (or less) arms nothing: no conformant
   * server sends one, and a server that means "unlimited" by it would otherwise have every task
   * warned about and, where the ttl is a backstop, given up at once.
   */
  arm(record: TaskRecord): void {
    const { scheduler, config } = this.host;
    scheduler.cancel(record.ttlTimer);
    record.ttlTimer = undefined;
    const ttl = record.task.ttl;
    const expiresAt = localExpiry(ttl, record.createdBy);
    if (ttl === null || !(ttl > 0) || expiresAt === undefined || record.terminal) return;
    const margin = config.ttlWarningMs ?? Math.min(60_000, Math.max(1_000, ttl / 10));
    record.ttlTimer = scheduler.call(Math.max(config.clock.now(), expiresAt - margin), this.near, record);
  }

  /**
   * A running task's ttl is near its end. The expiry is read again here: a bound of the creation
   * time tightened since the timer was armed (by less than the re-arm step) only makes it more exact.
   */
  private readonly near = (record: TaskRecord): void => {
    record.ttlTimer = undefined;
    const expiresAt = localExpiry(record.task.ttl, record.createdBy);
    if (record.settlement !== undefined || record.terminal || expiresAt === undefined) return;
    this.host.expiring(record, expiresAt);
    // [E13]: where the ttl is a backstop, a task still running when it elapses is given up as
    // expired (the server may fail or delete it at any time after).
    if (this.host.features().ttlBackstop) record.ttlTimer = this.host.scheduler.call(expiresAt, this.over, record);
  };

  /** A running task's ttl elapsed where the ttl is a backstop ([E13]). */
  private readonly over = (record: TaskRecord): void => {
    record.ttlTimer = undefined;
    if (record.settlement === undefined && !record.terminal && !this.host.isStopping(record)) this.lastLook(record);
  };

  /**
   * The backstop ttl of a running task elapsed ([E13]: the client may consider it no longer
   * usable). One last read first, observed like a poll: a result that has just come is delivered,
   * not lost, and a ttl the server extended (or made unlimited) keeps the task. A task still
   * running past its ttl, or that cannot be asked about, is given up as expired; one the server
   * no longer knows is expired as well. While the connection is lost the look waits for it (no
   * handle fails because the connection was lost; the new one reads every task anyway).
   */
  private lastLook(record: TaskRecord): void {
    const host = this.host;
    if (host.paused()) {
      // Settling or stopping the task aborts its life signal, which ends the wait.
      host.whenResumed(record.lifeSignal).then(
        () => this.lastLook(record),
        () => {},
      );
      return;
    }
    const giveUp = (cause: unknown): void => {
      if (record.settlement !== undefined || record.terminal || host.isStopping(record)) return;
      // A snapshot read meanwhile (this one, or a poll beside it) may have moved the ttl: its
      // timers are armed again, or it has not elapsed (or is unlimited) any more.
      if (record.ttlTimer !== undefined) return;
      const expiresAt = localExpiry(record.task.ttl, record.createdBy);
      if (expiresAt === undefined || expiresAt > host.config.clock.now()) {
        this.arm(record);
        return;
      }
      host.expired(record, cause);
    };
    host.read(record).then(
      (snapshot) => {
        if (record.settlement !== undefined) return;
        host.observe(record, snapshot);
        giveUp(undefined);
      },
      (error: unknown) => {
        if (host.paused()) this.lastLook(record);
        else giveUp(host.classify(error) === 'vanished' ? error : undefined);
      },
    );
  }
}
