/**
 * Whether a Streamable HTTP server still answers. The library retries a request that fails for a
 * network reason (and never fails a task over failed polls of that kind), so against a server that
 * went away it would wait forever. The CLI gives the HTTP transport a `fetch` that records each
 * exchange: once no request has reached the server for `boundMs` (every attempt refused, reset,
 * timed out at the network level, or answered 502, 503 or 504 by a proxy), the server counts as
 * lost.
 */
import { httpFailureReason } from './connect-errors.js';

/** The `fetch` the SDKs' HTTP transports take. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses a gateway answers for a server behind it that is down. */
const GATEWAY_DOWN = new Set([502, 503, 504]);

/** Records the outcome of every HTTP exchange and reports a server that stopped answering. */
export class Reachability {
  private failingSince: number | undefined;
  private failures = 0;
  private lastReason = 'no answer';
  private timer: NodeJS.Timeout | undefined;
  private onLost: ((why: string) => void) | undefined;

  /** @param boundMs how long the server may stay unreachable before it counts as lost (0: never). */
  constructor(
    private readonly boundMs: number,
    private readonly base: FetchLike = (input, init) => fetch(input, init),
  ) {}

  /** The `fetch` to hand to the transport. */
  readonly fetch: FetchLike = async (input, init) => {
    let response: Response;
    try {
      response = await this.base(input, init);
    } catch (error) {
      // An exchange the client itself gave up (a cancelled request, the transport closing) says nothing about the server.
      if (init?.signal?.aborted !== true && (error as { name?: unknown }).name !== 'AbortError') {
        this.failed(httpFailureReason(error) ?? (error instanceof Error ? error.message : String(error)));
      }
      throw error;
    }
    if (GATEWAY_DOWN.has(response.status)) this.failed(`HTTP ${response.status}`);
    else this.reached();
    return response;
  };

  /** Starts watching (once connected): `onLost` is called once, with why, when the bound passes. */
  watch(onLost: (why: string) => void): void {
    this.onLost = onLost;
    if (this.failingSince !== undefined) this.arm();
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
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private failed(reason: string): void {
    this.lastReason = reason;
    this.failures += 1;
    this.failingSince ??= Date.now();
    if (this.onLost !== undefined && this.timer === undefined) this.arm();
  }

  private arm(): void {
    if (this.boundMs <= 0 || this.failingSince === undefined) return;
    const left = Math.max(0, this.failingSince + this.boundMs - Date.now());
    // Not unref'd: while the server is unreachable, this timer is what ends the wait.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.failingSince === undefined || this.onLost === undefined) return;
      const seconds = Math.round((Date.now() - this.failingSince) / 1000);
      const onLost = this.onLost;
      this.stop();
      onLost(`no request has reached it for ${seconds} s (${this.failures} failed, the last: ${this.lastReason})`);
    }, left);
  }
}
