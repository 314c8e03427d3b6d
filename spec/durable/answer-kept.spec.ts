/**
 * An answer taken by a worker that then died: the user answered once, and is not asked again. The
 * worker took the answer and sent its `tasks/update`, which never reached the server (held here by
 * a proxy, as a request lost with a dying process is), and was killed. The worker that takes the
 * job over resumes the task, which still asks the same question (tasks/get lists it): it used to
 * publish the question again and wait for a second answer that nobody would give; it now sends the
 * answer stored with the job. Worker processes, on the tasks-extension example server over
 * Streamable HTTP.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { serveExtHttp, type ExtHttpEndpoint } from '../../examples/ext-http-server.js';
import { answerJobInput, enqueueToolTask } from '../../lib/bullmq/index.js';
import { until } from '../helpers.js';
import {
  questionsOn,
  eventually,
  MethodCounter,
  openQueue,
  REDIS_AVAILABLE,
  skipWithoutRedis,
  startWorker,
  useRedis,
} from './support.js';

skipWithoutRedis('durable queue: an answer taken by a worker that died');

/**
 * An HTTP proxy to `target` that, while `holding`, keeps every `tasks/update` request open without
 * passing it on (a request lost with the process that sent it).
 */
async function holdingProxy(target: URL) {
  const held: ServerResponse[] = [];
  const state = { holding: true };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method: unknown;
      try {
        method = (JSON.parse(body.toString('utf8')) as { method?: unknown }).method;
      } catch {
        method = undefined;
      }
      if (state.holding && method === 'tasks/update') {
        held.push(res);
        return;
      }
      const upstream = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}${target.pathname}`),
    held,
    state,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!REDIS_AVAILABLE)('durable queue: an answer taken by a worker that died', () => {
  const { redis } = useRedis();

  // 'kill': the worker died; 'stop': it was closed (SIGTERM, processor.close()) and handed the job
  // back, which used to clear the answers it had taken from Redis.
  it.each(['kill', 'stop'] as const)(
    'the worker ends by %s: the next worker sends the stored answer instead of asking again: one answer, one tools/call, the job completes',
    async (end) => {
      const counter = new MethodCounter();
      const server: ExtHttpEndpoint = await serveExtHttp({ stepMs: 300, onMessage: counter.onMessage });
      const proxy = await holdingProxy(server.url);
      const queueName = `answer-kept-${end}`;
      const opened = await openQueue(redis, queueName);
      const options = {
        redis: redis.url,
        url: proxy.url.href,
        queue: queueName,
        lockDuration: 4_000,
        stalledInterval: 2_000,
      };
      const first = startWorker(options);
      let second: ReturnType<typeof startWorker> | undefined;
      try {
        await first.ready;
        const job = await enqueueToolTask(opened.queue, { server: 'default', tool: 'analyze', args: { id: 7 } });
        await questionsOn(opened.queue, job.id!, 'the question');
        await answerJobInput(opened.queue, job.id!, { action: 'accept', content: { depth: 'summary' } });
        // The first worker took the answer and sent it; the server never got it.
        await until(() => proxy.held.length > 0, 30_000, 'the first tasks/update');
        expect(counter.count('tasks/update')).toBe(0);
        second = startWorker(options);
        await second.ready;
        await (end === 'kill' ? first.kill() : first.stop());
        proxy.state.holding = false;
        await until(() => second!.lines.some((l) => l.event === 'resumed'), 30_000, 'the takeover');
        await eventually(async () => (await job.getState()) === 'completed', 30_000, 'the job to complete');
        expect((await opened.queue.getJob(job.id!))!.returnvalue).toMatchObject({
          structuredContent: { id: 7, depth: 'summary' },
        });
        // The second worker never put the question to the user again: it sent the stored answer.
        expect(second.lines.some((l) => l.event === 'progress' && l.question !== undefined)).toBe(false);
        expect(counter.count('tasks/update')).toBe(1);
        expect(counter.count('tools/call')).toBe(1);
      } finally {
        await second?.stop();
        await first.kill();
        await opened.close();
        await proxy.close();
        await server.close();
      }
    },
    120_000,
  );
});
