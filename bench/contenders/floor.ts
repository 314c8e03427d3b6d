/**
 * Reference, not a contender: a hand-written minimal requestor, to show what the server and the
 * SDK client cost on their own. Raw `client.request` calls; one `setTimeout` per task polling
 * `tasks/get` at the task's pollInterval (first poll one interval after creation); a terminal
 * `notifications/tasks/status` short-cuts to `tasks/result`. No validation beyond the SDK's
 * schemas, no retries, no deadlines, no cancellation: a lower bound, not a usable client.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { WORK_TOOL } from '../server.js';
import { now } from '../stats.js';
import type { ContenderFactory } from './types.js';

interface Entry {
  timer: ReturnType<typeof setTimeout> | undefined;
  fetching: boolean;
  resolve(at: number): void;
  reject(error: unknown): void;
}

const isTerminal = (status: Task['status']): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

export const createFloor: ContenderFactory = async (client, context) => {
  const entries = new Map<string, Entry>();

  const finish = (taskId: string, entry: Entry, status: Task['status']): void => {
    if (entry.fetching) return;
    entry.fetching = true;
    clearTimeout(entry.timer);
    if (status !== 'completed') {
      entries.delete(taskId);
      entry.reject(new Error(`task ${status}`));
      return;
    }
    client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema).then(
      () => {
        entries.delete(taskId);
        entry.resolve(now());
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
      client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema).then(
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

  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
    const entry = entries.get(notification.params.taskId);
    if (entry !== undefined && isTerminal(notification.params.status)) finish(notification.params.taskId, entry, notification.params.status);
  });

  return {
    id: 'floor',
    start: async (ms) => {
      const created = await client.request(
        { method: 'tools/call', params: { name: WORK_TOOL, arguments: { ms }, task: {} } },
        CreateTaskResultSchema,
      );
      const task = created.task;
      const done = new Promise<number>((resolve, reject) => {
        const entry: Entry = { timer: undefined, fetching: false, resolve, reject };
        entries.set(task.taskId, entry);
        poll(task.taskId, entry, task.pollInterval ?? context.pollInterval);
      });
      return { taskId: task.taskId, done };
    },
    close: async () => {
      for (const entry of entries.values()) clearTimeout(entry.timer);
      entries.clear();
      client.removeNotificationHandler('notifications/tasks/status');
    },
  };
};
