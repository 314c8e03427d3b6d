/**
 * The example MCP task server: the SDK's `McpServer` with its experimental in-memory task store,
 * and tools like the ones in the MCP docs. Run directly (`tsx examples/server.ts`, as the demo
 * does), it serves over stdio; the test suite builds it in process with options
 * (`createExampleServer`); and the `mcp-task` CLI (cli/) compiles this very file into its package
 * and runs it in process as its default target, so there is one copy of it.
 *
 * Tools:
 * - `analyze` (taskSupport optional): a long analysis that reports each step in `statusMessage`.
 * - `batch` (taskSupport required): processes a list of items one by one.
 * - `flaky` (taskSupport required): fails after a while, with an `isError` result.
 * - `confirm_delete` (taskSupport required): asks the user to confirm through elicitation
 *   (the task goes `input_required` while it waits).
 * - `summarize` (taskSupport required): asks the client's model through sampling.
 * - `order` (taskSupport required): asks for an order through one elicitation form with a
 *   select (enum), a number (integer with minimum and maximum), a confirm (boolean) and an
 *   optional email.
 * - `echo` (no task support): answers at once.
 *
 * Environment when run directly: `POLL_INTERVAL` (ms), `NOTIFY=0` (no status notifications),
 * `CANCEL_LOG=<file>` (append `cancel <taskId>` to that file for every `tasks/cancel` received).
 */
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
  TaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** Knobs for tests and benchmarks. */
export interface ExampleServerOptions {
  /** `pollInterval` the store suggests, in ms. @defaultValue 1000 */
  readonly pollInterval?: number;
  /** Send `notifications/tasks/status` on every change. @defaultValue true */
  readonly notify?: boolean;
  /** Default duration of one analysis step, in ms. @defaultValue 500 */
  readonly stepMs?: number;
  /** Declare `tasks.list` and `tasks.cancel`. @defaultValue true */
  readonly listAndCancel?: boolean;
  /** Share a task store (e.g. a second server instance after a reconnection). @defaultValue a new one */
  readonly store?: InMemoryTaskStore;
  /** Called with the task id whenever the server accepts a `tasks/cancel` (for tests). */
  readonly onCancel?: (taskId: string) => void;
}

/**
 * The longest ttl the store keeps a task for: 2^31 - 1 ms (about 24.8 days), the longest delay
 * Node's timers honour. The SDK's in-memory store waits out a task's ttl with `setTimeout`, which
 * runs a longer one after 1 ms: the task would be deleted at once. A longer ttl asked for is
 * lowered to it (a receiver may override the ttl asked for; the task says the actual one).
 */
export const MAX_TTL_MS = 2_147_483_647;

/**
 * The store as the server sees it: `store`, with the ttl a task asks for kept to
 * {@link MAX_TTL_MS}, reporting the cancels it receives. The tools never set `cancelled`
 * themselves, so every change to `cancelled` comes from a client's `tasks/cancel`.
 */
function servedStore(store: InMemoryTaskStore, onCancel: ((taskId: string) => void) | undefined): TaskStore {
  return {
    createTask: (params, requestId, request, sessionId) =>
      store.createTask(
        typeof params.ttl === 'number' && params.ttl > MAX_TTL_MS ? { ...params, ttl: MAX_TTL_MS } : params,
        requestId,
        request,
        sessionId,
      ),
    getTask: (taskId, sessionId) => store.getTask(taskId, sessionId),
    storeTaskResult: (taskId, status, result, sessionId) => store.storeTaskResult(taskId, status, result, sessionId),
    getTaskResult: (taskId, sessionId) => store.getTaskResult(taskId, sessionId),
    listTasks: (cursor, sessionId) => store.listTasks(cursor, sessionId),
    updateTaskStatus: async (taskId, status, message, sessionId) => {
      await store.updateTaskStatus(taskId, status, message, sessionId);
      if (status === 'cancelled') onCancel?.(taskId);
    },
  };
}

/** The task store operations the tools use, with or without status notifications. */
interface Progress {
  update(taskId: string, status: Task['status'], message?: string): Promise<void>;
  finish(taskId: string, status: 'completed' | 'failed', result: CallToolResult): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Builds the example server and its store (call `store.cleanup()` when done with it). */
export function createExampleServer(options: ExampleServerOptions = {}): {
  server: McpServer;
  store: InMemoryTaskStore;
} {
  const store = options.store ?? new InMemoryTaskStore();
  const listAndCancel = options.listAndCancel ?? true;
  const server = new McpServer(
    { name: 'example-task-server', version: '1.0.0' },
    {
      capabilities: {
        tasks: listAndCancel
          ? { list: {}, cancel: {}, requests: { tools: { call: {} } } }
          : { requests: { tools: { call: {} } } },
      },
      taskStore: servedStore(store, options.onCancel),
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  const notify = options.notify ?? true;
  const stepMs = options.stepMs ?? 500;

  /** Picks the notifying request store or the silent raw store, and skips cancelled tasks. */
  function progressFor(extra: { taskStore: Progress & Record<string, unknown>; sessionId?: string }): Progress {
    const requestStore = extra.taskStore as unknown as {
      updateTaskStatus(id: string, status: Task['status'], message?: string): Promise<void>;
      storeTaskResult(id: string, status: 'completed' | 'failed', result: CallToolResult): Promise<void>;
    };
    const live = async (taskId: string): Promise<boolean> => {
      const task = await store.getTask(taskId, extra.sessionId);
      return task !== null && (task.status === 'working' || task.status === 'input_required');
    };
    return {
      update: async (taskId, status, message) => {
        if (!(await live(taskId))) return;
        if (notify) await requestStore.updateTaskStatus(taskId, status, message);
        else await store.updateTaskStatus(taskId, status, message, extra.sessionId);
      },
      finish: async (taskId, status, result) => {
        if (!(await live(taskId))) return;
        if (notify) await requestStore.storeTaskResult(taskId, status, result);
        else await store.storeTaskResult(taskId, status, result, extra.sessionId);
      },
    };
  }

  // How every task tool answers tasks/get and tasks/result: straight from the store.
  const common = {
    getTask: async (_args: unknown, extra: TaskRequestHandlerExtra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args: unknown, extra: TaskRequestHandlerExtra) =>
      (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };

  /**
   * Creates the task, runs `work` in the background (an error thrown there fails the task with an
   * isError result) and answers the tools/call with the CreateTaskResult at once.
   */
  async function startTask(
    extra: CreateTaskRequestHandlerExtra,
    work: (taskId: string, progress: Progress) => Promise<void>,
  ): Promise<{ task: Task }> {
    const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval: options.pollInterval });
    const progress = progressFor(extra as never);
    void work(task.taskId, progress).catch(async (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      await progress
        .finish(task.taskId, 'failed', { content: [{ type: 'text', text: message }], isError: true })
        .catch(() => {});
    });
    return { task };
  }

  server.experimental.tasks.registerToolTask(
    'analyze',
    {
      title: 'Analyze',
      description: 'A long analysis that reports each step in its status message.',
      inputSchema: {
        id: z.number().default(1),
        steps: z.number().int().min(1).default(3),
        stepMs: z.number().optional(),
      },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async ({ id, steps, stepMs: ms }, extra) => {
        // [R35]: the call's progressToken stays valid for the task's whole life.
        const token = extra._meta?.progressToken;
        return startTask(extra, async (taskId, progress) => {
          for (let step = 1; step <= steps; step += 1) {
            await sleep(ms ?? stepMs);
            if (token !== undefined) {
              await server.server.notification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: step, total: steps, message: `step ${step}/${steps}` },
              });
            }
            if (step < steps) await progress.update(taskId, 'working', `step ${step}/${steps}`);
          }
          await progress.finish(taskId, 'completed', {
            content: [{ type: 'text', text: `analysis of ${id} done in ${steps} steps` }],
          });
        });
      },
      ...common,
    },
  );

  server.experimental.tasks.registerToolTask(
    'batch',
    {
      title: 'Batch',
      description: 'Processes a list of items; must run as a task.',
      inputSchema: { items: z.array(z.string()).default(['a', 'b']), itemMs: z.number().default(200) },
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async ({ items, itemMs }, extra) =>
        startTask(extra, async (taskId, progress) => {
          for (const [index, item] of items.entries()) {
            await sleep(itemMs);
            await progress.update(taskId, 'working', `processed ${item} (${index + 1}/${items.length})`);
          }
          await progress.finish(taskId, 'completed', {
            content: [{ type: 'text', text: `processed ${items.length} items` }],
            structuredContent: { processed: items },
          });
        }),
      ...common,
    },
  );

  server.experimental.tasks.registerToolTask(
    'flaky',
    {
      title: 'Flaky',
      description: 'Fails after a while with an isError result.',
      inputSchema: { afterMs: z.number().default(300), reason: z.string().default('disk full') },
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async ({ afterMs, reason }, extra) =>
        startTask(extra, async (taskId, progress) => {
          await sleep(afterMs);
          await progress.finish(taskId, 'failed', { content: [{ type: 'text', text: reason }], isError: true });
        }),
      ...common,
    },
  );

  server.experimental.tasks.registerToolTask(
    'confirm_delete',
    {
      title: 'Confirm delete',
      description: 'Asks the user to confirm a deletion, then reports the decision.',
      inputSchema: { path: z.string().default('/tmp/demo.txt') },
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async ({ path }, extra) =>
        startTask(extra, async (taskId, progress) => {
          // Queued for the client and delivered while it waits on tasks/result ([R29]).
          await progress.update(taskId, 'input_required', `waiting for confirmation of ${path}`);
          const answer = await server.server.elicitInput(
            {
              message: `Delete ${path}?`,
              requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
            },
            { relatedTask: { taskId }, timeout: 24 * 3_600_000 },
          );
          await progress.update(taskId, 'working', `answer: ${answer.action}`);
          const confirmed = answer.action === 'accept' && answer.content?.confirm === true;
          await progress.finish(taskId, 'completed', {
            content: [{ type: 'text', text: confirmed ? `deleted ${path}` : `kept ${path} (${answer.action})` }],
          });
        }),
      ...common,
    },
  );

  server.experimental.tasks.registerToolTask(
    'summarize',
    {
      title: 'Summarize',
      description: "Summarizes a text with the client's model (sampling).",
      inputSchema: { text: z.string().default('MCP tasks let clients poll long-running tool calls.') },
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async ({ text }, extra) =>
        startTask(extra, async (taskId, progress) => {
          await progress.update(taskId, 'input_required', 'waiting for the model');
          const reply = await server.server.createMessage(
            { messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }], maxTokens: 100 },
            { relatedTask: { taskId }, timeout: 24 * 3_600_000 },
          );
          await progress.update(taskId, 'working', 'summary received');
          const summary = reply.content.type === 'text' ? reply.content.text : `[${reply.content.type}]`;
          await progress.finish(taskId, 'completed', { content: [{ type: 'text', text: `summary: ${summary}` }] });
        }),
      ...common,
    },
  );

  server.experimental.tasks.registerToolTask(
    'order',
    {
      title: 'Order',
      description: 'Asks for the details of an order in one form (select, number, confirm, email), then reports it.',
      inputSchema: { item: z.string().default('report') },
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async ({ item }, extra) =>
        startTask(extra, async (taskId, progress) => {
          await progress.update(taskId, 'input_required', `waiting for the order of ${item}`);
          const answer = await server.server.elicitInput(
            {
              message: `How should the ${item} be ordered?`,
              requestedSchema: {
                type: 'object',
                properties: {
                  format: { type: 'string', title: 'Format', enum: ['pdf', 'html', 'csv'] },
                  copies: { type: 'integer', title: 'Copies', minimum: 1, maximum: 5 },
                  urgent: { type: 'boolean', title: 'Urgent', default: false },
                  email: { type: 'string', title: 'Email', format: 'email', description: 'Where to send it' },
                },
                required: ['format', 'copies', 'urgent'],
              },
            },
            { relatedTask: { taskId }, timeout: 24 * 3_600_000 },
          );
          await progress.update(taskId, 'working', `answer: ${answer.action}`);
          if (answer.action !== 'accept') {
            await progress.finish(taskId, 'completed', {
              content: [{ type: 'text', text: `no order (${answer.action})` }],
            });
            return;
          }
          const order = answer.content ?? {};
          await progress.finish(taskId, 'completed', {
            content: [{ type: 'text', text: `ordered ${String(order.copies)} ${String(order.format)} ${item}` }],
            structuredContent: { item, ...order },
          });
        }),
      ...common,
    },
  );

  server.registerTool(
    'echo',
    { description: 'Answers at once.', inputSchema: { text: z.string().default('hi') } },
    ({ text }) => Promise.resolve({ content: [{ type: 'text' as const, text }] }),
  );

  return { server, store };
}

// Run over stdio when executed directly: `tsx examples/server.ts`. (A file URL compares right even
// when the path has characters a URL escapes, such as a space.) The stdio transport is loaded here
// only, so the CLI, which embeds this module, does not load it.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const pollInterval = process.env.POLL_INTERVAL === undefined ? undefined : Number(process.env.POLL_INTERVAL);
  const cancelLog = process.env.CANCEL_LOG;
  const { server } = createExampleServer({
    pollInterval,
    notify: process.env.NOTIFY !== '0',
    onCancel: cancelLog === undefined ? undefined : (taskId) => appendFileSync(cancelLog, `cancel ${taskId}\n`),
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  exitWhenInputEnds(transport);
}

/**
 * Exits once the client has closed our stdin and every request it sent is answered (at most 5 s
 * later). The task store's timers (its ttl clean-ups) would otherwise keep the process alive: a
 * server started through a launcher (`npx`, `tsx`), which the client's close stops without
 * reaching its child, would be left running.
 */
function exitWhenInputEnds(transport: Transport): void {
  const unanswered = new Set<string | number>();
  let ended = false;
  const exitIfDone = (): void => {
    if (ended && unanswered.size === 0) process.exit(0);
  };
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) unanswered.add(message.id);
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if (!('method' in message) && 'id' in message && message.id !== undefined) unanswered.delete(message.id);
    exitIfDone();
  };
  process.stdin.once('end', () => {
    ended = true;
    setTimeout(() => process.exit(0), 5_000).unref();
    exitIfDone();
  });
}
