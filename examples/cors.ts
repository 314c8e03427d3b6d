/**
 * CORS for an MCP server over Streamable HTTP, so that a web page on another origin can use it.
 * A page's MCP client (SDK v1 or v2, either protocol era) needs:
 *
 * - `Access-Control-Allow-Origin`: the page's origin (`*` allows any page; name yours in production).
 * - On the preflight (`OPTIONS`): `Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS` and
 *   `Access-Control-Allow-Headers` with the headers the client sends: `Content-Type`, `Accept`,
 *   `Authorization`, `Mcp-Session-Id`, `Mcp-Protocol-Version`, `Last-Event-ID`, and on the
 *   2026-07-28 era `Mcp-Method`, `Mcp-Name` and a tool's own `Mcp-Param-*` headers.
 * - `Access-Control-Expose-Headers: Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate`: without
 *   it the page cannot read the session id the server assigns, and every request after the
 *   first fails.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request headers an MCP client sends, besides a tool's `Mcp-Param-*` headers. */
export const CORS_ALLOW_HEADERS = [
  'Content-Type',
  'Accept',
  'Authorization',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Last-Event-ID',
];
/** Response headers a page's client must be able to read. */
export const CORS_EXPOSE_HEADERS = ['Mcp-Session-Id', 'Mcp-Protocol-Version', 'WWW-Authenticate'];

/**
 * Sets the CORS headers on `res` for the page origin `origin`, and answers a preflight request.
 * @returns true when `req` was a preflight and has been answered (handle nothing more).
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, origin = '*'): boolean {
  res.setHeader('Access-Control-Allow-Origin', origin);
  if (origin !== '*') res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS.join(', '));
  if (req.method !== 'OPTIONS') return false;
  // A tool may declare headers of its own (Mcp-Param-<Name>): allow those the preflight names.
  const requested = String(req.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => /^mcp-param-[!#$%&'*+\-.^_`|~0-9a-z]+$/i.test(name));
  res
    .writeHead(204, {
      'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
      'Access-Control-Allow-Headers': [...CORS_ALLOW_HEADERS, ...requested].join(', '),
      'Access-Control-Max-Age': '600',
    })
    .end();
  return true;
}
