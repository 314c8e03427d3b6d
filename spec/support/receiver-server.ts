/**
 * A test server for the receiver role: an SDK v1 `McpServer` whose tools send task-augmented
 * `elicitation/create` and `sampling/createMessage` requests to the client and drive the client's
 * tasks with `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`, as a real server would.
 * It is the requestor here; the client under test is the receiver.
 *
 * Tools (all plain, none a task; every answer is one text block of JSON):
 * - `delegate {method, ttl?, pollMs?, cancelAfterPolls?, relatedTaskId?, message?}`: sends the
 *   request with `task`, polls `tasks/get` every `pollMs` until the task is terminal (or cancels it
 *   after `cancelAfterPolls` polls), then fetches `tasks/result`. Answers
 *   `{ created, statuses, result?, error?, cancel?, notifications }`.
 * - `create {method, ttl?, count?}`: sends `count` requests with `task` at once; answers `{ created }`.
 * - `call {method, params}`: sends any request to the client; answers `{ result }` or `{ error }`.
 * - `list {}`: pages through `tasks/list`; answers `{ pages, taskIds }`.
 * - `results {taskIds}`: `tasks/result` for each, concurrently; answers `{ results }` (a result or an error each).
 *
 * Run directly (`tsx spec/support/receiver-server.ts`) it serves over stdio.
 */
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

type Json = Record<string, unknown>;
type Send = (request: { method: string; params?: Json }) => Promise<Json>;

const anyResult = z.looseObject({});
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The params of a request of `method`. */
function paramsOf(method: string, message: string): Json {
  if (method === 'elicitation/create') {
    return {
      message,
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    };
  }
  return { messages: [{ role: 'user', content: { type: 'text', text: message } }], maxTokens: 50 };
}

/** `{ error: { code, message } }` for a failed request. */
function failure(error: unknown): Json {
  const e = error as { code?: unknown; message?: unknown };
  return { error: { code: e.code, message: String(e.message).replace(/^MCP error -?\d+: /, '') } };
}

async function attempt(run: () => Promise<Json>): Promise<Json> {
  try {
    return { result: await run() };
  } catch (error) {
    return failure(error);
  }
}

const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The server; `notifications` collects every `notifications/tasks/status` the client sent, and
 * `requests` the method of every request the tools sent to the client, as they go out.
 */
export function createReceiverTestServer(): { server: McpServer; notifications: Json[]; requests: string[] } {
  const server = new McpServer({ name: 'receiver-test-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  const notifications: Json[] = [];
  const requests: string[] = [];
  server.server.fallbackNotificationHandler = async (notification) => {
    if (notification.method === 'notifications/tasks/status') notifications.push(notification.params as Json);
  };
  const sender = (extra: { sendRequest: (request: never, schema: never) => Promise<unknown> }): Send => {
    return (request) => {
      requests.push(request.method);
      return extra.sendRequest(request as never, anyResult as never) as Promise<Json>;
    };
  };
  const method = z.enum(['elicitation/create', 'sampling/createMessage']);

  server.registerTool(
    'delegate',
    {
      inputSchema: {
        method,
        ttl: z.number().optional(),
        pollMs: z.number().optional(),
        cancelAfterPolls: z.number().optional(),
        relatedTaskId: z.string().optional(),
        message: z.string().optional(),
      },
    },
    async (args, extra) => {
      const send = sender(extra);
      const params: Json = {
        ...paramsOf(args.method, args.message ?? 'Your name?'),
        task: args.ttl === undefined ? {} : { ttl: args.ttl },
      };
      if (args.relatedTaskId !== undefined)
        params._meta = { 'io.modelcontextprotocol/related-task': { taskId: args.relatedTaskId } };
      const seen = notifications.length;
      const created = await send({ method: args.method, params });
      const task = created.task as Json | undefined;
      if (task === undefined) return text({ created, sync: true });
      const taskId = String(task.taskId);
      const statuses = [String(task.status)];
      let cancel: Json | undefined;
      for (let polls = 1; !TERMINAL.has(statuses.at(-1)!); polls += 1) {
        await sleep(args.pollMs ?? 10);
        const got = await send({ method: 'tasks/get', params: { taskId } });
        statuses.push(String(got.status));
        if (args.cancelAfterPolls === polls && !TERMINAL.has(String(got.status))) {
          cancel = await attempt(() => send({ method: 'tasks/cancel', params: { taskId } }));
          const status = (cancel.result as Json | undefined)?.status;
          statuses.push(typeof status === 'string' ? status : 'cancel-failed');
        }
      }
      const outcome = await attempt(() => send({ method: 'tasks/result', params: { taskId } }));
      return text({
        created,
        statuses,
        ...outcome,
        cancel,
        notifications: notifications.slice(seen).filter((n) => n.taskId === taskId),
      });
    },
  );

  server.registerTool(
    'create',
    { inputSchema: { method, ttl: z.number().optional(), count: z.number().optional() } },
    async (args, extra) => {
      const send = sender(extra);
      const requests = Array.from({ length: args.count ?? 1 }, (_, i) =>
        send({
          method: args.method,
          params: { ...paramsOf(args.method, `request ${i}`), task: args.ttl === undefined ? {} : { ttl: args.ttl } },
        }),
      );
      return text({ created: (await Promise.all(requests)).map((result) => result.task) });
    },
  );

  server.registerTool(
    'call',
    { inputSchema: { method: z.string(), params: z.looseObject({}).optional() } },
    async (args, extra) => {
      return text(await attempt(() => sender(extra)({ method: args.method, params: args.params })));
    },
  );

  server.registerTool('list', { inputSchema: {} }, async (_args, extra) => {
    const send = sender(extra);
    const taskIds: string[] = [];
    let pages = 0;
    let cursor: string | undefined;
    do {
      const page = await send({ method: 'tasks/list', params: cursor === undefined ? {} : { cursor } });
      pages += 1;
      for (const task of page.tasks as Json[]) taskIds.push(String(task.taskId));
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    return text({ pages, taskIds });
  });

  server.registerTool('results', { inputSchema: { taskIds: z.array(z.string()) } }, async (args, extra) => {
    const send = sender(extra);
    const results = await Promise.all(
      args.taskIds.map((taskId) => attempt(() => send({ method: 'tasks/result', params: { taskId } }))),
    );
    return text({ results });
  });

  return { server, notifications, requests };
}

/** The JSON a tool of this server answered. */
export function answerOf(result: Record<string, unknown>): Json {
  const content = result.content as Array<{ type: string; text: string }>;
  return JSON.parse(content[0]!.text) as Json;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { server } = createReceiverTestServer();
  await server.connect(new StdioServerTransport());
}
