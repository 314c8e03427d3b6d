/**
 * `TaskClient.tools()` hands on what a host needs to present a tool (to a model, or in a UI)
 * besides its task support: the input and output JSON Schemas and the annotations, as the server
 * listed them, so that nobody has to list the tools a second time through the SDK client. A
 * schema or annotations that is not an object is left out rather than passed on.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TaskClient } from '../../lib/index.js';
import { connectPair, within } from '../helpers.js';
import { connectScripted } from '../support/scripted-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('TaskClient.tools()', () => {
  it("carries each tool's schemas and annotations from the SDK's McpServer", async () => {
    const server = new McpServer({ name: 'listing', version: '1.0.0' });
    server.registerTool(
      'lookup',
      {
        title: 'Look up',
        description: 'Looks a key up.',
        inputSchema: { key: z.string() },
        outputSchema: { value: z.number() },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      ({ key }) => ({ content: [{ type: 'text' as const, text: key }], structuredContent: { value: key.length } }),
    );
    const pair = await connectPair(server);
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    const [lookup] = await within(tasks.tools());
    expect(lookup).toMatchObject({
      name: 'lookup',
      title: 'Look up',
      description: 'Looks a key up.',
      taskSupport: 'forbidden',
      inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      outputSchema: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
  });

  it('leaves out a schema or annotations that is not an object, and keeps the rest of the tool', async () => {
    const pair = await connectScripted({
      tools: [
        { name: 'odd', taskSupport: 'optional', inputSchema: 'any', outputSchema: [1], annotations: null },
        {
          name: 'fine',
          taskSupport: 'required',
          outputSchema: { type: 'object' },
          annotations: { title: 'Fine tool' },
        },
      ],
    });
    const tasks = new TaskClient(pair.client);
    cleanups.push(async () => {
      await tasks.close();
      await pair.close();
    });
    expect(await within(tasks.tools())).toEqual([
      { name: 'odd', taskSupport: 'optional' },
      // annotations.title stands in for a missing title.
      {
        name: 'fine',
        taskSupport: 'required',
        title: 'Fine tool',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        annotations: { title: 'Fine tool' },
      },
    ]);
  });
});
