/**
 * The raw session port under both SDK majors, with peers and hosts that misbehave: a server that
 * cancels an inbound request, a user `onclose` that throws, a transport whose `send` throws.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openPort } from '../../lib/port/open.js';
import { PortError, type Timers } from '../../lib/port/port.js';
import { flush, until } from '../helpers.js';
import { connectScripted, NO_REPLY, type ScriptedPair } from '../support/scripted-server.js';
import { setUserRequestHandler } from '../support/sdk.js';

const pairs: ScriptedPair[] = [];
afterEach(async () => {
  while (pairs.length > 0)
    await pairs
      .pop()
      ?.close()
      .catch(() => {});
});

/** Timers that run only when the test says. */
const manual = (): { t: Timers; timers: Array<() => void> } => {
  const timers: Array<() => void> = [];
  const t: Timers = {
    after: (_ms, run) => {
      timers.push(run);
      return run;
    },
    cancel: () => {},
  };
  return { t, timers };
};

/** Wraps a transport whose `send` throws at once (a synchronous serializer) for `boom/thing`. */
const throwingOnBoom: NonNullable<Parameters<typeof connectScripted>[0]>['wrap'] = (transport) => {
  const send = transport.send.bind(transport);
  transport.send = ((message: { method?: string; params?: unknown }, options: unknown) => {
    if (message.method === 'boom/thing') JSON.stringify({ big: 1n }); // a synchronous serializer throws
    return send(message as never, options as never);
  }) as never;
  return transport;
};

async function track(pending: Promise<ScriptedPair>): Promise<ScriptedPair> {
  const pair = await pending;
  pairs.push(pair);
  return pair;
}

describe('the raw session port, with odd peers and hosts', () => {
  it('a request the server cancels while a tap works on it is not answered when the taps pass: the SDK never sees it', async () => {
    const pair = await track(connectScripted({ clientOptions: { capabilities: { elicitation: {} } } }));
    const userSaw: Array<{ aborted: boolean }> = [];
    setUserRequestHandler(pair.client, 'elicitation/create', (_req: unknown, extra?: { signal?: AbortSignal }) => {
      userSaw.push({ aborted: extra?.signal?.aborted ?? false });
      return { action: 'decline' };
    });
    const port = openPort(pair.client);
    let release!: () => void;
    let tapSignal: AbortSignal | undefined;
    port.onRequest('elicitation/create', (req) => {
      tapSignal = req.signal;
      return new Promise((resolve) => {
        release = () => resolve(undefined);
      });
    });
    const replies: unknown[] = [];
    void pair.server
      .request('elicitation/create', { message: 'q', requestedSchema: { type: 'object', properties: {} } })
      .then((m) => replies.push(m));
    await until(() => tapSignal !== undefined, 5_000, 'the tap to get the request');
    const id = pair.server.sent.at(-1)!.id;
    pair.server.notify('notifications/cancelled', { requestId: id, reason: 'no longer needed' });
    await until(() => tapSignal?.aborted === true, 5_000, 'the cancellation to reach the tap');
    expect(tapSignal?.aborted).toBe(true);
    release();
    await flush(10);
    expect(userSaw, 'SDK handler must not run for a request the server cancelled').toEqual([]);
    expect(replies, 'no answer for a cancelled request').toEqual([]);
  });

  it('a throwing client.onclose (user code) still closes the port: pending requests reject, close listeners run once', async () => {
    const pair = await track(connectScripted());
    pair.server.on('slow/thing', () => NO_REPLY);
    const port = openPort(pair.client);
    const { t } = manual();
    let settled: string = 'pending';
    const p = port.request('slow/thing', {}, (r) => r, { timeoutMs: Infinity, timers: t });
    p.then(
      () => (settled = 'resolved'),
      (e: PortError) => (settled = `rejected:${e.kind}`),
    );
    let closes = 0;
    port.onClose(() => closes++);
    (pair.client as unknown as { onclose?: () => void }).onclose = () => {
      throw new Error('user onclose bug');
    };
    await until(() => pair.server.count('slow/thing') === 1, 5_000, 'the request to reach the server');
    await pair.server.close().catch(() => {});
    await until(() => settled !== 'pending' && closes > 0, 5_000, 'the port to close');
    await flush(10);
    expect(settled).toBe('rejected:closed');
    expect(closes).toBe(1);
  });

  it('a transport whose send throws at once fails the request with a PortError, and nothing is cancelled for a request never sent ([R27])', async () => {
    const pair = await track(connectScripted({ wrap: throwingOnBoom }));
    const port = openPort(pair.client);
    const { t, timers } = manual();
    const error = await port
      .request('boom/thing', {}, (r) => r, { timeoutMs: 1000, timers: t })
      .catch((e: unknown) => e);
    for (const run of timers) run();
    await flush(10);
    expect(error).toBeInstanceOf(PortError);
    expect((error as PortError).kind).toBe('send');
    expect(pair.server.params('notifications/cancelled')).toEqual([]);
    expect(pair.server.count('boom/thing')).toBe(0);
  });

  it('a request timeout longer than a timer can count (30 days) still arms one, to time the request out; an infinite one arms none', async () => {
    const pair = await track(connectScripted({}));
    pair.server.on('slow/thing', () => NO_REPLY);
    const port = openPort(pair.client);
    const { t, timers } = manual();
    const long = port
      .request('slow/thing', {}, (r) => r, { timeoutMs: 30 * 86_400_000, timers: t })
      .catch((e: unknown) => e);
    void port.request('slow/thing', {}, (r) => r, { timeoutMs: Number.POSITIVE_INFINITY, timers: t }).catch(() => {});
    expect(timers).toHaveLength(1);
    timers[0]!();
    expect(((await long) as PortError).kind).toBe('timeout');
  });

  it('a send that throws at once, then an abort in the same tick: failed as a send, and no notifications/cancelled for a request never sent ([R27])', async () => {
    const pair = await track(connectScripted({ wrap: throwingOnBoom }));
    const port = openPort(pair.client);
    const { t } = manual();
    const controller = new AbortController();
    const failed = port
      .request('boom/thing', {}, (r) => r, { timeoutMs: 1000, timers: t, signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort(new Error('the caller gave up in the same tick'));
    const error = await failed;
    await flush(10);
    expect((error as PortError).kind).toBe('send');
    expect(pair.server.params('notifications/cancelled')).toEqual([]);
  });
});
