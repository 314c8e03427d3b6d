/**
 * Reference for the extension wire, not a contender: a hand-written minimal requestor. Raw
 * JSON-RPC requests on the connection's transport ({@link RawChannel}, no SDK request path, no
 * validation), the modern `_meta` envelope as one constant object, one `setTimeout` per task
 * polling `tasks/get` at its `pollIntervalMs` (first poll one interval after creation), and the
 * one subscription a host needs for `notifications/tasks` ({@link HostSubscription}); a completed
 * task's result rides on the notification or on `tasks/get`. No retries, deadlines or
 * cancellation: a lower bound, not a usable client.
 */
import { WORK_TOOL } from '../server.js';
import { HostSubscription, MODERN_ENVELOPE, RawChannel } from './raw-channel.js';
import type { ContenderFactory } from './types.js';

interface Entry {
  timer: ReturnType<typeof setTimeout> | undefined;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

type Json = Record<string, unknown>;

export const createExtFloor: ContenderFactory = async (connection, context) => {
  const channel = new RawChannel(connection);
  const subscription = new HostSubscription(channel);
  const entries = new Map<string, Entry>();

  const settle = (taskId: string, entry: Entry, task: Json): boolean => {
    const status = task.status;
    if (status === 'working' || status === 'input_required') return false;
    clearTimeout(entry.timer);
    entries.delete(taskId);
    subscription.remove(taskId);
    if (status === 'completed') entry.resolve(task.result);
    else entry.reject(new Error(`task ${String(status)}`));
    return true;
  };

  const poll = (taskId: string, entry: Entry, interval: number): void => {
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      channel.request('tasks/get', { taskId, _meta: MODERN_ENVELOPE }).reply.then(
        (answer) => {
          if (!entries.has(taskId)) return;
          if (answer.error !== undefined) {
            entries.delete(taskId);
            entry.reject(new Error(answer.error.message));
          } else if (!settle(taskId, entry, answer.result)) {
            poll(taskId, entry, (answer.result.pollIntervalMs as number | undefined) ?? interval);
          }
        },
        (error: unknown) => {
          entries.delete(taskId);
          entry.reject(error);
        },
      );
    }, interval);
  };

  channel.onNotification = (method, params) => {
    if (method === 'notifications/subscriptions/acknowledged') return true;
    if (method !== 'notifications/tasks') return false;
    const taskId = params.taskId as string;
    const entry = entries.get(taskId);
    if (entry !== undefined) settle(taskId, entry, params);
    return true;
  };

  return {
    start: async (ms) => {
      const answer = await channel.request('tools/call', { name: WORK_TOOL, arguments: { ms }, _meta: MODERN_ENVELOPE })
        .reply;
      if (answer.error !== undefined) throw new Error(answer.error.message);
      const created = answer.result;
      if (created.resultType !== 'task') throw new Error('the server did not create a task');
      const taskId = created.taskId as string;
      const result = new Promise<unknown>((resolve, reject) => {
        const entry: Entry = { timer: undefined, resolve, reject };
        entries.set(taskId, entry);
        subscription.add(taskId);
        poll(taskId, entry, (created.pollIntervalMs as number | undefined) ?? context.pollInterval);
      });
      return { taskId, result };
    },
    close: async () => {
      for (const entry of entries.values()) clearTimeout(entry.timer);
      entries.clear();
      subscription.end();
      channel.close();
    },
  };
};
