/**
 * Resume on the tasks extension wire. References record the wire; the extension is sessionless,
 * so a reference taken by one client resumes in another over a fresh connection, and the task's
 * input requests are answered there ([E3]-[E5]). Proven across two real processes (the fixture
 * spec/fixtures/ext-resume.ts, run with `node --import tsx`) against the scripted server over
 * Streamable HTTP, and in process over two in-memory connections.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskNotFoundError, TaskOptionError, type TaskReference } from '../../lib/index.js';
import { rejection } from '../helpers.js';
import {
  ExtServer,
  fixtureTools,
  META,
  startExtHttpServer,
  taskTool,
  textResult,
  type Json,
} from '../support/ext-server/index.js';
import { closeRigs, extRig, secondClient } from './support.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const script = fileURLToPath(new URL('../fixtures/ext-resume.ts', import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
  await closeRigs();
});

/** Runs the fixture in a child process and parses the JSON line it prints. */
async function fixture(...args: string[]): Promise<Json> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, timeout: 30_000 });
  return JSON.parse(stdout.trim()) as Json;
}

/** The client name a logged request carried in its `_meta`. */
function clientName(entry: { params: Json }): unknown {
  return ((entry.params._meta as Json | undefined)?.[META.clientInfo] as Json | undefined)?.name;
}

describe('across two processes, over Streamable HTTP', () => {
  it('resumes in process B a task process A created, and answers its input there', async () => {
    const server = new ExtServer({ tools: fixtureTools(), pollIntervalMs: 20 });
    const endpoint = await startExtHttpServer(server);
    cleanups.push(() => endpoint.close());

    const started = await fixture(
      'start',
      endpoint.url.href,
      'confirm_delete',
      JSON.stringify({ filename: 'moved.txt' }),
    );
    expect(started).toMatchObject({ kind: 'task', wire: 'io.modelcontextprotocol/tasks' });
    const reference = started.reference as TaskReference;
    expect(reference).toMatchObject({
      v: 2,
      toolName: 'confirm_delete',
      wire: 'io.modelcontextprotocol/tasks',
      server: 'ext-scripted-server@1.0.0',
      ttl: 60_000,
      capabilities: { cancel: true, list: false },
    });
    // Sessionless: nothing but the task id is needed to find the task again.
    expect(reference).not.toHaveProperty('sessionId');
    expect(server.tasks.ids()).toEqual([reference.taskId]);
    expect(server.count('tasks/update')).toBe(0);

    const resumed = await fixture('resume', endpoint.url.href, JSON.stringify(reference));
    expect(resumed).toMatchObject({
      wire: 'io.modelcontextprotocol/tasks',
      taskId: reference.taskId,
      toolName: 'confirm_delete',
      result: { content: [{ type: 'text', text: 'deleted moved.txt' }] },
      deliveries: ['task-update:confirm_delete:Delete moved.txt?'],
    });
    // Process A created it; process B answered it and read it to the end.
    expect(server.received('tools/call').map(clientName)).toEqual(['process-a']);
    expect(server.received('tasks/update').map(clientName)).toEqual(['process-b']);
    expect(server.tasks.inspect(reference.taskId).answers).toEqual({
      confirm: { action: 'accept', content: { confirm: true } },
    });
    expect(new Set(server.received('tasks/get').map(clientName))).toEqual(new Set(['process-b']));
  });
});

describe('in process, over a fresh connection', () => {
  it('resumes a detached task on another client, which answers the input the first never saw', async () => {
    const rig = await extRig({ server: { tools: [taskTool('asks', { advance: 'manual' })] } });
    const handle = await rig.tasks.callToolAsTask('asks');
    const reference = handle.detach()!;
    expect(reference.wire).toBe('io.modelcontextprotocol/tasks');
    await rig.close();
    const answered: string[] = [];
    const other = await secondClient(rig.server, rig.clock, {
      onElicitation: (params, context) => {
        answered.push(
          `${context.delivery}:${String(params.message)}:${context.handle === resumed ? 'own handle' : 'other'}`,
        );
        return { action: 'accept', content: { ok: true } };
      },
    });
    const resumed = other.resume(reference);
    expect(resumed.task, 'nothing read before it is observed').toBeUndefined();
    expect(rig.server.count('tasks/get')).toBe(0);
    const result = resumed.result();
    await rig.clock.advance(0);
    expect(resumed.task?.status).toBe('working');
    rig.server.tasks.requestInput(reference.taskId, {
      ok: {
        method: 'elicitation/create',
        params: { message: 'Still there?', requestedSchema: { type: 'object', properties: {} } },
      },
    });
    await rig.clock.advance(1_000);
    expect(answered).toEqual(['task-update:Still there?:own handle']);
    rig.server.tasks.complete(reference.taskId, textResult('finished elsewhere'));
    await rig.clock.advance(1_000);
    expect((await result).content).toEqual(textResult('finished elsewhere').content);
  });

  it('refuses a reference made on the other wire, and one made on another server', async () => {
    const rig = await extRig({ server: { tools: [taskTool('asks', { advance: 'manual' })] } });
    const reference = (await rig.tasks.callToolAsTask('asks')).toJSON()!;
    expect(() => rig.tasks.resume({ ...reference, taskId: 'x', wire: '2025-11-25' })).toThrow(TaskOptionError);
    expect(() => rig.tasks.resume({ ...reference, taskId: 'y', server: 'someone-else@1.0.0' })).toThrow(
      /created on server "someone-else@1.0.0"/,
    );
    // The same name with "@" in it is still another server when its name differs.
    expect(() => rig.tasks.resume({ ...reference, taskId: 'z', server: 'ext-scripted-server@beta@1.0.0' })).toThrow(
      TaskOptionError,
    );
  });

  it('resumes a reference made on another version of the same server (a rolling upgrade), and knows a task the new one lost', async () => {
    const rig = await extRig({ server: { tools: [taskTool('asks', { advance: 'manual' })] } });
    const reference = (await rig.tasks.callToolAsTask('asks')).detach()!;
    expect(reference.server).toBe('ext-scripted-server@1.0.0');
    const other = await secondClient(rig.server, rig.clock);
    const resumed = other.resume({ ...reference, server: 'ext-scripted-server@0.9.0' });
    const result = resumed.result();
    await rig.clock.advance(0);
    expect(rig.server.count('tasks/get')).toBeGreaterThan(0);
    rig.server.tasks.complete(reference.taskId, textResult('finished after the upgrade'));
    await rig.clock.advance(1_000);
    expect((await result).content).toEqual(textResult('finished after the upgrade').content);
    // A task the upgraded server does not hold: the server's answer, not a refusal.
    const lost = other.resume({ ...reference, taskId: 'lost-in-the-upgrade', server: 'ext-scripted-server@0.9.0' });
    const outcome = expect(lost.result()).rejects.toBeInstanceOf(TaskNotFoundError);
    await rig.clock.advance(0);
    await outcome;
  });

  it('resumes by bare task id too', async () => {
    const rig = await extRig({ server: { tools: [taskTool('asks', { steps: [{ result: textResult('by id') }] })] } });
    const { taskId } = (await rig.tasks.callToolAsTask('asks')).detach()!;
    const other = await secondClient(rig.server, rig.clock);
    const resumed = other.resume(taskId, { toolName: 'asks' });
    const result = resumed.result();
    await rig.clock.advance(0);
    expect((await result).content).toEqual(textResult('by id').content);
  });

  it('settles a resumed task the server no longer knows with TaskNotFoundError', async () => {
    const rig = await extRig({ server: { tools: [taskTool('asks', { advance: 'manual' })] } });
    const reference = (await rig.tasks.callToolAsTask('asks')).detach()!;
    rig.server.tasks.delete(reference.taskId);
    const other = await secondClient(rig.server, rig.clock);
    const result = rejection(other.resume(reference).result());
    await rig.clock.advance(0);
    const error = await result;
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as Error).message).toMatch(/does not know this task/);
  });

  it('says why a resumed task is unknown without advice about sessions (the extension is sessionless)', async () => {
    const rig = await extRig({ server: { tools: [taskTool('asks', { advance: 'manual' })] } });
    const reference = (await rig.tasks.callToolAsTask('asks')).detach()!;
    rig.server.tasks.delete(reference.taskId);
    const other = await secondClient(rig.server, rig.clock);
    const result = rejection(other.resume(reference).result());
    await rig.clock.advance(0);
    expect(((await result) as Error).message).not.toMatch(/session/i);
  });
});
