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
import { isoMs } from '../util/iso-time.js';

/**
 * The latest local clock time at which `task` can have been created, given that this snapshot of
 * it was received at local time `now`. `Infinity` when the snapshot's timestamps are unreadable.
 */
export function createdNoLaterThan(task: Task, now: number): number {
  const created = isoMs(task.createdAt);
  const updated = isoMs(task.lastUpdatedAt);
  if (!Number.isFinite(created)) return Infinity;
  // Coarse stamps (whole seconds, D4) may each be off by up to their resolution: the elapsed time
  // they show can exceed the real one by as much, so it is taken that much shorter.
  const coarseness = Math.max(resolution(task.createdAt), resolution(task.lastUpdatedAt));
  const elapsed = Number.isFinite(updated) ? Math.max(0, updated - created - coarseness) : 0;
  return now - elapsed;
}

/** How coarse an ISO 8601 time is, in ms: 1,000 for whole seconds, 100 for tenths, 0 from milliseconds on. */
function resolution(stamp: string): number {
  // Read in place (every snapshot with a ttl comes here): the digits after the time's '.'.
  const time = stamp.indexOf('T');
  const dot = time < 0 ? -1 : stamp.indexOf('.', time);
  let digits = 0;
  if (dot >= 0) while (digits < 3 && isDigit(stamp.charCodeAt(dot + 1 + digits))) digits += 1;
  return digits >= 3 ? 0 : 10 ** (3 - digits);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
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
  // A ttl of 0 is no usable ttl (see TtlWatch.arm): it never explains a vanished task.
  if (task.ttl === null || !(task.ttl > 0)) return false;
  const local = localExpiry(task.ttl, createdBy);
  if (local !== undefined && now + skewMs >= local) return true;
  const created = isoMs(task.createdAt);
  return Number.isFinite(created) && now + skewMs >= created + task.ttl;
}
