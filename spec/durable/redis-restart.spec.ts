/**
 * Redis restarted under running workers (two worker processes, the 2025-11-25 example server over
 * HTTP): a restart that keeps the data (`SHUTDOWN SAVE`, down for longer than the job locks last)
 * cuts every connection and lets every lock expire; the workers reconnect, the stalled jobs are
 * resumed from their references, and every job completes exactly once with no tool called twice.
 * A restart that loses the data (no snapshot) loses the jobs it held, but the workers go on
 * with the jobs enqueued after it.
 */
import { describe, expect, it } from 'vitest';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { enqueueToolTask, type ToolJob } from '../../lib/bullmq/index.js';
import { until } from '../helpers.js';
import {
  eventually,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startWorker,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: Redis restarted mid-run');

const JOBS = 20;

describe.skipIf(!REDIS_AVAILABLE)('durable queue: Redis restarted mid-run', () => {
  let server: HttpEndpoint;
  const counter = new MethodCounter();
  const { redis } = useRedis({
    setup: async () => {
      server = await serveHttp(0, { onMessage: counter.onMessage });
    },
    teardown: () => server?.close(),
  });

  it('the workers reconnect and every job completes exactly once, no tool called twice', async () => {
    const opened = await openQueue(redis, 'restart');
    const completions = new Map<string, number>();
    opened.events.on('completed', ({ jobId }) => completions.set(jobId, (completions.get(jobId) ?? 0) + 1));
    const workers = [0, 1].map(() =>
      startWorker({ redis: redis.url, url: server.url.href, queue: 'restart', concurrency: JOBS }),
    );
    try {
      await Promise.all(workers.map((w) => w.ready));
      for (let id = 0; id < JOBS; id += 1)
        await enqueueToolTask(opened.queue, {
          server: 'default',
          tool: 'analyze',
          args: { id, steps: 4, stepMs: 2_000 },
        });
      const started = (): number =>
        new Set(workers.flatMap((w) => w.lines.filter((l) => l.event === 'started').map((l) => l.jobId))).size;
      await until(() => started() === JOBS, 60_000, 'every job to start');
      // Down for 3 s: longer than the 2 s locks, which expire while Redis is away.
      await redis.restart(3_000);
      await eventually(
        async () => (await opened.queue.getJobCounts('completed')).completed === JOBS,
        120_000,
        'every job to complete',
      );
      expect(await opened.queue.getJobCounts('failed', 'active', 'wait')).toEqual({ failed: 0, active: 0, wait: 0 });
      expect(counter.count('tools/call')).toBe(JOBS);
      await until(() => completions.size === JOBS, 30_000, 'every completion event');
      expect([...completions.values()].every((n) => n === 1)).toBe(true);
      // The jobs whose locks expired were taken over and resumed, not started again.
      const starts = workers.flatMap((w) => w.lines.filter((l) => l.event === 'started'));
      expect(starts).toHaveLength(JOBS);
      expect([...(await server.statuses()).values()].filter((s) => s !== 'completed')).toEqual([]);
      console.log(
        `Redis restart: ${workers.flatMap((w) => w.lines.filter((l) => l.event === 'resumed')).length} resumes after it`,
      );

      // A restart that loses the data: the workers go on with the jobs enqueued after it.
      await redis.restart(0, { keepData: false });
      const after: ToolJob[] = [];
      for (let id = 0; id < 3; id += 1)
        after.push(
          await enqueueToolTask(opened.queue, {
            server: 'default',
            tool: 'analyze',
            args: { id, steps: 1, stepMs: 200 },
          }),
        );
      await eventually(
        async () => (await Promise.all(after.map((job) => job.getState()))).every((state) => state === 'completed'),
        60_000,
        'the new jobs to complete',
      );
      for (const w of workers) await w.stop();
    } finally {
      await opened.close();
    }
  }, 300_000);
});
