/**
 * The MCP server side failing under a running job:
 * - the server unreachable for a while (its state kept: a network outage, here a proxy taken
 *   down): the worker process keeps the job and its BullMQ attempt, and finishes it with the one
 *   task once the server is back;
 * - a session-scoped server restarted (its sessions and tasks gone): each resume finds the session
 *   gone, and after `retry.attempts` retries the BullMQ attempt fails (a stated limit);
 * - BullMQ's own `worker.cancelJob` cancels the remote task like `cancelToolJob`.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as JoinTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Worker, type Job, type Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { serveExtHttp } from '../../examples/ext-http-server.js';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { TaskClient } from '../../lib/index.js';
import {
  enqueueToolTask,
  taskProcessor,
  type TaskProcessorOptions,
  type ToolJobEvent,
} from '../../lib/bullmq/index.js';
import { until } from '../helpers.js';
import {
  eventually,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startProxy,
  startWorker,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: the MCP server failing under a job');

async function finished(queue: Queue, job: Job, timeoutMs = 60_000): Promise<Job> {
  await eventually(
    async () => ['completed', 'failed'].includes(await job.getState()),
    timeoutMs,
    `job ${job.id} to finish`,
  );
  return (await queue.getJob(job.id!))!;
}

describe.skipIf(!REDIS_AVAILABLE)('durable queue: the MCP server failing under a job', () => {
  const { redis } = useRedis();

  /** An in-process worker that joins the session a reference names, as the example worker does. */
  function worker(queue: Queue, url: URL, options: Partial<TaskProcessorOptions> = {}) {
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue,
      connect: (_server, { sessionId }) =>
        sessionId === undefined
          ? TaskClient.connect(new StreamableHTTPClientTransport(url), { sdk: 'v2' })
          : TaskClient.connect(new JoinTransport(url, { sessionId }), { sdk: 'v1' }),
      controlPollMs: 100,
      onEvent: (event) => events.push(event),
      ...options,
    });
    const bull = new Worker(queue.name, processor, {
      connection: redis.connection,
      lockDuration: 2_000,
      stalledInterval: 1_000,
    });
    return { bull, events, close: () => Promise.all([bull.close(), processor.close()]) };
  }

  it('the server unreachable for 8 s (its tasks kept): the job keeps its attempt and completes with its one task', async () => {
    const counter = new MethodCounter();
    const server = await serveExtHttp({ stepMs: 2_000, onMessage: counter.onMessage });
    const proxy = await startProxy(Number(server.url.port));
    const opened = await openQueue(redis, 'outage');
    const process = startWorker({ redis: redis.url, url: `http://127.0.0.1:${proxy.port}/mcp`, queue: 'outage' });
    try {
      await process.ready;
      const job = await enqueueToolTask(
        opened.queue,
        { server: 'default', tool: 'flaky', args: { reason: 'done at last' } },
        { attempts: 1 },
      );
      await until(() => process.lines.some((l) => l.event === 'started'), 30_000, 'the start');
      await proxy.down();
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      await proxy.up();
      const done = await finished(opened.queue, job, 120_000);
      // flaky ends with its isError result: the job fails with the server's message, on its first attempt.
      expect([await done.getState(), done.failedReason, done.attemptsMade]).toEqual([
        'failed',
        'Tool "flaky" failed: done at last',
        1,
      ]);
      expect(counter.count('tools/call')).toBe(1);
    } finally {
      await process.stop();
      await opened.close();
      await proxy.close();
      await server.close();
    }
  }, 180_000);

  it('a session-scoped server restarted: every resume finds the session gone; after retry.attempts the BullMQ attempt fails', async () => {
    let server: HttpEndpoint = await serveHttp(0);
    const url = server.url;
    const opened = await openQueue(redis, 'restarted-server');
    const w = worker(opened.queue, url, {
      reconnectGraceMs: 500,
      retry: { attempts: 3, minDelayMs: 100, maxDelayMs: 500 },
    });
    try {
      const job = await enqueueToolTask(opened.queue, {
        server: 'default',
        tool: 'analyze',
        args: { steps: 20, stepMs: 1_000 },
      });
      await until(() => w.events.some((e) => e.type === 'started'), 30_000, 'the start');
      await server.close();
      server = await serveHttp(Number(url.port));
      const done = await finished(opened.queue, job);
      expect(await done.getState()).toBe('failed');
      expect(done.failedReason).toBe(
        'Gave up after 3 retries: The TaskClient was closed; the remote task was left running',
      );
      expect(w.events.filter((e) => e.type === 'retry')).toHaveLength(3);
      expect(w.events.filter((e) => e.type === 'resumed')).toHaveLength(3);
    } finally {
      await w.close();
      await opened.close();
      await server.close();
    }
  }, 120_000);

  it("BullMQ's worker.cancelJob cancels the remote task (tasks/cancel) and fails the job without a retry", async () => {
    const counter = new MethodCounter();
    const server = await serveHttp(0, { onMessage: counter.onMessage });
    const opened = await openQueue(redis, 'cancel-job');
    const w = worker(opened.queue, server.url);
    try {
      const job = await enqueueToolTask(
        opened.queue,
        { server: 'default', tool: 'analyze', args: { steps: 30, stepMs: 1_000 } },
        { attempts: 3 },
      );
      await until(() => w.events.some((e) => e.type === 'started'), 30_000, 'the start');
      const taskId = (w.events.find((e) => e.type === 'started') as { taskId: string }).taskId;
      expect(w.bull.cancelJob(job.id!, 'stopped by the operator')).toBe(true);
      const done = await finished(opened.queue, job);
      expect([await done.getState(), done.attemptsMade]).toEqual(['failed', 1]);
      expect(done.failedReason).toBe(
        'Job cancelled (stopped by the operator): Call to "analyze" was aborted; the remote task was cancelled',
      );
      expect(counter.count('tasks/cancel')).toBe(1);
      expect((await server.statuses()).get(taskId)).toBe('cancelled');
    } finally {
      await w.close();
      await opened.close();
      await server.close();
    }
  }, 60_000);
});
