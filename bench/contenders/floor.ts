/**
 * Reference, not a contender: a hand-written minimal requestor for the 2025-11-25 wire, to show
 * what the server and the SDK client cost on their own. Raw `client.request` calls (with the
 * SDK's own result schemas: SDK v1's zod schemas, or SDK v2's `specTypeSchemas`); one
 * `setTimeout` per task polling `tasks/get` at the task's pollInterval (first poll one interval
 * after creation); a terminal `notifications/tasks/status` short-cuts to `tasks/result`. No
 * validation beyond the SDK's schemas, no retries, no deadlines, no cancellation: a lower bound,
 * not a usable client. The same code runs on an SDK v1 client (`floor`) and on an SDK v2 client
 * in the legacy era (`floor-v2`).
 */
import { WORK_TOOL } from '../server.js';
import type { BenchConnection } from '../transports.js';
import type { ContenderFactory } from './types.js';

interface Entry {
  timer: ReturnType<typeof setTimeout> | undefined;
  fetching: boolean;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

interface Task {
  readonly taskId: string;
  readonly status: string;
  readonly pollInterval?: number | undefined;
}

/** The few SDK calls the floor makes, over either major. */
interface SdkCalls {
  createTask(ms: number): Promise<{ task: Task }>;
  getTask(taskId: string): Promise<Task>;
  getResult(taskId: string): Promise<unknown>;
  onStatus(handler: (task: Task) => void): void;
  offStatus(): void;
}

interface RequestingClient {
  request(request: { method: string; params?: Record<string, unknown> }, schema: unknown): Promise<unknown>;
  setNotificationHandler(method: unknown, handler: (notification: { params: Task }) => void): void;
  removeNotificationHandler(method: string): void;
}

async function sdkCalls(connection: BenchConnection): Promise<SdkCalls> {
  const client = connection.client as RequestingClient;
  let schemas: { create: unknown; get: unknown; result: unknown; status: unknown };
  if (connection.sdk === 'v1') {
    const types = await import('@modelcontextprotocol/sdk/types.js');
    schemas = {
      create: types.CreateTaskResultSchema,
      get: types.GetTaskResultSchema,
      result: types.CallToolResultSchema,
      status: types.TaskStatusNotificationSchema,
    };
  } else {
    const { specTypeSchemas } = await import('@modelcontextprotocol/client');
    // SDK v2 keys notification handlers by method name.
    schemas = {
      create: specTypeSchemas.CreateTaskResult,
      get: specTypeSchemas.GetTaskResult,
      result: specTypeSchemas.CallToolResult,
      status: 'notifications/tasks/status',
    };
  }
  return {
    createTask: async (ms) =>
      (await client.request(
        { method: 'tools/call', params: { name: WORK_TOOL, arguments: { ms }, task: {} } },
        schemas.create,
      )) as { task: Task },
    getTask: async (taskId) => (await client.request({ method: 'tasks/get', params: { taskId } }, schemas.get)) as Task,
    getResult: (taskId) => client.request({ method: 'tasks/result', params: { taskId } }, schemas.result),
    onStatus: (handler) =>
      client.setNotificationHandler(schemas.status, (notification) => handler(notification.params)),
    offStatus: () => client.removeNotificationHandler('notifications/tasks/status'),
  };
}

const isTerminal = (status: string): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

export const createFloor: ContenderFactory = async (connection, context) => {
  const sdk = await sdkCalls(connection);
  const entries = new Map<string, Entry>();

  const finish = (taskId: string, entry: Entry, status: string): void => {
    if (entry.fetching) return;
    entry.fetching = true;
    clearTimeout(entry.timer);
    if (status !== 'completed') {
      entries.delete(taskId);
      entry.reject(new Error(`task ${status}`));
      return;
    }
    sdk.getResult(taskId).then(
      (result) => {
        entries.delete(taskId);
        entry.resolve(result);
      },
      (error: unknown) => {
        entries.delete(taskId);
        entry.reject(error);
      },
    );
  };

  const poll = (taskId: string, entry: Entry, interval: number): void => {
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      sdk.getTask(taskId).then(
        (task) => {
          if (isTerminal(task.status)) finish(taskId, entry, task.status);
          else if (!entry.fetching) poll(taskId, entry, task.pollInterval ?? interval);
        },
        (error: unknown) => {
          entries.delete(taskId);
          entry.reject(error);
        },
      );
    }, interval);
  };

  sdk.onStatus((task) => {
    const entry = entries.get(task.taskId);
    if (entry !== undefined && isTerminal(task.status)) finish(task.taskId, entry, task.status);
  });

  return {
    start: async (ms) => {
      const { task } = await sdk.createTask(ms);
      const result = new Promise<unknown>((resolve, reject) => {
        const entry: Entry = { timer: undefined, fetching: false, resolve, reject };
        entries.set(task.taskId, entry);
        poll(task.taskId, entry, task.pollInterval ?? context.pollInterval);
      });
      return { taskId: task.taskId, result };
    },
    close: async () => {
      for (const entry of entries.values()) clearTimeout(entry.timer);
      entries.clear();
      sdk.offStatus();
    },
  };
};
