/**
 * Contender 3: `@modelcontextprotocol/ext-tasks` (the official task client) in 2025-11-25 mode,
 * driven through {@link V1ClientSessionPort} over the SDK v1 client: `withTasks(port)`, then
 * `session.callTool()` and `execution.result()` (unwrapped with `resultFromTaskOutcome`).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { resultFromTaskOutcome, withTasks } from '@modelcontextprotocol/ext-tasks/client';
import { WORK_TOOL } from '../server.js';
import { V1ClientSessionPort } from './ext-tasks-port.js';
import type { ContenderFactory } from './types.js';

export const createExtTasks: ContenderFactory = async (connection) => {
  const port = new V1ClientSessionPort(connection.client as Client, 'bench-server');
  const errors: Error[] = [];
  const session = withTasks(port, { onError: (error) => errors.push(error) });
  return {
    start: async (ms) => {
      const execution = await session.callTool(WORK_TOOL, { ms });
      if (execution.kind !== 'task') throw new Error('ext-tasks did not create a task');
      return {
        taskId: execution.handle.taskId,
        result: execution.result().then(resultFromTaskOutcome),
      };
    },
    close: async () => {
      await session.close();
      port[Symbol.dispose]();
      if (errors.length > 0)
        throw new Error(`ext-tasks reported ${errors.length} background error(s): ${errors[0]?.message}`);
    },
  };
};
