/**
 * What the model is given of a task tool's output (the tool's `toModelOutput`), for every kind of
 * MCP content block, for `isError` results, and for outputs that are not a final result. The tool
 * comes from `taskTools` on the example server in process; no call is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTaskToolOutput, taskTool, type TaskTool, type TaskToolOutput } from '../../lib/ai.js';
import { TaskClient } from '../../lib/index.js';
import { exampleServerPair } from '../helpers.js';

let tool: TaskTool;
let close: () => Promise<void>;
beforeAll(async () => {
  const pair = await exampleServerPair();
  const tasks = new TaskClient(pair.client);
  tool = await taskTool(tasks, 'analyze');
  close = async () => {
    await tasks.close();
    await pair.close();
  };
});
afterAll(async () => {
  await close();
});

const modelSees = (output: unknown) =>
  tool.toModelOutput!({ toolCallId: 'c', input: {}, output: output as TaskToolOutput });
const PNG = 'iVBORw0KGgo=';

describe('the model output of a task tool', () => {
  it('maps text, images, audio, embedded resources and links to content parts', async () => {
    const output: TaskToolOutput = {
      type: 'result',
      content: [
        { type: 'text', text: 'two files' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'alpha' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAE=' } },
        { type: 'resource_link', uri: 'file:///c.csv', name: 'c.csv' },
      ],
    };
    expect(await modelSees(output)).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'two files' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
        { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: 'UklGRg==' } },
        { type: 'text', text: 'alpha' },
        { type: 'file', mediaType: 'application/octet-stream', data: { type: 'data', data: 'AAE=' } },
        { type: 'text', text: '{"type":"resource_link","uri":"file:///c.csv","name":"c.csv"}' },
      ],
    });
  });

  it("describes a block that lacks what its type needs as JSON, and never throws (a server's or a saved conversation's)", async () => {
    const broken = [
      null,
      'loose text',
      { type: 'text' },
      { type: 'text', text: 5 },
      { type: 'image', data: PNG },
      { type: 'audio', mimeType: 'audio/wav' },
      { type: 'resource' },
      { type: 'resource', resource: null },
      { type: 'resource', resource: { uri: 'file:///d' } },
    ];
    const output = { type: 'result', content: [...broken, { type: 'text', text: 'ok' }] };
    expect(await modelSees(output)).toEqual({
      type: 'content',
      value: [...broken.map((block) => ({ type: 'text', text: JSON.stringify(block) })), { type: 'text', text: 'ok' }],
    });
    // A blob without a usable mimeType is still a file.
    expect(
      await modelSees({
        type: 'result',
        content: [{ type: 'resource', resource: { uri: 'f', blob: 'AAE=', mimeType: 7 } }],
      }),
    ).toEqual({
      type: 'content',
      value: [{ type: 'file', mediaType: 'application/octet-stream', data: { type: 'data', data: 'AAE=' } }],
    });
    // An isError result is all text only when every block is a text block with its text.
    expect(await modelSees({ type: 'result', isError: true, content: [{ type: 'text' }, null] })).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'The tool reported an error:' },
        { type: 'text', text: '{"type":"text"}' },
        { type: 'text', text: 'null' },
      ],
    });
  });

  it('gives structured content as JSON when there is no content block', async () => {
    expect(await modelSees({ type: 'result', content: [], structuredContent: { rows: 3 } })).toEqual({
      type: 'json',
      value: { rows: 3 },
    });
    expect(await modelSees({ type: 'result', content: [] })).toEqual({ type: 'text', value: '' });
  });

  it('marks an isError result as an error when it is all text; with other blocks, keeps them as content led by a text that says the tool reported an error', async () => {
    expect(
      await modelSees({
        type: 'result',
        isError: true,
        content: [
          { type: 'text', text: 'bad id' },
          { type: 'text', text: 'use a number' },
        ],
      }),
    ).toEqual({
      type: 'error-text',
      value: 'bad id\nuse a number',
    });
    expect(await modelSees({ type: 'result', isError: true, content: [] })).toEqual({
      type: 'error-text',
      value: 'The tool reported an error without a message.',
    });
    expect(await modelSees({ type: 'result', isError: true, content: [], structuredContent: { code: 7 } })).toEqual({
      type: 'error-json',
      value: { code: 7 },
    });
    expect(
      await modelSees({
        type: 'result',
        isError: true,
        content: [
          { type: 'text', text: 'see' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
        ],
      }),
    ).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'The tool reported an error:' },
        { type: 'text', text: 'see' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
      ],
    });
    // A result that is not an error has no such lead.
    expect(await modelSees({ type: 'result', content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] })).toEqual(
      { type: 'content', value: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } }] },
    );
  });

  it('tells the model when the saved output is a status (the task had not finished), and passes anything else as JSON', async () => {
    expect(await modelSees({ type: 'status', status: 'input_required', statusMessage: 'waiting' })).toEqual({
      type: 'text',
      value: 'The task had not finished: it was last seen input_required (waiting), without a result.',
    });
    expect(await modelSees({ type: 'status', status: 'working' })).toEqual({
      type: 'text',
      value: 'The task had not finished: it was last seen working, without a result.',
    });
    expect(await modelSees({ other: 1 })).toEqual({ type: 'json', value: { other: 1 } });
    expect(await modelSees(undefined)).toEqual({ type: 'json', value: null });
  });

  it('isTaskToolOutput tells task tool outputs from anything else', () => {
    expect(isTaskToolOutput({ type: 'status', status: 'working' })).toBe(true);
    expect(isTaskToolOutput({ type: 'result', content: [] })).toBe(true);
    expect(isTaskToolOutput({ type: 'result' })).toBe(false);
    expect(isTaskToolOutput({ type: 'status' })).toBe(false);
    expect(isTaskToolOutput('result')).toBe(false);
    expect(isTaskToolOutput(null)).toBe(false);
  });
});
