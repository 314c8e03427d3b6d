/**
 * Contender: mcp-task-client, used as its README shows: `new TaskClient(client)`, then
 * `callToolAsTask` and `result()`, on whatever client the scenario connected: an SDK v1 `Client`
 * (`mcp-task-client` on the 2025-11-25 wire), an SDK v2 `Client` in the legacy era
 * (`mcp-task-client-v2`), or an SDK v2 `Client` in the modern era (`mcp-task-client` on the
 * extension wire).
 * `npm run bench` runs a compiled copy of lib/ and bench/ (bench/build.ts), so this loads the
 * compiled library that sits next to it.
 */
import * as Lib from '../../lib/index.js';
import { WORK_TOOL } from '../server.js';
import type { ContenderFactory } from './types.js';

export const createMcpTaskClient: ContenderFactory = async (connection) => {
  const tasks = new Lib.TaskClient(connection.client as Lib.McpClient);
  return {
    start: async (ms) => {
      const handle = await tasks.callToolAsTask(WORK_TOOL, { ms });
      if (handle.kind !== 'task' || handle.taskId === undefined)
        throw new Error('mcp-task-client did not create a task');
      return { taskId: handle.taskId, result: handle.result() };
    },
    close: () => tasks.close(),
  };
};
