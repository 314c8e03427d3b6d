/** The contenders, by id, and their package versions. */
import { readFileSync } from 'node:fs';
import type { ContenderFactory, ContenderId } from './types.js';

export type { Contender, ContenderFactory, ContenderId, StartedTask } from './types.js';

/**
 * Factories by id, each loading its module on first use, so a scenario loads only the contender it
 * runs (and a broken library under test cannot break the other contenders' scenarios).
 */
export const CONTENDERS: Record<ContenderId, ContenderFactory> = {
  'mcp-task-client': async (client, context) => (await import('./mcp-task-client.js')).createMcpTaskClient(client, context),
  'sdk-stream': async (client, context) => (await import('./sdk-stream.js')).createSdkStream(client, context),
  'ext-tasks': async (client, context) => (await import('./ext-tasks.js')).createExtTasks(client, context),
  floor: async (client, context) => (await import('./floor.js')).createFloor(client, context),
};

/** Every contender id, the reference floor last. */
export const CONTENDER_IDS: readonly ContenderId[] = ['mcp-task-client', 'sdk-stream', 'ext-tasks', 'floor'];

/** How each contender is named in the report. */
export const CONTENDER_LABELS: Record<ContenderId, string> = {
  'mcp-task-client': 'mcp-task-client',
  'sdk-stream': 'SDK callToolStream',
  'ext-tasks': 'ext-tasks (v1 port)',
  floor: 'floor (reference)',
};

/** Reads `version` from a package.json under the repository root (node_modules is hoisted). */
function packageVersion(path: string): string {
  const url = new URL(`../../${path}`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

/** Versions of the packages under test, read from their package.json files. */
export function versions(): Record<string, string> {
  return {
    'mcp-task-client': packageVersion('package.json'),
    '@modelcontextprotocol/sdk': packageVersion('node_modules/@modelcontextprotocol/sdk/package.json'),
    '@modelcontextprotocol/ext-tasks': packageVersion('node_modules/@modelcontextprotocol/ext-tasks/package.json'),
    '@modelcontextprotocol/client': packageVersion('node_modules/@modelcontextprotocol/client/package.json'),
    node: process.versions.node,
  };
}
