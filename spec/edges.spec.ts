/**
 * Edge cases found in review: how iterators end when a task vanishes, dispose after a successful
 * cancel, a task settled before its CreateTaskResult, several TaskClients on one SDK client, a
 * call racing close(), opt-outs respected by every path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClient,
  TaskClosedError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskOptionError,
  TaskRpcError,
} from '../lib/index.js';
import { ManualClock, flush } from './helpers.js';
import { connectScripted, NO_REPLY, rpcError, type HandlerContext } from './support/scripted-server.js';
import { connectOptions, createLinkedPair } from './support/sdk.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function scripted(options: Parameters<typeof connectScripted>[0] = {}) {
  const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }], ...options });
  cleanups.push(() => pair.close());
  return pair;
}

describe('ending iterators', () => {
  it('an iterator throws TaskNotFoundError when the task vanishes, instead of ending quietly', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'v', pollInterval: 20, ttl: 3_600_000 }));
    const handle = await tasks.callToolAsTask('job');
    const seen: string[] = [];
    const iterated = (async () => {
      for await (const task of handle) seen.push(task.status);
    })();
    server.tasks.delete('v');
    await expect(iterated).rejects.toBeInstanceOf(TaskNotFoundError);
    expect(seen).toEqual(['working']);
  });

  it('a task with ttl 0 that vanishes is not found, not "expired after 0 ms" (a ttl of 0 is no usable ttl)', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { minPollIntervalMs: 10 });
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'zero', pollInterval: 20, ttl: 0 }));
    const handle = await tasks.callToolAsTask('job');
    expect(handle.task?.ttl).toBe(0);
    server.tasks.delete('zero');
    const error = await handle.result().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });

  it('dispose() after a successful remote cancel settles result() with TaskCancelledError', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'd' }));
    const handle = await tasks.callToolAsTask('job');
    const result = handle.result().catch((e: unknown) => e);
    await handle.dispose();
    expect(await result).toBeInstanceOf(TaskCancelledError);
    expect(server.count('tasks/cancel')).toBe(1);
  });
});

describe('a task settled before its CreateTaskResult arrived', () => {
  it('emits each event once and arms no deadline timer', async () => {
    const clock = new ManualClock();
    const { server, client } = await scripted();
    const tasks = new TaskClient(client, { clock });
    cleanups.push(() => tasks.close());
    const events: string[] = [];
    for (const name of ['created', 'status', 'cancelled', 'settled'] as const) tasks.on(name, () => events.push(name));
    let notified = 0;
    tasks.on('settled', (m) => (notified = m.notifications));
    server.on('tools/call', () => {
      const created = server.tasks.createResult({ taskId: 'early' });
      server.tasks.update('early', { status: 'cancelled', statusMessage: 'gone already' }, true);
      return created;
    });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 60_000 });
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
    // created (the handle listed), status for its first snapshot (here already terminal), then the end.
    expect(events).toEqual(['created', 'status', 'cancelled', 'settled']);
    expect(notified).toBe(1);
    expect(clock.pending).toBe(0);
    expect(tasks.active).toBe(0);
  });
});

describe('several TaskClients on one SDK client', () => {
  it('routes each task’s input to the client that owns it, and keeps progress tokens apart', async () => {
    const { server, client } = await scripted({ clientOptions: { capabilities: { elicitation: {} } } });
    const first = new TaskClient(client, { onElicitation: () => ({ action: 'decline' }) });
    const second = new TaskClient(client);
    cleanups.push(async () => {
      await first.close();
      await second.close();
    });
    let n = 0;
    server.on('tools/call', () => server.tasks.createResult({ taskId: `t${(n += 1)}` }));
    const progress: string[] = [];
    const mine = await second.callToolAsTask(
      'job',
      {},
      { onElicitation: () => ({ action: 'accept', content: { who: 'second' } }), onProgress: () => progress.push('second') },
    );
    const theirs = await first.callToolAsTask('job', {}, { onProgress: () => progress.push('first') });
    const answer = await server.request('elicitation/create', {
      message: 'for the second client',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: mine.taskId } },
    });
    expect(answer.result).toMatchObject({ action: 'accept', content: { who: 'second' } });
    const tokens = server.params('tools/call').map((p) => (p._meta as { progressToken: string }).progressToken);
    expect(new Set(tokens).size).toBe(2);
    server.notify('notifications/progress', { progressToken: tokens[0], progress: 1 });
    server.notify('notifications/progress', { progressToken: tokens[1], progress: 1 });
    await flush();
    expect(progress.sort()).toEqual(['first', 'second']);
    mine.detach();
    theirs.detach();
  });
});

describe('races and opt-outs', () => {
  it('a call whose task is created while close() runs is not left tracked', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client);
    let answer: HandlerContext | undefined;
    server.on('tools/call', (_params, ctx) => {
      answer = ctx;
      return NO_REPLY;
    });
    const call = tasks.callToolAsTask('job').catch((e: unknown) => e);
    await flush();
    const closing = tasks.close();
    answer?.reply(server.tasks.createResult({ taskId: 'late' }));
    await closing;
    expect(await call).toBeInstanceOf(TaskClosedError);
    expect(tasks.active).toBe(0);
    await flush();
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('requireTask is kept when a server refuses augmenting an optional tool', async () => {
    const { server, client } = await scripted({ tools: [{ name: 'maybe', taskSupport: 'optional' }] });
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    server.on('tools/call', () => {
      throw rpcError(-32601, 'no tasks here');
    });
    const error = await tasks.callToolAsTask('maybe', {}, { requireTask: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(server.count('tools/call')).toBe(1);
  });

  it('an abort before the CreateTaskResult with cancelOnAbort: false leaves a late task alone', async () => {
    const { server, client } = await scripted();
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    let answer: HandlerContext | undefined;
    server.on('tools/call', (_params, ctx) => {
      answer = ctx;
      return NO_REPLY;
    });
    const controller = new AbortController();
    const call = tasks.callToolAsTask('job', {}, { signal: controller.signal, cancelOnAbort: false }).catch((e: unknown) => e);
    await flush();
    controller.abort();
    const error = (await call) as TaskAbortError;
    expect(error).toBeInstanceOf(TaskAbortError);
    expect(error.remoteCancel).toBe('disabled');
    answer?.reply(server.tasks.createResult({ taskId: 'kept' }));
    await flush();
    expect(server.count('tasks/cancel')).toBe(0);
  });

  it('TaskClient.connect() validates options before opening a connection', async () => {
    const [clientSide] = createLinkedPair();
    let started = false;
    clientSide.start = async () => {
      started = true;
    };
    await expect(TaskClient.connect(clientSide, { ...connectOptions(), minPollIntervalMs: -1 })).rejects.toBeInstanceOf(TaskOptionError);
    await expect(
      TaskClient.connect(clientSide, { ...connectOptions(), capabilities: {}, onElicitation: undefined, maxConcurrentTasks: 0 }),
    ).rejects.toBeInstanceOf(TaskOptionError);
    expect(started).toBe(false);
  });

  it('an input callback abandoned because its task ended is not reported as a failure', async () => {
    const { server, client } = await scripted({ clientOptions: { capabilities: { elicitation: {} } } });
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    const problems: string[] = [];
    tasks.on('error', (e) => problems.push(e.message));
    server.on('tools/call', () => server.tasks.createResult({ taskId: 'ask' }));
    const handle = await tasks.callToolAsTask('job', {}, { onElicitation: () => new Promise(() => {}) });
    const reply = server.request('elicitation/create', {
      message: 'never answered',
      requestedSchema: { type: 'object', properties: {} },
      _meta: { [RELATED]: { taskId: 'ask' } },
    });
    await flush();
    await handle.cancel();
    expect((await reply).error).toBeDefined();
    expect(problems.filter((p) => p.includes('callback failed'))).toEqual([]);
  });

  it('per-call input callbacks without the capability fail fast with TaskNotSupportedError', async () => {
    const { client } = await scripted();
    const tasks = new TaskClient(client);
    cleanups.push(() => tasks.close());
    await expect(
      tasks.callToolAsTask('job', {}, { onSampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: '' } }) }),
    ).rejects.toBeInstanceOf(TaskNotSupportedError);
  });
});
