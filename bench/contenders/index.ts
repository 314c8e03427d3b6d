/** The contenders and floors of each wire, and the versions of the packages under test. */
import { readFileSync } from 'node:fs';
import type { WireKind } from '../transports.js';
import type { ContenderFactory, ContenderId, ContenderInfo } from './types.js';

export type {
  Contender,
  ContenderContext,
  ContenderFactory,
  ContenderId,
  ContenderInfo,
  StartedTask,
} from './types.js';

// Each factory loads its module on first use, so a scenario loads only the contender it runs (and
// a broken library under test cannot break the other contenders' scenarios).
const mcpTaskClient = async (): Promise<ContenderFactory> => (await import('./mcp-task-client.js')).createMcpTaskClient;
const floor2025 = async (): Promise<ContenderFactory> => (await import('./floor.js')).createFloor;

/** Every contender and floor, by wire, in report order (floors last). */
export const CONTENDERS: readonly ContenderInfo[] = [
  {
    wire: '2025',
    id: 'mcp-task-client',
    sdk: 'v1',
    label: 'mcp-task-client',
    floor: false,
    reference: 'floor',
    load: mcpTaskClient,
  },
  {
    wire: '2025',
    id: 'mcp-task-client-v2',
    sdk: 'v2',
    label: 'mcp-task-client (SDK v2)',
    floor: false,
    reference: 'floor-v2',
    load: mcpTaskClient,
  },
  {
    wire: '2025',
    id: 'mcp-task-client-otel',
    sdk: 'v1',
    label: 'mcp-task-client + OpenTelemetry',
    floor: false,
    reference: 'floor',
    load: async () => (await import('./mcp-task-client-otel.js')).createMcpTaskClientOtel,
  },
  {
    wire: '2025',
    id: 'sdk-stream',
    sdk: 'v1',
    label: 'SDK callToolStream',
    floor: false,
    reference: 'floor',
    load: async () => (await import('./sdk-stream.js')).createSdkStream,
  },
  {
    wire: '2025',
    id: 'ext-tasks',
    sdk: 'v1',
    label: 'ext-tasks (v1 port)',
    floor: false,
    reference: 'floor',
    load: async () => (await import('./ext-tasks.js')).createExtTasks,
  },
  {
    wire: '2025',
    id: 'floor',
    sdk: 'v1',
    label: 'floor (reference)',
    floor: true,
    reference: undefined,
    load: floor2025,
  },
  {
    wire: '2025',
    id: 'floor-v2',
    sdk: 'v2',
    label: 'floor, SDK v2 (reference)',
    floor: true,
    reference: undefined,
    load: floor2025,
  },
  {
    wire: 'ext',
    id: 'mcp-task-client',
    sdk: 'v2',
    label: 'mcp-task-client (SDK v2)',
    floor: false,
    reference: 'floor',
    load: mcpTaskClient,
  },
  {
    wire: 'ext',
    id: 'ext-tasks',
    sdk: 'v2',
    label: 'ext-tasks (native 2026)',
    floor: false,
    reference: 'floor',
    load: async () => (await import('./ext-tasks-native.js')).createExtTasksNative,
  },
  {
    wire: 'ext',
    id: 'floor',
    sdk: 'v2',
    label: 'floor, raw (reference)',
    floor: true,
    reference: undefined,
    load: async () => (await import('./ext-floor.js')).createExtFloor,
  },
];

/** The registry entry of `id` on `wire`. */
export function contender(wire: WireKind, id: ContenderId): ContenderInfo {
  const found = CONTENDERS.find((c) => c.wire === wire && c.id === id);
  if (found === undefined) throw new Error(`No contender ${id} on the ${wire} wire`);
  return found;
}

/** The ids available on `wire`, in report order. */
export function contenderIds(wire: WireKind): ContenderId[] {
  return CONTENDERS.filter((c) => c.wire === wire).map((c) => c.id);
}

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
    '@modelcontextprotocol/client': packageVersion('node_modules/@modelcontextprotocol/client/package.json'),
    '@modelcontextprotocol/ext-tasks': packageVersion('node_modules/@modelcontextprotocol/ext-tasks/package.json'),
    node: process.versions.node,
  };
}
