/**
 * Runs an {@link ExtServer} over the stdio binding of 2026-07-28 (`basic/transports/stdio.mdx`):
 * one JSON-RPC message per line on the input, one per line on the output, nothing else written to
 * the output; the server stops when its input ends.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ExtServer } from './server.js';
import type { Link } from './subscriptions.js';
import { ErrorCode } from './wire.js';

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** @default process.stdin */
  readonly input?: Readable;
  /** @default process.stdout */
  readonly output?: Writable;
  /** Calls `server.tick()` this often (for clock-driven task steps and TTLs). @default no timer */
  readonly tickMs?: number;
  /** Called once the input ended and the link closed. */
  readonly onClose?: () => void;
}

/** Serves `server` on a newline-delimited stream pair; returns the link and a stop function. */
export function serveStdio(server: ExtServer, options: StdioOptions = {}): { readonly link: Link; stop(): void } {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const link = server.attach('stdio', (message) => {
    output.write(`${JSON.stringify(message)}\n`);
  });
  const lines = createInterface({ input, crlfDelay: Infinity });
  const timer = options.tickMs === undefined ? undefined : setInterval(() => server.tick(), options.tickMs);
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      link.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'Parse error' } });
      return;
    }
    void server.receive(message, link);
  });
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== undefined) clearInterval(timer);
    server.detach(link);
    lines.close();
    options.onClose?.();
  };
  lines.on('close', stop);
  return { link, stop };
}
