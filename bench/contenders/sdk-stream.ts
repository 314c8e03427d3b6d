/**
 * Contender 2: the SDK's own helper, `client.experimental.tasks.callToolStream` (SDK 1.32.x),
 * consumed as its documentation shows: iterate until a `result` or `error` message. The tool list
 * is fetched once first, because the helper only task-augments tools it knows from `tools/list`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { WORK_TOOL } from '../server.js';
import type { ContenderFactory, StartedTask } from './types.js';

export const createSdkStream: ContenderFactory = async (connection) => {
  const client = connection.client as Client;
  await client.listTools();
  return {
    start: (ms) =>
      new Promise<StartedTask>((resolveStart, rejectStart) => {
        let created: ((taskId: string) => void) | undefined;
        const result = (async (): Promise<unknown> => {
          const stream = client.experimental.tasks.callToolStream(
            { name: WORK_TOOL, arguments: { ms } },
            CallToolResultSchema,
          );
          for await (const message of stream) {
            switch (message.type) {
              case 'taskCreated':
                created?.(message.task.taskId);
                created = undefined;
                break;
              case 'taskStatus':
                break;
              case 'result':
                return message.result;
              case 'error':
                throw message.error;
            }
          }
          throw new Error('callToolStream ended without a result');
        })();
        created = (taskId) => resolveStart({ taskId, result });
        result.catch((error: unknown) => {
          if (created !== undefined) rejectStart(error);
        });
      }),
    close: async () => {},
  };
};
