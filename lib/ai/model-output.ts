/**
 * What the model sees of a task tool's output (its `toModelOutput`): the final result's content
 * blocks, never the status snapshots. Text stays text; resources become their text. An image, an
 * audio clip or a binary resource becomes a file part when its media type is one the tool passes
 * as a file (`modelFileTypes`: by default the raster images and PDF documents that model providers
 * take in a tool result); any other is a line of text that says what it was and that it is not
 * shown, since a provider that cannot take a file fails the next model call, or drops the file
 * without a word. A link is described in text. A result that reports a tool error (`isError`) is
 * marked as an error where it is all text, so providers that flag tool errors (Anthropic's
 * `is_error`) do; with other blocks (an image, a link), which the AI SDK's error outputs cannot
 * carry, it is content led by a text saying the tool reported an error, so that the model never
 * reads it as a success.
 */
import type { JSONValue, Tool } from 'ai';
import type { TaskToolOutput } from './types.js';

/** What a tool's `toModelOutput` returns (the AI SDK does not export the type by name). */
export type ModelOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;

/** The content form of a model output, one part per block. */
type ContentParts = Extract<ModelOutput, { type: 'content' }>['value'];

/** What leads an `isError` result the model is given as content (it holds more than text). */
const TOOL_ERROR_LEAD = 'The tool reported an error:';

/** `value` as plain JSON (what came off the wire is JSON already; anything else is made so). */
function json(value: unknown): JSONValue {
  try {
    return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as JSONValue);
  } catch {
    return String(value);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `block` as text: how a block the model cannot be given as it is reaches it. */
function described(block: unknown): ContentParts[number] {
  let text: string | undefined;
  try {
    text = JSON.stringify(block);
  } catch {
    text = undefined;
  }
  return { type: 'text', text: text ?? String(block) };
}

/**
 * The media types a task tool passes to the model as files when its `modelFileTypes` is not set:
 * the raster images and the PDF documents that model providers commonly take in a tool result.
 * A provider given another type (audio, an archive, SVG, …) may refuse it, failing the next model
 * call, or drop it without a word.
 */
export const DEFAULT_MODEL_FILE_TYPES: readonly string[] = Object.freeze([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
]);

/** `mediaType` without its parameters, in lower case: how media types are compared. */
function bareType(mediaType: string): string {
  return mediaType.split(';', 1)[0]!.trim().toLowerCase();
}

/** Whether a block of `mediaType` goes to the model as a file: one of `types`, where `type/*` takes every subtype. */
function passesAsFile(mediaType: string, types: readonly string[]): boolean {
  const own = bareType(mediaType);
  const slash = own.indexOf('/');
  const top = slash > 0 ? `${own.slice(0, slash)}/*` : undefined;
  return types.some((entry) => {
    const wanted = bareType(entry);
    return wanted === own || wanted === top;
  });
}

/** How many bytes the base64 `data` holds. */
function decodedBytes(data: string): number {
  const compact = /\s/.test(data) ? data.replace(/\s+/g, '') : data;
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((compact.length * 3) / 4) - padding);
}

/** `bytes` for a reader: `512 bytes`, `48 KB`, `3.2 MB`. */
function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * A file the model is given (`mediaType` is one of `types`), or else a line of text saying what
 * it was: `[audio/wav, 48 KB, not shown]`, with the resource's URI in front for a resource.
 */
function fileOrNote(mediaType: string, data: string, types: readonly string[], uri?: unknown): ContentParts[number] {
  if (passesAsFile(mediaType, types)) return { type: 'file', mediaType, data: { type: 'data', data } };
  const where = typeof uri === 'string' && uri !== '' ? `${uri}, ` : '';
  return { type: 'text', text: `[${where}${mediaType}, ${sizeOf(decodedBytes(data))}, not shown]` };
}

/** Whether `block` is a text block with its text (what the model reads as text). */
function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  return isObject(block) && block.type === 'text' && typeof block.text === 'string';
}

/**
 * The model's view of one content block; `types`: the media types it may be given as files. A
 * block is checked before it is mapped: what a server sent (or a saved conversation holds) may
 * lack a field its type needs (a text without `text`, an image without `mimeType`, a resource
 * without `resource`), and such a block, like a type this library does not know, is described as
 * JSON rather than crash the agent run.
 */
function partOf(block: unknown, types: readonly string[]): ContentParts[number] {
  if (!isObject(block)) return described(block);
  switch (block.type) {
    case 'text':
      return isTextBlock(block) ? { type: 'text', text: block.text } : described(block);
    case 'image':
    case 'audio': {
      const { data, mimeType } = block;
      return typeof data === 'string' && typeof mimeType === 'string' && mimeType !== ''
        ? fileOrNote(mimeType, data, types)
        : described(block);
    }
    case 'resource': {
      const { resource } = block;
      if (!isObject(resource)) return described(block);
      if (typeof resource.text === 'string') return { type: 'text', text: resource.text };
      if (typeof resource.blob === 'string') {
        const mediaType =
          typeof resource.mimeType === 'string' && resource.mimeType !== ''
            ? resource.mimeType
            : 'application/octet-stream';
        return fileOrNote(mediaType, resource.blob, types, resource.uri);
      }
      return described(block);
    }
    default:
      // A resource link (or a block type newer than this library): described as JSON.
      return described(block);
  }
}

/**
 * The model output of a task tool's final output; `fileTypes`: the media types the model is given
 * as files (the tool's `modelFileTypes`). A status reaches here only when a conversation was saved
 * before the tool finished (a UI message whose last output was preliminary): the model is told the
 * task had not finished.
 */
export function toModelOutput(output: unknown, fileTypes: readonly string[] = DEFAULT_MODEL_FILE_TYPES): ModelOutput {
  if (!isObject(output) || (output.type !== 'result' && output.type !== 'status'))
    return { type: 'json', value: json(output) };
  const value = output as unknown as TaskToolOutput;
  if (value.type === 'status') {
    const message = value.statusMessage === undefined ? '' : ` (${value.statusMessage})`;
    return {
      type: 'text',
      value: `The task had not finished: it was last seen ${value.status}${message}, without a result.`,
    };
  }
  const blocks: readonly unknown[] = Array.isArray(value.content) ? value.content : [];
  if (value.isError === true) {
    if (blocks.every(isTextBlock)) {
      const text = blocks.map((block) => block.text).join('\n');
      if (text !== '') return { type: 'error-text', value: text };
      if (value.structuredContent !== undefined) return { type: 'error-json', value: json(value.structuredContent) };
      return { type: 'error-text', value: 'The tool reported an error without a message.' };
    }
    return {
      type: 'content',
      value: [{ type: 'text', text: TOOL_ERROR_LEAD }, ...blocks.map((block) => partOf(block, fileTypes))],
    };
  }
  if (blocks.length === 0) {
    return value.structuredContent === undefined
      ? { type: 'text', value: '' }
      : { type: 'json', value: json(value.structuredContent) };
  }
  return { type: 'content', value: blocks.map((block) => partOf(block, fileTypes)) };
}
