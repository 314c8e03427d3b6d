/**
 * The task a job's progress names (`job.progress.task`, the fingerprint of the task the worker
 * follows). The server may report the call's progress before its `CreateTaskResult` comes: the
 * job then showed `task: ''` for the rest of its life. A run that moves on to another task (its
 * task lost by the server and called again, `lostTask: 'call-again'`) kept naming the first one,
 * with that task's last status. The worker runs in this process, on a scripted 2025-11-25 server.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import {
  enqueueToolTask,
  taskProcessor,
  type TaskProcessorOptions,
  type ToolJobEvent,
  type ToolJobProgress,
} from '../../lib/bullmq/index.js';
import { connectScripted, type Json, type ScriptedPair } from '../support/scripted-server.js';
import { textResult } from '../support/scripted-task-client.js';
import { finished, openQueue, REDIS_AVAILABLE, skipWithoutRedis, useRedis } from './support.js';

skipWithoutRedis('durable queue: the task a job’s progress names');

/** How a job's progress names task `taskId`. */
const fingerprint = (taskId: string): string =>
  `sha256:${createHash('sha256').update(taskId).digest('hex').slice(0, 12)}`;

describe.skipIf(!REDIS_AVAILABLE)('durable queue: the task a job’s progress names', () => {
  const { redis, cleanups } = useRedis();

  /** A worker in this process on `pair`, on a queue with a fresh name; each progress it writes is kept. */
  async function rig(name: string, pair: ScriptedPair, options: Partial<TaskProcessorOptions> = {}) {
    const opened = await openQueue(redis, name);
    const events: ToolJobEvent[] = [];
    const processor = taskProcessor({
      queue: opened.queue,
      connect: () => Promise.resolve(new TaskClient(pair.client)),
      controlPollMs: 50,
      retry: { minDelayMs: 20, maxDelayMs: 100 },
      onEvent: (event) => events.push(event),
      ...options,
    });
    const worker = new Worker(name, processor, { connection: redis.connection });
    const written: ToolJobProgress[] = [];
    worker.on('progress', (_job, progress) => written.push(progress as ToolJobProgress));
    cleanups.push(
      () => opened.close(),
      () => Promise.all([worker.close(), processor.close()]),
    );
    return { queue: opened.queue, events, written };
  }

  it('progress reported before the CreateTaskResult: the job names its task once it is known', async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    const { server } = pair;
    server.on('tools/call', (params) => {
      const progressToken = (params._meta as Json | undefined)?.progressToken;
      server.notify('notifications/progress', { progressToken, progress: 1, total: 4 });
      const created = server.tasks.createResult({ pollInterval: 50 });
      const taskId = String((created.task as Json).taskId);
      setTimeout(() => server.tasks.update(taskId, { statusMessage: 'half way' }), 200);
      setTimeout(() => server.tasks.finish(taskId, 'completed', { result: textResult('done') }), 600);
      return created;
    });
    const { queue, written } = await rig('progress-early', pair);
    const job = await enqueueToolTask(queue, { server: 'default', tool: 'job' });
    const done = await finished(queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    // The first write came before the task existed; every write after names it.
    expect(written[0]).toMatchObject({ task: '', progress: { progress: 1, total: 4 } });
    const later = written.filter((progress) => progress.statusMessage === 'half way');
    expect(later.length).toBeGreaterThan(0);
    for (const progress of later)
      expect(progress).toMatchObject({ task: fingerprint('task-1'), progress: { progress: 1 } });
    expect(done.progress).toMatchObject({ task: fingerprint('task-1') });
  }, 60_000);

  it("a task lost and called again (lostTask 'call-again'): the job names the new task, not the lost one's status", async () => {
    const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }] });
    cleanups.push(() => pair.close());
    const { server } = pair;
    server.on('tools/call', () => {
      const created = server.tasks.createResult({ pollInterval: 50 });
      const taskId = String((created.task as Json).taskId);
      if (taskId === 'task-1') {
        // The first task reports a status, then the server forgets it (a restart, an elapsed ttl).
        setTimeout(() => server.tasks.update(taskId, { statusMessage: 'step 1 of the lost task' }), 100);
        setTimeout(() => server.tasks.delete(taskId), 400);
      } else {
        setTimeout(() => server.tasks.update(taskId, { statusMessage: 'step 1 of the new task' }), 300);
        setTimeout(() => server.tasks.finish(taskId, 'completed', { result: textResult('done') }), 800);
      }
      return created;
    });
    const { queue, events, written } = await rig('progress-lost', pair, { lostTask: 'call-again' });
    const job = await enqueueToolTask(queue, { server: 'default', tool: 'job' });
    const done = await finished(queue, job);
    expect([await done.getState(), done.failedReason]).toEqual(['completed', undefined]);
    expect(server.count('tools/call')).toBe(2);
    expect(events.filter((e) => e.type === 'started').map((e) => e.taskId)).toEqual(['task-1', 'task-2']);
    const first = written.findIndex((progress) => progress.statusMessage === 'step 1 of the lost task');
    expect(written[first]).toMatchObject({ task: fingerprint('task-1') });
    // Once the run follows the new task, every write names it, and none carries the lost task's message.
    const after = written.slice(written.findIndex((progress) => progress.task === fingerprint('task-2')));
    expect(after.length).toBeGreaterThan(0);
    for (const progress of after) {
      expect(progress.task).toBe(fingerprint('task-2'));
      expect(progress.statusMessage).not.toBe('step 1 of the lost task');
    }
    expect(done.progress).toMatchObject({ task: fingerprint('task-2'), statusMessage: 'step 1 of the new task' });
  }, 60_000);
});
