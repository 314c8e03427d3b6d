/**
 * A one-reader queue that callbacks push into and an async loop drains: how status events and
 * progress callbacks become the values a tool's `execute` yields, in the order they happened.
 */
export class Feed<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined = undefined;
  private ended = false;

  /** Adds an item; ignored once the feed has ended. */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.notify();
  }

  /** Ends the feed: the reader gets what is queued, then stops. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The items in order, until the feed ends and is drained. */
  async *drain(): AsyncGenerator<T, void, undefined> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
