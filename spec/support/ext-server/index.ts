/**
 * A scripted server for the 2026-07-28 `io.modelcontextprotocol/tasks` extension wire (SEP-2663),
 * written from the extension schema as a raw JSON-RPC peer. Start here:
 *
 * - {@link ExtServer} — the transport-agnostic core (`new ExtServer({ tools, ...options })`);
 *   `server.tasks` is the scripting API of its task store.
 * - {@link connectInMemory} / {@link rawInMemory} — an in-memory linked pair (SDK `Transport`).
 * - {@link serveStdio} and the runnable `stdio.ts` — newline-delimited JSON.
 * - {@link startExtHttpServer} — sessionless Streamable HTTP on 127.0.0.1.
 * - {@link fixtureTools} — conformance-style tools; {@link taskTool}/{@link mrtrTool}/{@link immediateTool} to write more.
 */
export * from './wire.js';
export * from './task-store.js';
export * from './tools.js';
export * from './subscriptions.js';
export { NO_REPLY, raw, type RawReply } from './reply.js';
export {
  ExtServer,
  type Era,
  type ExtServerOptions,
  type Handler,
  type HandlerContext,
  type LoggedMessage,
} from './server.js';
export * from './raw-client.js';
export * from './serve-stdio.js';
export * from './http.js';
export * from './fixtures.js';
