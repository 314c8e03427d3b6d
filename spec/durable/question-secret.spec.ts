/**
 * The job's progress names the task by its fingerprint only (docs/durable.md): the task id is a
 * secret, and progress goes to every `QueueEvents` listener and to dashboards such as Bull Board.
 * A 2025-11-25 server's question names its task in related-task `_meta` ([V7], [R31]); the question on
 * the job keeps what it asks (message, schema) without that id. Before, `job.progress.questions`
 * carried the server's params as sent, task id included.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { serveHttp, type HttpEndpoint } from '../../examples/http-server.js';
import { TaskClient, taskFingerprint } from '../../lib/index.js';
import { answerJobInput, enqueueToolTask, taskProcessor, type ToolJobEvent } from '../../lib/bullmq/index.js';
import { questionsOn, eventually, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: questions on the job without the task id');

describe.skipIf(!REDIS_AVAILABLE)('durable queue: questions on the job without the task id', () => {
  let server: HttpEndpoint;
  const { redis } = useRedis({
    setup: async () => {
      server = await serveHttp(0);
    },
    teardown: () => server?.close(),
  });

  it('a 2025-11-25 question shows on job.progress with its message and schema, and without the task id', async () => {
    const opened = await openQueue(redis, 'question-secret');
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () =>
        TaskClient.connect(new StreamableHTTPClientTransport(server.url), {
          sdk: 'v2',
          capabilities: { elicitation: {} },
        }),
      controlPollMs: 100,
      onEvent: (event) => events.push(event),
    });
    const worker = new Worker(opened.queue.name, processor, { connection: redis.connection });
    try {
      const job = await enqueueToolTask(opened.queue, {
        server: 'default',
        tool: 'confirm_delete',
        args: { path: '/data/s' },
      });
      const asked = await questionsOn(opened.queue, job.id!);
      const started = events.find((event) => event.type === 'started');
      const taskId = started?.type === 'started' ? started.taskId : undefined;
      expect(taskId).toMatch(/^\w{8,}$/);
      const progress = (await opened.queue.getJob(job.id!))!.progress;
      expect(JSON.stringify(progress)).not.toContain(taskId!);
      expect(progress).toMatchObject({ status: 'input_required', task: taskFingerprint(taskId!) });
      expect(asked[0]!.params).toMatchObject({
        message: 'Delete /data/s?',
        requestedSchema: { properties: { confirm: { type: 'boolean' } } },
      });
      const answered = await answerJobInput(opened.queue, job.id!, { action: 'accept', content: { confirm: true } });
      expect(JSON.stringify(answered)).not.toContain(taskId!);
      await eventually(async () => (await job.getState()) === 'completed', 30_000, 'the job to complete');
    } finally {
      await Promise.all([worker.close(true), processor.close()]);
      await opened.close();
    }
  }, 60_000);
});
