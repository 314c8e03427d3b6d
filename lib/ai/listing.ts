/**
 * The server's tools as the AI SDK needs them: name, description, title and input JSON Schema,
 * with their task support, all from one `TaskClient.tools()` listing (every page of `tools/list`,
 * cached by the TaskClient until the server says the list changed).
 */
import type { JsonObject, TaskClient, ToolTaskSupport } from '../index.js';

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

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The tool's input schema as an object schema with `properties` (what providers expect). */
function objectSchema(schema: JsonObject | undefined): JsonObject {
  const given: JsonObject = schema ?? {};
  return { ...given, type: 'object', properties: isObject(given.properties) ? given.properties : {} };
}

/**
 * The server's tools, with their schemas and task support.
 * @throws what `TaskClient.tools()` throws (`TaskRpcError`, `TaskProtocolError` for a listing
 *   without a tool array, `TaskClosedError`).
 */
export async function toolDefinitions(tasks: TaskClient): Promise<ToolDefinition[]> {
  return (await tasks.tools()).map((tool): ToolDefinition => ({
    name: tool.name,
    description: tool.description,
    title: tool.title,
    inputSchema: objectSchema(tool.inputSchema),
    taskSupport: tool.taskSupport,
  }));
}
