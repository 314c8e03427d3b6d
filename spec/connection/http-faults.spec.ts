/**
 * HTTP faults over Streamable HTTP on 127.0.0.1 (issue 6): 5xx and 429 answers to task requests
 * are transient and retried with backoff; other 4xx are not. The result is never lost.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type TaskMetrics } from '../../lib/index.js';
import { within } from '../helpers.js';
import { startHttpServer } from '../support/http-server.js';
import { connectOptions, httpTransport, SDK } from '../support/sdk.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup(statusFor: (method: string, seen: number) => number | undefined) {
  const seen = new Map<string, number>();
  const http = await startHttpServer({ pollInterval: 50, notify: false, stepMs: 60 }, undefined, (message) => {
    if (message.method === undefined) return undefined;
    const count = (seen.get(message.method) ?? 0) + 1;
    seen.set(message.method, count);
    return statusFor(message.method, count);
  });
  const tasks = await TaskClient.connect(httpTransport(http.url), {
    ...connectOptions(),
    retry: { minDelayMs: 10, maxDelayMs: 50 },
  });
  cleanups.push(async () => {
    await tasks.close();
    await http.close();
  });
  return { tasks, seen };
}

describe('HTTP faults', () => {
  it('503 and 429 on tasks/get and tasks/result are retried; the result arrives', async () => {
    const { tasks, seen } = await setup((method, n) => {
      if (method === 'tasks/get' && n <= 2) return 503;
      if (method === 'tasks/result' && n === 1) return 429;
      return undefined;
    });
    const problems: string[] = [];
    tasks.on('error', (error) => problems.push(error.message));
    let metrics: TaskMetrics | undefined;
    tasks.on('settled', (m) => (metrics = m));
    const handle = await tasks.callToolAsTask('analyze', { id: 5, steps: 2 });
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'analysis of 5 done in 2 steps' }]);
    expect(seen.get('tasks/result')).toBe(2);
    expect(metrics?.retries).toBe(1);
    expect(problems.filter((p) => p.includes('503'))).toHaveLength(2);
    expect(problems.some((p) => p.includes('429'))).toBe(true);
  });

  it('a 4xx other than 408/429 on tasks/cancel is not retried', async () => {
    const { tasks, seen } = await setup((method) => (method === 'tasks/cancel' ? 403 : undefined));
    const handle = await tasks.callToolAsTask('analyze', { steps: 1, stepMs: 60_000 });
    await expect(handle.cancel()).rejects.toMatchObject({
      name: 'TaskRpcError',
      kind: 'send',
      transient: false,
      data: { httpStatus: 403 },
    });
    expect(seen.get('tasks/cancel')).toBe(1);
    handle.detach();
  });
});

describe('a request stream cut before its answer, on a 2025-11-25 session (SDK v2, which tells when it ends)', () => {
  it.skipIf(SDK !== 'v2')(
    'the blocking tasks/result whose stream ends without its answer is sent again, and the question it was to carry is asked and answered',
    async () => {
      const http = await startHttpServer({ pollInterval: 50, notify: false });
      let cut = 0;
      const wrapped: typeof fetch = async (input, init) => {
        const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: unknown }) : {};
        if (body.method === 'tasks/result' && cut === 0) {
          cut += 1;
          // A proxy cut the stream before the server saw the request: an event stream that ends with no answer.
          return new Response(new ReadableStream({ start: (controller) => controller.close() }), {
            status: 200,
            headers: { 'content-type': 'text/event-stream' },
          });
        }
        return fetch(input, init);
      };
      const tasks = await TaskClient.connect(new StreamableHTTPClientTransport(http.url, { fetch: wrapped }), {
        sdk: 'v2',
        minPollIntervalMs: 10,
        retry: { minDelayMs: 10, maxDelayMs: 50 },
        onElicitation: () => ({ action: 'accept', content: { confirm: true } }),
      });
      cleanups.push(async () => {
        await tasks.close();
        await http.close();
      });
      const problems: string[] = [];
      tasks.on('error', (error) => problems.push(error.message));
      const handle = await tasks.callToolAsTask('confirm_delete', { path: '/tmp/cut.txt' });
      // Before, the first tasks/result (which has no timeout) waited for ever, and the question never came.
      expect((await within(handle.result(), 10_000)).content).toEqual([{ type: 'text', text: 'deleted /tmp/cut.txt' }]);
      expect(cut).toBe(1);
      expect(problems).toEqual([expect.stringContaining('The request stream ended without an answer')]);
    },
  );
});
