/**
 * The port for an SDK v2 `Client` (`@modelcontextprotocol/client` ^2.1). v2 negotiates the era
 * per connection: legacy (an `initialize` handshake) or modern (2026-07-28: every request carries
 * a `_meta` envelope with the protocol version, client info and client capabilities). Nothing here
 * imports the SDK.
 */
import type { Era, JsonObject } from './port.js';
import type { SdkAccess, TransportLike } from './sdk-access.js';
import { declaredCapabilities, httpStatusOf, identityOf, ownHandler } from './sdk-v1.js';
import { isObject } from '../util/json.js';

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

/** True for an SDK v2 client (v1 has neither method). */
export function isV2Client(client: unknown): client is V2ClientShape {
  const c = client as Partial<V2ClientShape> | null;
  return typeof c?.getProtocolEra === 'function' && typeof c.getNegotiatedProtocolVersion === 'function';
}

/**
 * Capabilities of the SDK client that the library's own requests never declare: the library answers
 * the input a server asks for in a reply (a task's `inputRequests`, a multi round-trip answer)
 * through its own callbacks only, and has none for these. The SDK offers no public way to run such
 * an entry through the client's own request handlers (its multi round-trip engine uses a protected
 * accessor), so declaring them would invite requests that nothing here answers. The host's own
 * requests through the SDK client still declare them (the SDK builds their envelope). Elicitation
 * and sampling are left to the extension wire, which declares them per request where a callback
 * answers them ([E35]).
 */
const UNANSWERED_CAPABILITIES: readonly string[] = ['roots'];

/**
 * Merges capabilities one level into their sub-objects, so `declare` adds an extension without
 * dropping the others ([E1]: a per-request declaration replaces the client's object wholesale).
 * The capabilities nothing here answers are left out ({@link UNANSWERED_CAPABILITIES}), and so is
 * each one `extra` sets to `null`: a request declares only what is relevant to it ([E35]), so a
 * wire may leave out a capability of the client's that nobody answers for that request.
 */
function mergeCapabilities(declared: JsonObject, extra: JsonObject | undefined): JsonObject {
  const merged: JsonObject = { ...declared };
  for (const key of UNANSWERED_CAPABILITIES) delete merged[key];
  if (extra === undefined) return merged;
  for (const [key, value] of Object.entries(extra)) {
    const current = merged[key];
    if (value === null) delete merged[key];
    else merged[key] = isObject(current) && isObject(value) ? { ...current, ...value } : value;
  }
  return merged;
}

/** {@link SdkAccess} over an SDK v2 client. */
export function v2Access(client: V2ClientShape): SdkAccess {
  const clientInfo = (): unknown => {
    const own = (client as { _outboundMetaEnvelope?: () => unknown })._outboundMetaEnvelope;
    const envelope = typeof own === 'function' ? own.call(client) : undefined;
    if (isObject(envelope) && envelope[ENVELOPE_KEYS.clientInfo] !== undefined)
      return envelope[ENVELOPE_KEYS.clientInfo];
    return (client as { _clientInfo?: unknown })._clientInfo;
  };
  const era = (): Era => (client.getProtocolEra() === 'modern' ? 'modern' : 'legacy');
  /** Envelopes built so far, with what they were built from (rebuilt if any of it changes). */
  interface Built {
    readonly version: string | undefined;
    /** The client's `_clientInfo` the envelope's client info was read with. */
    readonly infoSource: unknown;
    readonly capabilities: JsonObject;
    readonly envelope: JsonObject;
  }
  let plain: Built | undefined;
  const declared = new WeakMap<JsonObject, Built>();
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
      // The parts are fixed once connected (version, client info, declared capabilities): build
      // the envelope once per `declare` object, not per request. Each request still gets its own
      // `_meta` object (RawSession spreads this one into it).
      const version = client.getNegotiatedProtocolVersion();
      const infoSource = (client as { _clientInfo?: unknown })._clientInfo;
      const capabilities = declaredCapabilities(client);
      const cached = declare === undefined ? plain : declared.get(declare);
      if (
        cached !== undefined &&
        cached.version === version &&
        cached.infoSource === infoSource &&
        cached.capabilities === capabilities
      ) {
        return cached.envelope;
      }
      const envelope = {
        ...(version === undefined ? {} : { [ENVELOPE_KEYS.protocolVersion]: version }),
        [ENVELOPE_KEYS.clientInfo]: clientInfo(),
        [ENVELOPE_KEYS.clientCapabilities]: mergeCapabilities(capabilities, declare),
      };
      const entry = { version, infoSource, capabilities, envelope };
      if (declare === undefined) plain = entry;
      else declared.set(declare, entry);
      return envelope;
    },
    httpStatus: httpStatusOf,
    hasOwnHandler: (method) => ownHandler(client, method),
    close: () => client.close(),
  };
}
