/**
 * Ctrl-C. On a terminal the CLI reads it in raw mode, as the byte 0x03, instead of letting the
 * terminal send SIGINT to the whole foreground process group: a stdio server started by the CLI
 * is in that group and would die before the `tasks/cancel` reaches it. SIGINT sent any other way
 * (`kill -INT`) is handled the same. Each press calls the handler with its count (1, 2, …).
 */

/** The stdin the reader needs. */
export interface KeyInput {
  readonly isTTY?: boolean | undefined;
  setRawMode?(mode: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Reads Ctrl-C presses while enabled. */
export class Interrupts {
  private count = 0;
  private enabled = false;
  private handler: (count: number) => void = () => {};

  constructor(private readonly input: KeyInput) {}

  /** Presses so far. */
  get presses(): number {
    return this.count;
  }

  /**
   * Sets what a press does, replacing the current handler.
   * @returns a function that puts the replaced handler back.
   */
  onPress(handler: (count: number) => void): () => void {
    const previous = this.handler;
    this.handler = handler;
    return () => {
      this.handler = previous;
    };
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    for (const ch of text) if (ch === '\u0003') this.press();
  };

  private readonly onSignal = (): void => this.press();

  private readonly restore = (): void => {
    if (this.input.isTTY === true) this.input.setRawMode?.(false);
  };

  private press(): void {
    this.count += 1;
    this.handler(this.count);
  }

  /** Starts reading (raw mode on a terminal) and handling SIGINT. */
  enable(): void {
    if (this.enabled) return;
    this.enabled = true;
    process.on('SIGINT', this.onSignal);
    process.on('exit', this.restore);
    if (this.input.isTTY === true) {
      this.input.on('data', this.onData);
      this.rearm();
    }
  }

  /** Raw mode again after a prompt turned it off. */
  rearm(): void {
    if (!this.enabled || this.input.isTTY !== true) return;
    this.input.setRawMode?.(true);
    this.input.resume();
  }

  /** Stops reading and restores the terminal. */
  disable(): void {
    if (!this.enabled) return;
    this.enabled = false;
    process.off('SIGINT', this.onSignal);
    process.off('exit', this.restore);
    if (this.input.isTTY === true) {
      this.input.off('data', this.onData);
      this.restore();
      this.input.pause();
    }
  }
}
