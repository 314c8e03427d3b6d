/**
 * References resumed on a session that skipped the handshake, refused resumes, and cancel() of a
 * resumed handle nobody observed yet (resume review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  TaskAbortError,
  TaskCancelledError,
  TaskClient,
  TaskNotSupportedError,
  TaskOptionError,
  TaskTimeoutError,
} from '../../lib/index.js';
import { rejection, within } from '../helpers.js';
import { creating } from '../support/scripted-server.js';
import { scriptedTaskClient } from '../support/scripted-task-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const setup = () => scriptedTaskClient((cleanup) => cleanups.push(cleanup));

/** What an SDK client joined to an existing session by id knows: no server identity, no capabilities. */
interface Handshake {
  getServerVersion: () => unknown;
  getServerCapabilities: () => unknown;
}

/** A second TaskClient on `client`, seen as a session that skipped the handshake; `restore()` undoes it. */
function joined(client: unknown): { tasks: TaskClient; restore: () => void } {
  const sdk = client as Handshake;
  const { getServerVersion, getServerCapabilities } = sdk;
  sdk.getServerVersion = () => undefined;
  sdk.getServerCapabilities = () => undefined;
  const tasks = new TaskClient(client as never);
  cleanups.push(() => tasks.close());
  return {
    tasks,
    restore: () => {
      sdk.getServerVersion = getServerVersion;
      sdk.getServerCapabilities = getServerCapabilities;
    },
  };
}

describe('a reference resumed on a session that skipped the handshake', () => {
  it('keeps the server identity it came with: detached again, it resumes on the client that made the task', async () => {
    const { server, tasks, client } = await setup();
    creating(server, { pollInterval: 60_000 });
    const first = (await tasks.callToolAsTask('job')).detach()!;
    expect(first.server).toBe('scripted-server@1.0.0');
    const other = joined(client);
    const again = other.tasks.resume(first).detach()!;
    other.restore();
    expect(again.server).toBe(first.server);
    expect(() => tasks.resume(again)).not.toThrow();
    // A reference that never knew its server ('') is accepted too.
    expect(() => tasks.resume({ ...again, taskId: 'unknown-server', server: '' })).not.toThrow();
  });

  it('a refused resume() changes nothing the client assumes about the session (a bad option; an input callback the client cannot take)', async () => {
    const { server, tasks, client } = await setup();
    creating(server, { pollInterval: 60_000 });
    const reference = (await tasks.callToolAsTask('job')).detach()!;
    const other = joined(client);
    expect(() =>
      other.tasks.resume(
        { ...reference, taskId: 'other', capabilities: { cancel: false, list: false } },
        { timeoutMs: -1 },
      ),
    ).toThrow(TaskOptionError);
    // The SDK client declared no elicitation: a resume with onElicitation is refused after the
    // reference was read, and used to apply the reference's capabilities all the same.
    expect(() =>
      other.tasks.resume(
        { ...reference, taskId: 'another', capabilities: { cancel: false, list: false } },
        { onElicitation: () => ({ action: 'decline' }) },
      ),
    ).toThrow(TaskNotSupportedError);
    // Before any accepted resume, the session is what the handshake-less client knew: listing works.
    await expect(other.tasks.listPage()).resolves.toBeDefined();
    const handle = other.tasks.resume(reference);
    await expect(within(handle.cancel())).resolves.toMatchObject({ status: 'cancelled' });
  });
});

describe('cancel() of a resumed handle nobody observed yet', () => {
  it('settles it with what the cancel showed, and the client announces it', async () => {
    const { server, tasks } = await setup();
    creating(server, { pollInterval: 60_000 });
    const reference = (await tasks.callToolAsTask('job')).detach()!;
    const settled: string[] = [];
    tasks.on('settled', (metrics) => settled.push(metrics.status));
    const handle = tasks.resume(reference);
    await expect(within(handle.cancel())).resolves.toMatchObject({ status: 'cancelled' });
    expect(handle.settled).toBe(true);
    expect(settled).toEqual(['cancelled']);
    await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
  });
});

describe('a resumed handle nobody observes', () => {
  it('a resumed task that nobody observes sends nothing, even when notifications about it arrive', async () => {
    const { server, tasks, clock } = await setup();
    const handle = tasks.resume('quiet', { toolName: 'job' });
    const at = new Date(clock.now()).toISOString();
    server.notify('notifications/tasks/status', {
      taskId: 'quiet',
      status: 'input_required',
      createdAt: at,
      lastUpdatedAt: at,
      ttl: null,
    });
    server.notify('notifications/tasks/status', {
      taskId: 'quiet',
      status: 'completed',
      createdAt: at,
      lastUpdatedAt: at,
      ttl: null,
    });
    await clock.advance(10_000);
    expect(server.count('tasks/get') + server.count('tasks/result')).toBe(0);
    expect(handle.task?.status).toBe('completed');
    // Observing it now fetches the payload once.
    server.on('tasks/result', () => ({ content: [{ type: 'text', text: 'late' }] }));
    expect(await within(handle.result())).toMatchObject({ content: [{ type: 'text', text: 'late' }] });
    expect(server.count('tasks/result')).toBe(1);
  });
});

describe('resume() of a task this client already tracks', () => {
  it('returns the same handle, with its own deadline armed on it: the deadline is never dropped', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    const again = tasks.resume(handle.taskId!, { timeoutMs: 1_000 });
    expect(again).toBe(handle);
    const failure = rejection(again.result());
    await clock.advance(1_000);
    expect(await failure).toBeInstanceOf(TaskTimeoutError);
    expect(server.count('tasks/cancel')).toBe(1);
  });

  it('the earliest deadline bounds the task: a later one from a resume does not extend it', async () => {
    const { server, tasks, clock } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job', {}, { timeoutMs: 1_000 });
    tasks.resume(handle.taskId!, { timeoutMs: 50_000 });
    const failure = rejection(handle.result());
    await clock.advance(1_000);
    expect(await failure).toMatchObject({ name: 'TaskTimeoutError', timeoutMs: 1_000 });
  });

  it("a resume's aborted signal stops the tracked task, and bad options are refused as for any resume", async () => {
    const { server, tasks } = await setup();
    creating(server, { pollInterval: 60_000 });
    const handle = await tasks.callToolAsTask('job');
    expect(() => tasks.resume(handle.taskId!, { timeoutMs: -5 })).toThrow(TaskOptionError);
    tasks.resume(handle.taskId!, { signal: AbortSignal.abort('user') });
    expect(await rejection(handle.result())).toBeInstanceOf(TaskAbortError);
    expect(server.count('tasks/cancel')).toBe(1);
  });
});

describe('result() of a resumed handle with an already aborted signal', () => {
  it('rejects with TaskAbortError and observes nothing: no tasks/get goes out for a wait already over', async () => {
    const { server, tasks, clock } = await setup();
    const handle = tasks.resume('quiet', { toolName: 'job' });
    expect(await rejection(handle.result({ signal: AbortSignal.abort('gone') }))).toBeInstanceOf(TaskAbortError);
    await clock.advance(10_000);
    expect(server.count('tasks/get') + server.count('tasks/result')).toBe(0);
  });

  it('updates() with an already aborted signal likewise: the iterator rejects, and nothing is read', async () => {
    const { server, tasks, clock } = await setup();
    const handle = tasks.resume('quiet', { toolName: 'job' });
    const updates = handle.updates({ signal: AbortSignal.abort('gone') });
    expect(await rejection(updates.next())).toBeInstanceOf(TaskAbortError);
    await clock.advance(10_000);
    expect(server.count('tasks/get') + server.count('tasks/result')).toBe(0);
  });
});
