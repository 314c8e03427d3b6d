/**
 * Real I/O: the example server and @modelcontextprotocol/server-everything spawned over stdio,
 * and a child process that must exit on its own once its handles settled (issue 2). The client
 * and the child's client are of the SDK chosen by `MCP_SDK` (the child inherits the variable).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskFailedError } from '../../lib/index.js';
import { statuses } from '../helpers.js';
import { makeClient, stdioTransport } from '../support/sdk.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleServer = fileURLToPath(new URL('../../examples/server.ts', import.meta.url));
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function connect(command: string, args: string[], env: Record<string, string> = {}): Promise<TaskClient> {
  const client = makeClient({ name: 'stdio-spec', version: '1.0.0' });
  await client.connect(
    stdioTransport({
      command,
      args,
      cwd: root,
      env: { ...process.env, ...env } as Record<string, string>,
      stderr: 'ignore',
    }),
  );
  const tasks = new TaskClient(client);
  cleanups.push(async () => {
    await tasks.close();
    await client.close();
  });
  return tasks;
}

/** The child's exit code, or what went wrong when it is still running 15 s on (it is then killed). */
function exitCode(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('still running after 15 s');
    }, 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? -1);
    });
  });
}

describe('over stdio', () => {
  it('runs tasks on the example server spawned as a child process', async () => {
    const tasks = await connect(process.execPath, ['--import', 'tsx', exampleServer], { POLL_INTERVAL: '200' });
    const handle = await tasks.callToolAsTask('analyze', { id: 3, steps: 2, stepMs: 50 });
    expect(await statuses(handle)).toEqual(['working', 'working', 'completed']);
    expect((await handle.result()).content).toEqual([{ type: 'text', text: 'analysis of 3 done in 2 steps' }]);
    const failing = await tasks.callToolAsTask('flaky', { afterMs: 30, reason: 'quota exceeded' });
    await expect(failing.result()).rejects.toThrow(TaskFailedError);
    await expect(failing.result()).rejects.toThrow('quota exceeded');
  });

  it('completes by polling when the stdio server sends no notifications', async () => {
    const tasks = await connect(process.execPath, ['--import', 'tsx', exampleServer], {
      POLL_INTERVAL: '100',
      NOTIFY: '0',
    });
    const handle = await tasks.callToolAsTask('batch', { items: ['a', 'b'], itemMs: 60 });
    const seen = await statuses(handle);
    expect(seen[0]).toBe('working');
    expect(seen.at(-1)).toBe('completed');
    expect((await handle.result()).structuredContent).toEqual({ processed: ['a', 'b'] });
  });

  it('runs simulate-research-query on server-everything and returns its report', async () => {
    const tasks = await connect(process.execPath, [everything, 'stdio']);
    const handle = await tasks.callToolAsTask('simulate-research-query', { topic: 'MCP tasks' }, { timeoutMs: 30_000 });
    expect(handle.kind).toBe('task');
    const seen = await statuses(handle);
    expect(seen.at(-1)).toBe('completed');
    const result = await handle.result();
    const text = result.content.find((block) => block.type === 'text');
    expect(text?.type === 'text' ? text.text : '').toContain('# Research Report: MCP tasks');
  });

  it('lets the process exit on its own once the last handle settled', async () => {
    for (const mode of ['notify', 'poll']) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'spec/fixtures/exit-after-settle.ts', mode], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exit = await exitCode(child);
      expect(output).toContain('settled');
      expect(exit).toBe(0);
    }
  });

  it('the example server exits when its stdin ends, after a task ran (a launcher such as npx is stopped by the close, its child is not), once the call under way has answered', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', exampleServer], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const send = (message: object): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
    const replies = new Map<number, (result: Record<string, unknown>) => void>();
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, end)) as { id?: number; result?: Record<string, unknown> };
        buffered = buffered.slice(end + 1);
        if (typeof message.id === 'number' && message.result !== undefined) replies.get(message.id)?.(message.result);
      }
    });
    const request = (id: number, method: string, params: object): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        replies.set(id, resolve);
        child.once('exit', () => reject(new Error(`the server exited before it answered request ${id}`)));
        send({ jsonrpc: '2.0', id, method, params });
      });
    await request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'stdio-spec', version: '1.0.0' },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // A task in the server's task store, run to its result: the store's timers (its ttl) stay armed.
    const created = await request(2, 'tools/call', {
      name: 'analyze',
      arguments: { id: 1, steps: 1, stepMs: 10 },
      task: { ttl: 60_000 },
    });
    const taskId = (created.task as { taskId: string }).taskId;
    const result = await request(3, 'tasks/result', { taskId });
    expect(JSON.stringify(result)).toContain('analysis of 1 done');
    // A call still running when stdin ends is answered before the process exits.
    const last = request(4, 'tools/call', { name: 'analyze', arguments: { id: 2, steps: 1, stepMs: 300 } });
    child.stdin.end();
    expect(JSON.stringify(await last)).toContain('analysis of 2 done');
    const exit = await exitCode(child);
    expect(exit).toBe(0);
  });
});
