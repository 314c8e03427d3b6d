/**
 * The memory layout of a task's record (`TaskRecord`, record.ts): its fields, their order and
 * their packing, benchmarked per in-flight task. Every in-flight task carries the fields below;
 * the state few tasks need lives in {@link RecordExtras}, made on first use; the yes/no state is one
 * small integer of bits (record-flags.ts); clock times are kept as offsets (`util/epoch.ts`).
 *
 * The record is built in floors, one class each, with every field declared here (so the
 * object's shape is the same as one class's): this layout, the read-only view of the state
 * (record-view.ts: the getters and the listeners), and the event-named methods that change it
 * (record-schedule.ts, record-input.ts, record.ts). Only those change the task's state (the view's
 * listeners add listeners, nothing more).
 */
import type { CallToolResult, Task } from '../types.js';
import type { Timer } from '../util/scheduler.js';
import { EPOCH, offsetOf } from '../util/epoch.js';
import type { GroupMember, TaskPayload } from '../wire/wire.js';
import { RecordExtras, type Settlement } from './record-extras.js';
import * as Flag from './record-flags.js';

/** The fields of a task's record and their packing; see the module comment. */
export abstract class RecordLayout {
  // The fields, their order and their packing are the record's memory layout (benchmarked per
  // in-flight task): the state few tasks need lives in `extras`, the yes/no state in `flags`, and
  // clock times as offsets (`util/epoch.ts`).
  /** Latest accepted snapshot. */
  protected latest: Task;
  protected settledWith: Settlement | undefined = undefined;
  /**
   * Settles `result()`'s promise, once asked for: its resolve function only (no listener closure,
   * and the reject function is left to the garbage collector); a failure resolves it with a
   * thenable that rejects (`rejecting`, record-extras.ts).
   */
  protected settleResult: ((result: CallToolResult | PromiseLike<CallToolResult>) => void) | undefined = undefined;
  /** The state few tasks need, made on first use (every in-flight task carries the fields above). */
  protected extras: RecordExtras | undefined = undefined;
  /** The record's yes/no state, one bit each (record-flags.ts): one small integer, not a field each. */
  protected flags: number = Flag.RawNextPollAt;
  protected pollJob: Timer | undefined = undefined;
  /** Held as given (0) until first set (`Flag.RawNextPollAt` starts set). */
  protected nextPollStored = 0;
  protected finalPayload: TaskPayload | undefined = undefined;
  protected ttlJob: Timer | undefined = undefined;
  protected readonly seenStored: number;
  protected readonly sentStored: number;
  /**
   * The task's requests in flight (the port adds and removes them), stopped when tracking stops:
   * the usual single one in a field, more (a poll beside a blocking `tasks/result`) in a set.
   */
  protected member: GroupMember | undefined = undefined;
  protected readonly startedStored: number;
  protected pollCount = 0;
  protected notificationCount = 0;

  constructor(
    task: Task,
    /** Name of the tool that created the task. */
    readonly toolName: string,
    startedAt: number,
    /** Clock time this client first saw the task (see `seenAt`). */
    seenAt: number,
    /** Clock time the request that created the task was sent (see `sentAt`). */
    sentAt: number,
    /** Timeout of each short request for this task. */
    readonly requestTimeoutMs: number,
    /** True while `task` is a placeholder not yet read from the server (a resumed task). */
    provisional = false,
  ) {
    this.latest = task;
    if (provisional) this.flags |= Flag.Provisional | Flag.Resumed;
    this.startedStored = this.storeTime(startedAt, Flag.RawStartedAt);
    this.seenStored = this.storeTime(seenAt, Flag.RawSeenAt);
    this.sentStored = this.storeTime(sentAt, Flag.RawSentAt);
  }

  protected flag(bit: number): boolean {
    return (this.flags & bit) !== 0;
  }
  protected setFlag(bit: number, on: boolean): void {
    this.flags = on ? this.flags | bit : this.flags & ~bit;
  }

  /** A time field's value (clock times are kept compact: `util/epoch.ts`). */
  protected timeOf(stored: number, raw: number): number {
    return (this.flags & raw) !== 0 ? stored : stored + EPOCH;
  }

  /** What a time field stores for `value`, with its flag set to match (`util/epoch.ts`). */
  protected storeTime(value: number, raw: number): number {
    const offset = offsetOf(value);
    const exact = offset === offset;
    this.setFlag(raw, !exact);
    return exact ? offset : value;
  }

  protected more(): RecordExtras {
    return (this.extras ??= new RecordExtras());
  }
}
