/**
 * Ctrl-C. On a terminal (in its foreground: foreground.ts) the CLI reads it in raw mode, as the byte 0x03, instead of letting the
 * terminal send SIGINT to the whole foreground process group: a stdio server started by the CLI
 * is in that group and would die before the `tasks/cancel` reaches it. SIGINT sent any other way
 * (`kill -INT`) is handled the same. So are SIGTERM and a closed stdout (EPIPE, e.g. `| head -1`),
 * which only change the exit code ({@link Interrupts.exitCode}: 143, 141). Each press calls the
 * handler with its count (1, 2, …).
 */
import { EXIT } from './exit.js';

/** What interrupted the CLI: Ctrl-C or SIGINT, SIGTERM, or stdout closed by its reader. */
export type InterruptCause = 'interrupt' | 'terminate' | 'pipe';

/** The exit code of each cause (128 + SIGINT, SIGTERM, SIGPIPE). */
const CAUSE_EXIT: Readonly<Record<InterruptCause, number>> = {
  interrupt: EXIT.cancelled,
  terminate: EXIT.terminated,
  pipe: EXIT.pipe,
};

/** How each cause is named in notes. */
const CAUSE_LABEL: Readonly<Record<InterruptCause, string>> = {
  interrupt: 'Ctrl-C',
  terminate: 'SIGTERM',
  pipe: 'stdout closed',
};

/** The stdin the reader needs. */
export interface KeyInput {
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
  private firstCause: InterruptCause | undefined = undefined;

  /**
   * @param keys - whether Ctrl-C is read from `input` as a key, in raw mode: only when it is a
   *   terminal this process may read (foreground.ts `readsKeys`), else SIGINT is handled alone.
   */
  constructor(
    private readonly input: KeyInput,
    private readonly keys: boolean,
  ) {}

  /** Presses so far. */
  get presses(): number {
    return this.count;
  }

  /** What interrupted first, if anything. */
  get cause(): InterruptCause | undefined {
    return this.firstCause;
  }

  /** The exit code of an interrupted run: 130 (Ctrl-C, SIGINT), 143 (SIGTERM) or 141 (stdout closed). */
  get exitCode(): number {
    return CAUSE_EXIT[this.firstCause ?? 'interrupt'];
  }

  /** How the first interruption is named in notes (`Ctrl-C` when there was none yet). */
  get label(): string {
    return CAUSE_LABEL[this.firstCause ?? 'interrupt'];
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
    for (const ch of text) if (ch === '\u0003') this.press('interrupt');
  };

  private readonly onSignal = (): void => this.press('interrupt');
  private readonly onTerminate = (): void => this.press('terminate');

  private readonly restore = (): void => {
    if (this.keys) this.input.setRawMode?.(false);
  };

  /** An interruption from elsewhere (stdout closed): handled like a press. */
  press(cause: InterruptCause = 'interrupt'): void {
    this.firstCause ??= cause;
    this.count += 1;
    this.handler(this.count);
  }

  /** Starts reading (raw mode on a terminal) and handling SIGINT and SIGTERM. */
  enable(): void {
    if (this.enabled) return;
    this.enabled = true;
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onTerminate);
    process.on('exit', this.restore);
    if (this.keys) {
      this.input.on('data', this.onData);
      this.rearm();
    }
  }

  /** Raw mode again after a prompt turned it off. */
  rearm(): void {
    if (!this.enabled || !this.keys) return;
    this.input.setRawMode?.(true);
    this.input.resume();
  }

  /** Stops reading and restores the terminal. */
  disable(): void {
    if (!this.enabled) return;
    this.enabled = false;
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onTerminate);
    process.off('exit', this.restore);
    if (this.keys) {
      this.input.off('data', this.onData);
      this.restore();
      this.input.pause();
    }
  }
}
