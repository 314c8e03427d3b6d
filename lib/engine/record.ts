/**
 * The state of one tracked task: its latest snapshot, its observers and its settlement. This is
 * the callback core; the promise (`result()`) and async-iterator adapters sit on top of it. It does
 * no I/O: the engine feeds it snapshots and settles it.
 *
 * Merging follows [A11]: a terminal snapshot is sticky ([V5], [V6]); otherwise a snapshot older
 * than the one held (by `lastUpdatedAt`) is dropped, a tie goes to the later arrival, and an
 * identical snapshot yields nothing.
 */
import { TaskError } from '../errors.js';
import { isTerminalStatus, type CallToolResult, type Task } from '../types.js';
import type { Timer } from './scheduler.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { GroupMember, RequestGroup, TaskOutcome } from '../wire/wire.js';

/**
 * The abort reason of requests still open when tracking stops, and what such a request rejects
 * with; one shared object, so settling never builds an exception (and its stack) per task. It is
 * the library's own doing, never reported as a problem.
 */
export const TRACKING_STOPPED: TaskError = Object.freeze(new TaskError('Tracking of the task stopped'));
/** The life signal of a settled record: already aborted. */
const STOPPED_SIGNAL: AbortSignal = AbortSignal.abort(TRACKING_STOPPED);

export type { TaskObserver };

/** How a task ended for this client. */
export type Settlement =
  | { readonly ok: true; readonly result: CallToolResult }
  | { readonly ok: false; readonly error: TaskError };

/** Result of offering a snapshot to a record. */
export type MergeVerdict = 'changed' | 'same' | 'stale' | 'after-terminal';

function sameSnapshot(a: Task, b: Task): boolean {
  return (
    a.status === b.status &&
    a.statusMessage === b.statusMessage &&
    a.lastUpdatedAt === b.lastUpdatedAt &&
    a.createdAt === b.createdAt &&
    a.ttl === b.ttl &&
    a.pollInterval === b.pollInterval
  );
}

/**
 * One task's state. The engine owns the scheduling fields. The record is also the
 * {@link RequestGroup} of the task's requests: when tracking stops, every one still open is
 * stopped at once (no `AbortSignal` per request).
 */
export class TaskRecord implements RequestGroup {
  /** Latest accepted snapshot. */
  task: Task;
  private updatedMs: number;
  /** Settlement, once known. */
  settlement: Settlement | undefined;
  /** Clock time of the settlement. */
  settledAt: number | undefined;
  /** Error that ended the snapshot stream early (timeout, abort, close); undefined otherwise. */
  private streamError: TaskError | undefined;
  private streamEnded = false;
  private observers: Set<TaskObserver> | undefined;
  private settleListeners: Array<(settlement: Settlement) => void> | undefined;

  // ---- engine bookkeeping ----
  /** The scheduled poll, if any. */
  pollTimer: Timer | undefined;
  /** Earliest time the next poll may run; pushed back by every fresh observation. */
  nextPollAt = 0;
  /** Polls sent so far without a server `pollInterval`, for the gentle backoff (D2). */
  hintlessPolls = 0;
  /** Consecutive polls that failed or returned malformed data. */
  failedPolls = 0;
  pollInFlight = false;
  /** `tasks/result` requests open for this task. */
  outcomeFetches = 0;
  /** True while a `tasks/result` sent after the terminal status was seen is open. */
  terminalFetch = false;
  /** Clock time before which no new blocking `tasks/result` is opened (after one failed). */
  blockingRetryAt = 0;
  /** Keys of inline input requests already handed out ([E4]: unique over the task's life). */
  inputKeys: Set<string> | undefined;
  /** Ends the wire's interest in pushed snapshots for this task. */
  unwatch: (() => void) | undefined;
  /** The engine's connection generation when tracking began (a later one is a new connection). */
  generation = 0;
  /** The final payload, once fetched; never fetched twice (rmcp consumes it). */
  outcome: TaskOutcome | undefined;
  /** Deadline timer (timeoutMs), if any. */
  deadlineTimer: Timer | undefined;
  /** Timer of the "close to its ttl" warning, if any. */
  ttlTimer: Timer | undefined;
  /** Latest local clock time the task can have been created (see `ttl.ts`); Infinity until known. */
  createdBy = Infinity;
  /** False until observation starts (a resumed task waits until someone observes it). */
  active = false;
  /**
   * The task's requests in flight (the port adds and removes them), stopped when tracking stops:
   * the usual single one in a field, more (a poll beside a blocking `tasks/result`) in a set.
   */
  private member: GroupMember | undefined;
  private members: Set<GroupMember> | undefined;
  /** True once tracking stopped: the task's requests in flight were stopped, new ones fail at once. */
  stopped = false;
  /** Why the requests were stopped ({@link TRACKING_STOPPED}), once they were. */
  get stopReason(): unknown {
    return this.stopped ? TRACKING_STOPPED : undefined;
  }
  /** True once the server accepted a `tasks/cancel` for this task (a bare acknowledgement, [E6]). */
  cancelAcknowledged = false;
  /** Set while a cancel is in progress, so concurrent cancels share it. */
  cancelling: Promise<Task> | undefined;
  /** Wall-clock time tracking began. */
  readonly startedAt: number;
  /** Counters for metrics. */
  polls = 0;
  notifications = 0;
  retries = 0;
  private life: AbortController | undefined;

  /** The task id (fixed: a snapshot naming another task is never applied). */
  readonly taskId: string;

  constructor(
    task: Task,
    /** Name of the tool that created the task. */
    readonly toolName: string,
    startedAt: number,
    /** Timeout of each short request for this task. */
    readonly requestTimeoutMs: number,
    /** True while `task` is a placeholder not yet read from the server (a resumed task). */
    public provisional = false,
  ) {
    this.task = task;
    this.taskId = task.taskId;
    this.updatedMs = Date.parse(task.lastUpdatedAt);
    this.startedAt = startedAt;
  }

  /** Aborted when tracking stops; created on first use (only retries need it). */
  get lifeSignal(): AbortSignal {
    // A record that already settled must not start a wait (or a retry) that nothing will abort.
    if (this.settlement !== undefined) return STOPPED_SIGNAL;
    this.life ??= new AbortController();
    return this.life.signal;
  }

  /** A request of this task is open (called by the port). */
  join(member: GroupMember): void {
    if (this.member === undefined) this.member = member;
    else (this.members ??= new Set()).add(member);
  }

  /** A request of this task ended (called by the port). */
  leave(member: GroupMember): void {
    if (this.member === member) this.member = undefined;
    else this.members?.delete(member);
  }

  /** Stops every request in flight and any retry wait; later requests of the task fail at once. */
  abortAll(): void {
    this.stopped = true;
    this.life?.abort(TRACKING_STOPPED);
    const member = this.member;
    const members = this.members;
    this.member = undefined;
    this.members = undefined;
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
      this.updatedMs = Date.parse(next.lastUpdatedAt);
      if (this.observers !== undefined) for (const observer of this.observers) observer.next(next);
      if (isTerminalStatus(next.status) && !holdStream) this.endStream(undefined);
      return 'changed';
    }
    if (sameSnapshot(current, next)) return 'same';
    const nextMs = Date.parse(next.lastUpdatedAt);
    if (this.streamEnded || isTerminalStatus(current.status)) {
      // [A11]: a snapshot that is not newer than the terminal one is ordinary reordering (a poll
      // answered before a notification overtook it, or whole-second timestamps, D4): dropped
      // silently. Only a strictly newer one after a terminal status shows a broken server.
      if (!(nextMs > this.updatedMs)) return 'stale';
      return 'after-terminal';
    }
    if (!isTerminalStatus(next.status) && nextMs < this.updatedMs) return 'stale';
    this.task = next;
    this.updatedMs = nextMs;
    if (this.observers !== undefined) for (const observer of this.observers) observer.next(next);
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
      observer.end(this.streamError);
      return () => {};
    }
    const observers = (this.observers ??= new Set());
    observers.add(observer);
    return () => {
      observers.delete(observer);
    };
  }


  /** Ends the snapshot stream for every observer (with `error` when tracking stopped early). */
  endStream(error: TaskError | undefined): void {
    if (this.streamEnded) return;
    this.streamEnded = true;
    this.streamError = error;
    if (this.observers === undefined || this.observers.size === 0) return;
    const observers = [...this.observers];
    this.observers.clear();
    for (const observer of observers) observer.end(error);
  }

  /** Calls `listener` once with the settlement (at once if already settled). */
  onSettled(listener: (settlement: Settlement) => void): () => void {
    if (this.settlement !== undefined) {
      listener(this.settlement);
      return () => {};
    }
    (this.settleListeners ??= []).push(listener);
    return () => {
      this.settleListeners = this.settleListeners?.filter((l) => l !== listener);
    };
  }

  /** Settles once; later calls are ignored. Ends the stream (with the error for local failures). */
  settle(settlement: Settlement, at: number, streamError?: TaskError): boolean {
    if (this.settlement !== undefined) return false;
    this.settlement = settlement;
    this.settledAt = at;
    this.endStream(streamError);
    const listeners = this.settleListeners;
    this.settleListeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(settlement);
    return true;
  }
}
