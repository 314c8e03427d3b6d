/**
 * Fields real servers leave out or write as null where the schema says "absent", each read the
 * way a user expects (docs/spec-rules.md):
 * - a status notification that leaves out `createdAt`, `lastUpdatedAt`, `ttl` or `pollInterval`
 *   keeps what the client knew of them (D20; the extension's case is in spec/ext/notifications.spec.ts);
 * - `_meta: null`, `task: null`, `content: null`, `structuredContent: null` and a null
 *   related-task entry read as absent (D21).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { flush, within } from '../helpers.js';
import { creating, type Json } from '../support/scripted-server.js';
import { scriptedTaskClient, textResult } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function setup() {
  return scriptedTaskClient((cleanup) => cleanups.push(cleanup), {
    tools: [
      { name: 'job', taskSupport: 'required' },
      { name: 'plain', taskSupport: 'optional' },
    ],
  });
}

describe('a terse status notification keeps what the client knew (D20)', () => {
  it('2025-11-25: only taskId, status and statusMessage: ttl, pollInterval and createdAt stay, and polling keeps its pace', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'terse', ttl: 60_000, pollInterval: 2_000 });
    const handle = await tasks.callToolAsTask('job');
    const created = handle.task!;
    expect(created).toMatchObject({ ttl: 60_000, pollInterval: 2_000 });
    await clock.advance(500);
    server.notify('notifications/tasks/status', { taskId: 'terse', status: 'working', statusMessage: 'step 2' });
    await flush();
    expect(handle.task).toEqual({ ...created, statusMessage: 'step 2' });
    // The notification moved the next poll a full pollInterval away: at 2,500, not the backoff's 500.
    await clock.advance(1_900);
    expect(server.count('tasks/get')).toBe(0);
    await clock.advance(100);
    expect(server.count('tasks/get')).toBe(1);
    // A terse terminal one: the result is fetched, and the timestamps are still the server's.
    server.tasks.finish('terse', 'completed', { result: textResult('done') });
    server.notify('notifications/tasks/status', { taskId: 'terse', status: 'completed' });
    expect((await within(handle.result())).content).toEqual([{ type: 'text', text: 'done' }]);
    expect(handle.task).toMatchObject({ status: 'completed', createdAt: created.createdAt, ttl: 60_000 });
    expect(errors).toEqual([]);
  });

  it('2025-11-25: pollInterval and timestamps sent as null keep what was known; a ttl left out keeps the ttl, one sent changes it', async () => {
    const { server, tasks, errors } = await setup();
    creating(server, { taskId: 'no-ttl', ttl: 30_000, pollInterval: 3_000 });
    const handle = await tasks.callToolAsTask('job');
    const { createdAt, lastUpdatedAt } = handle.task!;
    server.notify('notifications/tasks/status', {
      taskId: 'no-ttl',
      status: 'working',
      statusMessage: 'nulls',
      createdAt: null,
      lastUpdatedAt: null,
      pollInterval: null,
    });
    await flush();
    expect(handle.task).toMatchObject({
      createdAt,
      lastUpdatedAt,
      ttl: 30_000,
      pollInterval: 3_000,
      statusMessage: 'nulls',
    });
    server.notify('notifications/tasks/status', {
      taskId: 'no-ttl',
      status: 'working',
      statusMessage: 'now with a ttl',
      createdAt,
      lastUpdatedAt,
      ttl: 5_000,
    });
    await flush();
    // ttl: null is meaningful (unlimited), unlike the other fields: sent, it is taken.
    expect(handle.task).toMatchObject({ ttl: 5_000, pollInterval: 3_000, statusMessage: 'now with a ttl' });
    server.notify('notifications/tasks/status', {
      taskId: 'no-ttl',
      status: 'working',
      statusMessage: 'unlimited now',
      createdAt,
      lastUpdatedAt,
      ttl: null,
    });
    await flush();
    expect(handle.task).toMatchObject({ ttl: null, statusMessage: 'unlimited now' });
    expect(errors).toEqual([]);
  });
});

describe('null where the schema has no field reads as absent (D21)', () => {
  it('a plain answer with task: null, _meta: null and structuredContent: null is the result, without those nulls', async () => {
    const { server, tasks, errors } = await setup();
    server.on('tools/call', () => ({
      content: [{ type: 'text', text: 'at once' }],
      isError: false,
      task: null,
      structuredContent: null,
      _meta: null,
    }));
    const handle = await tasks.callToolAsTask('plain');
    expect(handle.kind).toBe('immediate');
    const result = await handle.result();
    expect(result.content).toEqual([{ type: 'text', text: 'at once' }]);
    expect(result).not.toHaveProperty('_meta');
    expect(result).not.toHaveProperty('structuredContent');
    expect(result).not.toHaveProperty('task');
    expect(result.isError).toBe(false);
    expect(errors).toEqual([]);
  });

  it('tasks/get and tasks/result with _meta: null, a null related-task entry and content: null', async () => {
    const { server, tasks, clock, errors } = await setup();
    creating(server, { taskId: 'nulls', pollInterval: 1_000 });
    server.on('tasks/get', (params) => ({ ...server.tasks.get(String(params.taskId)), _meta: null }));
    server.on('tasks/result', (): Json => ({
      content: null,
      structuredContent: { answer: 42 },
      _meta: { 'io.modelcontextprotocol/related-task': null },
    }));
    const handle = await tasks.callToolAsTask('job');
    await clock.advance(1_000);
    expect(server.count('tasks/get')).toBe(1);
    expect(handle.task?.status).toBe('working');
    server.tasks.finish('nulls', 'completed', { result: {} });
    await clock.advance(1_000);
    const result = await within(handle.result());
    expect(result.content).toEqual([]);
    expect(result.structuredContent).toEqual({ answer: 42 });
    expect(errors).toEqual([]);
  });
});
