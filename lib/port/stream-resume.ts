/**
 * What becomes of a watched request stream (stream-ends.ts) once it ends, on SDK v1's Streamable
 * HTTP transport: without an event id, the request is failed at once (its answer cannot come on
 * it); with one, SDK v1 resumes the stream itself (a GET with `Last-Event-ID`, after the pause the
 * server asked for with `retry`), and the request waits for it. But SDK v1 gives up on a
 * resumption without a word, where SDK v2 tells it (`onRequestStreamEnd`): a GET answered without
 * a stream (a 405: none offered there), its last retry failed (an event store lost on a restart,
 * another instance behind a load balancer that refuses the id), `reconnectionOptions.maxRetries: 0`.
 * The wrapped transport tells the watch so ({@link ResumeWatch.gaveUp}), and the request then fails
 * as though its stream had ended for good: it is sent again, and the server told that the old one
 * is cancelled ([R27]). A resumption is not timed: a server may ask for a long pause before it,
 * and a resumed stream may rightly stay quiet for as long as the task asks nothing.
 */
import type { StreamEnd } from './stream-ends.js';

/** What the watch needs of its session. */
export interface ResumeHost {
  /** True while request `id` is open. */
  isOpen(id: string): boolean;
  /** The stream of request `id` ended for good (see `RawSession.streamEnded`). */
  streamEnded(id: string, reason?: string): void;
}

/** The resumptions of one session's request streams. */
export class ResumeWatch {
  /** Requests whose current stream carried an event id: SDK v1 resumes it when it ends. */
  private readonly marked = new Set<string>();

  constructor(private readonly host: ResumeHost) {}

  /**
   * The stream of request `id` carried an event id. Only while the request is open: a resumed
   * stream may go on after its answer (an error answer does not stop SDK v1's resumption), and
   * nothing would take the id out again.
   */
  readonly resumed = (id: string): void => {
    if (this.host.isOpen(id)) this.marked.add(id);
  };

  /** SDK v1 gave up resuming the stream of request `id` (`why`). */
  readonly gaveUp = (id: string, why: string): void => {
    this.host.streamEnded(id, why);
  };

  /**
   * The stream of a request ended (its answer, if it came, was taken before): the request's end
   * too, unless SDK v1 resumes it (a stream that carried an event id, and any resumed stream).
   */
  ended(end: StreamEnd): void {
    if (!this.marked.delete(end.id) && !end.resumed) this.host.streamEnded(end.id, end.reason);
  }

  /** Request `id` ended: nothing of its stream matters any more. */
  forget(id: string): void {
    this.marked.delete(id);
  }
}
