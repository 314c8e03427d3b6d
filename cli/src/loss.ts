/**
 * The server went away while a command ran (a stdio server that exited, an HTTP server that no
 * request reaches any more): who is told. Following a task takes the news over (it ends with the
 * task's id and how to pick it up); otherwise the command itself ends with exit code 1.
 */

/**
 * Told why the server is lost; `sessionGone` when the server forgot the HTTP session (its tasks
 * went with it: there is nothing to follow later).
 */
export type LossHandler = (why: string, sessionGone: boolean) => void;

/** Hands the news of a lost server to the current handler, once. */
export class ServerLoss {
  private handler: LossHandler;
  private why: string | undefined = undefined;
  private sessionGone = false;

  /** @param fallback the handler when nobody else took over. */
  constructor(fallback: LossHandler) {
    this.handler = fallback;
  }

  /** Why the server was lost, once it was. */
  get reason(): string | undefined {
    return this.why;
  }

  /**
   * Sets who is told, replacing the current handler (told at once if the server is already lost).
   * @returns a function that puts the replaced handler back.
   */
  onLost(handler: LossHandler): () => void {
    const previous = this.handler;
    this.handler = handler;
    if (this.why !== undefined) handler(this.why, this.sessionGone);
    return () => {
      this.handler = previous;
    };
  }

  /**
   * The server is gone: tells the current handler (only the first time).
   * @param sessionGone the server forgot the HTTP session, and the session's tasks with it.
   */
  lose(why: string, sessionGone = false): void {
    if (this.why !== undefined) return;
    this.why = why;
    this.sessionGone = sessionGone;
    this.handler(why, sessionGone);
  }
}
