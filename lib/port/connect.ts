/**
 * Making and connecting an SDK client for `TaskClient.connect`. The SDK is imported lazily, so
 * the library loads in a host that has only one of the two SDKs installed. The import names the
 * package itself, inside try: bundlers then build a page that has only one SDK installed (they
 * leave an import of a missing package to fail at run time, which `load` catches), where a module
 * of ours re-exporting the `Client` class would break the build. The price, with esbuild: it keeps
 * every export of a module loaded by `import()`, so a page bundled by it holds SDK v2's whole root
 * entry (Vite keeps what is used; docs/performance.md has both measured).
 */
import type { JsonObject, SdkMajor } from './port.js';
import type { SdkClientShape } from './open.js';
import type { McpTransport } from '../types.js';

/** What to connect. */
export interface ConnectSpec {
  /** The SDK to build the client with; `undefined` picks the installed one (SDK v2 when both are). */
  readonly sdk: SdkMajor | undefined;
  readonly transport: McpTransport;
  readonly clientInfo: { readonly name: string; readonly version: string };
  readonly capabilities: JsonObject;
  /** Other options for the SDK `Client` constructor. */
  readonly clientOptions: JsonObject | undefined;
  /**
   * Stops before the transport is started: aborted while the SDK is being loaded, the client
   * is not built and the transport never starts (a stdio server is never spawned).
   */
  readonly signal?: AbortSignal | undefined;
}

type ClientConstructor = new (
  info: unknown,
  options: unknown,
) => SdkClientShape & {
  connect(transport: unknown): Promise<void>;
};

async function load(sdk: SdkMajor): Promise<ClientConstructor | undefined> {
  try {
    if (sdk === 'v2') return (await import('@modelcontextprotocol/client')).Client as unknown as ClientConstructor;
    return (await import('@modelcontextprotocol/sdk/client/index.js')).Client as unknown as ClientConstructor;
  } catch {
    return undefined;
  }
}

/**
 * The SDKs to try, in order, when none was chosen. Transports of the two SDKs look alike; only
 * the Streamable HTTP ones can be told apart (SDK v2's marks `hasPerRequestStream`), and an SDK v2
 * client cannot negotiate over SDK v1's HTTP transport (its probe fails on the 400 a legacy server
 * answers): so SDK v1's HTTP transport gets SDK v1, anything else the current major first.
 */
function preference(transport: McpTransport): SdkMajor[] {
  const t = transport as { hasPerRequestStream?: unknown; terminateSession?: unknown };
  if (t.hasPerRequestStream !== true && typeof t.terminateSession === 'function') return ['v1', 'v2'];
  return ['v2', 'v1'];
}

const PACKAGES: Record<SdkMajor, string> = { v1: '@modelcontextprotocol/sdk', v2: '@modelcontextprotocol/client' };

/**
 * Builds a client of the chosen (or installed) SDK and connects it. SDK v2 negotiates the era
 * automatically (`versionNegotiation: { mode: 'auto' }`), so a server that offers the 2026 tasks
 * extension is reached on the modern era.
 * @throws Error when the SDK is not installed, or whatever `client.connect` throws; `spec.signal`'s
 *   reason when it aborted before the transport was started.
 */
export async function connectClient(spec: ConnectSpec): Promise<{ client: SdkClientShape; sdk: SdkMajor }> {
  const order: SdkMajor[] = spec.sdk === undefined ? preference(spec.transport) : [spec.sdk];
  for (const sdk of order) {
    const Client = await load(sdk);
    if (Client === undefined) continue;
    // The import above yields: a stop that came meanwhile must not start what its caller closed.
    if (spec.signal?.aborted === true) throw spec.signal.reason;
    const options: JsonObject = { ...spec.clientOptions, capabilities: spec.capabilities };
    if (sdk === 'v2' && options.versionNegotiation === undefined) options.versionNegotiation = { mode: 'auto' };
    const client = new Client(spec.clientInfo, options);
    await client.connect(spec.transport);
    return { client, sdk };
  }
  const wanted = order.map((sdk) => PACKAGES[sdk]).join(' or ');
  throw new Error(`mcp-task-client: ${wanted} is not installed`);
}
