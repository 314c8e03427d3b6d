/**
 * Opens the port of a connected SDK client, telling the SDK majors apart by shape (no SDK is
 * imported). One port per transport, shared by every TaskClient on that client.
 */
import type { SessionPort } from './port.js';
import { v1Access } from './sdk-v1.js';
import { isV2Client, v2Access } from './sdk-v2.js';
import type { McpClient } from '../types.js';
import { RawSession } from './session.js';

/** Any MCP SDK client the library accepts (see {@link McpClient}). */
export type SdkClientShape = McpClient;

const ports = new WeakMap<object, SessionPort>();

/** Why `client` cannot be used, or `undefined` when it can. */
export function unusable(client: unknown): string | undefined {
  const c = client as Partial<SdkClientShape> | null;
  if (
    typeof c !== 'object' ||
    c === null ||
    typeof c.getServerCapabilities !== 'function' ||
    typeof c.close !== 'function'
  ) {
    const needs =
      'TaskClient needs a Client from @modelcontextprotocol/sdk (1.x) or @modelcontextprotocol/client (2.x)';
    const transport = c as { send?: unknown; start?: unknown } | null;
    // A transport handed over instead of a client: say how to use one.
    if (
      typeof transport === 'object' &&
      transport !== null &&
      typeof transport.send === 'function' &&
      typeof transport.start === 'function'
    ) {
      return `${needs}, not a transport: use TaskClient.connect(transport) to connect one`;
    }
    return `${needs}, got ${c === null ? 'null' : typeof c === 'object' ? 'an object without its methods' : typeof c}`;
  }
  const transport = c.transport;
  if (transport === undefined || transport === null)
    return 'The SDK Client is not connected: call client.connect(transport) first';
  if (typeof transport.send !== 'function') return 'The SDK Client has a transport without send()';
  return undefined;
}

/** The port of a connected client (the same one for every caller while its transport lasts). */
export function openPort(client: SdkClientShape): SessionPort {
  const transport = client.transport as object;
  const existing = ports.get(transport);
  if (existing !== undefined && !existing.closed) return existing;
  const port = new RawSession(isV2Client(client) ? v2Access(client) : v1Access(client));
  port.watchHost(client);
  ports.set(transport, port);
  return port;
}
