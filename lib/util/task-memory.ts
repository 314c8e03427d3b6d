/**
 * Task ids a client remembers after it stopped tracking them (the input router's, untagged
 * input's): each until the task's ttl has passed, counted from when it was remembered (for good, for
 * a task without one), at most {@link MAX_REMEMBERED}, the oldest forgotten first: a bound on memory.
 * The oldest whose ttl has passed are dropped as new ones come.
 */

/** Most tasks one {@link TaskMemory} remembers. */
export const MAX_REMEMBERED = 1_000;

/** Remembered task ids, each with a value. */
export class TaskMemory<V> {
  private readonly entries = new Map<string, { readonly until: number; readonly value: V }>();

  /** `now`: the client's clock. */
  constructor(private readonly now: () => number) {}

  /** Remembers `taskId`, whose ttl is `ttl`, with `value`, as the newest. */
  add(taskId: string, ttl: number | null | undefined, value: V): void {
    const entries = this.entries;
    entries.delete(taskId);
    const now = this.now();
    entries.set(taskId, { until: typeof ttl === 'number' ? now + ttl : Infinity, value });
    if (entries.size > MAX_REMEMBERED) entries.delete(entries.keys().next().value!);
    // The oldest ones whose ttl has passed let go of what they hold (a detached handle) now, not
    // only when asked about.
    for (const [id, entry] of entries) {
      if (entry.until > now) break;
      entries.delete(id);
    }
  }

  /** The entry of `taskId` while it is remembered. */
  get(taskId: string): { readonly value: V } | undefined {
    const entry = this.entries.get(taskId);
    if (entry === undefined || entry.until > this.now()) return entry;
    this.entries.delete(taskId);
    return undefined;
  }

  /** How many are remembered now (those whose ttl has passed are forgotten). */
  get size(): number {
    const now = this.now();
    for (const [taskId, entry] of this.entries) if (entry.until <= now) this.entries.delete(taskId);
    return this.entries.size;
  }
}
