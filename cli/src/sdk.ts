/**
 * Loading the SDKs, lazily: which majors are installed, which one carries a connection, their
 * transports (stdio, Streamable HTTP), and the bundled example server (built on SDK v1's
 * `McpServer`). Both SDKs are loaded only when a connection needs them, so the CLI runs where only
 * one is installed, like the library.
 */
import type { ChildProcess } from 'node:child_process';
import type { Stream } from 'node:stream';
import type { McpTransport } from 'mcp-task-client';
import { EXT_WIRE, type WireChoice } from './args.js';
import { ConnectError } from './connect-errors.js';
import type { FetchLike } from './reachability.js';
import type * as ExampleServerModule from '../../examples/server.js';

/** The package of each SDK major. */
export const SDK_PACKAGE = { v1: '@modelcontextprotocol/sdk', v2: '@modelcontextprotocol/client' } as const;

/** True when `error` says package `name` itself is not installed (not a package it depends on). */
export function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === 'ERR_MODULE_NOT_FOUND' &&
    typeof message === 'string' &&
    message.startsWith(`Cannot find package '${name}'`)
  );
}

/** Imports a module of SDK `major`; `undefined` when that SDK is not installed. */
async function fromSdk<T>(major: 'v1' | 'v2', load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, SDK_PACKAGE[major])) return undefined;
    throw error;
  }
}

/** What the CLI needs of a stdio client transport (both SDKs' have it). */
export type StdioTransport = McpTransport & { readonly pid: number | null; readonly stderr: Stream | null };
/**
 * The server process a started stdio transport runs, or `undefined` before it started (or in an
 * SDK that keeps it elsewhere). Both SDKs' `StdioClientTransport` keep it in `_process` (not a
 * public member: only its `pid` and `stderr` are), and v1 drops it once the process closed.
 */
export function stdioChild(transport: StdioTransport): ChildProcess | undefined {
  const child = (transport as unknown as { _process?: unknown })._process as Partial<ChildProcess> | undefined;
  return typeof child?.stdout?.once === 'function' &&
    typeof child.once === 'function' &&
    typeof child.kill === 'function'
    ? (child as ChildProcess)
    : undefined;
}

/** What the CLI gives a stdio transport. */
export type StdioParameters = { command: string; args: string[]; env: Record<string, string>; stderr: 'pipe' };
/** What the CLI gives a Streamable HTTP transport. */
export type HttpOptions = {
  requestInit: RequestInit;
  sessionId?: string | undefined;
  protocolVersion?: string;
  fetch: FetchLike;
};

/** The transports of one SDK major. */
export interface Transports {
  readonly major: 'v1' | 'v2';
  stdio(parameters: StdioParameters): Promise<StdioTransport>;
  http(url: URL, options: HttpOptions): Promise<McpTransport>;
}

/** The transports of each SDK major, loaded when first used. */
export const TRANSPORTS: Readonly<Record<'v1' | 'v2', Transports>> = {
  v1: {
    major: 'v1',
    stdio: async (parameters) =>
      new (await import('@modelcontextprotocol/sdk/client/stdio.js')).StdioClientTransport(parameters),
    http: async (url, options) =>
      new (await import('@modelcontextprotocol/sdk/client/streamableHttp.js')).StreamableHTTPClientTransport(
        url,
        options,
      ),
  },
  v2: {
    major: 'v2',
    stdio: async (parameters) =>
      new (await import('@modelcontextprotocol/client/stdio')).StdioClientTransport(parameters),
    http: async (url, options) =>
      new (await import('@modelcontextprotocol/client')).StreamableHTTPClientTransport(url, options),
  },
};

/** Whether SDK `major` is installed (loads its package entry once). */
const installed = new Map<'v1' | 'v2', Promise<boolean>>();
function hasSdk(major: 'v1' | 'v2'): Promise<boolean> {
  let known = installed.get(major);
  if (known === undefined) {
    const load = (): Promise<unknown> =>
      major === 'v1' ? import('@modelcontextprotocol/sdk/types.js') : import('@modelcontextprotocol/client');
    known = fromSdk(major, load).then((module) => module !== undefined);
    installed.set(major, known);
  }
  return known;
}

/**
 * Which SDK carries the connection, and whether SDK v2 is pinned to the legacy (2025-11-25) era.
 * @throws Error naming what to install when no fitting SDK is.
 */
export async function chooseSdk(wire: WireChoice, joining: boolean): Promise<{ major: 'v1' | 'v2'; legacy: boolean }> {
  // Each SDK is looked for only when the one preferred is missing.
  if (wire === EXT_WIRE) {
    if (!(await hasSdk('v2'))) throw new Error(`--wire ${EXT_WIRE} needs SDK v2: install @modelcontextprotocol/client`);
    return { major: 'v2', legacy: false };
  }
  // A 2025-11-25 connection (asked for, or joining an HTTP session): SDK v1's, proven to join a
  // session without a handshake; SDK v2 pinned to the legacy era where v1 is not installed.
  const legacyOnly = wire === '2025-11-25' || joining;
  if (legacyOnly) {
    if (await hasSdk('v1')) return { major: 'v1', legacy: true };
    if (await hasSdk('v2')) return { major: 'v2', legacy: true };
  } else {
    if (await hasSdk('v2')) return { major: 'v2', legacy: false };
    if (await hasSdk('v1')) return { major: 'v1', legacy: true };
  }
  throw new Error(
    'mcp-task needs an MCP SDK: npm install @modelcontextprotocol/client (SDK v2) or @modelcontextprotocol/sdk (SDK v1)',
  );
}

/**
 * The example server, which needs SDK v1's `McpServer`. Its one source is examples/server.ts: the
 * CLI's build compiles it into the package with the same relative path (dist/examples/server.js
 * beside dist/cli/src/), so this import holds from source and from the package alike.
 */
export async function loadExampleServer(): Promise<typeof ExampleServerModule> {
  try {
    return await import('../../examples/server.js');
  } catch (error) {
    if (!isMissing(error, SDK_PACKAGE.v1)) throw error;
    throw new ConnectError(
      'the bundled example server needs @modelcontextprotocol/sdk (SDK v1), which is not installed: give a server with --stdio "<command>" or --url <url>, or npm install @modelcontextprotocol/sdk',
    );
  }
}
