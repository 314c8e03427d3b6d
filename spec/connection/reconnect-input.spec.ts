/**
 * `reconnect(client)` while the old connection is still open (docs/reliability.md): the requests
 * still open on it stay there, since a server may tie a task's pending input to them (the TS SDK
 * delivers a task's questions on its blocking `tasks/result`). A question the server then sends on
 * the old connection still reaches the call's callback, and its answer goes back there. It was
 * refused (-32601, "nobody was asked"): the TaskClient stopped serving input on the old connection
 * as soon as it switched. Two scripted 2025-11-25 servers sharing one task.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient } from '../../lib/index.js';
import { until } from '../helpers.js';
import { connectScripted, NO_REPLY, type Json } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const RELATED = 'io.modelcontextprotocol/related-task';

/** A scripted server that knows task `task-1`, waiting for input; its `tasks/result` is held. */
async function serverWithTask(creates: boolean) {
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    clientOptions: { capabilities: { elicitation: {} } },
  });
  const init = { taskId: 'task-1', status: 'input_required', pollInterval: 60_000, ttl: 600_000 };
  if (creates) pair.server.on('tools/call', () => pair.server.tasks.createResult(init));
  else pair.server.tasks.create(init);
  pair.server.on('tasks/result', () => NO_REPLY);
  cleanups.push(() => pair.close());
  return pair;
}

describe('reconnect(client) with the old connection still open', () => {
  it("a question the server sends on the old connection's open request still reaches the call's callback, and is answered there", async () => {
    const old = await serverWithTask(true);
    const asked: string[] = [];
    const tasks = new TaskClient(old.client);
    cleanups.push(() => tasks.close());
    const handle = await tasks.callToolAsTask(
      'job',
      {},
      {
        onElicitation: (request) => {
          asked.push(request.message);
          return { action: 'accept', content: { ok: true } };
        },
      },
    );
    expect(handle.taskId).toBe('task-1');
    await until(() => old.server.count('tasks/result') > 0, 5_000, 'the blocking tasks/result on the old connection');
    const fresh = await serverWithTask(false);
    tasks.reconnect(fresh.client);
    const reply = await old.server.request('elicitation/create', {
      message: 'Proceed?',
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      _meta: { [RELATED]: { taskId: 'task-1' } },
    });
    expect(reply.error as Json | undefined).toBeUndefined();
    expect(reply.result).toMatchObject({ action: 'accept', content: { ok: true } });
    expect(asked).toEqual(['Proceed?']);
  });

  it('once the old connection closes, the task goes on over the new one, whose questions are answered', async () => {
    const old = await serverWithTask(true);
    const tasks = new TaskClient(old.client);
    cleanups.push(() => tasks.close());
    const handle = await tasks.callToolAsTask('job', {}, { onElicitation: () => ({ action: 'decline' }) });
    await until(() => old.server.count('tasks/result') > 0, 5_000, 'the blocking tasks/result on the old connection');
    const fresh = await serverWithTask(false);
    tasks.reconnect(fresh.client);
    await old.close();
    // The task goes on over the new connection: its question there is answered.
    await until(
      () => fresh.server.count('tasks/get') + fresh.server.count('tasks/result') > 0,
      5_000,
      'a read over the new connection',
    );
    const reply = await fresh.server.request('elicitation/create', {
      message: 'Again?',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: 'task-1' } },
    });
    expect(reply.result).toMatchObject({ action: 'decline' });
    expect(handle.settled).toBe(false);
  });
});
