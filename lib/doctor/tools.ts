/**
 * The server's tools as the doctor needs them: their declared `taskSupport` as sent (an unknown
 * value is a finding), the first tool that can run as a task, and arguments made up from an input
 * schema for a tool the caller named without any.
 */
import type { Session } from './session.js';
import { isObject, nameText } from './shape.js';
import type { ToolChoice } from './types.js';

/** A tool as listed. */
export interface ListedTool {
  readonly name: string;
  /** `execution.taskSupport` as sent (`undefined` when absent). */
  readonly taskSupport: unknown;
  readonly inputSchema: Record<string, unknown> | undefined;
}

/** Most `tools/list` pages read. */
const MAX_PAGES = 20;

/** The server's tools, as listed. */
export interface Listing {
  readonly tools: ListedTool[];
  /** Why the listing stopped short (a failed page, a cursor that is not a string or comes back); not set when cut at the page bound. */
  readonly error?: string | undefined;
  /** True when every page was read: a tool it does not have is not the server's. */
  readonly complete: boolean;
}

/** Every tool the server lists (at most {@link MAX_PAGES} pages), or why not. */
export async function listTools(s: Session): Promise<Listing> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const reply = await s.call('tools/list', cursor === undefined ? {} : { cursor }, { declare: false });
    if (!reply.ok) return { tools, error: `tools/list answered ${s.describe(reply)}`, complete: false };
    const listed = Array.isArray(reply.result.tools) ? reply.result.tools : [];
    for (const tool of listed) {
      if (!isObject(tool) || typeof tool.name !== 'string') continue;
      const execution = isObject(tool.execution) ? tool.execution : undefined;
      tools.push({
        name: tool.name,
        taskSupport: execution?.taskSupport,
        inputSchema: isObject(tool.inputSchema) ? tool.inputSchema : undefined,
      });
    }
    const next = reply.result.nextCursor;
    // [R23]: a cursor is an opaque string; the library refuses such a page (TaskProtocolError).
    if (next !== undefined && next !== null && typeof next !== 'string')
      return {
        tools,
        error: `tools/list answered a nextCursor that is not a string (${typeof next})`,
        complete: false,
      };
    if (typeof next !== 'string' || next === '') return { tools, complete: true };
    // A cursor given back unchanged: the pages after it are out of reach.
    if (next === cursor) return { tools, error: 'tools/list gave the same nextCursor back', complete: false };
    cursor = next;
  }
  return { tools, complete: false };
}

/**
 * Why a tool the caller named is not called at all, or `undefined`: a complete listing does not
 * have it (a typo, a tool of another server). A call of it would only be refused, or reach a tool
 * the caller did not mean; `option` names the option that named it. A listing that failed or was
 * cut may just miss it: the tool is tried then (on 2025-11-25 not as a task, {@link notATaskTool}).
 */
export function notListed(name: string, listing: Listing, option: string): string | undefined {
  if (!listing.complete || listing.tools.some((tool) => tool.name === name)) return undefined;
  const { tools } = listing;
  const shown = tools.slice(0, 5).map((tool) => nameText(tool.name));
  const lists =
    tools.length === 0
      ? 'it lists no tool'
      : `it lists ${shown.join(', ')}${tools.length > shown.length ? ` and ${tools.length - shown.length} more` : ''}`;
  return `tool ${nameText(name)} is not listed by the server (tools/list; ${lists}): the doctor does not call it; name a listed tool (${option} option)`;
}

/** The tool to run, with its arguments: the caller's, or made up from the listed tool's schema. */
export function resolveChoice(
  choice: ToolChoice,
  tools: readonly ListedTool[],
): { name: string; arguments: Record<string, unknown> } {
  if (choice.arguments !== undefined) return { name: choice.name, arguments: choice.arguments };
  const listed = tools.find((tool) => tool.name === choice.name);
  return { name: choice.name, arguments: argumentsFor(listed?.inputSchema) };
}

/**
 * Why a named tool may not be called as a task on 2025-11-25, or `undefined` when it may: a listed
 * tool whose `taskSupport` is absent, `forbidden` or unknown (read as forbidden) is never called as
 * a task ([R7]; a server rightly refuses it), and neither is one the doctor could not find in a
 * listing that failed or was cut: its `taskSupport` is unknown, and the library never calls such a
 * tool as a task either. A name a complete listing lacks is {@link notListed}'s.
 */
export function notATaskTool(name: string, listing: Listing): string | undefined {
  const listed = listing.tools.find((tool) => tool.name === name);
  if (listed === undefined) {
    if (listing.complete) return undefined;
    const why = listing.error ?? `it was cut after ${MAX_PAGES} pages`;
    return `tool ${nameText(name)} is not in what the doctor could read of tools/list (${why}): with its taskSupport unknown, the doctor does not call it as a task (R7)`;
  }
  if (listed.taskSupport === 'optional' || listed.taskSupport === 'required') return undefined;
  const declared =
    listed.taskSupport === undefined ? 'no taskSupport' : `taskSupport ${JSON.stringify(listed.taskSupport)}`;
  return `${nameText(name)} declares ${declared}: the doctor does not call it as a task (R7)`;
}

/** The first tool that declares it can run as a task (2025), or `undefined`. */
export function firstTaskTool(tools: readonly ListedTool[]): ListedTool | undefined {
  return tools.find((tool) => tool.taskSupport === 'optional' || tool.taskSupport === 'required');
}

/**
 * Arguments for an object schema: each required property gets its default, its first enum or
 * `const` value, or a plain value of its type (a short text, its minimum or 1, false, an empty
 * list, an object built the same way). Optional properties are left out.
 */
export function argumentsFor(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const value = valueFor(schema, 0);
  return isObject(value) ? value : {};
}

function valueFor(schema: unknown, depth: number): unknown {
  if (!isObject(schema) || depth > 4) return undefined;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return valueFor(options[0], depth + 1);
  }
  const type: unknown = Array.isArray(schema.type) ? (schema.type as unknown[]).find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return 'mcp-task doctor';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
    case undefined: {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required)
        ? schema.required.filter((key): key is string => typeof key === 'string')
        : [];
      const out: Record<string, unknown> = {};
      for (const key of required) {
        const made = valueFor(properties[key], depth + 1);
        if (made !== undefined) out[key] = made;
      }
      return out;
    }
    default:
      return undefined;
  }
}
