/**
 * Sessions and process lifetime (reliability review, items 4, 8, 13, 20): a Streamable HTTP server
 * that forgot its sessions is a lost connection; a task can be resumed over the same HTTP session
 * from a fresh client, and a fresh session is told why it does not know the task; the SDK client
 * keeps no per-task entry; an unanswered cancel never keeps the process alive.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskNotFoundError, type TaskReference } from '../../lib/index.js';
import { exampleServerPair, within } from '../helpers.js';
import { startHttpServer, type HttpTaskServer } from '../support/http-server.js';
import { SDK, connectOptions, httpTransport, makeClient } from '../support/sdk.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function http(options: Parameters<typeof startHttpServer>[0] = {}): Promise<HttpTaskServer> {
  const server = await startHttpServer({ pollInterval: 50, ...options });
  cleanups.push(() => server.close());
  return server;
}

async function connectHttp(server: HttpTaskServer, sessionId?: string) {
  const client = makeClient({ name: 'sessions-spec', version: '1.0.0' });
  await client.connect(httpTransport(server.url, sessionId));
  cleanups.push(() => client.close());
  return client;
}

describe('Streamable HTTP sessions', () => {
  it('a server that forgot its sessions (a restart) is a lost connection: connectionLost, then the reconnect factory (D9)', async () => {
    const server = await http({ stepMs: 60_000 });
    let factoryCalls = 0;
    const tasks = await TaskClient.connect(httpTransport(server.url), {
      ...connectOptions(),
      minPollIntervalMs: 10,
      reconnect: async () => {
        factoryCalls += 1;
        return connectHttp(server);
      },
    });
    cleanups.push(() => tasks.close());
    const events: string[] = [];
    tasks.on('connectionLost', () => events.push('lost'));
    tasks.on('connectionRestored', () => events.push('restored'));
    const handle = await tasks.callToolAsTask('analyze', { id: 1, steps: 1 });
    const failure = handle.result().catch((error: unknown) => error);
    await server.dropSessions();
    const error = await within(failure, 10_000);
    expect(events).toEqual(['lost', 'restored']);
    expect(factoryCalls).toBe(1);
    // The new session does not know the task, and says why.
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as Error).message).toMatch(/session/);
  });

  it('a reference carries the HTTP session id: a fresh client joining that session resumes the task', async () => {
    const server = await http({ stepMs: 300 });
    const first = await TaskClient.connect(httpTransport(server.url), connectOptions());
    cleanups.push(() => first.close());
    const handle = await first.callToolAsTask('analyze', { id: 7, steps: 2 });
    const reference = handle.detach() as TaskReference;
    expect(reference.sessionId).toEqual(expect.any(String));
    // "Another process": a new SDK client that joins the session (it skips initialize, so the
    // server's identity and capabilities come from the reference).
    const joined = new TaskClient(await connectHttp(server, reference.sessionId));
    cleanups.push(() => joined.close());
    const resumed = joined.resume(reference);
    await expect(within(resumed.result(), 10_000)).resolves.toMatchObject({
      content: [{ type: 'text', text: 'analysis of 7 done in 2 steps' }],
    });
    // Cancel and list work on the joined session too (the reference said the server has them).
    const listed: string[] = [];
    for await (const task of joined.list()) listed.push(task.taskId);
    expect(listed).toContain(reference.taskId);
  });

  it('a fresh session does not know a task of another session: TaskNotFoundError says so', async () => {
    const server = await http({ stepMs: 60_000 });
    const first = await TaskClient.connect(httpTransport(server.url), connectOptions());
    cleanups.push(() => first.close());
    const reference = (await first.callToolAsTask('analyze', { id: 1, steps: 1 })).detach() as TaskReference;
    const other = new TaskClient(await connectHttp(server));
    cleanups.push(() => other.close());
    const error = await within(
      other
        .resume(reference)
        .result()
        .catch((e: unknown) => e),
      10_000,
    );
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect((error as Error).message).toMatch(/another session/);
  });
});

describe('no per-task leftovers', () => {
  it.runIf(SDK === 'v1')(
    'the SDK v1 client records no progress entry for the tasks (its map stays empty)',
    async () => {
      const pair = await exampleServerPair({ stepMs: 5, pollInterval: 10 });
      const tasks = new TaskClient(pair.client, { minPollIntervalMs: 5 });
      cleanups.push(async () => {
        await tasks.close();
        await pair.close();
      });
      const handles = await Promise.all(
        Array.from({ length: 50 }, (_, id) =>
          tasks.callToolAsTask('analyze', { id, steps: 1 }, { onProgress: () => {} }),
        ),
      );
      await within(Promise.all(handles.map((h) => h.result())), 10_000);
      const map = (pair.client as unknown as { _taskProgressTokens: Map<unknown, unknown> })._taskProgressTokens;
      expect(map.size).toBe(0);
    },
  );
});

describe('process lifetime', () => {
  it('an unanswered tasks/cancel after a deadline never keeps the process alive', async () => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', 'spec/fixtures/exit-after-unanswered-cancel.ts'], {
      cwd: root,
      env: { ...process.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exitedAt = await new Promise<number>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(Number.POSITIVE_INFINITY);
      }, 15_000);
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(Date.now());
      });
    });
    const match = /settled (\w+) (\w+) at (\d+)/.exec(output);
    expect(match?.[1]).toBe('TaskTimeoutError');
    expect(match?.[2]).toBe('unknown');
    // Exit follows the settlement (the request timeout of 10 s and the retries do not hold it).
    expect(exitedAt - Number(match?.[3])).toBeLessThan(3_000);
    expect(exitedAt - started).toBeLessThan(15_000);
  });
});
