/**
 * What kind of SDK client transport carries a session, told by its shape (the same in both SDK
 * majors), for instrumentation: the stdio transport has `pid` and `stderr`, the Streamable HTTP one
 * `terminateSession()`, and both HTTP transports keep the server's URL in `_url`. Only the URL's
 * origin is kept: its path, query and credentials may hold secrets.
 */
import type { TransportInfo } from './port.js';

const UNKNOWN: TransportInfo = Object.freeze({ kind: undefined, origin: undefined });

/** The kind and server origin of `transport`. */
export function transportInfoOf(transport: object): TransportInfo {
  const fields = transport as { _url?: unknown; terminateSession?: unknown };
  const url = fields._url;
  const origin = url instanceof URL && url.origin !== 'null' ? url.origin : undefined;
  if (typeof fields.terminateSession === 'function') return { kind: 'streamable-http', origin };
  if ('pid' in transport && 'stderr' in transport) return { kind: 'stdio', origin: undefined };
  if (origin !== undefined) return { kind: 'sse', origin };
  return UNKNOWN;
}
