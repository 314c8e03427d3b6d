/**
 * The extension wire over Streamable HTTP when HTTP gets in the way: a 404 on a connection with no
 * session ([E21]: the 2026-07-28 era has none), and request streams that end without their answer
 * (a proxy cutting an idle stream, a server dropping it). Real HTTP on 127.0.0.1, SDK v2.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type TaskClientConnectOptions } from '../../lib/index.js';
import { until, within } from '../helpers.js';
import { ExtServer, fixtureTools, startExtHttpServer, taskTool, textResult } from '../support/ext-server/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Answers a request by method and its count, or `undefined` to let it through. */
type Tamper = (method: string | undefined, n: number, real: () => Promise<Response>) => Promise<Response> | undefined;

const sse = (text: string): Response =>
  new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
const NOTE = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'starting' } })}\n\n`;

async function rig(tamper: Tamper, options: TaskClientConnectOptions = {}, responseMode?: 'sse') {
  const server = new ExtServer({
    tools: [...fixtureTools(), taskTool('waits', { advance: 'manual', pollIntervalMs: 200 })],
    pollIntervalMs: 50,
  });
  const endpoint = await startExtHttpServer(server, responseMode === undefined ? {} : { responseMode });
  cleanups.push(() => endpoint.close());
  const counts = new Map<string, number>();
  const wrapped: typeof fetch = async (input, init) => {
    const method = new Headers(init?.headers).get('mcp-method') ?? undefined;
    const n = (counts.get(method ?? '') ?? 0) + 1;
    counts.set(method ?? '', n);
    return (await tamper(method, n, () => fetch(input, init))) ?? fetch(input, init);
  };
  const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(endpoint.url, { fetch: wrapped }), {
    sdk: 'v2',
    minPollIntervalMs: 10,
    retry: { minDelayMs: 10, maxDelayMs: 50 },
    ...options,
  });
  cleanups.push(() => tasks.close());
  const lost: string[] = [];
  tasks.on('connectionLost', () => lost.push('connectionLost'));
  return { server, tasks, counts, lost };
}

describe('the extension wire over Streamable HTTP', () => {
  it("a 404 on a connection without a session is that request's error, not a lost session: polling goes on and the result arrives ([E21])", async () => {
    const { tasks, counts, lost } = await rig((method, n) =>
      method === 'tasks/get' && n === 1 ? Promise.resolve(new Response('Not Found', { status: 404 })) : undefined,
    );
    const handle = await tasks.callToolAsTask('slow_compute', { polls: 2 });
    await expect(within(handle.result(), 5_000)).resolves.toMatchObject({
      content: [{ type: 'text', text: 'computed job' }],
    });
    expect(lost).toEqual([]);
    expect(counts.get('tasks/get')).toBeGreaterThan(1);
  });

  it('a subscriptions/listen whose stream ends without an answer is asked for again ([E18], [E22])', async () => {
    const empty = (): Promise<Response> =>
      Promise.resolve(
        new Response(new ReadableStream({ start: (controller) => controller.close() }), {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
        }),
      );
    const { server, tasks, counts } = await rig((method, n) =>
      method === 'subscriptions/listen' && n === 1 ? empty() : undefined,
    );
    const handle = await tasks.callToolAsTask('waits');
    await until(() => (counts.get('subscriptions/listen') ?? 0) >= 2, 5_000, 'a second subscriptions/listen');
    expect(counts.get('subscriptions/listen')).toBeGreaterThanOrEqual(2);
    server.tasks.complete(handle.taskId!, textResult('done'));
    await within(handle.result(), 5_000);
  });

  it('a tools/call whose stream ends after a notification, before the answer, fails at once instead of waiting out its timeout', async () => {
    const { tasks } = await rig(
      (method, _n, real) =>
        method === 'tools/call' ? real().then(async (response) => (await response.text(), sse(NOTE))) : undefined,
      { requestTimeoutMs: 20_000 },
      'sse',
    );
    const started = Date.now();
    const outcome = await within(
      tasks.callToolAsTask('waits').then(
        () => 'handle',
        (error: Error) => error.name,
      ),
      10_000,
    );
    expect(outcome).not.toBe('handle');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
