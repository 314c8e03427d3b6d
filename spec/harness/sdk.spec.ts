/**
 * The parameterisation itself (spec/support/sdk.ts, vitest.config.ts): the objects tests build are
 * of the SDK the project names, so a suite that passes in `sdk-v2` really ran on SDK v2. Also the
 * two ways SDK v2 negotiates against the legacy servers of these tests.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as V1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleServer } from '../../examples/server.js';
import { TaskClient } from '../../lib/index.js';
import { connectPair } from '../helpers.js';
import { connectScripted } from '../support/scripted-server.js';
import {
  SDK,
  connectOptions,
  createLinkedPair,
  httpTransport,
  makeClient,
  negotiatedEra,
  stdioTransport,
} from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** True for an SDK v2 client (v1 has no era). */
const isV2 = (client: object): boolean => typeof (client as { getProtocolEra?: unknown }).getProtocolEra === 'function';

describe(`the SDK under test (${SDK})`, () => {
  it('is the one the vitest project names', () => {
    expect(process.env.MCP_SDK).toBe(SDK);
  });

  it('builds clients and transports of that SDK', () => {
    const client = makeClient({ name: 'probe', version: '1' });
    expect(isV2(client)).toBe(SDK === 'v2');
    expect(client instanceof V1Client).toBe(SDK === 'v1');
    const [clientSide] = createLinkedPair();
    expect(clientSide instanceof V1InMemoryTransport).toBe(SDK === 'v1');
    // v2's HTTP transport marks its per-request streams; v1's has no such member.
    const http = httpTransport(new URL('http://127.0.0.1:9/mcp')) as { hasPerRequestStream?: unknown };
    expect(http.hasPerRequestStream === true).toBe(SDK === 'v2');
    const stdio = stdioTransport({ command: process.execPath });
    expect(stdio.constructor.name).toBe('StdioClientTransport');
  });

  it('TaskClient.connect builds a client of that SDK', async () => {
    const { server, store } = createExampleServer();
    const [clientSide, serverSide] = createLinkedPair();
    await server.connect(serverSide);
    const tasks = await TaskClient.connect(clientSide, connectOptions());
    cleanups.push(async () => {
      await tasks.close();
      await server.close();
      store.cleanup();
    });
    expect(isV2(tasks.client)).toBe(SDK === 'v2');
  });
});

describe('era negotiation against legacy servers', () => {
  it.each(['legacy', 'auto'] as const)(
    '%s: the session is legacy, and only auto probes with server/discover first',
    async (negotiation) => {
      const scripted = await connectScripted({ clientOptions: { negotiation } });
      cleanups.push(() => scripted.close());
      expect(negotiatedEra(scripted.client)).toBe('legacy');
      const methods = scripted.server.log.filter((entry) => entry.kind === 'request').map((entry) => entry.method);
      expect(methods).toEqual(
        SDK === 'v2' && negotiation === 'auto' ? ['server/discover', 'initialize'] : ['initialize'],
      );
    },
  );

  it('auto against the v1 McpServer falls back to legacy and still runs tasks', async () => {
    const { server, store } = createExampleServer({ stepMs: 5 });
    const pair = await connectPair(server, { negotiation: 'auto' });
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
      store.cleanup();
    });
    expect(negotiatedEra(pair.client)).toBe('legacy');
    const handle = await tasks.callToolAsTask('analyze', { id: 2, steps: 1 });
    expect(handle.kind).toBe('task');
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'analysis of 2 done in 1 steps' }]);
  });
});
