/**
 * The server went away while a command ran (a stdio server that exited, an HTTP server that no
 * request reaches any more): who is told. Following a task takes the news over (it ends with the
 * task's id and how to pick it up); otherwise the command itself ends with exit code 1.
 */

/** Hands the news of a lost server to the current handler, once. */
export class ServerLoss {
  private handler: (why: string) => void;
  private why: string | undefined;

  /** @param fallback the handler when nobody else took over. */
  constructor(fallback: (why: string) => void) {
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
  onLost(handler: (why: string) => void): () => void {
    const previous = this.handler;
    this.handler = handler;
    if (this.why !== undefined) handler(this.why);
    return () => {
      this.handler = previous;
    };
  }

  /** The server is gone: tells the current handler (only the first time). */
  lose(why: string): void {
    if (this.why !== undefined) return;
    this.why = why;
    this.handler(why);
  }
}
