/**
 * Task ids are secrets (reliability review, item 12): no message the library writes repeats one,
 * neither the JSON-RPC errors it sends back, nor the errors it throws or reports, nor its log,
 * nor any link of an error's cause chain; each shows the id's fingerprint instead ([R31], [V7]).
 * Against the scripted 2025-11-25 server, on a ManualClock.
 */
import { inspect } from 'node:util';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type LogEntry, type TaskError } from '../../lib/index.js';
import { ManualClock, flush, rejection, within } from '../helpers.js';
import { connectScripted, creating, rpcError, type Json } from '../support/scripted-server.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const SECRET = '7f3c2a9e-1b4d-4c6a-9e8f-0a1b2c3d4e5f';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(options: { logger?: (entry: LogEntry) => void; wrap?: (transport: Transport) => Transport } = {}) {
  const clock = new ManualClock();
  const pair = await connectScripted({
    tools: [{ name: 'job', taskSupport: 'required' }],
    now: clock.now,
    clientOptions: { capabilities: { elicitation: {} } },
    ...(options.wrap === undefined ? {} : { wrap: options.wrap }),
  });
  const tasks = new TaskClient(pair.client, {
    clock,
    ...(options.logger === undefined ? {} : { logger: { log: options.logger } }),
  });
  cleanups.push(async () => {
    await tasks.close();
    await pair.close();
  });
  return { ...pair, tasks, clock };
}

const question = (taskId: string): Json => ({
  message: 'Proceed?',
  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  _meta: { [RELATED]: { taskId } },
});

describe('task ids are secrets in every message the library writes', () => {
  it('the -32601 sent back for an unhandled request names the task by fingerprint', async () => {
    const { server } = await rig();
    const answer = await within(server.request('elicitation/create', question(SECRET)));
    const error = answer.error as { code: number; message: string };
    expect(error.code).toBe(-32601);
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toMatch(/sha256:[0-9a-f]{12}/);
  });

  it('errors thrown and logged repeat no task id from the server’s messages', async () => {
    const logs: LogEntry[] = [];
    const { server, tasks, clock } = await rig({ logger: (entry) => logs.push(entry) });
    creating(server, { taskId: SECRET });
    server.on('tasks/get', (p) => {
      throw rpcError(-32602, `Task not found: ${String(p.taskId)}`);
    });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await clock.advance(1_000);
    const error = (await failure) as Error & { cause?: Error };
    expect(error.message).not.toContain(SECRET);
    expect(String(error.cause?.message)).not.toContain(SECRET);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it('a reply whose unknown status repeats the task id: the TaskProtocolError names it by fingerprint', async () => {
    const { server, tasks, clock } = await rig();
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    server.on('tasks/get', (p) => ({ ...server.tasks.get(String(p.taskId)), status: `stuck on ${String(p.taskId)}` }));
    const errors: TaskError[] = [];
    tasks.on('error', (error) => errors.push(error));
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(1_000);
    expect(errors.map((e) => e.name)).toContain('TaskProtocolError');
    for (const error of errors) expect(error.message).not.toContain(SECRET);
    expect(errors[0]!.message).toMatch(/unknown status "stuck on sha256:[0-9a-f]{12}/);
    handle.detach();
  });

  it('a failed send whose error chain quotes the task id (an HTTP body): no link of the chain repeats it', async () => {
    // Like an SDK's HTTP error quoting the server's body, with a cause of its own.
    const leaky = (transport: Transport): Transport =>
      new Proxy(transport, {
        get(target, key, receiver) {
          if (key !== 'send') return Reflect.get(target, key, receiver) as unknown;
          return (message: { method?: string; params?: { taskId?: string } }, ...rest: unknown[]) => {
            const taskId = message.params?.taskId;
            if (message.method !== 'tasks/get' || taskId === undefined)
              return (target.send as (...args: unknown[]) => Promise<void>).call(target, message, ...rest);
            const error = new Error(`HTTP 403: forbidden: task ${taskId} belongs to someone else`, {
              cause: new Error(`socket said ${taskId}`),
            });
            return Promise.reject(Object.assign(error, { code: 403, body: 'kept' }));
          };
        },
      });
    const { server, tasks, clock } = await rig({ wrap: leaky });
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    const errors: TaskError[] = [];
    tasks.on('error', (error) => errors.push(error));
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(1_000);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      // The error's own `taskId` field is the id by design; every text in the chain is scrubbed.
      const lines = inspect(error, { depth: 10 })
        .split('\n')
        .filter((line) => line.includes(SECRET));
      expect(lines.every((line) => /^\s*taskId: '/.test(line))).toBe(true);
      let link: unknown = error;
      for (; link instanceof Error; link = link.cause) expect(link.message).not.toContain(SECRET);
    }
    // The copies keep what the SDK's error carried.
    const sdkError = (errors[0]!.cause as Error).cause as Error & { code?: number; body?: string };
    expect(sdkError).toBeInstanceOf(Error);
    expect(sdkError).toMatchObject({ code: 403, body: 'kept' });
    expect(sdkError.message).toMatch(/forbidden: task sha256:[0-9a-f]{12} belongs/);
    handle.detach();
  });

  it("a throwing listener whose text names the task: the error event carries the task's metrics, and neither it nor the log repeats the id", async () => {
    const logs: LogEntry[] = [];
    const { server, tasks, clock } = await rig({ logger: (entry) => logs.push(entry) });
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    const reported: Array<[TaskError, string | undefined]> = [];
    tasks.on('error', (error, metrics) => reported.push([error, metrics?.taskId]));
    const handle = await tasks.callToolAsTask('job');
    handle.on('status', (metrics) => {
      throw new Error(`cannot render ${metrics.taskId}`);
    });
    server.tasks.update(SECRET, { statusMessage: 'step 2' });
    await clock.advance(1_000);
    expect(reported.map(([error, taskId]) => [error.message.replace(/sha256:[0-9a-f]{12}/, 'FP'), taskId])).toEqual([
      ['A "status" listener threw: cannot render FP', SECRET],
    ]);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    handle.detach();
  });

  it('a throwing onProgress of a tracked task is reported with its task; progress on its token after it settled is consumed, not handed to the SDK', async () => {
    const { server, tasks, clock, client } = await rig();
    creating(server, { taskId: SECRET, pollInterval: 1_000 });
    const reported: Array<[string | undefined, string | undefined]> = [];
    tasks.on('error', (error, metrics) => reported.push([error.taskId, metrics?.taskId]));
    const sdkErrors: unknown[] = [];
    client.onerror = (error) => sdkErrors.push(error);
    const handle = await tasks.callToolAsTask(
      'job',
      {},
      {
        onProgress: () => {
          throw new Error('render failed');
        },
      },
    );
    const token = (server.params('tools/call')[0]!._meta as { progressToken: string }).progressToken;
    server.notify('notifications/progress', { progressToken: token, progress: 1 });
    await flush();
    expect(reported).toEqual([[SECRET, SECRET]]);
    server.tasks.finish(SECRET, 'completed', { result: { content: [] } }, {}, true);
    await clock.advance(10);
    expect(handle.settled).toBe(true);
    server.notify('notifications/progress', { progressToken: token, progress: 2 });
    await flush();
    expect(sdkErrors).toEqual([]);
  });

  it('a failed task whose error text names the task: TaskFailedError.message shows the fingerprint', async () => {
    const { server, tasks, clock } = await rig();
    creating(server, { taskId: SECRET });
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    server.tasks.finish(SECRET, 'failed', { error: rpcError(-32603, `task ${SECRET} crashed`) }, {}, true);
    await clock.advance(10);
    const error = (await failure) as Error;
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toContain('crashed');
  });

  it('a cancelled task whose statusMessage names the task: TaskCancelledError.message and the log show the fingerprint', async () => {
    const logs: LogEntry[] = [];
    const { server, tasks, clock } = await rig({ logger: (entry) => logs.push(entry) });
    creating(server, { taskId: SECRET, pollInterval: 100 });
    server.on('tasks/cancel', (p) =>
      server.tasks.update(String(p.taskId), {
        status: 'cancelled',
        statusMessage: `Task ${SECRET} was cancelled by the client`,
      }),
    );
    const handle = await tasks.callToolAsTask('job');
    const failure = rejection(handle.result());
    await handle.cancel();
    await clock.advance(10);
    const error = (await failure) as Error;
    expect(error.name).toBe('TaskCancelledError');
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toMatch(/was cancelled: Task sha256:[0-9a-f]{12} was cancelled by the client$/);
    const entries = JSON.stringify(logs);
    expect(entries).not.toContain(SECRET);
    expect(logs.some((entry) => String(entry.fields.statusMessage).startsWith('Task sha256:'))).toBe(true);
  });
});
