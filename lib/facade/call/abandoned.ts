/**
 * Creations given up before their answer (see `LaunchParts.abandoned`, launch-parts.ts; the
 * follow-ups are made in give-up.ts): their follow-ups, each settling once the answer came and any
 * task it created got its one `tasks/cancel`. `close()` waits for them, within a bound, before it
 * closes an SDK client it made.
 */
import type { Scheduler } from '../../util/scheduler.js';

/** The follow-ups still under way. */
export class Abandoned {
  private readonly followUps = new Set<Promise<void>>();

  constructor(private readonly scheduler: Scheduler) {}

  /** Holds `followUp` until it settles. */
  add(followUp: Promise<void>): void {
    this.followUps.add(followUp);
    void followUp.finally(() => this.followUps.delete(followUp));
  }

  /** Waits up to `ms` for the follow-ups under way now. */
  async settle(ms: number): Promise<void> {
    if (this.followUps.size === 0 || ms <= 0) return;
    const bound = this.scheduler.expiry(ms);
    try {
      await Promise.race([Promise.allSettled([...this.followUps]), bound.expired]);
    } finally {
      bound.clear();
    }
  }
}
