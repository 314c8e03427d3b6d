/**
 * One timer for every task of a client: a binary min-heap of due times with a single armed
 * `setTimeout` for the earliest. Cancelling is lazy (the entry is marked dead and skipped), and
 * when nothing live is left the timer is cleared, or kept unref'd when it is due within
 * {@link KEEP_IDLE_MS} (see `idle()`), so an idle client never holds the process open. Jobs may be *weak* (background work such as the retries of a `tasks/cancel`
 * nobody waits for): while only weak jobs are live the timer is unref'd, so they never keep the
 * process alive. A job may also *rest* ({@link Scheduler.rest}): kept in the heap, so that it can
 * be woken again ({@link Scheduler.wake}) without a new job, but counted as nothing scheduled (it
 * holds nothing open, and with no other job left the scheduler is idle and the resting job ends).
 */
import type { Clock } from '../types.js';
import { Entry, RESTING, WEAK, popEntry, pushEntry, siftDown, type Timer } from './timer-heap.js';

export type { Timer } from './timer-heap.js';

/** Largest delay `setTimeout` honours. */
const MAX_DELAY = 2_147_483_647;
/**
 * Most jobs run in one timer callback. When thousands of polls fall due together, running them in
 * slices lets the answers to the first ones be handled before the last ones are sent, instead of
 * one long burst that delays everything behind it.
 */
export const MAX_JOBS_PER_TICK = 128;

/** Node's timers can stop holding the process open; other clocks' tokens are left alone. */
function hold(token: unknown, on: boolean): void {
  const timer = token as { ref?: () => void; unref?: () => void } | null;
  if (typeof timer !== 'object' || timer === null) return;
  if (on) timer.ref?.();
  else timer.unref?.();
}

/** True for a token {@link hold} can let go of (Node's timers). */
function unrefable(token: unknown): boolean {
  return typeof token === 'object' && token !== null && typeof (token as { unref?: unknown }).unref === 'function';
}

/**
 * How far ahead a timer left when nothing is due may be kept: it keeps the scheduler (and the
 * client) reachable until it fires, so a far one (a long deadline just cancelled) is cleared.
 */
const KEEP_IDLE_MS = 30_000;

/** What the default clock adds to `Date.now()`: the steps back of the machine's clock, undone. */
let stepsBack = 0;
/** The default clock's last reading. */
let lastReading = -Infinity;

/**
 * `Date.now()`, never less than its last reading: a step back of the machine's clock (an NTP
 * correction, someone setting the time) is undone from that reading on, so the clock goes on from
 * where it was. Without it, every poll, request timeout and deadline due waited for as long as the
 * clock went back. The time between the last reading before the step and the step itself is lost
 * (the clock is read at every timer and request, so it is short while tasks run). A step forward
 * counts as time that passed, as the time a machine spends suspended does (the server's ttl
 * passed too); inject a clock of your own to count otherwise.
 */
function wallNow(): number {
  const reading = Date.now() + stepsBack;
  if (reading >= lastReading) return (lastReading = reading);
  stepsBack += lastReading - reading;
  return lastReading;
}

/**
 * The default {@link Clock}: the wall clock, never going back ({@link wallNow}), and the runtime's
 * timers.
 */
export const systemClock: Clock = {
  now: wallNow,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (token) => clearTimeout(token as ReturnType<typeof setTimeout>),
};

/** A min-heap timer queue on one clock timer. */
export class Scheduler {
  private heap: Entry[] = [];
  private liveCount = 0;
  /** Live jobs that keep the process alive. */
  private strongCount = 0;
  /** Resting jobs ({@link Scheduler.rest}), counted in neither of the above. */
  private restingCount = 0;
  private tokenHeld = true;
  private seq = 0;
  private armedAt = Infinity;
  private token: unknown = undefined;
  /**
   * The last clock timer this scheduler armed, kept after it was cleared or fired: one per
   * scheduler. It holds no task's data; a fired one holds this scheduler's own callback, and a
   * Node timer also holds the async context it was made in (with AsyncLocalStorage, one stale
   * store per idle client until its next timer). V8 holds the hidden class of Node's timer objects only weakly, as it
   * does a class's (util/shapes.ts tells why that matters): it lives only while one of them does,
   * and with it the optimized code of every function that sets or clears a timer, Node's included.
   * When every task has settled and no other timer is left, a full collection would otherwise drop
   * that class, and the next burst of tasks would compile those functions again (measured on the
   * benchmark's extension wire in process, N = 1,000: the warm phase's optimizing compilations
   * fell from 40 to 30 with it).
   */
  private spent: unknown = undefined;
  private firing = false;
  /** Set by {@link Scheduler.retire}: every job is weak from then on. */
  private retired = false;

  constructor(
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Runs `run` at clock time `at` (at once on the next tick if `at` is in the past). A `weak` job
   * does not keep the process alive.
   */
  schedule(at: number, run: () => void, weak = false): Timer {
    return this.call(at, run, undefined, weak);
  }

  /**
   * Runs `run(arg)` at clock time `at` (see {@link Scheduler.schedule}). With a `run` made once
   * and the per-job state in `arg`, scheduling allocates no closure (a poll per task per
   * interval stays cheap).
   */
  call<A>(at: number, run: (arg: A) => void, arg: A, weak = false): Timer {
    // A due time that is not a number (a computation gone wrong) runs at once, never stalls the heap.
    if (Number.isNaN(at)) at = this.clock.now();
    if (this.retired) weak = true;
    const entry = new Entry(at, this.seq++, run as (arg: unknown) => void, arg, weak);
    pushEntry(this.heap, entry);
    this.counted(at, weak);
    return entry;
  }

  /** A job due at `at`, in the heap, is counted: the timer is armed for it, or held for it. */
  private counted(at: number, weak: boolean): void {
    this.liveCount += 1;
    if (!weak) this.strongCount += 1;
    if (!this.firing && at < this.armedAt) this.arm();
    else if (!weak && !this.tokenHeld && this.token !== undefined) {
      hold(this.token, true);
      this.tokenHeld = true;
    }
  }

  /** The clock's time, in ms. */
  now(): number {
    return this.clock.now();
  }

  /** Runs `run` after `delayMs` (see {@link Scheduler.schedule}). */
  after(delayMs: number, run: () => void, weak = false): Timer {
    return this.schedule(this.clock.now() + delayMs, run, weak);
  }

  /** A promise that resolves to `undefined` after `ms`, and its cleanup (a bound to race work against). */
  expiry(ms: number): { readonly expired: Promise<undefined>; clear(): void } {
    let timer: Timer | undefined;
    const expired = new Promise<undefined>((resolve) => {
      timer = this.after(ms, () => resolve(undefined));
    });
    return { expired, clear: () => this.cancel(timer) };
  }

  /** Cancels a job; harmless when it already ran or was cancelled. */
  cancel(timer: Timer | undefined): void {
    const entry = timer as Entry | undefined;
    if (entry === undefined || !entry.live) return;
    const resting = entry.resting;
    entry.end();
    if (resting) this.restingCount -= 1;
    else this.uncounted(entry);
  }

  /** A job left the count, ended or resting. */
  private uncounted(entry: Entry): void {
    this.liveCount -= 1;
    if (!entry.weak) {
      this.strongCount -= 1;
      // Only background jobs left: the armed timer no longer holds the process open.
      if (this.strongCount === 0) this.letGo();
    }
    if (this.liveCount === 0) this.idle();
    else if (this.heap.length > 64 && this.heap.length > (this.liveCount + this.restingCount) * 4) this.compact();
  }

  /**
   * Puts a live job to rest: it stays in the heap, so that {@link Scheduler.wake} can bring it back
   * without a new job, but counts as cancelled meanwhile: it holds nothing open, is not run when
   * due (it ends then), and once no other job is left the scheduler is idle as after a cancel and
   * the resting job ends. For a job cancelled and set again, often, at no earlier time (a shared
   * request timeout whose requests come and go). Harmless on a job not live or already resting.
   */
  rest(timer: Timer | undefined): void {
    const entry = timer as Entry | undefined;
    if (entry === undefined || !entry.live || entry.resting) return;
    // The last job: the scheduler goes idle, as after a cancel.
    if (this.liveCount === 1) {
      this.cancel(entry);
      return;
    }
    entry.state |= RESTING;
    this.restingCount += 1;
    this.uncounted(entry);
  }

  /**
   * Wakes a job put to rest by {@link Scheduler.rest}: it is scheduled again, at its own time, as
   * if it had never rested. False when it can no longer be (it ended meanwhile, or never rested):
   * then a new job is needed.
   */
  wake(timer: Timer | undefined): boolean {
    const entry = timer as Entry | undefined;
    if (entry === undefined || !entry.resting) return false;
    entry.state &= ~RESTING;
    this.restingCount -= 1;
    this.counted(entry.at, entry.weak);
    return true;
  }

  /**
   * Lets the jobs left run out, holding nothing open: each still runs at its time, but every job,
   * left or scheduled later, is weak from now on (a closed client whose requests stay open on a
   * connection it does not own: their timeouts must still end them).
   */
  retire(): void {
    this.retired = true;
    // Nothing left to run: the timer kept for the next job (see `idle()`) goes, as after clear().
    if (this.liveCount === 0) {
      this.reset();
      return;
    }
    for (const entry of this.heap) entry.state |= WEAK;
    this.strongCount = 0;
    this.letGo();
  }

  /** Cancels everything and clears the timer. */
  clear(): void {
    for (const entry of this.heap) entry.end();
    this.liveCount = 0;
    this.strongCount = 0;
    this.restingCount = 0;
    this.reset();
  }

  private reset(): void {
    this.drop();
    this.disarm();
  }

  /** Empties the heap, where nothing live but resting jobs is left (they end). */
  private drop(): void {
    if (this.restingCount > 0) {
      for (const entry of this.heap) if (entry.resting) entry.end();
      this.restingCount = 0;
    }
    this.heap = [];
  }

  /**
   * The last job was cancelled. A clock timer that can stop holding the process open (Node's) is
   * kept armed, no longer held: the next job is usually due no earlier (a request's timeout
   * after the one just cancelled), so it needs no new clock timer; if the kept one fires first it
   * finds nothing due and arms for what is. Without that, every request on an otherwise idle
   * client cost a clock timer set and cleared. Other clocks' timers, and one due more than
   * {@link KEEP_IDLE_MS} ahead, are cleared as before.
   */
  private idle(): void {
    this.drop();
    const token = this.token;
    if (!unrefable(token) || this.armedAt - this.clock.now() > KEEP_IDLE_MS) {
      this.disarm();
      return;
    }
    this.letGo();
  }

  /** The armed timer stops holding the process open (nothing but background jobs is due). */
  private letGo(): void {
    if (!this.tokenHeld || this.token === undefined) return;
    hold(this.token, false);
    this.tokenHeld = false;
  }

  private disarm(): void {
    if (this.token !== undefined) this.clock.clearTimeout(this.token);
    this.token = undefined;
    this.armedAt = Infinity;
  }

  private arm(): void {
    this.disarm();
    const top = this.heap[0];
    if (top === undefined) return;
    const delay = Math.min(Math.max(top.at - this.clock.now(), 0), MAX_DELAY);
    this.armedAt = top.at;
    this.token = this.spent = this.clock.setTimeout(this.fired, delay);
    this.tokenHeld = this.strongCount > 0;
    if (!this.tokenHeld) hold(this.token, false);
  }

  /** The armed clock timer's callback (one function for the scheduler's life, not one per arming). */
  private readonly fired = (): void => this.fire();

  private fire(): void {
    this.token = undefined;
    this.armedAt = Infinity;
    this.firing = true;
    let ran = 0;
    try {
      const now = this.clock.now();
      for (let top = this.heap[0]; top !== undefined && top.at <= now && ran < MAX_JOBS_PER_TICK; top = this.heap[0]) {
        popEntry(this.heap);
        if (!top.live) continue;
        if (top.resting) {
          top.end();
          this.restingCount -= 1;
          continue;
        }
        this.liveCount -= 1;
        if (!top.weak) this.strongCount -= 1;
        ran += 1;
        const { run, arg } = top;
        top.end();
        try {
          run(arg);
        } catch (error) {
          this.onError(error);
        }
      }
    } finally {
      this.firing = false;
    }
    if (this.liveCount === 0) this.reset();
    else this.arm();
  }

  private compact(): void {
    this.heap = this.heap.filter((entry) => entry.live);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i -= 1) siftDown(this.heap, i);
    if (!this.firing) this.arm();
  }
}
