/**
 * `TaskClient.connect` to a server that refuses the protocol version offered ([E12]: -32022 with
 * the versions it supports): a server of the 2026-07-28 protocol only met with the 2025-11-25
 * handshake (SDK v1, or SDK v2 pinned to the legacy era), or a server whose versions SDK v2's
 * negotiation does not share. The connect fails with a typed error that says what happened and
 * what reaches such a server, rather than with the SDK's bare error.
 */
import { describe, expect, it } from 'vitest';
import { TaskClient, TaskConnectError } from '../../lib/index.js';
import { rejection } from '../helpers.js';
import { methodsSent, refusingTransport } from '../support/fake-transport.js';
import { connectOptions, SDK } from '../support/sdk.js';

describe('TaskClient.connect to a server that refuses the protocol version offered ([E12])', () => {
  it("a server of 2026-07-28 only, met with the 2025-11-25 handshake: TaskConnectError (reason 'version') naming its versions and what reaches it", async () => {
    const transport = refusingTransport(['2026-07-28']);
    const error = await rejection(TaskClient.connect(transport, { ...connectOptions('legacy') }), 10_000);
    expect(methodsSent(transport)[0]).toBe('initialize');
    expect(error).toBeInstanceOf(TaskConnectError);
    expect(error).toMatchObject({ reason: 'version' });
    const message = (error as Error).message;
    expect(message).toMatch(/^The server refused the protocol version offered \(-32022\) \(it lists "2026-07-28"\)\. /);
    expect(message).toContain('SDK v1 offers 2025-11-25 and earlier only; SDK v2 negotiates the era');
    expect(message).toContain('The server said: ');
    // The SDK's own error stays on the cause, with its code.
    expect((error as Error).cause).toMatchObject({ code: -32022 });
    expect(transport.closes).toBeGreaterThanOrEqual(1);
  });

  it.skipIf(SDK === 'v1')(
    "SDK v2 negotiating the era with a server that lists only versions it does not speak: TaskConnectError (reason 'version'), with no claim about 2025-11-25",
    async () => {
      const transport = refusingTransport(['2099-01-01']);
      const error = await rejection(TaskClient.connect(transport, { ...connectOptions('auto') }), 10_000);
      expect(error).toBeInstanceOf(TaskConnectError);
      expect(error).toMatchObject({ reason: 'version' });
      expect((error as Error).message).toMatch(
        /^The server refused the protocol version offered \(-32022\) \(it lists "2099-01-01"\)\. /,
      );
      expect(transport.closes).toBeGreaterThanOrEqual(1);
    },
  );
});
