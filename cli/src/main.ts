/**
 * `mcp-task`: call, watch, answer and cancel MCP tasks from a terminal. See docs/cli.md. The
 * package's bin (bin/mcp-task.js) runs the compiled copy of this module; the tests run it from
 * source through tsx.
 * Exit codes: 0 completed, 1 failed, 2 usage error, 124 timeout, 130 cancelled (141 stdout closed, 143 SIGTERM).
 *
 * The SDKs are loaded only when a connection needs them (target.ts): the CLI runs with
 * either SDK major installed, and without one it says what to install in one line.
 */
import { written } from './flush.js';
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));
// What is written reaches a slow reader whole (a pipe is written asynchronously on macOS)…
await Promise.all([written(process.stdout), written(process.stderr)]);
// …then leave: a stdio server's pipes or an HTTP keep-alive socket must not hold the process.
process.exit();
