/**
 * Client transports that play a server in a few lines: each message the client sends is kept, and
 * `reply` may answer it. `silentTransport()` answers nothing (a server that accepted the connection
 * and hangs); `refusingTransport()` refuses every request with -32022 and the versions it
 * supports ([E12]), as a server refuses a protocol version it does not speak.
 */
import type { McpTransport } from '../../lib/index.js';

/** The transport, what it was sent, and how often it was started and closed. */
export type FakeTransport = McpTransport & { starts: number; closes: number; sent: unknown[] };

/** A transport whose server answers a message with what `reply` returns (nothing for `undefined`). */
export function fakeTransport(reply: (message: unknown) => unknown = () => undefined): FakeTransport {
  const transport = {
    starts: 0,
    closes: 0,
    sent: [] as unknown[],
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((error: Error) => void) | undefined,
    onmessage: undefined as ((message: unknown) => void) | undefined,
    start(): Promise<void> {
      transport.starts += 1;
      return Promise.resolve();
    },
    send(message: unknown): Promise<void> {
      transport.sent.push(message);
      const answer = reply(message);
      if (answer !== undefined) queueMicrotask(() => transport.onmessage?.(answer));
      return Promise.resolve();
    },
    close(): Promise<void> {
      transport.closes += 1;
      transport.onclose?.();
      return Promise.resolve();
    },
  };
  return transport;
}

/** A transport that takes every message and answers none. */
export function silentTransport(): FakeTransport {
  return fakeTransport();
}

/** A transport whose server supports only `supported`: every request gets -32022 ([E12]). */
export function refusingTransport(supported: readonly string[]): FakeTransport {
  return fakeTransport((message) => {
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method !== 'string' || id === undefined) return undefined;
    const error = { code: -32022, message: 'Unsupported protocol version', data: { supported: [...supported] } };
    return { jsonrpc: '2.0', id, error };
  });
}

/** The methods of the requests and notifications `transport` was sent, in order. */
export function methodsSent(transport: FakeTransport): unknown[] {
  return transport.sent.map((message) => (message as { method?: unknown }).method);
}
