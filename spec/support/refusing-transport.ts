/**
 * A client transport that plays a server refusing every protocol version the client offers: each
 * request (`initialize`, SDK v2's `server/discover`) is answered with -32022 and the versions the
 * server supports ([E12]). It answers nothing else, and counts its closes.
 */
import type { McpTransport } from '../../lib/index.js';

/** The transport, the methods it was sent, and how often it was closed. */
export type RefusingTransport = McpTransport & { closes: number; methods: string[] };

/** A transport whose server supports only `supported`. */
export function refusingTransport(supported: readonly string[]): RefusingTransport {
  const transport = {
    closes: 0,
    methods: [] as string[],
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((error: Error) => void) | undefined,
    onmessage: undefined as ((message: unknown) => void) | undefined,
    start(): Promise<void> {
      return Promise.resolve();
    },
    send(message: unknown): Promise<void> {
      const { id, method } = message as { id?: unknown; method?: unknown };
      if (typeof method === 'string') transport.methods.push(method);
      if (typeof method === 'string' && id !== undefined) {
        const error = { code: -32022, message: 'Unsupported protocol version', data: { supported: [...supported] } };
        queueMicrotask(() => transport.onmessage?.({ jsonrpc: '2.0', id, error }));
      }
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
