/**
 * The comparison in docs/agents.md, checked: the AI SDK's own MCP client (`@ai-sdk/mcp`) calls
 * every tool plainly, so a tool whose `execution.taskSupport` is `required` fails with the server's
 * -32601, which its tool hands to the model as an `isError` result; the same tool through
 * `taskTools` runs as a task. Both against the example server (examples/server.ts) over stdio, in
 * the same AI SDK loop. (sdk-free: `@ai-sdk/mcp` brings its own client; `taskTools` uses SDK v1.)
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { taskTools } from '../../lib/ai.js';
import { TaskClient } from '../../lib/index.js';
import { makeClient, stdioTransport } from '../support/sdk.js';
import { statusesOf, streamAgent } from './agent.js';
import { toolCallingModel, toolResultsIn } from './model.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleServer = fileURLToPath(new URL('../../examples/server.ts', import.meta.url));
const server = { command: process.execPath, args: ['--import', 'tsx', exampleServer], cwd: root };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('@ai-sdk/mcp and mcp-task-client/ai on a task-required tool', () => {
  it('@ai-sdk/mcp calls it plainly and the model gets the server refusal; taskTools runs it as a task', async () => {
    const mcp = await createMCPClient({ transport: new StdioMCPTransport({ ...server, stderr: 'ignore' }) });
    cleanups.push(() => mcp.close());
    const plain = toolCallingModel({ toolName: 'batch', input: { items: ['a'], itemMs: 10 } });
    const refused = await streamAgent(plain, await mcp.tools());
    expect(refused.results.get('call-1')).toEqual({
      content: [
        { type: 'text', text: "MCP error -32601: Tool batch requires task augmentation (taskSupport: 'required')" },
      ],
      isError: true,
    });
    expect(refused.preliminary).toEqual([]);

    const client = makeClient({ name: 'ai-spec', version: '1.0.0' });
    await client.connect(stdioTransport({ ...server, stderr: 'ignore' }));
    const tasks = new TaskClient(client);
    cleanups.push(async () => {
      await tasks.close();
      await client.close();
    });
    const model = toolCallingModel({ toolName: 'batch', input: { items: ['a'], itemMs: 10 } });
    const run = await streamAgent(model, await taskTools(tasks));
    // The task's statuses stream as preliminary outputs (none came through @ai-sdk/mcp above).
    // The first is the handle's snapshot when the tool starts streaming, and later changes follow;
    // on a loaded machine this 10 ms task may already be done by then: 'working' is usual, not
    // certain; the end is.
    const statuses = statusesOf(run.preliminary).map((output) => output.status);
    expect(statuses.every((status) => status === 'working' || status === 'completed')).toBe(true);
    expect(statuses.at(-1)).toBe('completed');
    expect(run.results.get('call-1')).toEqual({
      type: 'result',
      content: [{ type: 'text', text: 'processed 1 items' }],
      structuredContent: { processed: ['a'] },
    });
    expect(toolResultsIn(model, 1)[0]?.output).toEqual({
      type: 'content',
      value: [{ type: 'text', text: 'processed 1 items' }],
    });
  });
});
