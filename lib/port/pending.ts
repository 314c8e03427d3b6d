/**
 * The open requests of a session port: one {@link Pending} object per request (no closures), its
 * promise made by one shared executor (`util/capture.ts`), and shared timeouts, one timer per
 * timeout length instead of one per request.
 */
import { keepShape } from '../util/shapes.js';
import type { RequestInstrument } from '../api/index.js';
import {
  PortError,
  type ErrorMapper,
  type GroupMember,
  type ResultDecoder,
  type PortRequestOptions,
  type RequestGroup,
  type Timers,
} from './port.js';
import { noop } from '../util/noop.js';
import { deliver, type Sink } from '../util/deliver.js';

/** What a request asks of its session when it is stopped or times out. */
export interface Abandoner {
  /** Stops waiting for request `id` with `error` and tells the server. */
  giveUp(id: string, error: PortError): void;
}

/**
 * One open request: its decoder, its promise's settle functions, its timeout and what stops it.
 * One object per request (no closures): it is also the member a {@link RequestGroup} holds.
 */
export class Pending implements GroupMember {
  timer: unknown = undefined;
  off: (() => void) | undefined = undefined;
  /**
   * The shared timeout this request waits in, if any, and its deadline there (a clock time, not a
   * small integer: NaN until set, so that V8 keeps it as a number from the start, see util/shapes.ts).
   */
  lane: TimeoutLane | undefined = undefined;
  deadline = Number.NaN;
  /** Set once the request ended (answered, failed, given up). */
  ended = false;
  /**
   * Aborts the HTTP request that carries this one, on a transport with a stream per request in the
   * modern era: closing that stream is how such a request is cancelled (not a notification).
   */
  post: AbortController | undefined = undefined;
  /** What watches the request (instrumentation), told how it ended. */
  watcher: RequestInstrument | undefined = undefined;
  /** Its timeout tells the server nothing (see {@link PortRequestOptions.quietTimeout}). */
  quietTimeout = false;
  /** Told of the outcome instead of a promise (see `SessionPort.requestInto`), with {@link Pending.token}. */
  sink: Sink<unknown, unknown> | undefined = undefined;
  token: unknown = undefined;
  constructor(
    readonly session: Abandoner,
    readonly id: string,
    readonly method: string,
    readonly decode: ResultDecoder<unknown>,
    readonly resolve: (value: unknown) => void,
    /** Rejects the request's promise with `error` as it is (see {@link Pending.reject}). */
    readonly rejectRaw: (error: unknown) => void,
    readonly timers: PortRequestOptions['timers'],
    readonly group: RequestGroup | undefined,
    private readonly mapError: ErrorMapper | undefined,
    readonly context: string | undefined,
  ) {}

  /** The request ended (taken off its port's open requests): its timeout, abort listener and group let go of it. */
  finish(): void {
    this.ended = true;
    if (this.lane !== undefined) this.lane.ended(this);
    else if (this.timer !== undefined) this.timers.cancel(this.timer);
    this.off?.();
    this.group?.leave(this);
  }

  /** Settles the request with its decoded result. */
  fulfil(value: unknown): void {
    if (this.sink === undefined) this.resolve(value);
    else deliver(this.sink, this.token, value, false);
  }

  /** Fails the request with `error` as it is. */
  failRaw(error: unknown): void {
    if (this.sink === undefined) this.rejectRaw(error);
    else deliver(this.sink, this.token, error, true);
  }

  /** Fails the request, with the caller's own error when it gave a mapper. */
  reject(error: PortError): void {
    this.watcher?.end(error);
    this.failRaw(this.mapError === undefined ? error : this.mapError(this.method, error, this.context));
  }

  stop(reason: unknown): void {
    this.session.giveUp(this.id, new PortError('aborted', 'Request aborted', { cause: reason }));
  }

  /** The request timed out. */
  expire(timeoutMs: number): void {
    this.session.giveUp(this.id, new PortError('timeout', 'Request timed out', { data: { timeout: timeoutMs } }));
  }
}

// Its hidden class outlives an idle spell (util/shapes.ts): a request of no session.
keepShape(
  new Pending(
    { giveUp: noop },
    '',
    '',
    noop,
    noop,
    noop,
    { after: noop, cancel: noop },
    undefined,
    undefined,
    undefined,
  ),
);

/**
 * The open requests of one timeout length on one timer queue. Their deadlines come in the order
 * they were sent, so one timer, armed for the oldest, serves them all: a request costs a queue
 * slot, not a timer of its own. Ended requests are dropped from the front as they reach it; with
 * none left open the timer is cancelled, so an idle session keeps no timer. Timers that can rest
 * ({@link Timers.rest}) have it rest instead: it counts as cancelled (it holds nothing open, and
 * ends when nothing else is scheduled), and the next request wakes it rather than setting a new
 * one. Woken, it may fire before the oldest deadline: it then waits again for that one.
 */
export class TimeoutLane {
  private queue: Pending[] = [];
  private head = 0;
  /** Requests in the queue (from `head` on) that ended: dropped at the front, or swept. */
  private endedInQueue = 0;
  private timer: unknown = undefined;
  /** The timer rests ({@link Timers.rest}): no request is open. */
  private resting = false;

  constructor(
    private readonly timers: Timers & { now(): number },
    private readonly timeoutMs: number,
    private readonly weak: boolean,
  ) {}

  add(entry: Pending): void {
    entry.lane = this;
    entry.deadline = this.timers.now() + this.timeoutMs;
    this.queue.push(entry);
    if (this.resting) {
      this.resting = false;
      if (this.timers.wake!(this.timer)) return;
      this.timer = undefined;
    }
    // A timer its queue dropped (a scheduler cleared when its client closed) is armed again.
    if (this.timer === undefined || (this.timer as { live?: unknown }).live === false) {
      this.timer = this.timers.after(this.timeoutMs, this.fire, this.weak);
    }
  }

  /** `entry` ended: drop the ended requests at the front (the timer too, once none is left). */
  ended(entry: Pending): void {
    this.endedInQueue += 1;
    if (this.queue[this.head] !== entry) {
      // Dropped once it reaches the front; but a request that stays open long (a slow server, a
      // long timeout) must not keep every request that ended behind it, with its group and its
      // answer, in memory until then: once they are most of the queue, they are swept out.
      if (this.endedInQueue > 64 && this.endedInQueue * 2 > this.queue.length - this.head) this.sweep();
      return;
    }
    this.advance();
    if (this.head === this.queue.length && this.timer !== undefined && !this.resting) {
      if (this.timers.rest !== undefined && this.timers.wake !== undefined) {
        this.timers.rest(this.timer);
        this.resting = true;
      } else {
        this.timers.cancel(this.timer);
        this.timer = undefined;
      }
    }
  }

  private advance(): void {
    const queue = this.queue;
    let head = this.head;
    while (head < queue.length && queue[head]!.ended) head += 1;
    if (head === queue.length) {
      this.queue = [];
      this.head = 0;
      this.endedInQueue = 0;
      return;
    }
    this.endedInQueue -= head - this.head;
    if (head > 256 && head * 2 > queue.length) {
      this.queue = queue.slice(head);
      this.head = 0;
    } else this.head = head;
  }

  /** Keeps only the open requests, in order (their deadlines stay in send order). */
  private sweep(): void {
    const open: Pending[] = [];
    const queue = this.queue;
    for (let i = this.head; i < queue.length; i += 1) if (!queue[i]!.ended) open.push(queue[i]!);
    this.queue = open;
    this.head = 0;
    this.endedInQueue = 0;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.resting = false;
    const now = this.timers.now();
    for (;;) {
      this.advance();
      const first = this.queue[this.head];
      if (first === undefined) return;
      if (first.deadline > now) {
        this.timer = this.timers.after(first.deadline - now, this.fire, this.weak);
        return;
      }
      this.head += 1;
      // Out of the queue before it ends: its end is not one to count here.
      first.lane = undefined;
      first.expire(this.timeoutMs);
    }
  };

  /** True when no request waits in this lane (it can be dropped). */
  get idle(): boolean {
    return (this.timer === undefined || this.resting) && this.head >= this.queue.length;
  }
}

/**
 * Lanes kept per timer queue and weakness before idle ones are dropped. Requests of one length
 * share a lane; a deadline's remaining budget gives a new length to almost every call, and those
 * lanes must not pile up for the life of the client.
 */
const MAX_LANES = 16;

/** The shared timeouts of one session: one {@link TimeoutLane} per timer queue, weakness and length. */
export class TimeoutLanes {
  private readonly byTimers = new WeakMap<Timers, [Map<number, TimeoutLane>, Map<number, TimeoutLane>]>();

  /**
   * Arms the timeout of `entry`, `timeoutMs` long: in its lane, or on a timer of its own when the
   * timers have no clock. An infinite timeout (a subscription that lasts until replaced, a blocking
   * `tasks/result` that waits for a human) arms nothing.
   */
  arm(entry: Pending, timeoutMs: number, weak: boolean): void {
    if (!Number.isFinite(timeoutMs)) return;
    const lane = this.get(entry.timers, timeoutMs, weak);
    if (lane !== undefined) lane.add(entry);
    else entry.timer = entry.timers.after(timeoutMs, () => entry.expire(timeoutMs), weak);
  }

  /** The lane of `timeoutMs` on `timers` (none when the timers have no clock to read). */
  get(timers: Timers, timeoutMs: number, weak: boolean): TimeoutLane | undefined {
    if (typeof timers.now !== 'function') return undefined;
    let byWeakness = this.byTimers.get(timers);
    if (byWeakness === undefined) {
      byWeakness = [new Map(), new Map()];
      this.byTimers.set(timers, byWeakness);
    }
    const lanes = byWeakness[weak ? 1 : 0];
    let lane = lanes.get(timeoutMs);
    if (lane === undefined) {
      if (lanes.size >= MAX_LANES) for (const [length, other] of lanes) if (other.idle) lanes.delete(length);
      lane = new TimeoutLane(timers as Timers & { now(): number }, timeoutMs, weak);
      lanes.set(timeoutMs, lane);
    }
    return lane;
  }
}
