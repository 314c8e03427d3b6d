/**
 * Receiver tasks over real stdio: @modelcontextprotocol/server-everything's
 * `trigger-elicitation-request-async` and `trigger-sampling-request-async` (registered only for a
 * client that declares task-augmented elicitation and sampling), and the receiver test server
 * (spec/support/receiver-server.ts) spawned as a child process. The client runs on the SDK chosen
 * by `MCP_SDK`. server-everything polls every second, so these take a few seconds each.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskClient, type TaskClientConnectOptions } from '../../lib/index.js';
import { taskReceiver } from '../../lib/receiver.js';
import { until } from '../helpers.js';
import { HeldCallback, accept, sampled } from '../support/receiver-rig.js';
import type { Json } from '../support/scripted-server.js';
import { connectOptions, stdioTransport } from '../support/sdk.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../..', import.meta.url));
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const receiverServer = fileURLToPath(new URL('../support/receiver-server.ts', import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function spawnClient(args: string[], options: TaskClientConnectOptions): Promise<TaskClient> {
  const transport = stdioTransport({ command: process.execPath, args, cwd: root, stderr: 'ignore' });
  const tasks = await TaskClient.connect(transport, { ...connectOptions(), ...options });
  cleanups.push(() => tasks.close());
  return tasks;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The text of a plain tool's result. */
async function toolText(tasks: TaskClient, name: string, args: Json = {}): Promise<string> {
  const handle = await tasks.callToolAsTask(name, args);
  const result = await handle.result();
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

describe('server-everything over stdio', () => {
  it('runs its async elicitation and sampling as receiver tasks: the answers and the polled statuses are in its reports', async () => {
    const tasks = await spawnClient([everything, 'stdio'], {
      serve: taskReceiver({
        // Answer well after the first poll (server-everything polls every 1 s), so it sees `working` first.
        elicitation: async (params, context) => {
          expect(context.delivery).toBe('receiver-task');
          expect(params.message).toContain('async task demo');
          await delay(2_000);
          return { action: 'accept', content: { name: 'Ada Lovelace', favoriteColor: 'Green', agreeToTerms: true } };
        },
        sampling: async (params) => {
          expect(params.maxTokens).toBe(100);
          await delay(2_000);
          return sampled('The answer is forty-two.');
        },
      }),
    });
    const names = (await tasks.tools()).map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['trigger-elicitation-request-async', 'trigger-sampling-request-async']),
    );

    const elicited = await toolText(tasks, 'trigger-elicitation-request-async');
    expect(elicited).toContain('[COMPLETED] User provided the requested information!');
    expect(elicited).toContain('- Name: Ada Lovelace');
    expect(elicited).toContain('- Favorite Color: Green');
    expect(elicited).toContain('- Agreed to terms: true');
    expect(elicited).toMatch(/Poll 1: working/);
    expect(elicited).toMatch(/Poll \d+: completed/);
    // [V19]: the payload it fetched names the receiver task.
    expect(elicited).toContain('io.modelcontextprotocol/related-task');

    const sampledText = await toolText(tasks, 'trigger-sampling-request-async', { prompt: 'What is the answer?' });
    expect(sampledText).toContain('[COMPLETED] Async sampling completed!');
    expect(sampledText).toContain('The answer is forty-two.');
    expect(sampledText).toContain('spec-model');
    expect(sampledText).toMatch(/Poll 1: working/);
    expect(sampledText).toMatch(/Poll \d+: completed/);
    expect(tasks.receiver?.tasks().map((task) => task.status)).toEqual(['completed', 'completed']);
  }, 20_000);

  it('reports a failed callback as the failed task it polled', async () => {
    const tasks = await spawnClient([everything, 'stdio'], {
      serve: taskReceiver({
        elicitation: () => {
          throw new Error('the form was closed');
        },
      }),
    });
    const text = await toolText(tasks, 'trigger-elicitation-request-async');
    expect(text).toContain('[FAILED] The elicitation callback failed: the form was closed');
  }, 20_000);
});

describe('the receiver test server over stdio', () => {
  const args = ['--import', 'tsx', receiverServer];

  it('completed, failed and cancelled receiver tasks', async () => {
    const held = new HeldCallback();
    const tasks = await spawnClient(args, {
      serve: taskReceiver({
        elicitation: held.callback,
        sampling: () => {
          throw new Error('no model today');
        },
      }),
    });
    const completing = toolText(tasks, 'delegate', { method: 'elicitation/create', pollMs: 20 });
    await until(() => held.calls.length === 1);
    held.calls[0]?.resolve(accept('Grace'));
    const completed = JSON.parse(await completing) as Json;
    expect((completed.statuses as string[]).at(-1)).toBe('completed');
    expect(completed.result).toMatchObject({ action: 'accept', content: { name: 'Grace' } });

    const failed = JSON.parse(
      await toolText(tasks, 'delegate', { method: 'sampling/createMessage', pollMs: 20 }),
    ) as Json;
    expect((failed.statuses as string[]).at(-1)).toBe('failed');
    expect(failed.error).toEqual({ code: -32603, message: 'The sampling callback failed: no model today' });

    const cancelled = JSON.parse(
      await toolText(tasks, 'delegate', { method: 'elicitation/create', pollMs: 20, cancelAfterPolls: 1 }),
    ) as Json;
    expect((cancelled.statuses as string[]).at(-1)).toBe('cancelled');
    expect(held.calls[1]?.context.signal.aborted).toBe(true);
  }, 20_000);

  it('100 concurrent receiver tasks, listed page by page, then expired by their ttl', async () => {
    const held = new HeldCallback();
    const tasks = await spawnClient(args, { serve: taskReceiver({ elicitation: held.callback }) });
    const created = (
      JSON.parse(await toolText(tasks, 'create', { method: 'elicitation/create', count: 100, ttl: 3_000 })) as Json
    ).created as Json[];
    expect(created).toHaveLength(100);
    await until(() => held.calls.length === 100);
    const listing = JSON.parse(await toolText(tasks, 'list')) as Json;
    expect(listing.pages).toBe(2);
    expect(new Set(listing.taskIds as string[])).toEqual(new Set(created.map((task) => task.taskId)));
    await until(() => tasks.receiver?.size === 0, 10_000, 'expiry');
    expect(held.calls.every((call) => call.context.signal.aborted)).toBe(true);
    const after = JSON.parse(
      await toolText(tasks, 'call', { method: 'tasks/get', params: { taskId: created[0]?.taskId } }),
    ) as Json;
    expect(after.error).toMatchObject({ code: -32602 });
  }, 20_000);
});
