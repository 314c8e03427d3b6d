/**
 * The usual rig of the scripted tests: a scripted server on a ManualClock, a connected SDK client
 * and a TaskClient on the same clock, with every `error` event collected and a guard for [R27]
 * (a `notifications/cancelled` may only name a request still in progress; the SDK breaks it, [S4]).
 */
import { expect } from 'vitest';
import { TaskClient, type TaskClientOptions, type TaskError } from '../../lib/index.js';
import { ManualClock } from '../helpers.js';
import { connectScripted, type Json, type ScriptedPairOptions } from './scripted-server.js';

/** A CallToolResult with one text block. */
export const textResult = (value: string): Json => ({ content: [{ type: 'text', text: value }] });

/**
 * Builds the rig; `register` receives its cleanup (close everything, then check [R27]).
 * @param options scripted-server and SDK client options (`tools` defaults to one required tool `job`).
 * @param clock the clock of the server and the TaskClient (a ManualClock at 2026-01-01 by default).
 */
export async function scriptedTaskClient(
  register: (cleanup: () => Promise<void>) => void,
  options: ScriptedPairOptions = {},
  taskOptions: TaskClientOptions = {},
  clock = new ManualClock(),
) {
  const pair = await connectScripted({ tools: [{ name: 'job', taskSupport: 'required' }], now: clock.now, ...options });
  const tasks = new TaskClient(pair.client, { clock, ...taskOptions });
  const errors: TaskError[] = [];
  tasks.on('error', (error) => errors.push(error));
  const lateCancels: unknown[] = [];
  pair.server.onReceive = (entry) => {
    if (entry.method === 'notifications/cancelled' && pair.server.answered.has(entry.params.requestId as string)) {
      lateCancels.push(entry.params);
    }
  };
  register(async () => {
    await tasks.close();
    await pair.close();
    expect(lateCancels, 'notifications/cancelled for an already answered request ([R27])').toEqual([]);
  });
  return { ...pair, tasks, clock, errors, start: clock.now() };
}
