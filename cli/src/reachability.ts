/**
 * Whether a Streamable HTTP server still answers. The library retries a request that fails for a
 * network reason (and never fails a task over failed polls of that kind), so against a server that
 * went away, or that accepts connections and never answers (a hung or stopped process), it would
 * wait forever. The CLI gives the HTTP transport a `fetch` that records each exchange: once no
 * request has been answered for `boundMs` while requests are being made (every attempt refused,
 * reset, timed out, answered 502, 503 or 504 by a proxy, or still waiting for its answer), the
 * server counts as lost.
 */
import { httpFailureReason } from './connect-errors.js';

/** The `fetch` the SDKs' HTTP transports take. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses a gateway answers for a server behind it that is down. */
const GATEWAY_DOWN = new Set([502, 503, 504]);

/**
 * Requests a server may hold open by design until there is something to say: a blocking
 * `tasks/result` (answered when the task ends), an extension `subscriptions/listen`. Waiting for
 * their answer says nothing about the server; their answers still count.
 */
const HELD_OPEN = new Set(['tasks/result', 'subscriptions/listen']);

/**
 * True for a request the server may hold open: one of {@link HELD_OPEN}, or a `tools/call` that
 * may run as a plain call (one without `params.task`: a tool run plain on 2025-11-25, or any call
 * on the tasks extension, where the server decides), whose answer comes when the tool is done; a
 * server that answers in plain JSON rather than a stream sends nothing meanwhile.
 */
function mayHoldOpen(message: unknown): boolean {
  const { method, params } = (message ?? {}) as { method?: unknown; params?: { task?: unknown } | null };
  if (HELD_OPEN.has(String(method))) return true;
  return method === 'tools/call' && (typeof params !== 'object' || params === null || params.task === undefined);
}

/**
 * A request the client gave up (aborted) after waiting this long counts as unanswered by the
 * server (the SDK aborts a request whose timeout passed); one given up sooner was cancelled.
 */
const GIVEN_UP_MS = 1_000;

/** True when the POSTed body holds only requests the server may hold open (see {@link mayHoldOpen}). */
function heldOpen(init: RequestInit | undefined): boolean {
  if (typeof init?.body !== 'string') return false;
  try {
    const parsed = JSON.parse(init.body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.length > 0 && messages.every(mayHoldOpen);
  } catch {
    return false;
  }
}

/** True when `error` (or the signal's reason) is a timeout rather than the client giving the request up. */
function isTimeout(error: unknown, signal: AbortSignal | null | undefined): boolean {
  const names = [(error as { name?: unknown } | null)?.name, (signal?.reason as { name?: unknown } | null)?.name];
  return names.includes('TimeoutError');
}

/** Records the outcome of every HTTP exchange and reports a server that stopped answering. */
export class Reachability {
  /** Since when every attempt failed (refused, reset, timed out, a gateway's 5xx); cleared by an answer. */
  private failingSince: number | undefined = undefined;
  /** When the earliest request made since the last answer started (waiting or given up); cleared by an answer. */
  private unansweredSince: number | undefined = undefined;
  /** The requests waiting for their answer, with when each started. */
  private readonly outstanding = new Map<number, number>();
  private serial = 0;
  private failures = 0;
  private lastReason = 'no answer';
  private timer: NodeJS.Timeout | undefined = undefined;
  private onLost: ((why: string) => void) | undefined = undefined;

  /**
   * @param boundMs how long the server may go without answering, while requests are made, before
   *   it counts as lost (0: never).
   * @param now the clock.
   */
  constructor(
    private readonly boundMs: number,
    private readonly base: FetchLike = (input, init) => fetch(input, init),
    private readonly now: () => number = Date.now,
  ) {}

  /** The `fetch` to hand to the transport. */
  readonly fetch: FetchLike = async (input, init) => {
    const id = (this.serial += 1);
    const startedAt = this.now();
    if (!heldOpen(init)) {
      this.outstanding.set(id, startedAt);
      this.unansweredSince ??= startedAt;
      this.check();
    }
    let response: Response;
    try {
      response = await this.base(input, init);
    } catch (error) {
      const waited = this.outstanding.has(id) ? this.now() - startedAt : 0;
      this.forget(id);
      const aborted = init?.signal?.aborted === true || (error as { name?: unknown }).name === 'AbortError';
      if (isTimeout(error, init?.signal) || (aborted && waited >= GIVEN_UP_MS)) {
        // Given up for want of an answer (a request timeout, which the SDK turns into an abort):
        // the server did not answer it, from when it was sent.
        this.failed(`no answer (given up after ${Math.round(waited / 1000)} s)`, startedAt);
      } else if (!aborted) {
        this.failed(httpFailureReason(error) ?? (error instanceof Error ? error.message : String(error)));
      }
      // A request the client gave up at once (a cancel, the transport closing) says nothing.
      throw error;
    }
    this.forget(id);
    if (GATEWAY_DOWN.has(response.status)) this.failed(`HTTP ${response.status}`);
    else this.reached();
    return response;
  };

  /** Starts watching (once connected): `onLost` is called once, with why, when the bound passes. */
  watch(onLost: (why: string) => void): void {
    this.onLost = onLost;
    this.check();
  }

  /** Stops watching. */
  stop(): void {
    this.onLost = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private reached(): void {
    this.failingSince = undefined;
    this.failures = 0;
    // Requests still waiting count from now: the server answered something.
    this.unansweredSince = this.outstanding.size > 0 ? this.now() : undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.check();
  }

  /** A request is no longer waiting. */
  private forget(id: number): void {
    this.outstanding.delete(id);
    if (this.outstanding.size === 0) this.unansweredSince = undefined;
  }

  private failed(reason: string, since = this.now()): void {
    this.lastReason = reason;
    this.failures += 1;
    this.failingSince = Math.min(this.failingSince ?? since, since);
    this.check();
  }

  /** Since when the server has not answered, while that matters (requests waiting, or failing). */
  private silentSince(): number | undefined {
    const waiting = this.unansweredSince;
    if (waiting === undefined) return this.failingSince;
    return this.failingSince === undefined ? waiting : Math.min(waiting, this.failingSince);
  }

  /** Arms the timer for when the bound passes, or reports the loss when it has. */
  private check(): void {
    if (this.boundMs <= 0 || this.onLost === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const since = this.silentSince();
    if (since === undefined) return;
    const left = since + this.boundMs - this.now();
    if (left <= 0) {
      this.lose(since);
      return;
    }
    // Not unref'd: while the server does not answer, this timer is what ends the wait.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, left);
  }

  private lose(since: number): void {
    const onLost = this.onLost;
    if (onLost === undefined) return;
    const seconds = Math.round((this.now() - since) / 1000);
    const waiting = this.outstanding.size;
    const parts: string[] = [];
    if (this.failures > 0) parts.push(`${this.failures} failed, the last: ${this.lastReason}`);
    if (waiting > 0)
      parts.push(
        `${waiting} still waiting for an answer${this.failures === 0 ? ': it accepts connections but does not answer' : ''}`,
      );
    this.stop();
    const what = waiting === 0 ? 'no request has reached it' : 'no request has been answered';
    onLost(`${what} for ${seconds} s (${parts.join('; ')})`);
  }
}
