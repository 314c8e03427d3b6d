/**
 * The SDK the client side of a test runs on: `MCP_SDK=v1` (the default, `@modelcontextprotocol/sdk`)
 * or `MCP_SDK=v2` (`@modelcontextprotocol/client`). vitest.config.ts runs every SDK-dependent suite
 * once per major (projects `sdk-v1` and `sdk-v2`); the server side of every test stays what it is
 * (the v1 `McpServer`, the scripted server, server-everything), since the library only ever talks
 * to the client.
 *
 * Tests build their SDK objects here, never from an SDK import: clients ({@link makeClient}),
 * in-memory pairs ({@link createLinkedPair}), stdio and Streamable HTTP client transports, the
 * options `TaskClient.connect` needs ({@link connectOptions}), the result schemas of raw requests
 * ({@link schemas}) and the user's own SDK handlers ({@link setUserRequestHandler},
 * {@link setUserNotificationHandler}), which the two majors register differently.
 *
 * SDK v2 negotiates the protocol era per connection. Against the legacy (2025-11-25) servers of
 * these tests it runs `legacy` by default; a suite can ask for `auto` (a `server/discover` probe
 * first, then the fallback to `initialize`), and at least one suite per transport does, to prove
 * that fallback ({@link negotiatedEra} checks it).
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport as V1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  GetTaskResultSchema,
  ResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** The two SDK majors. */
export type SdkMajor = 'v1' | 'v2';

function chosen(value: string | undefined): SdkMajor {
  if (value === undefined || value === '' || value === 'v1') return 'v1';
  if (value === 'v2') return 'v2';
  throw new Error(`MCP_SDK must be "v1" or "v2", not ${JSON.stringify(value)}`);
}

/** The SDK of this run (`MCP_SDK`, default `v1`). */
export const SDK: SdkMajor = chosen(process.env.MCP_SDK);

// Only the chosen major is loaded (v1 is always there: the in-process servers are v1's).
const v2 = SDK === 'v2' ? await import('@modelcontextprotocol/client') : undefined;
const v2Stdio = SDK === 'v2' ? await import('@modelcontextprotocol/client/stdio') : undefined;

/** A client transport of either SDK (typed as v1's; v2's has the same members). */
export type SpecTransport = Transport;

/** SDK v2's era negotiation: `legacy` (plain `initialize`) or `auto` (probe, then fall back). */
export type Negotiation = 'legacy' | 'auto';

/** An opaque result schema of the chosen SDK, for {@link SpecClient.request}. */
export interface SpecSchema {
  readonly '~standard': unknown;
}

/**
 * What the tests use of an SDK `Client`, whichever the major: both majors' `Client` classes are
 * assignable to it (checked by the compiler in {@link makeClient}), and `new TaskClient(client)`
 * accepts it.
 */
export interface SpecClient {
  readonly transport?: Transport | undefined;
  /** Sends a request and validates its result with `schema` (one of {@link schemas}). */
  request(
    request: { method: string; params?: Record<string, unknown> },
    schema: SpecSchema,
  ): Promise<Record<string, unknown>>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Record<string, unknown>>;
  getServerCapabilities(): Record<string, unknown> | undefined;
  getServerVersion(): unknown;
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
}

/** Options of {@link makeClient}. */
export interface SpecClientOptions {
  /** Client capabilities (e.g. `{ elicitation: {}, sampling: {} }`). */
  readonly capabilities?: Record<string, object> | undefined;
  /** SDK v2 only: the era negotiation. @default 'legacy' */
  readonly negotiation?: Negotiation | undefined;
}

/** A fresh, unconnected client of the chosen SDK. */
export function makeClient(info: { name: string; version: string }, options: SpecClientOptions = {}): SpecClient {
  const capabilities = options.capabilities ?? {};
  if (v2 === undefined) return new V1Client(info, { capabilities });
  // A bare string would be ignored by v2 (it reads `.mode`): always the object form.
  const versionNegotiation = { mode: options.negotiation ?? 'legacy' };
  return new v2.Client(info, { capabilities, versionNegotiation });
}

/**
 * The era the client negotiated: always `legacy` on v1 (it knows no other), v2's own answer
 * otherwise (`undefined` before connect or after close).
 */
export function negotiatedEra(client: object): string | undefined {
  const c = client as { getProtocolEra?: () => string | undefined };
  return typeof c.getProtocolEra === 'function' ? c.getProtocolEra() : 'legacy';
}

/**
 * A linked in-memory pair of the chosen SDK: `[clientSide, serverSide]`. The server side serves
 * the v1 `McpServer` and the scripted server on either (v2's `InMemoryTransport` has the same members).
 */
export function createLinkedPair(): [SpecTransport, SpecTransport] {
  return v2 === undefined ? V1InMemoryTransport.createLinkedPair() : v2.InMemoryTransport.createLinkedPair();
}

/** Parameters of a stdio client transport (the subset both SDKs share). */
export interface StdioParameters {
  readonly command: string;
  readonly args?: string[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  readonly stderr?: 'ignore' | 'inherit' | 'pipe';
}

/** A stdio client transport of the chosen SDK (spawns `command` on start). */
export function stdioTransport(parameters: StdioParameters): SpecTransport {
  if (v2Stdio === undefined) return new V1StdioTransport({ ...parameters });
  return new v2Stdio.StdioClientTransport({ ...parameters });
}

/**
 * A Streamable HTTP client transport of the chosen SDK; with `sessionId`, it joins that existing
 * session (the SDK client then skips `initialize`).
 */
export function httpTransport(url: URL, sessionId?: string): SpecTransport {
  const options = sessionId === undefined ? undefined : { sessionId };
  if (v2 === undefined) return new V1HttpTransport(url, options);
  return new v2.StreamableHTTPClientTransport(url, options);
}

/**
 * The SDK options of `TaskClient.connect(transport, ...)`: the chosen major, and on v2 the era
 * negotiation (`auto` is also the library's own default for v2).
 */
export function connectOptions(negotiation: Negotiation = 'legacy'): {
  sdk: SdkMajor;
  clientOptions?: Record<string, unknown>;
} {
  if (SDK === 'v1') return { sdk: 'v1' };
  return { sdk: 'v2', clientOptions: { versionNegotiation: { mode: negotiation } } };
}

/** Result schemas of the chosen SDK, for raw `client.request(...)` calls in tests. */
export const schemas: { readonly GetTaskResult: SpecSchema; readonly Result: SpecSchema } =
  v2 === undefined
    ? { GetTaskResult: GetTaskResultSchema, Result: ResultSchema }
    : { GetTaskResult: v2.specTypeSchemas.GetTaskResult, Result: v2.specTypeSchemas.Result };

/** A server->client request as the user's SDK handler receives it. */
export interface UserRequest {
  readonly method: string;
  readonly params: Record<string, unknown> & { readonly message?: unknown };
}
/** A notification as the user's SDK handler receives it. */
export interface UserNotification {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

const V1_REQUEST_SCHEMAS = {
  'elicitation/create': ElicitRequestSchema,
  'sampling/createMessage': CreateMessageRequestSchema,
} as const;
const V1_NOTIFICATION_SCHEMAS = { 'notifications/tasks/status': TaskStatusNotificationSchema } as const;

interface HandlerSetters {
  setRequestHandler(method: unknown, handler: (request: UserRequest) => unknown): void;
  setNotificationHandler(method: unknown, handler: (notification: UserNotification) => void): void;
}

/**
 * Sets the user's own SDK handler of a server->client request: v1 keys handlers by request schema,
 * v2 by method name (its two-argument form, for spec methods).
 */
export function setUserRequestHandler(
  client: SpecClient,
  method: keyof typeof V1_REQUEST_SCHEMAS,
  handler: (request: UserRequest) => unknown,
): void {
  const c = client as unknown as HandlerSetters;
  c.setRequestHandler(v2 === undefined ? V1_REQUEST_SCHEMAS[method] : method, handler);
}

/** Sets the user's own SDK handler of a notification (v1: by schema; v2: by method name). */
export function setUserNotificationHandler(
  client: SpecClient,
  method: keyof typeof V1_NOTIFICATION_SCHEMAS,
  handler: (notification: UserNotification) => void,
): void {
  const c = client as unknown as HandlerSetters;
  c.setNotificationHandler(v2 === undefined ? V1_NOTIFICATION_SCHEMAS[method] : method, handler);
}
