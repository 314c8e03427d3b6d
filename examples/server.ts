/**
 * The example MCP task server. Its code lives in `lib/cli/example-server.ts` (the `mcp-task` CLI
 * embeds it); this file re-exports it and, when executed directly (`tsx examples/server.ts`, as
 * the demo does), serves it over stdio.
 *
 * Environment when run directly: `POLL_INTERVAL` (ms), `NOTIFY=0` (no status notifications),
 * `CANCEL_LOG=<file>` (append `cancel <taskId>` to that file for every `tasks/cancel` received).
 */
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createExampleServer } from '../lib/cli/example-server.js';

export { createExampleServer, type ExampleServerOptions } from '../lib/cli/example-server.js';

// Run over stdio when executed directly: `tsx examples/server.ts`.
// (A file URL compares right even when the path has characters a URL escapes, such as a space.)
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const pollInterval = process.env.POLL_INTERVAL === undefined ? undefined : Number(process.env.POLL_INTERVAL);
  const cancelLog = process.env.CANCEL_LOG;
  const { server } = createExampleServer({
    pollInterval,
    notify: process.env.NOTIFY !== '0',
    onCancel: cancelLog === undefined ? undefined : (taskId) => appendFileSync(cancelLog, `cancel ${taskId}\n`),
  });
  await server.connect(new StdioServerTransport());
}
