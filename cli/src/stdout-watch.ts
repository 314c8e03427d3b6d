/**
 * A stdio server that closes its stdout but keeps running: the connection is gone (nothing it
 * writes reaches the CLI any more), yet both SDKs' stdio transports report a close only once the
 * process has exited, so the library would go on asking (each request timing out and retried)
 * until `--timeout`. The CLI watches the server's stdout itself: once it has ended and the process
 * has not exited a moment later, the server is stopped (SIGTERM, then SIGKILL when it does not
 * exit) and the loss is reported, once the process is gone.
 */
import type { ChildProcess } from 'node:child_process';
import { stdioChild, type StdioTransport } from './sdk.js';
import { stopChild, within } from './server-process.js';

/** How long a server whose stdout ended gets to exit on its own (a server exiting closes its stdout first). */
export const EXIT_WAIT_MS = 500;

/** Watches the stdout of a stdio server (see the module's comment). */
export class StdoutWatch {
  private why: string | undefined = undefined;
  private reported = false;
  private onClosed: ((why: string) => void) | undefined = undefined;
  private stopped = false;

  /** @param where the server in words ("the stdio server `…`"). */
  constructor(private readonly where: string) {}

  /**
   * Why the server is being stopped or was stopped (its stdout closed while it kept running), once
   * it is: its loss is this watch's to report, not the transport's close that the stop causes.
   */
  get reason(): string | undefined {
    return this.why;
  }

  /** Watches the server `transport` starts, from its start. */
  attach(transport: StdioTransport): void {
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      const child = stdioChild(transport);
      if (child !== undefined) this.follow(child);
    };
  }

  /** Calls `onClosed` (once) when the server closed its stdout and was stopped; at once if it already was. */
  watch(onClosed: (why: string) => void): void {
    this.onClosed = onClosed;
    if (this.reported && this.why !== undefined) onClosed(this.why);
  }

  /** Stops watching: the CLI closes the connection itself (a server exiting then is no news). */
  stop(): void {
    this.stopped = true;
  }

  private follow(child: ChildProcess): void {
    let exited = child.exitCode !== null || child.signalCode !== null;
    const exit = new Promise<void>((resolve) =>
      child.once('exit', () => {
        exited = true;
        resolve();
      }),
    );
    let seen = false;
    const ended = (): void => {
      if (seen) return;
      seen = true;
      void this.ended(child, () => exited, exit);
    };
    child.stdout?.once('end', ended);
    child.stdout?.once('close', ended);
  }

  private async ended(child: ChildProcess, exited: () => boolean, exit: Promise<void>): Promise<void> {
    // A server that exits closes its stdout too: the transport reports that.
    if (this.stopped || exited() || (await within(exit, EXIT_WAIT_MS)) || this.stopped) return;
    this.why = `${this.where} closed its stdout but kept running: its connection is gone (the server was stopped)`;
    await stopChild(child, exit);
    this.reported = true;
    this.onClosed?.(this.why);
  }
}
