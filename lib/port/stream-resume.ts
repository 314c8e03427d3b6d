/**
 * What becomes of a watched request stream (stream-ends.ts) once it ends, on SDK v1's Streamable
 * HTTP transport: without an event id, the request is failed at once (its answer cannot come);
 * with one, SDK v1 resumes the stream itself (a GET with `Last-Event-ID`), and the request waits
 * for it, but not for ever. SDK v1 gives up on a resumption without a word: a 405 to the GET (no
 * stream offered there), its last retry failed (an event store lost on a restart, another instance
 * behind a load balancer that knows nothing of the id), `reconnectionOptions.maxRetries: 0`. So
 * from each end of the request's stream, the stream has the request's resume bound
 * (`PortRequestOptions.resumeTimeoutMs`) to come back; a stream that does clears it, and its own
 * end (a resumed stream is always resumed again) arms it anew. Once the bound passes, the request
 * fails as though its stream had ended for good: it is sent again, and the server told that the
 * old one is cancelled ([R27]).
 */
import type { Pending } from './pending.js';
import type { PortRequestOptions } from './port.js';

/** The resume bound of a request that sets none and has no shorter timeout. */
export const DEFAULT_RESUME_TIMEOUT_MS = 10_000;

/** What the watch needs of its session. */
export interface ResumeHost {
  /** The request `id`, while it is open. */
  open(id: string): Pending | undefined;
  /** The stream of request `id` ended for good (see `RawSession.streamEnded`). */
  streamEnded(id: string, reason?: string): void;
}

/** How a watched stream ended, as its end notice says (stream-ends.ts). */
export interface StreamEnd {
  readonly id: string;
  /** The failure of the stream's read, if it failed rather than ended. */
  readonly reason: string | undefined;
  /** It was a resumed stream, which SDK v1 always resumes again. */
  readonly resumed: boolean;
}

/** The resumptions of one session's request streams. */
export class ResumeWatch {
  /** Requests whose current stream carried an event id: SDK v1 resumes it when it ends. */
  private readonly marked = new Set<string>();
  /** The resume bound of each watched open request. */
  private readonly bounds = new Map<string, number>();
  /** The timer of each request whose stream is out, waiting to be resumed. */
  private readonly waits = new Map<string, { timer: unknown; timers: Pending['timers'] }>();

  constructor(private readonly host: ResumeHost) {}

  /** Notes the resume bound of request `id`, sent with `options`. */
  watch(id: string, options: PortRequestOptions): void {
    const bound = options.resumeTimeoutMs ?? Math.min(options.timeoutMs, DEFAULT_RESUME_TIMEOUT_MS);
    this.bounds.set(id, bound);
  }

  /**
   * The stream of request `id` carried an event id. Only while the request is open: a resumed
   * stream may go on after its answer (an error answer does not stop SDK v1's resumption), and
   * nothing would take the id out again.
   */
  readonly resumed = (id: string): void => {
    if (this.host.open(id) !== undefined) this.marked.add(id);
  };

  /** SDK v1 resumed the stream of request `id`: it no longer waits. */
  readonly reopened = (id: string): void => {
    this.stopWaiting(id);
  };

  /** The stream of a request ended (its answer, if it came, was taken before). */
  ended(end: StreamEnd): void {
    const { id } = end;
    const entry = this.host.open(id);
    if (entry === undefined) return;
    if (!this.marked.delete(id) && !end.resumed) {
      this.host.streamEnded(id, end.reason);
      return;
    }
    this.stopWaiting(id);
    const bound = this.bounds.get(id) ?? DEFAULT_RESUME_TIMEOUT_MS;
    const timers = entry.timers;
    const timer = timers.after(bound, () => {
      this.waits.delete(id);
      this.host.streamEnded(id, `not resumed within ${bound} ms`);
    });
    this.waits.set(id, { timer, timers });
  }

  /** Request `id` ended: nothing of its stream matters any more. */
  forget(id: string): void {
    this.marked.delete(id);
    this.bounds.delete(id);
    this.stopWaiting(id);
  }

  private stopWaiting(id: string): void {
    const wait = this.waits.get(id);
    if (wait === undefined) return;
    this.waits.delete(id);
    wait.timers.cancel(wait.timer);
  }
}
