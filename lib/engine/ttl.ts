/**
 * A task's ttl on the local clock.
 *
 * A server states `createdAt` on its own clock, which may be minutes away from ours. Comparing it
 * with the local clock would call a task expired that the server still runs (or a live task
 * vanished). Instead the ttl is anchored on the local clock with a bound that holds whatever the
 * skew: a snapshot received at local time `t` shows that at least `lastUpdatedAt - createdAt`
 * (two readings of the server's own clock) had elapsed since creation, so the task was created no
 * later than `t - (lastUpdatedAt - createdAt)` in local time. The earliest such bound over all
 * snapshots is kept. Expiry estimated from it is never early: the library may give a task up late,
 * never before the server could have dropped it ([E13], [V11]).
 */
import type { Task } from '../types.js';

/**
 * The latest local clock time at which `task` can have been created, given that this snapshot of
 * it was received at local time `now`. `Infinity` when the snapshot's timestamps are unreadable.
 */
export function createdNoLaterThan(task: Task, now: number): number {
  const created = Date.parse(task.createdAt);
  const updated = Date.parse(task.lastUpdatedAt);
  if (!Number.isFinite(created)) return Infinity;
  const elapsed = Number.isFinite(updated) ? Math.max(0, updated - created) : 0;
  return now - elapsed;
}

/**
 * Local clock time at which a task created no later than `createdBy` reaches the end of `ttl`;
 * `undefined` when the ttl is unlimited or the creation time is unknown.
 */
export function localExpiry(ttl: number | null, createdBy: number): number | undefined {
  if (ttl === null || !Number.isFinite(createdBy)) return undefined;
  return createdBy + ttl;
}

/**
 * True when a task the server no longer knows had most likely reached its ttl: either by the local
 * bound (certain) or by the server's own `createdAt` (the skew-prone reading, good enough to word
 * an error the server already caused, never used to give a task up).
 */
export function probablyExpired(task: Task, createdBy: number, now: number, skewMs: number): boolean {
  if (task.ttl === null) return false;
  const local = localExpiry(task.ttl, createdBy);
  if (local !== undefined && now + skewMs >= local) return true;
  const created = Date.parse(task.createdAt);
  return Number.isFinite(created) && now + skewMs >= created + task.ttl;
}
