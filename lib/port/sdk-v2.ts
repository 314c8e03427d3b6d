/**
 * The port for an SDK v2 `Client` (`@modelcontextprotocol/client` ^2.4). v2 negotiates the era
 * per connection: legacy (an `initialize` handshake) or modern (2026-07-28: every request carries
 * a `_meta` envelope with the protocol version, client info and client capabilities). Nothing here
 * imports the SDK.
 */
import type { Era, JsonObject } from './port.js';
import type { SdkAccess, TransportLike } from './session.js';
import { declaredCapabilities, httpStatusOf, identityOf, ownHandler } from './sdk-v1.js';

/** `_meta` keys of the modern per-request envelope. */
export const ENVELOPE_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
} as const;

/** The parts of a v2 `Client` the port uses. */
export interface V2ClientShape {
  readonly transport?: TransportLike | undefined;
  getServerCapabilities(): unknown;
  getServerVersion(): unknown;
  getProtocolEra(): string | undefined;
  getNegotiatedProtocolVersion(): string | undefined;
  close(): Promise<void>;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for an SDK v2 client (v1 has neither method). */
export function isV2Client(client: unknown): client is V2ClientShape {
  const c = client as Partial<V2ClientShape> | null;
  return typeof c?.getProtocolEra === 'function' && typeof c.getNegotiatedProtocolVersion === 'function';
}

/**
 * Merges capabilities one level into their sub-objects, so `declare` adds an extension without
 * dropping the others ([E1]: a per-request declaration replaces the client's object wholesale).
 */
function mergeCapabilities(declared: JsonObject, extra: JsonObject | undefined): JsonObject {
  if (extra === undefined) return declared;
  const merged: JsonObject = { ...declared };
  for (const [key, value] of Object.entries(extra)) {
    const current = merged[key];
    merged[key] = isObject(current) && isObject(value) ? { ...current, ...value } : value;
  }
  return merged;
}

/** {@link SdkAccess} over an SDK v2 client. */
export function v2Access(client: V2ClientShape): SdkAccess {
  const clientInfo = (): unknown => {
    const own = (client as { _outboundMetaEnvelope?: () => unknown })._outboundMetaEnvelope;
    const envelope = typeof own === 'function' ? own.call(client) : undefined;
    if (isObject(envelope) && envelope[ENVELOPE_KEYS.clientInfo] !== undefined) return envelope[ENVELOPE_KEYS.clientInfo];
    return (client as { _clientInfo?: unknown })._clientInfo;
  };
  const era = (): Era => (client.getProtocolEra() === 'modern' ? 'modern' : 'legacy');
  return {
    sdk: 'v2',
    transport: () => client.transport,
    era,
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    serverCapabilities: () => {
      const caps = client.getServerCapabilities();
      return isObject(caps) ? caps : undefined;
    },
    serverIdentity: () => identityOf(client.getServerVersion()),
    clientCapabilities: () => declaredCapabilities(client),
    envelope: (declare) => {
      if (era() !== 'modern') return undefined;
      const version = client.getNegotiatedProtocolVersion();
      return {
        ...(version === undefined ? {} : { [ENVELOPE_KEYS.protocolVersion]: version }),
        [ENVELOPE_KEYS.clientInfo]: clientInfo(),
        [ENVELOPE_KEYS.clientCapabilities]: mergeCapabilities(declaredCapabilities(client), declare),
      };
    },
    httpStatus: httpStatusOf,
    hasOwnHandler: (method) => ownHandler(client, method),
    close: () => client.close(),
  };
}
