/**
 * Readable printing of a `CallToolResult`: text blocks as text, structured content as pretty
 * JSON, images, audio and resources as a one-line summary each.
 */
import type { CallToolResult } from 'mcp-task-client';
import type { Colors } from './format.js';
import { jsonSafe, terminalSafe } from './sanitize.js';

type Json = Readonly<Record<string, unknown>>;

/** A string field of a block, as plain one-line text (every string here is the server's). */
const str = (value: unknown): string | undefined => (typeof value === 'string' ? terminalSafe(value) : undefined);

/** Size of base64 data in a human unit. */
function sizeOf(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
  if (bytes < 1_024) return `${bytes} B`;
  if (bytes < 1_048_576) return `${(bytes / 1_024).toFixed(1)} kB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/** One content block as text (read structurally: any block shape a server sends is shown). */
export function renderBlock(block: unknown, c: Colors): string {
  const b = (typeof block === 'object' && block !== null ? block : {}) as Json;
  const mime = str(b.mimeType);
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? terminalSafe(b.text, { multiline: true }) : '';
    case 'image':
    case 'audio':
      return c.dim(`[${b.type}${mime ? ` ${mime}` : ''}, ${sizeOf(str(b.data) ?? '')}]`);
    case 'resource_link': {
      const name = str(b.name);
      return c.dim(`[resource link ${str(b.uri) ?? '?'}${name ? ` "${name}"` : ''}${mime ? `, ${mime}` : ''}]`);
    }
    case 'resource': {
      const r = (typeof b.resource === 'object' && b.resource !== null ? b.resource : {}) as Json;
      const text = typeof r.text === 'string' ? r.text : undefined;
      const blob = str(r.blob);
      const size = text !== undefined ? `${text.length} chars` : blob !== undefined ? sizeOf(blob) : '';
      const rMime = str(r.mimeType);
      return c.dim(`[resource ${str(r.uri) ?? '?'}${rMime ? `, ${rMime}` : ''}${size ? `, ${size}` : ''}]`);
    }
    default:
      return c.dim(`[${terminalSafe(String(b.type))} block]`);
  }
}

/** The whole result as text for a terminal (ends without a newline); the server's text is made terminal-safe. */
export function renderResult(result: CallToolResult, c: Colors): string {
  const content: readonly unknown[] = Array.isArray(result.content) ? result.content : [];
  const lines = content.map((block) => renderBlock(block, c));
  if (result.structuredContent !== undefined) {
    lines.push(jsonSafe(result.structuredContent, 2));
  }
  return lines.length === 0 ? c.dim('(empty result)') : lines.join('\n');
}
