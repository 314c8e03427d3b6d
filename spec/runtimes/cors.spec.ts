/**
 * The example servers over HTTP answer a page on another origin: the preflight allows the
 * methods and headers an MCP client sends (a tool's own Mcp-Param-* headers too), and every
 * answer lets the page read the session id. (spec/runtimes/chromium.spec.ts runs a real page.)
 */
import { describe, expect, it } from 'vitest';
import { serveExtHttp } from '../../examples/ext-http-server.js';
import { serveHttp } from '../../examples/http-server.js';

describe('CORS on the example servers', () => {
  for (const [name, start] of [
    ['2025-11-25 server', () => serveHttp(0, { origin: 'http://127.0.0.1:8080' })],
    ['extension server', () => serveExtHttp({ origin: 'http://127.0.0.1:8080' })],
  ] as const) {
    it(`${name}: the preflight and the answers carry what a page needs`, async () => {
      const server = await start();
      try {
        const preflight = await fetch(server.url, {
          method: 'OPTIONS',
          headers: {
            origin: 'http://127.0.0.1:8080',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type,mcp-session-id,mcp-param-region',
          },
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8080');
        expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
        expect(preflight.headers.get('access-control-allow-headers')).toBe(
          'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, mcp-param-region',
        );
        const post = await fetch(server.url, {
          method: 'POST',
          headers: { origin: 'http://127.0.0.1:8080', 'content-type': 'application/json' },
          body: '{}',
        });
        expect(post.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8080');
        expect(post.headers.get('access-control-expose-headers')).toBe(
          'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate',
        );
      } finally {
        await server.close();
      }
    });
  }
});
