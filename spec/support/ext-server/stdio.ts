/**
 * Runnable scripted extension server with the conformance-style fixture tools (`fixtures.ts`):
 *
 *     npx tsx spec/support/ext-server/stdio.ts [--flags]          # newline-delimited JSON on stdin/stdout
 *     npx tsx spec/support/ext-server/stdio.ts --http[=port]      # Streamable HTTP on 127.0.0.1
 *
 * Flags: see `cli-options.ts` (e.g. `--legacy`, `--notifications=ack-only`, `--cancel=ignore`,
 * `--poll-interval-ms=50,100,200`, `--get-result-type=task`, `--whole-seconds`, `--tick-ms=100`).
 * Logs (with `--verbose`) go to stderr only; stdout carries nothing but MCP messages.
 */
import { parseCliOptions } from './cli-options.js';
import { fixtureTools } from './fixtures.js';
import { startExtHttpServer } from './http.js';
import { ExtServer } from './server.js';
import { serveStdio } from './serve-stdio.js';

const cli = parseCliOptions(process.argv.slice(2));
const server = new ExtServer({ tools: fixtureTools(), ...cli.server });
if (cli.verbose) server.onReceive = (entry) => process.stderr.write(`<- ${JSON.stringify(entry.message)}\n`);

if (cli.httpPort === undefined) {
  serveStdio(server, { ...(cli.tickMs === undefined ? {} : { tickMs: cli.tickMs }) });
} else {
  const http = await startExtHttpServer(server, { port: cli.httpPort });
  const timer = cli.tickMs === undefined ? undefined : setInterval(() => server.tick(), cli.tickMs);
  process.stderr.write(`ext-server listening on ${http.url.href}\n`);
  const stop = (): void => {
    if (timer !== undefined) clearInterval(timer);
    void http.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
