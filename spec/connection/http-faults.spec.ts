/**
 * HTTP faults over Streamable HTTP on 127.0.0.1 (issue 6): 5xx and 429 answers to task requests
 * are transient and retried with backoff; other 4xx are not. The result is never lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type TaskMetrics } from '../../lib/index.js';
import { startHttpServer } from '../support/http-server.js';
import { connectOptions, httpTransport } from '../support/sdk.js';

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
