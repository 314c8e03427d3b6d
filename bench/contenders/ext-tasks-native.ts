/**
 * Contender on the extension wire: `@modelcontextprotocol/ext-tasks` 0.2.2 in its native 2026
 * ("v2") mode, on an SDK v2 `Client` in the modern era, the way the tests drive it
 * (spec/harness/ext-server.spec.ts): `createTaskSessionFromClient(client, { rawDispatch,
 * v2RequestFraming })`, then `session.callTool()` and `execution.result()`. Its raw dispatch
 * goes over the client's own transport ({@link RawChannel}); notifications reach it through the
 * SDK client's fallback handler.
 *
 * ext-tasks consumes `notifications/tasks` but never subscribes to them, so the host does what
 * the extension asks of it ({@link HostSubscription}, the same rule as mcp-task-client's): one
 * `subscriptions/listen` naming the running tasks, replaced as tasks start.
 */
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type JsonRpcResponse,
} from '@modelcontextprotocol/ext-tasks/client';
import { WORK_TOOL } from '../server.js';
import { HostSubscription, RawChannel } from './raw-channel.js';
import type { ContenderFactory } from './types.js';

export const createExtTasksNative: ContenderFactory = async (connection) => {
  const channel = new RawChannel(connection);
  const subscription = new HostSubscription(channel);
  const errors: Error[] = [];
  const rawDispatch = async (request: unknown): Promise<JsonRpcResponse> => {
    const { method, params } = request as { method: string; params?: Record<string, unknown> };
    const reply = await channel.request(method, params ?? {}).reply;
    return reply.error !== undefined
      ? { kind: 'error', error: reply.error as never }
      : { kind: 'result', result: reply.result as never };
  };
  const session = createTaskSessionFromClient(connection.client as never, {
    endpointId: 'bench-ext-server',
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: '2026-07-28',
      clientInfo: { name: 'bench-client', version: '1.0.0' },
      clientCapabilities: {},
    },
    onError: (error: Error) => errors.push(error),
  });
  if (session.capabilities.execution !== true)
    throw new Error('ext-tasks does not see the tasks extension on this server');
  return {
    start: async (ms) => {
      const execution = await session.callTool(WORK_TOOL, { ms });
      if (execution.kind !== 'task') throw new Error('ext-tasks did not create a task');
      const taskId = execution.handle.taskId;
      subscription.add(taskId);
      return {
        taskId,
        result: execution.result().then((outcome) => {
          subscription.remove(taskId);
          return resultFromTaskOutcome(outcome);
        }),
      };
    },
    close: async () => {
      subscription.end();
      await session.close();
      channel.close();
      if (errors.length > 0)
        throw new Error(`ext-tasks reported ${errors.length} background error(s): ${errors[0]?.message}`);
    },
  };
};
