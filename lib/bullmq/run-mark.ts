/**
 * A run's calling mark: written in the job before the run sends its `tools/call`, so that a worker
 * that takes the job over knows the tool may have been called, and kept with whether a call went
 * out since, so that the run's own mark is not taken for another worker's uncertain call. Also the
 * job's deadline as the run measures it.
 */
import { TaskQueueFullError } from '../index.js';
import type { RunContext } from './run-context.js';
import { Overtaken, goneEnd } from './run-store.js';
import type { ToolJobData } from './types.js';

/** A calling mark a run wrote: its time, and the run's random id (see `ToolJobData.calling`). */
export interface RunMark {
  readonly at: number;
  readonly by: string;
}

/**
 * Whether `calling` (a stored mark) is `mark`: the same time and the same run. Another worker's
 * mark written in the same millisecond is not the run's own.
 */
export function sameMark(calling: unknown, mark: RunMark | undefined): boolean {
  if (mark === undefined || typeof calling !== 'object' || calling === null) return false;
  const { at, by } = calling as { at?: unknown; by?: unknown };
  return at === mark.at && by === mark.by;
}

/**
 * Whether stored job data holds `mark` as its calling mark and no task: a refused write of the
 * mark was refused because of the run's own (the script ran twice: the client sent it again
 * after a reconnect, and the first run made the write).
 */
function isOwnMark(stored: unknown, mark: RunMark | undefined): boolean {
  if (mark === undefined || typeof stored !== 'object' || stored === null) return false;
  const { task, calling } = stored as { task?: unknown; calling?: unknown };
  return task === undefined && sameMark(calling, mark);
}

/** The calling marks of one run (see the module comment). */
export class CallingMarks {
  /** The mark this run wrote last. */
  private mark: RunMark | undefined = undefined;
  /** A `tools/call` of this run went out (or may have): the tool may have been called by this run. */
  private sent = false;

  /** @param runId the run's random id, in its marks. */
  constructor(private readonly runId: string) {}

  /** Whether `calling` (a stored mark) is this run's own. */
  isOwn(calling: unknown): boolean {
    return sameMark(calling, this.mark);
  }

  /**
   * Whether the job's calling mark may stand for a tool already called: another run's mark, or
   * this run's own once a call of this run went out. A mark of this run with no call sent since
   * (its write's answer was lost, say) is no uncertain call.
   */
  uncertain(data: ToolJobData): boolean {
    return data.calling !== undefined && !(isOwnMark(data, this.mark) && !this.sent);
  }

  /**
   * Writes this run's mark over the job's (unless another run stored first).
   * @returns the job's data with the mark.
   * @throws Overtaken when another run's mark or reference is stored; the run's end when the job is gone.
   */
  async claim(context: RunContext, jobId: string, data: ToolJobData): Promise<ToolJobData> {
    const earlier = this.mark;
    // Set before the write: a write that failed may still have been made, and this mark is ours.
    this.mark = { at: Date.now(), by: this.runId };
    const marked: ToolJobData = { ...data, calling: this.mark };
    const claim = await context.write(jobId, marked, { mark: data.calling?.at });
    if (claim.kind === 'gone') throw goneEnd(undefined);
    if (claim.kind === 'refused' && !isOwnMark(claim.stored, this.mark)) {
      this.mark = earlier;
      throw new Overtaken(claim.stored);
    }
    return marked;
  }

  /**
   * Runs `call`, which calls `sending()` just before it sends the `tools/call`. A call refused
   * before anything was sent (the client's queue is full) leaves the run as it was.
   */
  async calling<T>(call: (sending: () => void) => Promise<T>): Promise<T> {
    const before = this.sent;
    try {
      return await call(() => {
        this.sent = true;
      });
    } catch (error) {
      if (error instanceof TaskQueueFullError) this.sent = before;
      throw error;
    }
  }
}

/** The time left before the job's deadline (0 once it passed), or `undefined` without one. */
export function timeLeft(data: ToolJobData): number | undefined {
  const { deadlineAt } = data;
  return deadlineAt === undefined ? undefined : Math.max(0, deadlineAt - Date.now());
}

/**
 * `ms`, cut to the time left before the job's deadline and 1 ms past it (0 once it passed): a
 * timer may fire up to a millisecond early by `Date.now()`, and a wait cut by the deadline must
 * end with the deadline passed, not with 1 ms left for another try.
 */
export function withinDeadline(data: ToolJobData, ms: number): number {
  const { deadlineAt } = data;
  return deadlineAt === undefined ? ms : Math.max(0, Math.min(ms, deadlineAt - Date.now() + 1));
}
