/**
 * `npm run example:browser`: bundles the page (build.ts) and serves it on http://127.0.0.1:8080,
 * with the two example MCP servers beside it on other origins, each sending the CORS headers a
 * page needs: the 2025-11-25 task server (examples/http-server.ts) on :3000 and the tasks
 * extension server (examples/ext-http-server.ts) on :3001. Open the page, pick an endpoint,
 * Connect, Run.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serveExtHttp } from '../ext-http-server.js';
import { serveHttp } from '../http-server.js';
import { buildBrowserExample } from './build.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.map': 'application/json',
};

/** Serves index.html and dist/ of this folder on 127.0.0.1:`port` (0: any free port). */
export async function servePage(port: number): Promise<{ readonly url: URL; close(): Promise<void> }> {
  const http = createServer((req, res) => {
    const path = normalize(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path === '/' ? 'index.html' : path.slice(1);
    if (!(file === 'index.html' || /^dist\/[\w.-]+$/.test(file))) return void res.writeHead(404).end();
    readFile(join(HERE, file)).then(
      (body) => res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`),
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const bytes = await buildBrowserExample();
  const legacy = await serveHttp(3000);
  const extension = await serveExtHttp({ port: 3001 });
  const page = await servePage(8080);
  console.log(`bundle: examples/browser/dist/main.js, ${(bytes / 1024).toFixed(1)} KiB minified`);
  console.log(`2025-11-25 task server: ${legacy.url.href}`);
  console.log(`tasks extension server: ${extension.url.href}`);
  console.log(`page:                   ${page.url.href}?server=${encodeURIComponent(legacy.url.href)}`);
}
