/**
 * The library in a host's shoes: it loads with only one of the two SDKs installed (issue 11: the
 * root entry point loads neither eagerly), and without the optional peer `ai`, and it classifies errors by their JSON-RPC code, so an
 * SDK client from the SDK's CommonJS build beside this ESM library works (reliability review,
 * item 15: two copies of every SDK error class then exist).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, TaskFailedError, TaskNotFoundError, type McpClient } from '../lib/index.js';
import { within } from './helpers.js';
import { ScriptedServer, creating, rpcError } from './support/scripted-server.js';
import { createLinkedPair } from './support/sdk.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('one SDK installed', () => {
  for (const hidden of ['v1', 'v2'] as const) {
    it(`imports and runs a task with ${hidden === 'v1' ? '@modelcontextprotocol/sdk' : '@modelcontextprotocol/client'} missing`, async () => {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', 'spec/fixtures/only-one-sdk.ts'],
        { cwd: root, env: { ...process.env, HIDE_SDK: hidden }, timeout: 30_000 },
      );
      expect(stdout).toContain(`ok hidden=${hidden} wire=2025-11-25 text=done`);
    });
  }
});

describe('without the optional peer `ai`', () => {
  it('the root entry point loads (it never imports mcp-task-client/ai); mcp-task-client/ai says ai is missing', async () => {
    const probe = [
      "const root = await import('./lib/index.ts');",
      "console.log('root', typeof root.TaskClient);",
      "await import('./lib/ai.ts').then(() => console.log('ai loaded'), (error) => console.log('ai', error.code, error.message.split(' imported')[0]));",
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', '--input-type=module', '-e', probe], {
      cwd: root,
      env: { ...process.env, HIDE_PACKAGE: 'ai' },
      timeout: 30_000,
    });
    expect(stdout).toBe("root function\nai ERR_MODULE_NOT_FOUND Cannot find package 'ai'\n");
  });
});

/** Runs `mcp-task tools [args]` with a package hidden (spec/fixtures/hide-sdk.ts); its failure, or undefined if it succeeded. */
function cliWithout(hide: { HIDE_SDK: 'v1' } | { HIDE_PACKAGE: string }, args: readonly string[] = []): Promise<{ code?: number; stderr?: string } | undefined> {
  return run(process.execPath, ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', 'cli/src/main.ts', 'tools', ...args], {
    cwd: root,
    env: { ...process.env, ...hide },
    timeout: 30_000,
  }).then(
    () => undefined,
    (error: unknown) => error as { code?: number; stderr?: string },
  );
}

describe('the mcp-task CLI without SDK v1', () => {
  // It runs on SDK v2 alone against a server it is given (spec/cli/sdk-v2-only.spec.ts); only the
  // bundled example server, built on SDK v1's McpServer, needs SDK v1.
  it('without a target, says in one line that the example server needs @modelcontextprotocol/sdk, and exits 1 (no stack trace)', async () => {
    const failure = await cliWithout({ HIDE_SDK: 'v1' });
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('the bundled example server needs @modelcontextprotocol/sdk (SDK v1)');
    expect(failure?.stderr).toContain('--stdio');
    expect(failure?.stderr).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
  });

  it('a package the SDK needs that is missing is reported as itself, not as the SDK missing', async () => {
    const failure = await cliWithout({ HIDE_PACKAGE: 'cross-spawn' }, ['--stdio', 'cat']);
    expect(failure?.code).not.toBe(0);
    expect(failure?.stderr).toContain("Cannot find package 'cross-spawn'");
    expect(failure?.stderr).not.toContain('needs');
  });
});

describe('an SDK client from the CommonJS build', () => {
  async function cjsPair() {
    const require = createRequire(import.meta.url);
    const { Client } = require('@modelcontextprotocol/sdk/client/index.js') as {
      Client: new (info: object) => McpClient & { connect(transport: unknown): Promise<void> };
    };
    const server = new ScriptedServer({ tools: [{ name: 'job', taskSupport: 'required' }] });
    const [clientSide, serverSide] = createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'cjs-client', version: '1.0.0' });
    await client.connect(clientSide);
    const tasks = new TaskClient(client);
    cleanups.push(async () => {
      await tasks.close();
      await client.close();
      await server.close();
    });
    return { server, tasks };
  }

  it("a failed task's -32603 still gives TaskFailedError, at once, with no retries", async () => {
    const { server, tasks } = await cjsPair();
    creating(server, { taskId: 'cjs-task-1', pollInterval: 10 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.finish('cjs-task-1', 'failed', { error: rpcError(-32603, 'the tool crashed') }, {}, true);
    const error = await within(handle.result().catch((e: unknown) => e));
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).rpcError).toMatchObject({ code: -32603, message: 'the tool crashed' });
    expect(server.count('tasks/result')).toBe(1);
  });

  it('-32602 still means the task vanished', async () => {
    const { server, tasks } = await cjsPair();
    creating(server, { taskId: 'cjs-task-2', pollInterval: 10 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.delete('cjs-task-2');
    const error = await within(handle.result().catch((e: unknown) => e));
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });
});
