#!/usr/bin/env node
/**
 * `mcp-task`: call, watch, answer and cancel MCP tasks from a terminal. See docs/cli.md.
 * Exit codes: 0 completed, 1 failed, 2 usage error, 124 timeout, 130 cancelled (141 stdout closed, 143 SIGTERM).
 */
import type { main as Main } from './program.js';

/**
 * True when loading the CLI failed because the package `@modelcontextprotocol/sdk` (which the CLI
 * needs) is not installed: not a package it depends on, nor a file missing from an SDK too old.
 */
function sdkMissing(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' && typeof message === 'string' && message.startsWith("Cannot find package '@modelcontextprotocol/sdk'");
}

// Loaded here, not imported at the top: the CLI needs SDK v1 (its transports and example server),
// and without it a user gets one line saying so rather than a module-resolution stack trace.
let main: typeof Main;
try {
  ({ main } = await import('./program.js'));
} catch (error) {
  if (!sdkMissing(error)) throw error;
  process.stderr.write(
    'mcp-task needs @modelcontextprotocol/sdk (SDK v1) installed beside mcp-task-client:\n  npm install @modelcontextprotocol/sdk\n',
  );
  process.exit(1);
}

process.exitCode = await main(process.argv.slice(2));
// Leave now: a stdio server's pipes or an HTTP keep-alive socket must not hold the process.
process.exit();
