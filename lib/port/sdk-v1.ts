/**
 * The port for an SDK v1 `Client` (`@modelcontextprotocol/sdk` ^1.24.1): what the library reads
 * from it. v1 speaks only the legacy era (an `initialize` handshake, up to 2025-11-25). Nothing
 * here imports the SDK: the client is read through its public getters, plus two private fields
 * that have no getter (the declared capabilities and the handler map), read defensively.
 */
import type { Era, JsonObject, ServerIdentity } from './port.js';
import type { SdkAccess, TransportLike } from './sdk-access.js';
import { isObject } from '../util/json.js';

/** The parts of a v1 `Client` the port uses. */
export interface V1ClientShape {
  readonly transport?: TransportLike | undefined;
  getServerCapabilities(): unknown;
  getServerVersion(): unknown;
  close(): Promise<void>;
}

/** Reads the server's identity from an `Implementation`-like value. */
export function identityOf(value: unknown): ServerIdentity | undefined {
  if (!isObject(value) || typeof value.name !== 'string') return undefined;
  return { name: value.name, version: typeof value.version === 'string' ? value.version : '' };
}

/** The status of an HTTP failure, from either SDK's transport errors. */
export function httpStatusOf(error: unknown): number | undefined {
  const e = error as { code?: unknown; data?: unknown } | null;
  if (typeof e?.code === 'number' && e.code >= 100 && e.code < 600) return e.code;
  const status = isObject(e?.data) ? e.data.status : undefined;
  return typeof status === 'number' && status >= 100 && status < 600 ? status : undefined;
}

/** Whether the client has a handler of its own for `method` (the user's, or a fallback). */
export function ownHandler(client: object, method: string): boolean {
  const c = client as { _requestHandlers?: unknown; fallbackRequestHandler?: unknown };
  if (typeof c.fallbackRequestHandler === 'function') return true;
  return c._requestHandlers instanceof Map ? c._requestHandlers.has(method) : true;
}

/** The capabilities the client declared, read from its private field (no public getter exists). */
export function declaredCapabilities(client: object): JsonObject {
  const declared = (client as { _capabilities?: unknown })._capabilities;
  return isObject(declared) ? declared : {};
}

/** {@link SdkAccess} over an SDK v1 client. */
export function v1Access(client: V1ClientShape): SdkAccess {
  return {
    sdk: 'v1',
    transport: () => client.transport,
    era: (): Era => 'legacy',
    protocolVersion: () => {
      const version = (client.transport as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      return typeof version === 'string' ? version : undefined;
    },
    serverCapabilities: () => {
      const caps = client.getServerCapabilities();
      return isObject(caps) ? caps : undefined;
    },
    serverIdentity: () => identityOf(client.getServerVersion()),
    clientCapabilities: () => declaredCapabilities(client),
    envelope: () => undefined,
    httpStatus: httpStatusOf,
    hasOwnHandler: (method) => ownHandler(client, method),
    close: () => client.close(),
  };
}
