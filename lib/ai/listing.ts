/**
 * The server's tools as the AI SDK needs them: name, description and input JSON Schema from the
 * SDK client's `tools/list` (every page), joined with the task support `TaskClient.tools()`
 * reports. `TaskClient.tools()` does not carry the schemas, so the list is read through the SDK
 * client the TaskClient holds (`tasks.client`), whose `listTools` both SDK majors have.
 */
import { TaskOptionError, TaskProtocolError, type JsonObject, type TaskClient, type ToolTaskSupport } from '../index.js';

/** One tool, ready to become an AI SDK tool. */
export interface ToolDefinition {
  /** The server's name. */
  readonly name: string;
  /** Its description, if the server gave one. */
  readonly description: string | undefined;
  /** Its title (or `annotations.title`), if the server gave one. */
  readonly title: string | undefined;
  /** Its input JSON Schema, an object schema with `properties`. */
  readonly inputSchema: JsonObject;
  /** Whether it can run as a task. */
  readonly taskSupport: ToolTaskSupport['taskSupport'];
}

/** One page of `tools/list`, as both SDK majors' `listTools` answer it. */
interface ToolsPage {
  readonly tools?: unknown;
  readonly nextCursor?: unknown;
}

/** The part of an SDK client this module uses. */
interface ListsTools {
  listTools(params?: { cursor: string }): Promise<ToolsPage>;
}

/** Most pages read; a server whose cursor never ends is cut off here. */
const MAX_PAGES = 1_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function listsTools(client: unknown): client is ListsTools {
  return typeof client === 'object' && client !== null && typeof (client as { listTools?: unknown }).listTools === 'function';
}

/** Every tool on every page of the SDK client's `tools/list`. */
async function listedTools(client: ListsTools): Promise<Record<string, unknown>[]> {
  const tools: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  let page = await client.listTools();
  for (let pages = 1; ; pages += 1) {
    if (!isObject(page) || !Array.isArray(page.tools)) throw new TaskProtocolError('tools/list: tools is not an array', { method: 'tools/list' });
    for (const tool of page.tools) if (isObject(tool) && typeof tool.name === 'string') tools.push(tool);
    const cursor = page.nextCursor;
    if (typeof cursor !== 'string' || cursor === '') return tools;
    // A cursor seen before, or too many pages: the server pages in circles.
    if (seen.has(cursor) || pages >= MAX_PAGES) {
      throw new TaskProtocolError(`tools/list: the server kept paging after ${pages} pages`, { method: 'tools/list' });
    }
    seen.add(cursor);
    page = await client.listTools({ cursor });
  }
}

/** The tool's input schema as an object schema with `properties` (what providers expect). */
function objectSchema(schema: unknown): JsonObject {
  const given: JsonObject = isObject(schema) ? schema : {};
  return { ...given, type: 'object', properties: isObject(given.properties) ? given.properties : {} };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The server's tools, with their schemas and task support.
 * @throws TaskOptionError when `tasks.client` has no `listTools` (not an MCP SDK client).
 * @throws TaskProtocolError when `tools/list` answers without a tool array, or pages forever.
 * @throws what `TaskClient.tools()` and the SDK's `listTools` throw (e.g. `TaskRpcError`,
 *   `TaskClosedError`).
 */
export async function toolDefinitions(tasks: TaskClient): Promise<ToolDefinition[]> {
  const client: unknown = tasks.client;
  if (!listsTools(client)) {
    throw new TaskOptionError('taskTools needs an MCP SDK client with listTools() under the TaskClient', { option: 'tasks' });
  }
  const [listed, support] = await Promise.all([listedTools(client), tasks.tools()]);
  const supportOf = new Map(support.map((tool) => [tool.name, tool.taskSupport]));
  return listed.map((tool): ToolDefinition => {
    const name = tool.name as string;
    const annotations = isObject(tool.annotations) ? tool.annotations : {};
    return {
      name,
      description: text(tool.description),
      title: text(tool.title) ?? text(annotations.title),
      inputSchema: objectSchema(tool.inputSchema),
      // A tool the TaskClient's list lacks (the list changed in between) runs as a plain call
      // unless the server decides otherwise; callToolAsTask negotiates each call anyway.
      taskSupport: supportOf.get(name) ?? 'forbidden',
    };
  });
}
