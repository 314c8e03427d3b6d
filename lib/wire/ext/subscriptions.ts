/**
 * Task status notifications on the tasks extension ([E18]): one `subscriptions/listen` request
 * per connection, naming every task the client tracks. As tasks start, the subscription is
 * replaced by one naming the new set (at most once per {@link RELISTEN_MS}, so a burst of new
 * tasks costs one request); ended tasks are simply dropped at the next replacement. The server's
 * `notifications/tasks` are only accelerators: polling goes on at `pollIntervalMs` whatever it
 * sends, so a server that acknowledges and stays silent costs nothing ([R20]).
 *
 * A subscription the server ends (a result: it closed it on purpose, [E22]) or refuses is asked
 * for again only after a pause that doubles each time one ends within {@link STEADY_MS} of being
 * opened, up to {@link MAX_RELISTEN_MS}; one that lasted resets the pause. A reply that is no such
 * result (a `CreateTaskResult`, any `resultType` but `"complete"`) is an invalid response ([E36]):
 * it fails the listen, which is then asked for again only as new tasks start (with that pause);
 * polling goes on, and the task it names is never read.
 */
import { PortError, type JsonObject, type SessionPort, type Timers } from '../../port/port.js';
import { decodeAck } from './decode.js';

/** Shortest time between two replacements of the subscription. */
export const RELISTEN_MS = 50;

/**
 * Longest pause before listening again after subscriptions keep ending early. Notifications are
 * optional and polling alone keeps every task going ([E22], [E14]), so a server that closes each
 * subscription at once is asked at most twice a minute, yet one that starts pushing again (a
 * restart, a load balancer that dropped streams for a while) is back within half a minute.
 */
export const MAX_RELISTEN_MS = 30_000;

/**
 * A subscription that lasted this long was a working one: the pause goes back to
 * {@link RELISTEN_MS}. Ten seconds per request is no burden on a server, whatever it does next.
 */
export const STEADY_MS = 10_000;

/**
 * How long a replaced subscription stays open when the server does not acknowledge its
 * replacement: long enough for the new one to be in place on the server.
 */
export const RETIRE_MS = 1_000;

/** A subscription has no timeout: it lasts until replaced, ended or the connection closes. */
const FOREVER = Number.POSITIVE_INFINITY;

const METHOD_NOT_FOUND = -32601;

const LISTEN = 'subscriptions/listen';

/** The one task subscription of a connection. */
export class TaskSubscription {
  private readonly watched = new Map<string, number>();
  private current: AbortController | undefined = undefined;
  /**
   * The JSON-RPC id of the current subscription's listen request: the subscription's id, which
   * its acknowledgement names ([E18]).
   */
  private currentId: string | undefined = undefined;
  /**
   * The subscription just replaced, kept open until its replacement is acknowledged (or has
   * ended, or {@link RETIRE_MS} passed): closing it at once leaves a gap on transports where the
   * close can overtake the new request (a stream per request over Streamable HTTP), and a
   * notification sent in that gap would wait for the next poll.
   */
  private retiring: AbortController | undefined = undefined;
  private retireTimer: unknown = undefined;
  /** The ids the current subscription names. */
  private covered = new Set<string>();
  private timer: unknown = undefined;
  private timers: Timers | undefined = undefined;
  private lastListenAt = Number.NEGATIVE_INFINITY;
  /** Subscriptions in a row that ended (or failed) within {@link STEADY_MS} of being opened. */
  private earlyEnds = 0;
  /** The server has no `subscriptions/listen`, or it failed: stop asking until a new task. */
  private stopped = false;
  private unsupported = false;

  constructor(
    private readonly port: SessionPort,
    /**
     * Capabilities to declare on each listen request: the tasks extension ([E1]), and the input
     * the client answers ([E35]), which may change between two listens (a receiver starts serving).
     */
    private readonly declare: () => JsonObject,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Adds interest in `taskId` (counted: each call is undone by one {@link TaskSubscription.unwatch}).
   * Nothing is kept once the server said it has no subscriptions: no listen will ever go out.
   */
  watch(taskId: string, timers: Timers): void {
    if (this.unsupported) return;
    this.timers = timers;
    const count = this.watched.get(taskId) ?? 0;
    this.watched.set(taskId, count + 1);
    if (count === 0 && !this.covered.has(taskId)) {
      this.stopped = false;
      this.schedule();
    }
  }

  /** Removes one interest in `taskId`; harmless for a task not watched. */
  unwatch(taskId: string): void {
    const count = this.watched.get(taskId);
    if (count === undefined) return;
    if (count > 1) this.watched.set(taskId, count - 1);
    else this.watched.delete(taskId);
    if (this.watched.size === 0) this.end();
  }

  /** Replaces the subscription soon (now, or when the minimum interval has passed). */
  private schedule(): void {
    const timers = this.timers;
    if (this.unsupported || this.stopped || this.port.closed || timers === undefined || this.timer !== undefined)
      return;
    const wait = Math.max(0, this.lastListenAt + this.pause() - this.clock());
    this.timer = timers.after(
      wait,
      () => {
        this.timer = undefined;
        this.listen();
      },
      true,
    );
  }

  private listen(): void {
    const timers = this.timers;
    if (this.watched.size === 0 || this.port.closed || timers === undefined) return;
    const ids = [...this.watched.keys()];
    const previous = this.current;
    const controller = new AbortController();
    this.current = controller;
    // Known before the request goes out, like `retiring` below.
    this.currentId = this.port.nextRequestId();
    this.covered = new Set(ids);
    this.lastListenAt = this.clock();
    // The old subscription ends once the new one is in place (no gap); one replaced at a time.
    // Set before the request goes out: its acknowledgement may come back synchronously.
    if (previous !== undefined) {
      this.retire();
      this.retiring = previous;
      this.retireTimer = timers.after(RETIRE_MS, () => this.retire(), true);
    }
    this.port
      .request(LISTEN, { notifications: { taskIds: ids } }, (value) => decodeAck(value, LISTEN), {
        timeoutMs: FOREVER,
        timers,
        signal: controller.signal,
        weak: true,
        declare: this.declare(),
      })
      .then(
        () => {
          // The server ended the subscription on purpose ([E22]): listen again if tasks are still
          // tracked, after a pause that grows while subscriptions keep ending early.
          if (this.current !== controller) return;
          this.ended();
          this.schedule();
        },
        (error: unknown) => {
          if (this.current !== controller) return;
          this.ended();
          if (error instanceof PortError && error.kind === 'server' && error.code === METHOD_NOT_FOUND) this.giveUp();
          // Its stream ended without an answer (a proxy cutting an idle stream): as if the server
          // had ended it, listen again after the same growing pause ([E18], [E22]).
          else if (error instanceof PortError && error.kind === 'closed' && !this.port.closed) this.schedule();
          // Refused, or an invalid reply ([E36]: a task, or a resultType but "complete"): no listen
          // until a new task starts; polling keeps every task going ([E22]).
          else this.stopped = true;
        },
      );
  }

  /** The server has no `subscriptions/listen` (-32601): nothing is asked or kept any more on this connection. */
  private giveUp(): void {
    this.unsupported = true;
    this.watched.clear();
  }

  /** Time on the scheduler's clock when it has one (tests move it by hand). */
  private clock(): number {
    return this.timers?.now?.() ?? this.now();
  }

  /**
   * How long after the last listen the next one may go out: {@link RELISTEN_MS}, doubled for each
   * early end after the first, at most {@link MAX_RELISTEN_MS}. While a subscription that has
   * lasted {@link STEADY_MS} is open, old early ends do not hold a new task back.
   */
  private pause(): number {
    const steady = this.current !== undefined && this.clock() - this.lastListenAt >= STEADY_MS;
    if (steady || this.earlyEnds <= 1) return RELISTEN_MS;
    return Math.min(RELISTEN_MS * 2 ** (this.earlyEnds - 1), MAX_RELISTEN_MS);
  }

  /** The current subscription ended or failed (not replaced by us): count it if it was short. */
  private ended(): void {
    this.earlyEnds = this.clock() - this.lastListenAt >= STEADY_MS ? 0 : this.earlyEnds + 1;
    this.retire();
    this.current = undefined;
    this.currentId = undefined;
    this.covered = new Set();
  }

  /**
   * The server acknowledged the subscription named `subscriptionId` ([E18]). Only the current
   * one's acknowledgement says the replacement is in place, so only it ends the replaced one; a
   * late acknowledgement of an older listen (or of another TaskClient's on a shared connection)
   * ends nothing.
   */
  acknowledged(subscriptionId: unknown): void {
    if (subscriptionId === this.currentId && subscriptionId !== undefined) this.retire();
  }

  /** Ends the replaced subscription, if one is still open. */
  private retire(): void {
    const retiring = this.retiring;
    if (retiring === undefined) return;
    this.retiring = undefined;
    if (this.retireTimer !== undefined) this.timers?.cancel(this.retireTimer);
    this.retireTimer = undefined;
    retiring.abort();
  }

  /** No task is tracked any more: end the subscription. */
  private end(): void {
    if (this.timer !== undefined) this.timers?.cancel(this.timer);
    this.timer = undefined;
    const current = this.current;
    this.current = undefined;
    this.currentId = undefined;
    this.covered = new Set();
    this.retire();
    current?.abort();
  }
}
