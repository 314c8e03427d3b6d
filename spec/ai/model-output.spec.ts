/**
 * What the model is given of a task tool's output (the tool's `toModelOutput`), for every kind of
 * MCP content block (which go to the model as files: `modelFileTypes`), for `isError` results,
 * and for outputs that are not a final result. The tool comes from `taskTool` on the example server
 * in process; no call is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_MODEL_FILE_TYPES,
  isTaskToolOutput,
  taskTool,
  taskTools,
  type TaskTool,
  type TaskToolOutput,
} from '../../lib/ai.js';
import { TaskClient } from '../../lib/index.js';
import { exampleServerPair, rejection } from '../helpers.js';

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
  it('maps text, images, embedded resources and links to content parts; images and PDF documents are files', async () => {
    const output: TaskToolOutput = {
      type: 'result',
      content: [
        { type: 'text', text: 'two files' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'alpha' } },
        { type: 'resource', resource: { uri: 'file:///b.pdf', mimeType: 'application/pdf', blob: 'JVBERi0=' } },
        { type: 'resource_link', uri: 'file:///c.csv', name: 'c.csv' },
      ],
    };
    expect(await modelSees(output)).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'two files' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
        { type: 'text', text: 'alpha' },
        { type: 'file', mediaType: 'application/pdf', data: { type: 'data', data: 'JVBERi0=' } },
        { type: 'text', text: '{"type":"resource_link","uri":"file:///c.csv","name":"c.csv"}' },
      ],
    });
  });

  it('describes audio, and images and binary resources of a type providers do not take in a tool result, in a line of text instead of a file', async () => {
    const wav = 'A'.repeat(65_536); // 48 KB
    const output: TaskToolOutput = {
      type: 'result',
      content: [
        { type: 'audio', data: wav, mimeType: 'audio/wav' },
        { type: 'image', data: 'PHN2Zz4=', mimeType: 'image/svg+xml' },
        { type: 'resource', resource: { uri: 'file:///b.zip', mimeType: 'application/zip', blob: 'UEsDBA==' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAE=' } },
        { type: 'image', data: PNG, mimeType: 'IMAGE/PNG' },
      ],
    };
    expect(await modelSees(output)).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: '[audio/wav, 48 KB, not shown]' },
        { type: 'text', text: '[image/svg+xml, 5 bytes, not shown]' },
        { type: 'text', text: '[file:///b.zip, application/zip, 4 bytes, not shown]' },
        { type: 'text', text: '[file:///c.bin, application/octet-stream, 2 bytes, not shown]' },
        // Media types are compared without case.
        { type: 'file', mediaType: 'IMAGE/PNG', data: { type: 'data', data: PNG } },
      ],
    });
    expect(DEFAULT_MODEL_FILE_TYPES).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf']);
  });

  it('modelFileTypes widens (or narrows) what the model is given as files: exact types and type/*', async () => {
    const pair = await exampleServerPair();
    const tasks = new TaskClient(pair.client);
    try {
      const audio = await taskTool(tasks, 'analyze', { modelFileTypes: [...DEFAULT_MODEL_FILE_TYPES, 'audio/*'] });
      const pngOnly = (await taskTools(tasks, { include: ['analyze'], modelFileTypes: ['image/png'] })).analyze!;
      const output: TaskToolOutput = {
        type: 'result',
        content: [
          { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'image', data: 'AAAA', mimeType: 'image/jpeg' },
        ],
      };
      const sees = (tool: TaskTool) => tool.toModelOutput!({ toolCallId: 'c', input: {}, output });
      expect(await sees(audio)).toEqual({
        type: 'content',
        value: [
          { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: 'UklGRg==' } },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
          { type: 'file', mediaType: 'image/jpeg', data: { type: 'data', data: 'AAAA' } },
        ],
      });
      expect(await sees(pngOnly)).toEqual({
        type: 'content',
        value: [
          { type: 'text', text: '[audio/wav, 4 bytes, not shown]' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
          { type: 'text', text: '[image/jpeg, 3 bytes, not shown]' },
        ],
      });
      for (const bad of ['image/png', ['png'], [''], [7]]) {
        expect(await rejection(taskTools(tasks, { modelFileTypes: bad as never }))).toMatchObject({
          name: 'TaskOptionError',
          option: 'modelFileTypes',
        });
      }
      expect(await rejection(taskTool(tasks, 'analyze', { modelFileTypes: ['audio'] }))).toMatchObject({
        option: 'modelFileTypes',
      });
    } finally {
      await tasks.close();
      await pair.close();
    }
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
    // A blob without a usable mimeType is binary data of no known type: described, not a file.
    expect(
      await modelSees({
        type: 'result',
        content: [{ type: 'resource', resource: { uri: 'f', blob: 'AAE=', mimeType: 7 } }],
      }),
    ).toEqual({
      type: 'content',
      value: [{ type: 'text', text: '[f, application/octet-stream, 2 bytes, not shown]' }],
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
