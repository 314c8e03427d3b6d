/**
 * The doctor's `timeoutMs`: one bound for the whole run. The probes are cut short a reserve before
 * its end, so that cancelling the tasks the doctor started and closing its sessions fit in the
 * time; the checks a probe had not reached then, and the probes not started, are not testable and
 * say that the deadline cut them short (the report lists them in `cutShort`).
 */
import type { RowSink } from './rows.js';
import { ms } from './shape.js';
import type { DoctorWire } from './types.js';

/** Most of the reserve: enough to read and cancel a few tasks and close two sessions. */
export const RESERVE_MS = 5_000;

/** What the deadline keeps back for the clean-up and closing: {@link RESERVE_MS}, or a quarter of `timeoutMs` when that is less. */
export function reserveOf(timeoutMs: number): number {
  return Math.min(RESERVE_MS, Math.floor(timeoutMs / 4));
}

/** The run's deadline, `timeoutMs` after `startedAt` (clock times of `now`). */
export class RunBound {
  /** When the probes stop. */
  readonly cutAt: number;
  /** When the run ends: the clean-up stops a fifth of the reserve before, closing the sessions gets the rest. */
  readonly endAt: number;
  private readonly closeMs: number;
  /** The checks cut short, in the order they were. */
  readonly cutShort: Array<{ readonly wire: DoctorWire; readonly check: string }> = [];

  constructor(
    readonly timeoutMs: number,
    startedAt: number,
    private readonly now: () => number = Date.now,
  ) {
    const reserve = reserveOf(timeoutMs);
    this.cutAt = startedAt + timeoutMs - reserve;
    this.endAt = startedAt + timeoutMs;
    this.closeMs = Math.floor(reserve / 5);
  }

  /** True once the probes must stop. */
  passed(): boolean {
    return this.now() >= this.cutAt;
  }

  /** How long the probes may still run, in ms (0 once {@link passed}). */
  untilCut(): number {
    return Math.max(0, this.cutAt - this.now());
  }

  /** How long cancelling the tasks may still take, in ms. */
  forCleanUp(): number {
    return Math.max(0, this.endAt - this.closeMs - this.now());
  }

  /** How long is left until the end, in ms. */
  left(): number {
    return Math.max(0, this.endAt - this.now());
  }

  /** Marks every check of `checks` that has no row yet as cut short by the deadline. */
  cut(rows: RowSink, checks: readonly string[]): void {
    const why = `cut short by the run's deadline (timeoutMs ${ms(this.timeoutMs)})`;
    for (const check of checks) {
      if (rows.has(check)) continue;
      rows.untestable(check, why);
      this.cutShort.push({ wire: rows.wire, check });
    }
  }
}
