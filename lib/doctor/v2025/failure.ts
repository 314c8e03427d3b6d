/**
 * The failure probe of the 2025-11-25 wire, with a tool that fails: the task ends `failed`
 * ([V18]), says why in `statusMessage` ([V18]), and its `tasks/result` is the tool's `isError`
 * result or a JSON-RPC error, not a bare `_meta` ([V17]; D6).
 */
import type { Battery } from '../battery.js';
import { follow } from '../follow.js';
import { isObject, ms, nameText, seenTask } from '../shape.js';
import { REQUESTED_TTL } from './lifecycle.js';
import { resultSummary } from './observe.js';

/** The checks of {@link failure2025}. */
export const FAILURE_CHECKS = ['fail.status', 'fail.message', 'fail.result'] as const;

/** Runs the failure probe. */
export async function failure2025(b: Battery): Promise<void> {
  const { s, rows, failTool } = b;
  if (failTool === undefined) return rows.rest(FAILURE_CHECKS, 'no failing tool named (failTool option)');
  const created = await s.call('tools/call', {
    name: failTool.name,
    arguments: failTool.arguments,
    task: { ttl: REQUESTED_TTL },
  });
  if (!created.ok || !isObject(created.result.task)) {
    return rows.rest(
      FAILURE_CHECKS,
      `${nameText(failTool.name)} created no task (${created.ok ? resultSummary(created.result) : s.describe(created)})`,
    );
  }
  const task = seenTask(created.result.task, s.wire);
  if (task.taskId === undefined) return rows.rest(FAILURE_CHECKS, 'the CreateTaskResult has no taskId');
  s.ledger.track(task.taskId, failTool.name, s, task.status);
  const followed = await follow(s, task.taskId, task, { until: b.until });
  const ended = followed.terminal;
  if (ended === undefined) {
    return rows.rest(
      FAILURE_CHECKS,
      followed.timedOut
        ? `the task did not end within ${ms(s.settings.probeTimeoutMs)}`
        : 'the task could not be read to its end',
    );
  }
  const payload = await s.call('tasks/result', { taskId: task.taskId });
  const isErrorResult = payload.ok && payload.result.isError === true;
  if (ended.status === 'cancelled') return rows.rest(FAILURE_CHECKS, 'the task ended cancelled');
  if (ended.status === 'completed' && !isErrorResult)
    return rows.rest(FAILURE_CHECKS, `${nameText(failTool.name)} did not fail: its task completed`);

  if (ended.status === 'failed') rows.ok('fail.status', 'failed');
  else rows.deviation('fail.status', 'completed, with an isError result');

  if (ended.status === 'failed') {
    if (ended.statusMessage !== undefined && ended.statusMessage !== '')
      rows.ok('fail.message', 'a statusMessage says why');
    else rows.deviation('fail.message', 'no statusMessage on the failed task');
  } else {
    rows.untestable('fail.message', 'the task did not end failed');
  }

  if (!payload.ok) {
    if (payload.kind === 'server') rows.ok('fail.result', `a JSON-RPC error: ${s.describe(payload)}`, { quirk: 'D6' });
    else rows.untestable('fail.result', `tasks/result failed: ${s.describe(payload)}`);
  } else if (Array.isArray(payload.result.content)) {
    rows.ok('fail.result', `the tool's result (${resultSummary(payload.result)})`, { quirk: 'D6' });
  } else {
    rows.deviation('fail.result', `neither a result nor an error: ${resultSummary(payload.result)}`, { quirk: 'D6' });
  }
}
