/**
 * A client transport wrapper for the tests of `notifications/cancelled`: a `tools/call` of `echo`
 * is never delivered (so never answered), and each `notifications/cancelled` written is kept, as
 * sent.
 */
import type { SpecTransport } from './sdk.js';

/** A `notifications/cancelled` as the client wrote it. */
export interface WrittenCancel {
  readonly params?: { requestId?: unknown; _meta?: Record<string, unknown> };
}

/** The wrapper (`wrap`), the cancels written so far, and whether the `echo` call was swallowed. */
export function swallowingEcho(): {
  wrap: (transport: SpecTransport) => SpecTransport;
  cancels: WrittenCancel[];
  swallowed: () => boolean;
} {
  const cancels: WrittenCancel[] = [];
  let swallowed = false;
  const wrap = (transport: SpecTransport): SpecTransport => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const raw = message as { method?: unknown; params?: { name?: unknown } };
      if (raw.method === 'tools/call' && raw.params?.name === 'echo') {
        swallowed = true;
        return Promise.resolve();
      }
      if (raw.method === 'notifications/cancelled') cancels.push(structuredClone(message) as WrittenCancel);
      return send(message, options);
    };
    return transport;
  };
  return { wrap, cancels, swallowed: () => swallowed };
}
