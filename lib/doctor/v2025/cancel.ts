/**
 * The cancel probe of the 2025-11-25 wire: a task of the battery's tool cancelled as soon as it
 * exists must be cancelled in the reply ([V24]) and stay so once its work would have ended
 * ([V6]); a second cancel is refused with -32602 ([V23]); what `tasks/result` says of a cancelled
 * task is recorded (undefined by the spec, [A2]; D7). Then unknown task ids on `tasks/get`,
 * `tasks/result` and `tasks/cancel` ([V26]; D12).
 */
import { randomUUID } from '../../util/random.js';
import type { Battery } from '../battery.js';
import { serverAnswered } from '../reply.js';
import { isTerminal, ms, seenTask } from '../shape.js';
import { REQUESTED_TTL } from './lifecycle.js';
import { resultSummary } from './observe.js';

/** The checks of {@link cancel2025}. */
export const CANCEL_CHECKS = ['cancel.running', 'cancel.sticky', 'cancel.twice', 'cancel.result'] as const;
/** The check of {@link unknownIds}. */
export const UNKNOWN_CHECKS = ['unknown.id'] as const;

/** Runs the cancel probe. */
export async function cancel2025(b: Battery): Promise<void> {
  const { s, rows, tool } = b;
  if (!b.canCancel) return rows.rest(CANCEL_CHECKS, 'the server declared no tasks.cancel');
  const created = await s.call('tools/call', {
    name: tool.name,
    arguments: tool.arguments,
    task: { ttl: REQUESTED_TTL },
  });
  const raw =
    created.ok && typeof created.result.task === 'object' && created.result.task !== null
      ? (created.result.task as Record<string, unknown>)
      : undefined;
  const taskId = raw === undefined ? undefined : seenTask(raw, s.wire).taskId;
  if (taskId === undefined)
    return rows.rest(
      CANCEL_CHECKS,
      `no task was created (${!created.ok ? s.describe(created) : raw === undefined ? 'a plain result' : 'a CreateTaskResult without a usable taskId'})`,
    );
  s.ledger.track(taskId, tool.name, s, 'working');
  const cancel = await s.call('tasks/cancel', { taskId });
  if (!cancel.ok) {
    // A verdict only on the server's own answer: a local timeout or a closed connection says nothing.
    if (cancel.kind !== 'server') return rows.rest(CANCEL_CHECKS, `the cancel got ${s.describe(cancel)}`);
    const read = await s.call('tasks/get', { taskId });
    if (!serverAnswered(read))
      return rows.rest(
        CANCEL_CHECKS,
        `the cancel answered ${s.describe(cancel)}, and the read that would tell whether the task had ended got ${s.describe(read)}`,
      );
    const status = read.ok ? seenTask(read.result, s.wire).status : undefined;
    s.ledger.seen(taskId, status);
    // [V23]: a task that had ended, however (cancelled on its own too), is refused with -32602.
    if (cancel.code === -32602 && isTerminal(status)) {
      return rows.rest(
        CANCEL_CHECKS,
        `the task had already ended (${status}) when the cancel arrived: the tool is too quick to cancel`,
      );
    }
    rows.deviation(
      'cancel.running',
      `a cancel of a running task answered ${s.describe(cancel)}; the task is ${status ?? 'unreadable'}`,
    );
    return rows.rest(CANCEL_CHECKS, 'the task was not cancelled');
  }
  const replied = seenTask(cancel.result, s.wire).status;
  s.ledger.seen(taskId, replied);
  if (replied === 'cancelled') rows.ok('cancel.running', 'the reply is the task, cancelled', { quirk: 'D10' });
  else rows.deviation('cancel.running', `the reply says ${JSON.stringify(replied)}, not cancelled`);

  // [V6]: read it again once its work would have ended (the lifecycle probe timed the tool).
  const wait = Math.min(Math.max(b.toolMs ?? 500, 300), 3_000);
  await s.sleep(wait);
  const later = await s.call('tasks/get', { taskId });
  const status = later.ok ? seenTask(later.result, s.wire).status : undefined;
  if (!later.ok)
    rows.untestable(
      'cancel.sticky',
      `${ms(wait)} later tasks/get answered ${s.describe(later)} (a cancelled task may be deleted)`,
    );
  else if (status === 'cancelled') rows.ok('cancel.sticky', `still cancelled ${ms(wait)} later`);
  else rows.deviation('cancel.sticky', `cancelled, then ${JSON.stringify(status)} ${ms(wait)} later`);

  const result = await s.call('tasks/result', { taskId });
  const said = result.ok ? resultSummary(result.result) : s.describe(result);
  rows.ok('cancel.result', `tasks/result of the cancelled task: ${said}`, { quirk: 'D7' });

  const twice = await s.call('tasks/cancel', { taskId });
  if (!serverAnswered(twice)) rows.untestable('cancel.twice', `the second cancel got ${s.describe(twice)}`);
  else if (!twice.ok && twice.code === -32602)
    rows.ok('cancel.twice', `the second cancel was refused: ${s.describe(twice)}`, { quirk: 'D11' });
  else
    rows.deviation(
      'cancel.twice',
      twice.ok
        ? `the second cancel was accepted (${JSON.stringify(seenTask(twice.result, s.wire).status)})`
        : `the second cancel answered ${s.describe(twice)}, not -32602`,
    );
}

/** [V26] (2025) / [E25] (extension): unknown task ids on every task method. */
export async function unknownIds(b: Battery): Promise<void> {
  const { s, rows } = b;
  const taskId = `mcp-task-doctor-unknown-${randomUUID()}`;
  const methods =
    s.wire === '2025-11-25'
      ? ['tasks/get', 'tasks/result', 'tasks/cancel']
      : ['tasks/get', 'tasks/update', 'tasks/cancel'];
  if (s.wire === '2025-11-25' && !b.canCancel) methods.pop(); // [R5]: no tasks/cancel without tasks.cancel
  const seen: string[] = [];
  const wrong: string[] = [];
  const unanswered: string[] = [];
  for (const method of methods) {
    const params = method === 'tasks/update' ? { taskId, inputResponses: {} } : { taskId };
    const reply = await s.call(method, params);
    const said = reply.ok ? 'a result' : reply.kind === 'server' ? String(reply.code) : s.describe(reply);
    seen.push(`${method} ${said}`);
    // Only the server's own answer is judged: a local timeout or a closed connection says nothing.
    if (!serverAnswered(reply)) unanswered.push(method);
    else if (reply.ok || reply.code !== -32602) wrong.push(method);
  }
  const text = seen.join(', ');
  // The extension asks -32602 of tasks/get (MUST) and of tasks/update and tasks/cancel (SHOULD).
  const severity = s.wire === '2025-11-25' || wrong.includes('tasks/get') ? 'MUST' : 'SHOULD';
  if (wrong.length > 0) rows.deviation('unknown.id', text, { severity });
  else if (unanswered.length > 0) rows.untestable('unknown.id', `${text}: no answer to judge`);
  else rows.ok('unknown.id', text, { quirk: s.wire === '2025-11-25' ? 'D12' : undefined });
}
