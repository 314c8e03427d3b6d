/**
 * What a task record is built from besides its own fields: the stop reason, the settlement and
 * kept-answer types, the snapshot comparison of a merge, and the rarely needed state ({@link RecordExtras}).
 */
import type { CallInstrument } from '../api/index.js';
import { TaskError } from '../errors.js';
import type { CallToolResult, JsonObject, Task } from '../types.js';
import type { Timer } from '../util/scheduler.js';
import { keepShape } from '../util/shapes.js';
import type { TaskObserver } from '../util/snapshot-iterator.js';
import type { GroupMember, InputAnswers, TaskPayload } from '../wire/wire.js';

/**
 * The abort reason of requests still open when tracking stops, and what such a request rejects
 * with; one shared object, so settling never builds an exception (and its stack) per task. It is
 * the library's own doing, never reported as a problem.
 */
export const TRACKING_STOPPED: TaskError = Object.freeze(new TaskError('Tracking of the task stopped'));
/** The life signal of a settled record: already aborted. */
export const STOPPED_SIGNAL: AbortSignal = AbortSignal.abort(TRACKING_STOPPED);

/** How a task ended for this client. */
export type Settlement =
  { readonly ok: true; readonly result: CallToolResult } | { readonly ok: false; readonly error: TaskError };

/**
 * An answer to one inline input request (its callback already returned it) that a `tasks/update`
 * failed to deliver, kept to be sent again ([E23]); or one held back, unsent (`sends` 0), because
 * the task no longer listed its key when it was ready ([E5]), for the next poll to send or drop.
 */
export interface KeptAnswer {
  /** The answer, as the callback gave it. */
  readonly response: JsonObject;
  /** `tasks/update` rounds that carried it so far (each retries transient failures itself). */
  sends: number;
  /** A round carrying it is under way. */
  sending: boolean;
  /**
   * `lastUpdatedAt` (ms) of the read that last listed its key, `-Infinity` when none did (an
   * answer for a key already withdrawn): a read that leaves the key out drops the answer only when
   * it is newer ([A11]: a tie may be a replica lagging behind).
   */
  listedAt: number;
}

/**
 * A thenable that rejects with `error`: resolving a promise with it rejects that promise (and, not
 * being a promise, it is never reported as an unhandled rejection of its own).
 */
export function rejecting(error: TaskError): PromiseLike<never> {
  const thenable = {
    then(_fulfilled: unknown, rejected?: (reason: unknown) => unknown): void {
      rejected?.(error);
    },
  };
  return thenable as unknown as PromiseLike<never>;
}

/** Result of offering a snapshot to a record. */
export type MergeVerdict = 'changed' | 'same' | 'stale' | 'after-terminal';

/** Whether `b` holds nothing new over `a` (the fields a merge compares). */
export function sameSnapshot(a: Task, b: Task): boolean {
  return (
    a.status === b.status &&
    a.statusMessage === b.statusMessage &&
    a.lastUpdatedAt === b.lastUpdatedAt &&
    a.createdAt === b.createdAt &&
    a.ttl === b.ttl &&
    a.pollInterval === b.pollInterval
  );
}

/** A record's rarely needed state (failures, cancels, deadlines, observers), made on first use. */
export class RecordExtras {
  /** Error that ended the snapshot stream early (timeout, abort, close); undefined otherwise. */
  streamError: TaskError | undefined = undefined;
  observers: Set<TaskObserver> | undefined = undefined;
  /** Settle listeners (a deadline's or a signal's cleanup, a concurrency slot). */
  settleListeners: Array<(settlement: Settlement) => void> | undefined = undefined;
  hintlessPolls = 0;
  failedPolls = 0;
  hardPollFailures = 0;
  /** Reads answered while the task was terminal and its payload, which a read must bring, missing. */
  readsWithoutPayload = 0;
  blockingRetryAt = 0;
  /** The input request keys handed out so far, each with the fingerprint of its request ([E4]). */
  inputKeys: Map<string, string> | undefined = undefined;
  /** Keys the server reused for another request ([E4] broken): no answer goes under them any more. */
  changedKeys: Set<string> | undefined = undefined;
  undelivered: Map<string, KeptAnswer> | undefined = undefined;
  /**
   * The input request keys the task has outstanding, as the latest current snapshot that said so
   * told (`undefined` until one did): those listed while `input_required`, none in any other status.
   */
  outstanding: ReadonlySet<string> | undefined = undefined;
  deadlineTimer: Timer | undefined = undefined;
  /** Requests in flight beyond the record's one `member`. */
  members: Set<GroupMember> | undefined = undefined;
  cancelAcknowledged = false;
  cancelling: Promise<Task> | undefined = undefined;
  retries = 0;
  life: AbortController | undefined = undefined;
  /** When the last read asked for ahead of the poll cadence went out. */
  hastenedAt = -Infinity;
  /** What watches the task's requests (instrumentation), if anything does. */
  instrument: CallInstrument | undefined = undefined;
  /** The input that callbacks answer for the task's call, when it has callbacks of its own ([E35]). */
  input: InputAnswers | undefined = undefined;
  /**
   * The JSON-RPC error that answered the blocking `tasks/result` once the task was known failed:
   * most likely the task's own error (`payload.ts`), kept while a fresh request asks again.
   */
  waitError: TaskPayload | undefined = undefined;
}

// Its hidden class outlives an idle spell (util/shapes.ts).
keepShape(new RecordExtras());
