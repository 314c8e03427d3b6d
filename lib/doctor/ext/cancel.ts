/**
 * The cancel and failure probes of the tasks extension. A cancel is an empty acknowledgement
 * ([E24]) and cooperative: the task stops when it can, or ends another way ([E6]); a second
 * cancel, of a task that may have ended, is acknowledged the same way, not refused ([E6]). A tool that fails
 * ends `completed` with an `isError` result; `failed` is for JSON-RPC errors, carried inline
 * ([E15], [E3]).
 */
import type { Battery } from '../battery.js';
import { follow, intervalOf } from '../follow.js';
import { serverAnswered } from '../reply.js';
import { isObject, isTerminal, ms, nameText } from '../shape.js';
import { ackFault } from './ack.js';
import { extTask } from './lifecycle.js';

/** The checks of {@link cancelExt}. */
export const EXT_CANCEL_CHECKS = ['cancel.ack', 'cancel.running', 'cancel.twice'] as const;
/** The checks of {@link failureExt}. */
export const EXT_FAILURE_CHECKS = ['fail.status', 'fail.result'] as const;

/** Runs the cancel probe. */
export async function cancelExt(b: Battery): Promise<void> {
  const { s, rows, tool } = b;
  const task = extTask(s, await s.call('tools/call', { name: tool.name, arguments: tool.arguments }));
  if (typeof task === 'string' || task.taskId === undefined)
    return rows.rest(EXT_CANCEL_CHECKS, typeof task === 'string' ? task : 'no taskId');
  const taskId = task.taskId;
  s.ledger.track(taskId, tool.name, s, task.status);
  const cancel = await s.call('tasks/cancel', { taskId });
  const fault = cancel.ok ? ackFault(cancel.result) : undefined;
  if (cancel.ok && fault === undefined) rows.ok('cancel.ack', 'an empty acknowledgement (resultType "complete")');
  else if (fault !== undefined) rows.deviation('cancel.ack', `a reply with ${fault}, not an empty acknowledgement`);
  else if (!serverAnswered(cancel)) rows.untestable('cancel.ack', `the cancel got ${s.describe(cancel)}`);
  else rows.deviation('cancel.ack', `answered ${s.describe(cancel)}`);
  const acked = s.now();
  const within = Math.min(2_000 + 3 * intervalOf(task, 250), Math.max(0, b.until - s.now()));
  const followed = await follow(s, taskId, task, { until: s.now() + within });
  const ended = followed.terminal;
  // The server forgot the task (-32602) while the doctor followed it: after its ttlMs it may
  // ([E13]), and a forgotten id is an unknown one ([E25]).
  const stoppedBy = followed.stoppedBy;
  const gone =
    stoppedBy?.ok === false && stoppedBy.kind === 'server' && stoppedBy.code === -32602 ? stoppedBy : undefined;
  if (gone !== undefined)
    rows.ok(
      'cancel.running',
      `gone ${ms(Math.max(0, gone.at - acked))} after the acknowledgement (tasks/get answered ${s.describe(gone)}), not read as ended before`,
    );
  else if (ended === undefined)
    rows.ok(
      'cancel.running',
      `still ${followed.statuses.at(-1) ?? 'running'} ${ms(within)} after the acknowledgement (cancelling is cooperative)`,
    );
  else if (ended.status === 'cancelled')
    rows.ok(
      'cancel.running',
      `cancelled, ${ms(Math.max(0, (followed.terminalAt ?? acked) - acked))} after the acknowledgement`,
    );
  else rows.ok('cancel.running', `ended ${ended.status ?? ''} instead (allowed: the work finished first)`);
  // [E6]: a cancel of a task that already ended is acknowledged like any other (an error is only
  // for an unknown task id, [E25]).
  const twice = await s.call('tasks/cancel', { taskId });
  const again = twice.ok ? ackFault(twice.result) : undefined;
  const state = `the task was ${ended === undefined ? (followed.statuses.at(-1) ?? 'running') : (ended.status ?? 'ended')}`;
  if (twice.ok && again === undefined) rows.ok('cancel.twice', `the second cancel was acknowledged too (${state})`);
  else if (again !== undefined)
    rows.deviation(
      'cancel.twice',
      `the second cancel got a reply with ${again}, not an empty acknowledgement (${state})`,
    );
  else if (!serverAnswered(twice)) rows.untestable('cancel.twice', `the second cancel got ${s.describe(twice)}`);
  else if (gone !== undefined && !twice.ok && twice.code === -32602)
    rows.untestable(
      'cancel.twice',
      `the task was gone (tasks/get answered ${s.describe(gone)}), and the second cancel got -32602, as an unknown id does (E25)`,
    );
  else
    rows.deviation(
      'cancel.twice',
      `the second cancel was refused: ${s.describe(twice)} (${state}); it must be acknowledged like the first`,
    );
}

/** Runs the failure probe. */
export async function failureExt(b: Battery): Promise<void> {
  const { s, rows, failTool } = b;
  if (failTool === undefined) return rows.rest(EXT_FAILURE_CHECKS, 'no failing tool named (failTool option)');
  const created = await s.call('tools/call', { name: failTool.name, arguments: failTool.arguments });
  const task = extTask(s, created);
  if (typeof task === 'string' || task.taskId === undefined) {
    // A tool error answered at once is the extension's way too ([E15]): completed, isError.
    if (created.ok && created.result.isError === true)
      return rows.rest(EXT_FAILURE_CHECKS, `${nameText(failTool.name)} failed at once, without a task`);
    return rows.rest(EXT_FAILURE_CHECKS, typeof task === 'string' ? task : 'no taskId');
  }
  s.ledger.track(task.taskId, failTool.name, s, task.status);
  const followed = await follow(s, task.taskId, task, { until: b.until });
  const ended = followed.terminal;
  if (ended === undefined || !isTerminal(ended.status))
    return rows.rest(EXT_FAILURE_CHECKS, `the task did not end within ${ms(s.settings.probeTimeoutMs)}`);
  const result = isObject(ended.raw.result) ? ended.raw.result : undefined;
  if (ended.status === 'completed') {
    if (result?.isError !== true)
      return rows.rest(EXT_FAILURE_CHECKS, `${nameText(failTool.name)} did not fail: its task completed`);
    rows.ok('fail.status', 'completed, with an isError result');
    rows.ok('fail.result', 'the isError result rides on tasks/get');
  } else if (ended.status === 'failed') {
    const error = isObject(ended.raw.error) ? ended.raw.error : undefined;
    if (result?.isError === true)
      rows.deviation('fail.status', 'failed, with an isError result: failed is for JSON-RPC errors');
    else rows.ok('fail.status', 'failed (a JSON-RPC error)');
    if (error !== undefined && typeof error.code === 'number' && typeof error.message === 'string')
      rows.ok('fail.result', `its JSON-RPC error rides on tasks/get (${error.code})`);
    else rows.deviation('fail.result', 'the failed task carries no JSON-RPC error');
  } else {
    rows.rest(EXT_FAILURE_CHECKS, 'the task ended cancelled');
  }
}
