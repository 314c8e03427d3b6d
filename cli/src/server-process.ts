/**
 * A stdio server process the CLI started, and stopping it: SIGTERM, then SIGKILL when it has not
 * exited within {@link KILL_WAIT_MS}, done only once it exited. A server that ignores SIGTERM is
 * not left running when the CLI leaves at once (a second Ctrl-C, `--timeout` passing while it
 * closes, connecting given up, the doctor stopped). Both SDKs' stdio transports drop their process
 * at `close()`, so {@link ServerProcess} keeps it from the start.
 */
import type { ChildProcess } from 'node:child_process';
import { stdioChild, type StdioTransport } from './sdk.js';

/** How long a server gets to exit after SIGTERM before SIGKILL, and after SIGKILL. */
export const KILL_WAIT_MS = 1_000;

/** True when `exit` settles within `ms`. */
export async function within(exit: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      exit.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Settles when `child` has exited (at once when it already has). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Stops `child`: SIGTERM, then SIGKILL when it has not exited within `waitMs`.
 * @returns `true` once it exited; `false` when it still had not `waitMs` after SIGKILL.
 */
export async function stopChild(child: ChildProcess, exit = exitOf(child), waitMs = KILL_WAIT_MS): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  // The CLI's own handlers may be gone by now (leaving at once): a signal meanwhile (a third
  // Ctrl-C, a supervisor's SIGTERM) would end the CLI before its SIGKILL, leaving the server
  // running. Such signals are held until the server is gone.
  const hold = (): void => {};
  for (const signal of HELD_SIGNALS) process.on(signal, hold);
  try {
    child.kill('SIGTERM');
    if (await within(exit, waitMs)) return true;
    child.kill('SIGKILL');
    return await within(exit, waitMs);
  } finally {
    for (const signal of HELD_SIGNALS) process.off(signal, hold);
  }
}

/** The signals {@link stopChild} holds while it stops a server. */
export const HELD_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The processes a stdio transport starts, kept from their start so that they can be stopped after
 * `close()`: its own, and those of the siblings SDK v2 makes with the transport's constructor to
 * probe the protocol version on a process of their own (which it would stop itself, too late for
 * a CLI that leaves at once).
 */
export class ServerProcess {
  private readonly children: ChildProcess[] = [];
  private readonly stops = new Map<ChildProcess, Promise<boolean>>();

  constructor(transport: StdioTransport) {
    this.keep(transport);
  }

  private keep(transport: StdioTransport): void {
    const start = transport.start.bind(transport);
    transport.start = () => {
      // The SDKs spawn the process as `start()` is called: kept before the spawn is confirmed,
      // so that connecting given up meanwhile stops it too.
      const started = start();
      const child = stdioChild(transport);
      if (child !== undefined) this.children.push(child);
      return started;
    };
    const Sibling = transport.constructor as new (parameters: unknown) => StdioTransport;
    const keep = (sibling: StdioTransport): void => this.keep(sibling);
    Object.defineProperty(transport, 'constructor', {
      configurable: true,
      writable: true,
      value: function SiblingTransport(parameters: unknown): StdioTransport {
        const sibling = new Sibling(parameters);
        keep(sibling);
        return sibling;
      },
    });
  }

  /**
   * Stops the processes (see the module's comment); a process stopped already gets the same answer.
   * @returns `true` once they are all gone (or none was started).
   */
  async stop(): Promise<boolean> {
    const stopping = this.children.map((child) => {
      const stop = this.stops.get(child) ?? stopChild(child);
      this.stops.set(child, stop);
      return stop;
    });
    return (await Promise.all(stopping)).every(Boolean);
  }
}
