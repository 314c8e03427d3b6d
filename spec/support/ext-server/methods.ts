/**
 * The built-in methods of {@link ExtServer}, each after the era checks already passed:
 *
 * - `server/discover` (core `server/discover.mdx`): supported versions, capabilities with the
 *   extension under `capabilities.extensions`, server info, cache hints.
 * - `initialize`: legacy era only on a dual-era server (`legacy` option); else -32022 naming the
 *   versions served (core `versioning.mdx`: a modern-only server names its versions).
 * - `tools/list`, `tools/call` (polymorphic: `complete`, `input_required` (MRTR) or `task`).
 * - `tasks/get`, `tasks/update`, `tasks/cancel`, `subscriptions/listen` (SEP-2663).
 * `tasks/result` and `tasks/list` are not served (-32601), as SEP-2663 removes them.
 */
import { NO_REPLY } from './reply.js';
import type { ExtServer, Handler, HandlerContext } from './server.js';
import { syncOutcome, type ToolCall, type ToolOutcome } from './tools.js';
import {
  ErrorCode,
  isObject,
  META,
  missingExtension,
  rpcError,
  type InputRequests,
  type InputResponses,
  type Json,
} from './wire.js';

/** Client capability each MRTR input kind needs (core MRTR "Server Requirements"). */
const INPUT_CAPABILITY: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

function requireDeclared(ctx: HandlerContext): void {
  // tasks/* from a non-declaring request: -32021 (EXT "Error Handling"); legacy era: not served at all.
  if (ctx.era === 'legacy') throw rpcError(ErrorCode.MethodNotFound, `Method not found: ${ctx.method}`);
  if (!ctx.declared) throw missingExtension();
}
function taskIdOf(params: Json): string {
  if (typeof params.taskId !== 'string') throw rpcError(ErrorCode.InvalidParams, 'params.taskId must be a string');
  return params.taskId;
}

/** The built-in handlers, bound to `server`. */
export function builtinMethods(server: ExtServer): Readonly<Record<string, Handler>> {
  const toolsCall: Handler = async (params, ctx) => {
    if (typeof params.name !== 'string') throw rpcError(ErrorCode.InvalidParams, 'params.name must be a string');
    const tool = server.tools.get(params.name);
    if (tool === undefined) throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    // A legacy `params.task` is ignored: the server alone decides (SEP-2663 "Backward Compatibility").
    const call: ToolCall = {
      name: params.name,
      args: isObject(params.arguments) ? params.arguments : {},
      inputResponses: isObject(params.inputResponses) ? (params.inputResponses as InputResponses) : undefined,
      requestState: typeof params.requestState === 'string' ? params.requestState : undefined,
      declared: ctx.declared,
      capabilities: ctx.capabilities,
      params,
    };
    let out: ToolOutcome = await tool.run(call);
    if (out.kind === 'task' && !ctx.declared) {
      // Never a task for a request that did not declare the extension (SEP-2663 MUST NOT); either
      // serve it synchronously or say the extension is required (-32021 with requiredCapabilities).
      if (tool.undeclared === 'reject') throw missingExtension();
      out = syncOutcome(out.script, call.args);
    }
    switch (out.kind) {
      case 'error':
        throw out.error;
      case 'result':
        return ctx.era === 'legacy' ? out.result : { ...out.result, resultType: out.result.resultType ?? 'complete' };
      case 'input_required':
        if (ctx.era === 'legacy')
          throw rpcError(ErrorCode.InternalError, 'This tool needs input, which the legacy era cannot carry here');
        if (server.options.requireInputCapabilities === true)
          checkInputCapabilities(out.inputRequests ?? {}, ctx.capabilities);
        return {
          resultType: 'input_required',
          ...(out.inputRequests === undefined ? {} : { inputRequests: out.inputRequests }),
          ...(out.requestState === undefined ? {} : { requestState: out.requestState }),
        };
      case 'task': {
        // Created (and readable) before the answer goes out: durable creation (EXT "Task Creation").
        const {
          inputRequests: _i,
          result: _r,
          error: _e,
          ...task
        } = server.tasks.create(out.script, { toolName: call.name, args: call.args });
        return { resultType: 'task', ...task };
      }
    }
  };

  return {
    'server/discover': () => ({
      resultType: 'complete',
      supportedVersions: [...server.supportedVersions],
      capabilities: server.serverCapabilities(),
      ...(server.options.instructions === undefined ? {} : { instructions: server.options.instructions }),
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { [META.serverInfo]: server.serverInfo },
    }),
    initialize: (params, ctx) => {
      if (server.options.legacy !== true) {
        throw rpcError(
          ErrorCode.UnsupportedProtocolVersion,
          `This server speaks only ${server.supportedVersions.join(', ')}`,
          {
            supported: server.advertisedVersions,
            requested: params.protocolVersion,
          },
        );
      }
      const version = server.legacyVersionFor(params.protocolVersion);
      ctx.link.legacyVersion = version;
      // Dual-era: the extension is advertised, but under a legacy version it does not apply and no
      // legacy `capabilities.tasks` is offered (SEP-2663 "Backward Compatibility" table).
      return { protocolVersion: version, capabilities: server.serverCapabilities(), serverInfo: server.serverInfo };
    },
    ping: () => ({}),
    'tools/list': (_params, ctx) => {
      const tools = [...server.tools.values()].map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema ?? { type: 'object' },
      }));
      // 2026 list results are cacheable: ttlMs + cacheScope are required there.
      return ctx.era === 'legacy' ? { tools } : { resultType: 'complete', tools, ttlMs: 0, cacheScope: 'private' };
    },
    'tools/call': toolsCall,
    'tasks/get': (params, ctx) => {
      requireDeclared(ctx);
      const task = server.tasks.poll(taskIdOf(params));
      return server.getResultType === 'omit' ? task : { resultType: server.getResultType, ...task };
    },
    'tasks/update': (params, ctx) => {
      requireDeclared(ctx);
      const taskId = taskIdOf(params);
      if (!isObject(params.inputResponses))
        throw rpcError(ErrorCode.InvalidParams, 'params.inputResponses must be an object');
      server.tasks.respond(taskId, params.inputResponses as InputResponses);
      return { resultType: 'complete' };
    },
    'tasks/cancel': (params, ctx) => {
      requireDeclared(ctx);
      server.tasks.requestCancel(taskIdOf(params));
      return { resultType: 'complete' };
    },
    'subscriptions/listen': (params, ctx) => {
      if (ctx.era === 'legacy') throw rpcError(ErrorCode.MethodNotFound, 'Method not found: subscriptions/listen');
      if (!isObject(params.notifications))
        throw rpcError(ErrorCode.InvalidParams, 'params.notifications must be an object');
      const requested = params.notifications.taskIds;
      if (requested !== undefined && !Array.isArray(requested))
        throw rpcError(ErrorCode.InvalidParams, 'notifications.taskIds must be an array');
      if (Array.isArray(requested) && !ctx.declared) throw missingExtension();
      // Agree to known task ids only (unsupported filter kinds are left out of the ack).
      const known = (requested ?? []).filter((id): id is string => typeof id === 'string' && server.tasks.has(id));
      server.subscriptions.add(ctx.link, ctx.id, server.notifications === 'off' ? [] : known);
      return NO_REPLY;
    },
  };
}

function checkInputCapabilities(requests: InputRequests, capabilities: Json): void {
  const missing: Json = {};
  for (const request of Object.values(requests)) {
    const key = INPUT_CAPABILITY[request.method];
    if (key !== undefined && !isObject(capabilities[key])) missing[key] = {};
  }
  if (Object.keys(missing).length > 0)
    throw rpcError(ErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
      requiredCapabilities: missing,
    });
}
