/**
 * `TaskClient.connect` against a server of the 2026-07-28 protocol only, met with the 2025-11-25
 * handshake (SDK v1, or SDK v2 pinned to the legacy era): the server refuses `initialize` with
 * -32022 and the versions it supports ([E12]). The connect fails with a typed error that says
 * what happened and what reaches such a server, rather than with the SDK's bare error. The
 * transport plays the server: it answers the handshake and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { TaskClient, TaskConnectError, type McpTransport } from '../../lib/index.js';
import { rejection } from '../helpers.js';
import { connectOptions } from '../support/sdk.js';

/** A transport whose server refuses `initialize` with -32022 ([E12]); it counts its closes. */
function refusingTransport(): McpTransport & { closes: number; methods: string[] } {
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
      if (method === 'initialize') {
        const error = { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } };
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

describe('TaskClient.connect to a server of the 2026-07-28 protocol only, with the 2025-11-25 handshake', () => {
  it("fails with TaskConnectError (reason 'version') naming the versions the server lists and what reaches it ([E12])", async () => {
    const transport = refusingTransport();
    const error = await rejection(TaskClient.connect(transport, { ...connectOptions('legacy') }), 10_000);
    expect(transport.methods[0]).toBe('initialize');
    expect(error).toBeInstanceOf(TaskConnectError);
    expect(error).toMatchObject({ reason: 'version' });
    const message = (error as Error).message;
    expect(message).toMatch(/^The server refused the 2025-11-25 handshake \(-32022\): it speaks 2026-07-28 only/);
    expect(message).toContain('2026-07-28 only (it lists "2026-07-28")');
    expect(message).toContain('SDK v1 cannot reach it; SDK v2 can, negotiating the era');
    expect(message).toContain('The server said: ');
    // The SDK's own error stays on the cause, with its code.
    expect((error as Error).cause).toMatchObject({ code: -32022 });
    expect(transport.closes).toBeGreaterThanOrEqual(1);
  });
});
