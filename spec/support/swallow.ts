/**
 * A client transport wrapper for the tests of `notifications/cancelled`: a `tools/call` of `echo`
 * is never delivered (so never answered), and each `notifications/cancelled` written is kept, as
 * sent. With `holdCancels`, the write of each `notifications/cancelled` completes only once the
 * test lets it (`releaseCancels`), as a notification POST that needs a round trip does.
 */
import type { SpecTransport } from './sdk.js';

/** A `notifications/cancelled` as the client wrote it. */
export interface WrittenCancel {
  readonly params?: { requestId?: unknown; _meta?: Record<string, unknown> };
}

/** The wrapper (`wrap`), the cancels written so far, and whether the `echo` call was swallowed. */
export function swallowingEcho(options: { readonly holdCancels?: boolean } = {}): {
  wrap: (transport: SpecTransport) => SpecTransport;
  cancels: WrittenCancel[];
  swallowed: () => boolean;
  /** Completes the writes of the cancels held so far (with `holdCancels`). */
  releaseCancels: () => void;
} {
  const cancels: WrittenCancel[] = [];
  const held: Array<() => void> = [];
  let swallowed = false;
  const wrap = (transport: SpecTransport): SpecTransport => {
    const send = transport.send.bind(transport);
    transport.send = (message, sendOptions) => {
      const raw = message as { method?: unknown; params?: { name?: unknown } };
      if (raw.method === 'tools/call' && raw.params?.name === 'echo') {
        swallowed = true;
        return Promise.resolve();
      }
      if (raw.method !== 'notifications/cancelled') return send(message, sendOptions);
      cancels.push(structuredClone(message) as WrittenCancel);
      if (options.holdCancels !== true) return send(message, sendOptions);
      return new Promise<void>((resolve, reject) => {
        held.push(() => {
          send(message, sendOptions).then(resolve, reject);
        });
      });
    };
    return transport;
  };
  const releaseCancels = (): void => {
    for (const release of held.splice(0)) release();
  };
  return { wrap, cancels, swallowed: () => swallowed, releaseCancels };
}
