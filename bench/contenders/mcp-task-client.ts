/**
 * Contender 1: mcp-task-client, used as its README shows: `new TaskClient(client)`, then
 * `callToolAsTask` and `result()`.
 *
 * The library is loaded from `BENCH_LIB` when set: `npm run bench` points it at a snapshot of lib/
 * taken when the run starts, so every scenario of one run measures the same code even while lib/
 * is being edited. Otherwise it is the working tree's lib/.
 */
import { pathToFileURL } from 'node:url';
import type * as Lib from '../../lib/index.js';
import { WORK_TOOL } from '../server.js';
import { now } from '../stats.js';
import type { ContenderFactory } from './types.js';

/** Loads the library under test (see the module comment). */
export async function loadLibrary(): Promise<typeof Lib> {
  const override = process.env.BENCH_LIB;
  return (await import(override === undefined ? '../../lib/index.js' : pathToFileURL(override).href)) as typeof Lib;
}

export const createMcpTaskClient: ContenderFactory = async (client) => {
  const { TaskClient } = await loadLibrary();
  const tasks = new TaskClient(client);
  return {
    id: 'mcp-task-client',
    start: async (ms) => {
      const handle = await tasks.callToolAsTask(WORK_TOOL, { ms });
      if (handle.kind !== 'task' || handle.taskId === undefined) throw new Error('mcp-task-client did not create a task');
      return { taskId: handle.taskId, done: handle.result().then(() => now()) };
    },
    close: () => tasks.close(),
  };
};
