/**
 * Pure delay arithmetic: how long to wait before the next poll, and before the next retry. One
 * backoff function serves both, so polls after failures and retried requests slow down alike.
 */
import type { RetryPolicy } from '../api/index.js';
import type { Task } from '../types.js';

/** How polls are spaced. */
export interface PollTiming {
  /** Never poll sooner than this, whatever the server says (guards against `pollInterval: 0`). */
  readonly minPollIntervalMs: number;
  /**
   * Never wait longer than this between polls (guards against enormous `pollInterval`s; by default
   * an hour, so a real interval is honoured).
   */
  readonly maxPollIntervalMs: number;
  /** First delay when the server gives no `pollInterval` (D2); it then grows by `backoff`. */
  readonly initialPollIntervalMs: number;
  /** Ceiling of the hint-less backoff. */
  readonly hintlessMaxPollIntervalMs: number;
}

/** Growth factor of the hint-less poll backoff. */
const HINTLESS_FACTOR = 1.5;

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

/**
 * Exponential backoff with jitter for the `attempt`-th retry (1-based): a value in
 * `[base * (1 - jitter), base]` where `base = min(maxDelayMs, minDelayMs * factor^(attempt-1))`.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const growth = policy.factor ** Math.max(0, attempt - 1);
  // A growth past the largest number (a huge factor) is capped, never 0 * Infinity = NaN.
  const base = policy.minDelayMs === 0 ? 0 : Math.min(policy.maxDelayMs, policy.minDelayMs * growth);
  const delay = Math.round(base * (1 - policy.jitter * random()));
  return Number.isFinite(delay) ? delay : policy.maxDelayMs;
}

/** The hint-less backoff after `polls` reads: from `initialPollIntervalMs`, growing to `hintlessMaxPollIntervalMs`. */
function hintlessDelay(polls: number, timing: PollTiming): number {
  return Math.min(timing.hintlessMaxPollIntervalMs, timing.initialPollIntervalMs * HINTLESS_FACTOR ** polls);
}

/**
 * Delay before the `round`-th (1-based) consecutive retry of a `tools/call` the server answered
 * with request state only, no input requests (load shedding, [E17]). The server gives no hint of
 * when to come back, so this is the hint-less poll backoff (from `initialPollIntervalMs`, growing
 * to `hintlessMaxPollIntervalMs`), with the retry policy's jitter so that clients shed together
 * do not come back together, clamped to `[minPollIntervalMs, maxPollIntervalMs]` like polls.
 */
export function sheddingDelay(round: number, timing: PollTiming, retry: RetryPolicy, random: () => number): number {
  const base = hintlessDelay(Math.max(0, round - 1), timing);
  const delay = Math.round(base * (1 - retry.jitter * random()));
  return clamp(
    Number.isFinite(delay) ? delay : timing.hintlessMaxPollIntervalMs,
    timing.minPollIntervalMs,
    timing.maxPollIntervalMs,
  );
}

/**
 * Delay before the next poll of `task` ([R13], [R16]): the server's latest `pollInterval`, or a
 * gentle backoff when it gives none, clamped to `[minPollIntervalMs, maxPollIntervalMs]` and to
 * half the task's ttl. After `failures` consecutive failed polls the retry backoff applies when it is longer: never sooner than
 * the server's latest interval, which may rate-limit polls that come sooner ([E14]), unless half
 * the task's ttl is sooner still: the ttl wins, as a result kept only for its ttl must be read
 * before it goes (a server whose interval outlasts its ttl contradicts itself).
 */
export function pollDelay(
  task: Task,
  hintlessPolls: number,
  failures: number,
  timing: PollTiming,
  retry: RetryPolicy,
  random: () => number,
): number {
  const base = task.pollInterval ?? hintlessDelay(hintlessPolls, timing);
  const delay = failures > 0 ? Math.max(base, backoffDelay(failures, retry, random)) : base;
  // [V11], [E13]: past its ttl a task and its result may be deleted, so a task is read at least
  // twice per ttl, whatever its interval says: a long interval never outlasts the result it waits for.
  const ttl = task.ttl;
  const ceiling =
    ttl !== null && ttl > 0 ? Math.min(timing.maxPollIntervalMs, Math.floor(ttl / 2)) : timing.maxPollIntervalMs;
  return clamp(delay, timing.minPollIntervalMs, Math.max(timing.minPollIntervalMs, ceiling));
}
