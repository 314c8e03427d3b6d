/**
 * A task server that reads the trace context the client puts in `params._meta`: the SDK's
 * `McpServer` with its in-memory task store (no status notifications, so the client polls), one
 * task tool `job`, and a record of the `_meta` of every request the server received. The tool's
 * handler reads `_meta.traceparent` of its `tools/call` and starts its own SERVER span under it, as
 * an instrumented MCP server does; when it asks for input (`outcome: 'ask'`), its elicitation
 * request carries that span's context in its own `_meta`, so the client's span of the question
 * has the server's span as parent.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type TextMapPropagator,
  type TracerProvider,
} from '@opentelemetry/api';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** One request the server received, with the trace context of its `_meta`. */
export interface SeenRequest {
  readonly method: string;
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  readonly meta: Record<string, unknown> | undefined;
}

/** What the server's tool read from its `tools/call`. */
export interface ToolRead {
  readonly traceparent: string | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Records every request `server` receives on any transport it connects to (in process or HTTP). */
function recordRequests(server: McpServer, seen: SeenRequest[]): void {
  const connect = server.connect.bind(server);
  server.connect = async (transport: Transport) => {
    await connect(transport);
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const raw = message as { method?: unknown; id?: unknown; params?: { _meta?: unknown } };
      if (typeof raw.method === 'string' && raw.id !== undefined) {
        const meta = isObject(raw.params?._meta) ? raw.params._meta : undefined;
        seen.push({
          method: raw.method,
          traceparent: typeof meta?.traceparent === 'string' ? meta.traceparent : undefined,
          tracestate: typeof meta?.tracestate === 'string' ? meta.tracestate : undefined,
          meta,
        });
      }
      inner?.call(transport, message, extra);
    };
  };
}

/**
 * A task store that ignores the session a call comes on: a task created over one HTTP session can
 * be read over another (a client that reconnected to a second server, in these specs).
 */
export class SessionlessTaskStore extends InMemoryTaskStore {
  override createTask(...[params, requestId, request]: Parameters<InMemoryTaskStore['createTask']>) {
    return super.createTask(params, requestId, request);
  }
  override getTask(...[taskId]: Parameters<InMemoryTaskStore['getTask']>) {
    return super.getTask(taskId);
  }
  override storeTaskResult(...[taskId, status, result]: Parameters<InMemoryTaskStore['storeTaskResult']>) {
    return super.storeTaskResult(taskId, status, result);
  }
  override getTaskResult(...[taskId]: Parameters<InMemoryTaskStore['getTaskResult']>) {
    return super.getTaskResult(taskId);
  }
  override updateTaskStatus(...[taskId, status, message]: Parameters<InMemoryTaskStore['updateTaskStatus']>) {
    return super.updateTaskStatus(taskId, status, message);
  }
  override listTasks(...[cursor]: Parameters<InMemoryTaskStore['listTasks']>) {
    return super.listTasks(cursor);
  }
}

/** Options of {@link createTracedServer}. */
export interface TracedServerOptions {
  /** Where the server's own spans go. */
  readonly tracerProvider: TracerProvider;
  /** How it reads and writes trace context. */
  readonly propagator: TextMapPropagator;
  /** The tasks' `pollInterval`. @defaultValue 20 */
  readonly pollInterval?: number;
  /** A store to share (a second server instance after a reconnection). @defaultValue a new one */
  readonly store?: InMemoryTaskStore;
  /**
   * Makes the ids of the tasks the store creates (sequential ones, say, as many servers hand out,
   * so that two servers use the same ids). @defaultValue the SDK store's random ids
   */
  readonly taskIds?: () => string;
}

/** The server, what it received and what its tool read. */
export function createTracedServer(options: TracedServerOptions): {
  server: McpServer;
  store: InMemoryTaskStore;
  seen: SeenRequest[];
  reads: ToolRead[];
} {
  const store = options.store ?? new InMemoryTaskStore();
  // The SDK store's id maker is private to its types, not to its code.
  if (options.taskIds !== undefined)
    (store as unknown as { generateTaskId: () => string }).generateTaskId = options.taskIds;
  const server = new McpServer(
    { name: 'traced-server', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: store,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  const seen: SeenRequest[] = [];
  const reads: ToolRead[] = [];
  recordRequests(server, seen);
  const tracer = options.tracerProvider.getTracer('traced-server');
  const done = (text: string): CallToolResult => ({ content: [{ type: 'text', text }] });

  server.experimental.tasks.registerToolTask(
    'job',
    {
      description: 'Runs for `ms`, then completes, fails (isError), asks a question first, or never ends.',
      inputSchema: {
        ms: z.number().default(100),
        outcome: z.enum(['complete', 'fail', 'ask', 'hang']).default('complete'),
      },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async ({ ms, outcome }, extra) => {
        const meta = extra._meta ?? {};
        reads.push({ traceparent: typeof meta.traceparent === 'string' ? meta.traceparent : undefined });
        // The server joins the client's trace: its span's parent is the context in _meta.
        const parent = options.propagator.extract(ROOT_CONTEXT, meta, defaultTextMapGetter);
        const span = tracer.startSpan('tools/call job', { kind: SpanKind.SERVER }, parent);
        const task = await extra.taskStore.createTask({
          ttl: extra.taskRequestedTtl,
          pollInterval: options.pollInterval ?? 20,
        });
        const id = task.taskId;
        void (async () => {
          await sleep(ms);
          if (outcome === 'hang') return;
          if (outcome === 'fail') {
            await store.storeTaskResult(id, 'failed', {
              content: [{ type: 'text', text: 'disk full' }],
              isError: true,
            });
            return;
          }
          if (outcome === 'ask') {
            await store.updateTaskStatus(id, 'input_required');
            const carrier: Record<string, string> = {};
            options.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
            const answer = await server.server.elicitInput(
              {
                message: 'Go on?',
                requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
                _meta: carrier,
              },
              { relatedTask: { taskId: id }, timeout: 60_000 },
            );
            await store.updateTaskStatus(id, 'working');
            await store.storeTaskResult(id, 'completed', done(`answered ${answer.action}`));
            return;
          }
          await store.storeTaskResult(id, 'completed', done('job done'));
        })()
          .catch(() => {})
          .finally(() => span.end());
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );
  // A plain tool; `fail: true` answers with an `isError` tool result.
  server.registerTool(
    'echo',
    { inputSchema: { text: z.string().default('hi'), fail: z.boolean().default(false) } },
    ({ text, fail }) => Promise.resolve(fail ? { ...done(text), isError: true } : done(text)),
  );
  return { server, store, seen, reads };
}
