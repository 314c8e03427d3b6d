/**
 * The fault-injecting transport (spec/support/fault-transport.ts): each fault on its own over a raw
 * in-memory pair, reproducibility with the same seed, and one run of the library through it
 * (issue 6).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskFailedError } from '../../lib/index.js';
import { ManualClock, flush } from '../helpers.js';
import { FaultTransport, kindOf, mulberry32, type FaultOptions } from '../support/fault-transport.js';
import { connectScripted } from '../support/scripted-server.js';
import { createLinkedPair } from '../support/sdk.js';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });
const req = (id: number, method: string): JSONRPCMessage => ({ jsonrpc: '2.0', id, method, params: {} });
const res = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: {} });
const ns = (messages: JSONRPCMessage[]): unknown[] => messages.map((m) => ('params' in m ? m.params?.n : undefined));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/**
 * A FaultTransport on the client end of a raw in-memory pair (of the SDK chosen by `MCP_SDK`),
 * recording what each end receives.
 */
async function rig(options: FaultOptions) {
  const [clientSide, serverSide] = createLinkedPair();
  const faulty = new FaultTransport(clientSide, options);
  const atServer: JSONRPCMessage[] = [];
  const atClient: JSONRPCMessage[] = [];
  const closed = { client: 0, server: 0 };
  serverSide.onmessage = (message) => atServer.push(message);
  serverSide.onclose = () => (closed.server += 1);
  faulty.onmessage = (message) => atClient.push(message);
  faulty.onclose = () => (closed.client += 1);
  await serverSide.start();
  await faulty.start();
  cleanups.push(() => faulty.close());
  return { faulty, serverSide, atServer, atClient, closed };
}

describe('mulberry32', () => {
  it('is deterministic per seed, differs across seeds and stays in [0, 1)', () => {
    const a = Array.from({ length: 1_000 }, mulberry32(42));
    const b = Array.from({ length: 1_000 }, mulberry32(42));
    const c = Array.from({ length: 1_000 }, mulberry32(43));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(a.reduce((sum, x) => sum + x, 0) / a.length).toBeGreaterThan(0.45);
    expect(a.reduce((sum, x) => sum + x, 0) / a.length).toBeLessThan(0.55);
  });
});

describe('FaultTransport faults', () => {
  it('classifies messages', () => {
    expect(
      [note(1), req(1, 'tasks/get'), res(1), { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }].map((m) =>
        kindOf(m as JSONRPCMessage),
      ),
    ).toEqual(['notification', 'request', 'response', 'error']);
  });

  it('drops about the configured share, and the same seed drops the same messages', async () => {
    const run = async (seed: number): Promise<unknown[]> => {
      const { faulty, atServer } = await rig({ seed, clientToServer: { drop: 0.1 } });
      for (let i = 0; i < 1_000; i += 1) await faulty.send(note(i));
      expect(atServer.length).toBe(1_000 - faulty.stats().drop);
      expect(faulty.stats().drop).toBeGreaterThan(60);
      expect(faulty.stats().drop).toBeLessThan(140);
      return ns(atServer);
    };
    const first = await run(7);
    expect(await run(7)).toEqual(first);
    expect(await run(8)).not.toEqual(first);
  });

  it('filters by flow, kind and method: a response matches the method of the request it answers', async () => {
    const { faulty, serverSide, atServer, atClient } = await rig({
      serverToClient: { kinds: 'response', methods: 'tasks/get', drop: 1 },
    });
    await faulty.send(req(1, 'tasks/get'));
    await faulty.send(req(2, 'tasks/result'));
    expect(atServer).toHaveLength(2); // the other flow is untouched
    await serverSide.send(res(1));
    await serverSide.send(res(2));
    await serverSide.send(note(3));
    expect(atClient).toEqual([res(2), note(3)]);
    expect(faulty.events.filter((e) => e.action === 'drop')).toEqual([
      expect.objectContaining({ flow: 'serverToClient', kind: 'response', method: 'tasks/get', id: 1 }),
    ]);
  });

  it('methods can be a list or a RegExp; limit caps how many messages a rule touches', async () => {
    const { faulty, atServer } = await rig({
      clientToServer: [
        { methods: /^tasks\//, limit: 2, drop: 1 },
        { methods: ['ping'], drop: 1 },
      ],
    });
    for (const [id, method] of [
      [1, 'tasks/get'],
      [2, 'tasks/list'],
      [3, 'tasks/get'],
      [4, 'ping'],
      [5, 'tools/list'],
    ] as const) {
      await faulty.send(req(id, method));
    }
    expect(atServer.map((m) => ('id' in m ? m.id : undefined))).toEqual([3, 5]);
  });

  it('duplicates matching messages only', async () => {
    const { faulty, serverSide, atClient } = await rig({ serverToClient: { kinds: 'notification', duplicate: 1 } });
    await faulty.send(req(1, 'ping'));
    await serverSide.send(note(1));
    await serverSide.send(res(1));
    await serverSide.send(note(2));
    expect(atClient).toEqual([note(1), note(1), res(1), note(2), note(2)]);
    expect(faulty.stats('serverToClient')).toMatchObject({ duplicate: 2, pass: 1 });
  });

  it('delays by delayMs on the injected timer', async () => {
    const clock = new ManualClock();
    const { faulty, atServer } = await rig({
      setTimeout: clock.setTimeout,
      clientToServer: { delay: 1, delayMs: 100 },
    });
    await faulty.send(note(1));
    expect(atServer).toEqual([]);
    await clock.advance(99);
    expect(atServer).toEqual([]);
    await clock.advance(1);
    expect(ns(atServer)).toEqual([1]);
  });

  it('random delays from a range reorder messages, the same way for the same seed', async () => {
    const run = async (seed: number): Promise<unknown[]> => {
      const clock = new ManualClock();
      const { faulty, atServer } = await rig({
        seed,
        setTimeout: clock.setTimeout,
        clientToServer: { delay: 1, delayMs: [10, 50] },
      });
      for (let i = 0; i < 20; i += 1) await faulty.send(note(i));
      await clock.advance(9);
      expect(atServer).toEqual([]);
      await clock.advance(41);
      expect(atServer).toHaveLength(20);
      expect(new Set(faulty.events.map((e) => e.action))).toEqual(new Set(['delay']));
      return ns(atServer);
    };
    const first = await run(3);
    expect(first).not.toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect([...first].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await run(3)).toEqual(first);
  });

  it('reorders: a held message goes right after the next one, or after reorderHoldMs', async () => {
    const clock = new ManualClock();
    const { faulty, atServer } = await rig({ setTimeout: clock.setTimeout, clientToServer: { reorder: 1, limit: 1 } });
    for (const n of [1, 2, 3]) await faulty.send(note(n));
    expect(ns(atServer)).toEqual([2, 1, 3]);

    const lone = await rig({ setTimeout: clock.setTimeout, reorderHoldMs: 30, serverToClient: { reorder: 1 } });
    await lone.serverSide.send(note(9));
    expect(lone.atClient).toEqual([]);
    await clock.advance(30);
    expect(ns(lone.atClient)).toEqual([9]);
  });

  it("fails the wrapped side's sends (and only those): send() rejects and nothing is delivered", async () => {
    const { faulty, serverSide, atServer, atClient } = await rig({
      clientToServer: { methods: 'tasks/cancel', failSend: 1 },
      serverToClient: { failSend: 1 }, // the peer's sends cannot be failed from here: ignored
    });
    await expect(faulty.send(req(1, 'tasks/cancel'))).rejects.toThrow(/injected send failure/);
    await faulty.send(req(2, 'tasks/get'));
    expect(atServer.map((m) => ('method' in m ? m.method : undefined))).toEqual(['tasks/get']);
    await serverSide.send(note(1));
    expect(ns(atClient)).toEqual([1]);
    expect(faulty.stats()).toMatchObject({ fail: 1 });
  });

  it('closes the connection on the closeAfter-th matching message: both ends see onclose, later sends fail', async () => {
    const { faulty, atServer, closed } = await rig({ clientToServer: { closeAfter: 3 } });
    await faulty.send(note(1));
    await faulty.send(note(2));
    await expect(faulty.send(note(3))).rejects.toThrow();
    await flush();
    expect(ns(atServer)).toEqual([1, 2]);
    expect(closed).toEqual({ client: 1, server: 1 });
    await expect(faulty.send(note(4))).rejects.toThrow(/closed/);
  });

  it('closes on an incoming message too (probability 1), losing it', async () => {
    const { serverSide, atClient, closed } = await rig({ serverToClient: { kinds: 'notification', close: 1 } });
    await serverSide.send(note(1));
    await flush();
    expect(atClient).toEqual([]);
    expect(closed).toEqual({ client: 1, server: 1 });
  });

  it('configure() swaps the rules at run time (e.g. after the handshake)', async () => {
    const { faulty, atServer } = await rig({});
    await faulty.send(note(1));
    faulty.configure({ clientToServer: { drop: 1 } });
    await faulty.send(note(2));
    faulty.configure({});
    await faulty.send(note(3));
    expect(ns(atServer)).toEqual([1, 3]);
  });

  it('is reproducible: the same seed and traffic give the same events and deliveries in both flows', async () => {
    const run = async (seed: number) => {
      const clock = new ManualClock();
      const rules = { drop: 0.1, duplicate: 0.1, reorder: 0.1, delay: 0.2, delayMs: [5, 40] as const };
      const { faulty, serverSide, atServer, atClient } = await rig({
        seed,
        setTimeout: clock.setTimeout,
        clientToServer: rules,
        serverToClient: [
          { kinds: 'notification', ...rules },
          { kinds: 'response', drop: 0.2 },
        ],
      });
      for (let i = 0; i < 200; i += 1) {
        await faulty.send(i % 2 === 0 ? note(i) : req(i, 'tasks/get'));
        await serverSide.send(i % 3 === 0 ? res(i) : note(i));
        if (i % 10 === 0) await clock.advance(7);
      }
      await clock.advance(100);
      return { events: faulty.events, atServer: [...atServer], atClient: [...atClient] };
    };
    const first = await run(2026);
    const again = await run(2026);
    expect(again).toEqual(first);
    const actions = new Set(first.events.map((e) => e.action));
    for (const action of ['pass', 'drop', 'duplicate', 'reorder', 'delay']) expect(actions).toContain(action);
    expect((await run(2027)).events).not.toEqual(first.events);
  });
});

describe('the library through a FaultTransport (issue 6)', () => {
  it('every task ends in its true state with dropped poll/result responses and duplicated, reordered notifications', async () => {
    const faulty: FaultTransport[] = [];
    const pair = await connectScripted({
      tools: [{ name: 'job', taskSupport: 'required' }],
      wrap: (transport) => {
        const wrapped = new FaultTransport(transport, { seed: 11 });
        faulty.push(wrapped);
        return wrapped;
      },
    });
    // Faults start after the handshake.
    faulty[0]!.configure({
      serverToClient: [
        { kinds: ['response', 'error'], methods: ['tasks/get', 'tasks/result'], drop: 0.2 },
        { kinds: 'notification', duplicate: 0.3, reorder: 0.2 },
      ],
    });
    const { server } = pair;
    let n = 0;
    server.on('tools/call', () => {
      const index = n++;
      const created = server.tasks.createResult({ taskId: `job-${index}`, pollInterval: 20 });
      setTimeout(
        () => {
          if (index % 4 === 3) {
            server.tasks.finish(
              `job-${index}`,
              'failed',
              { result: { content: [{ type: 'text', text: `boom ${index}` }], isError: true } },
              {},
              index % 2 === 0,
            );
          } else {
            server.tasks.update(`job-${index}`, { statusMessage: 'half way' }, true);
            server.tasks.finish(
              `job-${index}`,
              'completed',
              { result: { content: [{ type: 'text', text: `ok ${index}` }] } },
              {},
              index % 2 === 0,
            );
          }
        },
        20 + ((index * 37) % 100),
      );
      return created;
    });
    const tasks = new TaskClient(pair.client, {
      minPollIntervalMs: 10,
      requestTimeoutMs: 100,
      retry: { minDelayMs: 10, maxDelayMs: 50, jitter: 0 },
    });
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const handles = await Promise.all(Array.from({ length: 40 }, () => tasks.callToolAsTask('job')));
    const outcomes = await Promise.race([
      Promise.all(
        handles.map((handle) =>
          handle.result().then(
            (result) => `${handle.taskId}:${JSON.stringify(result.content)}`,
            (error: unknown) =>
              `${handle.taskId}:${error instanceof TaskFailedError ? `failed ${error.message}` : String(error)}`,
          ),
        ),
      ),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('tasks did not finish within 10 s')), 10_000),
      ),
    ]);
    outcomes.forEach((outcome, index) => {
      const id = handles[index]!.taskId!;
      const i = Number(id.slice(4));
      expect(outcome).toBe(
        i % 4 === 3
          ? `${id}:failed Tool "job" failed: boom ${i}`
          : `${id}:${JSON.stringify([{ type: 'text', text: `ok ${i}` }])}`,
      );
    });
    expect(faulty[0]!.stats('serverToClient').drop).toBeGreaterThan(0);
    expect(faulty[0]!.stats('serverToClient').duplicate).toBeGreaterThan(0);
    expect(tasks.active).toBe(0);
  });
});
