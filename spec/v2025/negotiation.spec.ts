/**
 * Negotiation of task mode with the tool catalog ([R6]-[R9], [A1], [S9]): refreshed on
 * notifications/tools/list_changed, and a plain retry when a server refuses augmentation of an
 * optional tool.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskRpcError } from '../../lib/index.js';
import { flush } from '../helpers.js';
import { connectScripted, rpcError, type ScriptedTool } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A TaskClient on a scripted server listing `tools`; every call answers plainly or with a task. */
async function setup(tools: ScriptedTool[]) {
  const scripted = await connectScripted({ tools });
  const tasks = new TaskClient(scripted.client);
  cleanups.push(async () => {
    await tasks.close();
    await scripted.close();
  });
  const server = scripted.server;
  server.on('tools/call', (params) =>
    params.task === undefined ? { content: [{ type: 'text', text: 'plain' }] } : server.tasks.createResult({}),
  );
  return { tasks, server };
}

describe('tool catalog', () => {
  it('re-reads tools/list after notifications/tools/list_changed', async () => {
    const tools: ScriptedTool[] = [{ name: 'job', taskSupport: 'forbidden' }];
    const { tasks, server } = await setup(tools);
    expect((await tasks.callToolAsTask('job')).kind).toBe('immediate');
    tools[0] = { name: 'job', taskSupport: 'required' };
    // Without the notification the cached catalog still says forbidden.
    expect((await tasks.callToolAsTask('job')).kind).toBe('immediate');
    expect(server.count('tools/list')).toBe(1);
    server.notify('notifications/tools/list_changed');
    await flush();
    const handle = await tasks.callToolAsTask('job');
    expect(handle.kind).toBe('task');
    expect(server.count('tools/list')).toBe(2);
    handle.detach();
  });

  it.each([-32601, -32600])(
    'an optional tool whose task-augmented call is refused with %i is retried plainly ([A1], [V3])',
    async (code) => {
      const scripted = await connectScripted({ tools: [{ name: 'maybe', taskSupport: 'optional' }] });
      const tasks = new TaskClient(scripted.client);
      cleanups.push(async () => {
        await tasks.close();
        await scripted.close();
      });
      scripted.server.on('tools/call', (params) => {
        if (params.task !== undefined) throw rpcError(code, 'tasks not supported for this tool');
        return { content: [{ type: 'text', text: 'done plainly' }] };
      });
      const handle = await tasks.callToolAsTask('maybe');
      expect(handle.kind).toBe('immediate');
      expect((await handle.result()).content).toEqual([{ type: 'text', text: 'done plainly' }]);
      expect(scripted.server.count('tools/call')).toBe(2);
    },
  );
});

describe('unknown tool names', () => {
  it('re-reads a stale list once for an unknown name, shares the re-read, and remembers the miss', async () => {
    const tools: ScriptedTool[] = [{ name: 'job', taskSupport: 'required' }];
    const { tasks, server } = await setup(tools);
    (await tasks.callToolAsTask('job')).detach();
    expect(server.count('tools/list')).toBe(1);
    // A tool added without a list_changed notification: the stale list is re-read once.
    tools.push({ name: 'late', taskSupport: 'required' });
    const [a, b] = await Promise.all([tasks.callToolAsTask('late'), tasks.callToolAsTask('late')]);
    expect([a.kind, b.kind]).toEqual(['task', 'task']);
    a.detach();
    b.detach();
    expect(server.count('tools/list')).toBe(2);
    // A misspelled tool re-reads once, then is remembered as unknown.
    await tasks.callToolAsTask('jbo');
    await tasks.callToolAsTask('jbo');
    expect(server.count('tools/list')).toBe(3);
  });
});

describe('requireTask', () => {
  it('requireTask is kept when a server refuses augmenting an optional tool', async () => {
    const { server, tasks } = await setup([{ name: 'maybe', taskSupport: 'optional' }]);
    server.on('tools/call', () => {
      throw rpcError(-32601, 'no tasks here');
    });
    const error = await tasks.callToolAsTask('maybe', {}, { requireTask: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskRpcError);
    expect(server.count('tools/call')).toBe(1);
  });
});
