/**
 * The benchmark task server: the SDK's `McpServer` with `InMemoryTaskStore` and
 * `InMemoryTaskMessageQueue`, and one tool, `work`, that completes after `ms` milliseconds.
 *
 * It measures on the server side, so no contender can be flattered by its own bookkeeping:
 * - the completion time of every task (just after the terminal status is in the store, before
 *   any `notifications/tasks/status` goes out), on the wall-aligned clock of `stats.ts`;
 * - every message received, by method (requests and notifications separately);
 * - every notification sent, by method;
 * - the shortest gap between two polls of one task (from the `CreateTaskResult` to the first
 *   `tasks/get`, then between consecutive `tasks/get`s).
 *
 * With `notify`, the tool finishes through the request task store (`extra.taskStore`), which
 * sends `notifications/tasks/status`; without, it writes to the raw store with the session id,
 * which notifies nobody.
 *
 * After `reset(true)`, every new task's clock starts only when {@link BenchServer.release} is
 * called, so the harness can measure memory while all N tasks are in
 * flight, then let them run for exactly their durations.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, JSONRPCMessage, Task } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { now } from './stats.js';

/** Name of the benchmark tool. */
export const WORK_TOOL = 'work';

/** Knobs of the benchmark server. */
export interface BenchServerOptions {
  /** `pollInterval` the store suggests, in ms. @default 1000 */
  readonly pollInterval?: number;
  /** Send `notifications/tasks/status` when a task completes. @default true */
  readonly notify?: boolean;
}

/** What the server measured, as plain JSON. */
export interface ServerStats {
  /** Requests received, by method (harness methods excluded). */
  readonly requests: Record<string, number>;
  /** Notifications received from the client, by method. */
  readonly clientNotifications: Record<string, number>;
  /** Notifications sent to the client, by method. */
  readonly serverNotifications: Record<string, number>;
  /** Server-side completion time per task id, on the wall-aligned clock (ms). */
  readonly completedAt: Record<string, number>;
  /** Shortest gap between the creation answer and a poll, or two polls, of one task (ms). */
  readonly minPollGapMs: number | null;
  /** Tasks created since the last reset. */
  readonly created: number;
}

/** What the harness drives on either wire's bench server (in process, or through its control endpoint). */
export interface ServerCore {
  /** Forgets counts and completions; with `gate`, holds the clock of new tasks until {@link ServerCore.release}. */
  reset(gate: boolean): void;
  /** Starts the clock of every task created so far and of every later one. */
  release(): void;
  stats(): ServerStats;
  close(): void | Promise<void>;
}

/** A store that records when each task reaches its terminal status. */
class RecordingTaskStore extends InMemoryTaskStore {
  readonly completedAt = new Map<string, number>();

  override async storeTaskResult(
    taskId: string,
    status: 'completed' | 'failed',
    result: CallToolResult,
    sessionId?: string,
  ): Promise<void> {
    await super.storeTaskResult(taskId, status, result, sessionId);
    this.completedAt.set(taskId, now());
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** The benchmark server and its measurements. */
export class BenchServer implements ServerCore {
  readonly server: McpServer;
  readonly store = new RecordingTaskStore();
  private readonly requests = new Map<string, number>();
  private readonly clientNotifications = new Map<string, number>();
  private readonly serverNotifications = new Map<string, number>();
  private readonly lastTouch = new Map<string, number>();
  private minGap = Infinity;
  private created = 0;
  private openGate: () => void = () => {};
  private gate: Promise<void> = Promise.resolve();

  constructor(readonly options: BenchServerOptions = {}) {
    const pollInterval = options.pollInterval ?? 1000;
    const notify = options.notify ?? true;
    this.server = new McpServer(
      { name: 'bench-task-server', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: this.store,
        taskMessageQueue: new InMemoryTaskMessageQueue(),
      },
    );
    const store = this.store;
    this.server.experimental.tasks.registerToolTask(
      WORK_TOOL,
      {
        description: 'Completes after `ms` milliseconds (counted from the gate release when the gate is closed).',
        inputSchema: { ms: z.number().min(0) },
        execution: { taskSupport: 'required' },
      },
      {
        createTask: async ({ ms }, extra) => {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval });
          this.created += 1;
          const result: CallToolResult = { content: [{ type: 'text', text: `worked ${ms} ms` }] };
          void (async () => {
            await this.gate;
            await sleep(ms);
            const current = await store.getTask(task.taskId, extra.sessionId);
            if (current === null || current.status !== 'working') return;
            if (notify) await extra.taskStore.storeTaskResult(task.taskId, 'completed', result);
            else await store.storeTaskResult(task.taskId, 'completed', result, extra.sessionId);
          })().catch(() => {});
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
  }

  /** Wraps `transport` to count traffic, then connects the server to it. */
  async connect(transport: Transport): Promise<void> {
    // Protocol.connect chains an onmessage that is already set, so this runs before the SDK's.
    transport.onmessage = (message: JSONRPCMessage) => this.received(message);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      this.sent(message);
      return send(message, options);
    };
    await this.server.connect(transport);
  }

  private received(message: JSONRPCMessage): void {
    if (!('method' in message)) return;
    const method = message.method;
    if (!('id' in message)) {
      bump(this.clientNotifications, method);
      return;
    }
    bump(this.requests, method);
    if (method === 'tasks/get') {
      const taskId = (message.params as { taskId?: unknown } | undefined)?.taskId;
      if (typeof taskId === 'string') {
        const t = now();
        const last = this.lastTouch.get(taskId);
        if (last !== undefined) this.minGap = Math.min(this.minGap, t - last);
        this.lastTouch.set(taskId, t);
      }
    }
  }

  private sent(message: JSONRPCMessage): void {
    if ('method' in message) {
      if (!('id' in message)) bump(this.serverNotifications, message.method);
      return;
    }
    if ('result' in message) {
      const task = (message.result as { task?: Partial<Task> }).task;
      if (task !== undefined && typeof task.taskId === 'string') this.lastTouch.set(task.taskId, now());
    }
  }

  /** Starts the clock of every task created so far and of every later one. */
  release(): void {
    this.openGate();
  }

  /** Forgets the counts and completions so far; with `gate`, holds new tasks' clocks until {@link BenchServer.release}. */
  reset(gate = false): void {
    this.requests.clear();
    this.clientNotifications.clear();
    this.serverNotifications.clear();
    this.lastTouch.clear();
    this.store.completedAt.clear();
    this.minGap = Infinity;
    this.created = 0;
    if (gate) this.closeGate();
    else this.release();
  }

  /** Holds the clock of tasks created from now on until {@link BenchServer.release}. */
  closeGate(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  stats(): ServerStats {
    return {
      requests: Object.fromEntries(this.requests),
      clientNotifications: Object.fromEntries(this.clientNotifications),
      serverNotifications: Object.fromEntries(this.serverNotifications),
      completedAt: Object.fromEntries(this.store.completedAt),
      minPollGapMs: Number.isFinite(this.minGap) ? this.minGap : null,
      created: this.created,
    };
  }

  async close(): Promise<void> {
    this.openGate();
    await this.server.close();
    this.store.cleanup();
  }
}
