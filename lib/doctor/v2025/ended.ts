/**
 * The ended task of the 2025-11-25 lifecycle probe (lifecycle.ts): still there, with its result, a
 * while later, its ttl not yet run out ([V10]); then a cancel of it is refused and changes neither
 * its status nor its result ([V23], [V5], [V15]).
 */
import type { Battery } from '../battery.js';
import { serverAnswered, type Reply } from '../reply.js';
import { durationOf, ms, seenTask, ttlWords, type SeenTask } from '../shape.js';
import { resultSummary, sameResult } from './observe.js';

/** The codes that say "no such task": -32602 ([V26]), and rmcp's resource-not-found -32002 (D19). */
function saysGone(reply: Reply): boolean {
  return !reply.ok && reply.kind === 'server' && (reply.code === -32602 || reply.code === -32002);
}

/**
 * [V10]: the ended task is still there (with its result) a while later, its ttl not yet run out.
 * Only the server's own "not found" says the task is gone; a read that got no answer (a local
 * timeout, a closed connection) or another error says nothing either way. A task that ended
 * cancelled proves nothing: a server may delete it at any time ([V25]).
 */
export async function checkRetention(
  b: Battery,
  taskId: string,
  ended: SeenTask,
  first: Reply | undefined,
): Promise<void> {
  const { rows, s } = b;
  const main = b.mainTask;
  if (main === undefined) return;
  await s.sleep(s.settings.retentionCheckMs);
  const ttl = durationOf(main.ttl);
  if (ttl !== undefined && s.now() - main.createdLocal >= ttl)
    return rows.untestable('ttl.honoured', `its ttl (${ttl} ms) ran out before the second read`);
  const read = await s.call('tasks/get', { taskId });
  // The age when the answer came: a slow answer may have taken the task past its ttl.
  const age = read.at - main.createdLocal;
  const later = `${ms(s.settings.retentionCheckMs)} after it ended`;
  if (saysGone(read)) {
    main.retained = false;
    s.ledger.gone(taskId);
    if (ended.status === 'cancelled')
      return rows.untestable(
        'ttl.honoured',
        `the task ended cancelled, and a server may delete a cancelled task at any time: gone ${later} (tasks/get answered ${s.describe(read)})`,
      );
    if (ttl !== undefined && age >= ttl)
      return rows.untestable('ttl.honoured', `its ttl (${ttl} ms) ran out before the second read was answered`);
    return rows.deviation(
      'ttl.honoured',
      `gone ${ms(age)} after it was created (${later}; tasks/get answered ${s.describe(read)}), although its ttl is ${ttlWords(main.ttl)}`,
      read.ok || read.code !== -32002 ? {} : { quirk: 'D19' },
    );
  }
  if (!read.ok)
    return rows.untestable('ttl.honoured', `the second read (${later}) got ${s.describe(read)}, not the task`);
  if (ended.status === 'cancelled')
    return rows.untestable(
      'ttl.honoured',
      `the task ended cancelled, and a server may delete a cancelled task at any time: still readable ${later}, which says nothing of its ttl`,
    );
  const again = await s.call('tasks/result', { taskId });
  if (first !== undefined && serverAnswered(again) && !sameResult(first, again)) {
    return rows.deviation(
      'ttl.honoured',
      `still listed ${ms(age)} after it was created, but its tasks/result now answers ${again.ok ? resultSummary(again.result) : s.describe(again)}`,
    );
  }
  rows.ok(
    'ttl.honoured',
    `still readable${first === undefined || !serverAnswered(again) ? '' : ', with its result,'} ${later} (ttl ${ttlWords(main.ttl)})`,
  );
}

/**
 * True when `reply` says the main task is gone and its ttl had run out when the answer came: a
 * server may forget a task then ([V11]), so the reply says nothing of the rule a check reads. The
 * task is then noted gone (the list probe no longer looks for it).
 */
function expiredBy(b: Battery, taskId: string, reply: Reply): boolean {
  const main = b.mainTask;
  const ttl = durationOf(main?.ttl);
  if (main === undefined || ttl === undefined || !saysGone(reply) || reply.at - main.createdLocal < ttl) return false;
  main.retained = false;
  b.s.ledger.gone(taskId);
  return true;
}

/** [V23], [V5], [V15]: a cancel of the ended task is refused, and changes nothing. */
export async function cancelEnded(
  b: Battery,
  taskId: string,
  ended: SeenTask,
  first: Reply | undefined,
): Promise<void> {
  const { rows, s } = b;
  const checks = ['cancel.completed', 'cancel.completed.status', 'cancel.completed.result'];
  if (!b.canCancel) return rows.rest(checks, 'the server declared no tasks.cancel');
  if (b.mainTask?.retained === false)
    return rows.rest(checks, 'the task was gone before the cancel (see ttl.honoured)');
  // A verdict on a single reply only when the server answered it: a local timeout or a closed
  // connection says nothing of the server.
  const cancel = await s.call('tasks/cancel', { taskId });
  const read = await s.call('tasks/get', { taskId });
  // [V11]: a server that applies a short ttl may forget the ended task before the cancel: a
  // -32602 then refuses nothing, and the task's status and result are not there to compare.
  if (expiredBy(b, taskId, read))
    return rows.rest(
      checks,
      `the task's ttl (${ttlWords(b.mainTask?.ttl)}) ran out and the server forgot it, as it may: after the cancel, tasks/get answered ${s.describe(read)}`,
    );
  if (cancel.ok) {
    const status = seenTask(cancel.result, s.wire).status;
    rows.deviation('cancel.completed', `accepted: the reply says ${JSON.stringify(status)}`);
  } else if (cancel.kind !== 'server') rows.untestable('cancel.completed', `the cancel got ${s.describe(cancel)}`);
  else if (cancel.code === -32602) rows.ok('cancel.completed', `refused: ${s.describe(cancel)}`, { quirk: 'D11' });
  else rows.deviation('cancel.completed', `refused with ${s.describe(cancel)}, not -32602`);
  if (!read.ok) {
    if (read.kind !== 'server')
      rows.untestable('cancel.completed.status', `after the cancel, tasks/get got ${s.describe(read)}`);
    else if (ended.status === 'cancelled' && saysGone(read))
      // [V25]: a cancelled task may be deleted at any time.
      rows.untestable(
        'cancel.completed.status',
        `the task ended cancelled, and a server may delete a cancelled task at any time: after the cancel, tasks/get answered ${s.describe(read)}`,
      );
    else rows.deviation('cancel.completed.status', `after the cancel, tasks/get answered ${s.describe(read)}`);
  } else {
    const status = seenTask(read.result, s.wire).status;
    if (status === ended.status) rows.ok('cancel.completed.status', `still ${status ?? ''} after the cancel`);
    else
      rows.deviation(
        'cancel.completed.status',
        `${ended.status ?? ''} before the cancel, ${status ?? 'unreadable'} after it`,
      );
  }
  if (ended.status === 'cancelled' || first === undefined)
    return rows.untestable('cancel.completed.result', 'no result was fetched before the cancel');
  const again = await s.call('tasks/result', { taskId }, { timeoutMs: s.settings.requestTimeoutMs });
  if (!serverAnswered(again))
    return rows.untestable('cancel.completed.result', `after the cancel, tasks/result got ${s.describe(again)}`);
  if (expiredBy(b, taskId, again))
    return rows.untestable(
      'cancel.completed.result',
      `the task's ttl (${ttlWords(b.mainTask?.ttl)}) ran out and the server forgot it, as it may: tasks/result answered ${s.describe(again)}`,
    );
  if (sameResult(first, again)) rows.ok('cancel.completed.result', 'tasks/result still returns the same result');
  else
    rows.deviation(
      'cancel.completed.result',
      `before the cancel ${first.ok ? resultSummary(first.result) : s.describe(first)}; after it ${again.ok ? resultSummary(again.result) : s.describe(again)}`,
    );
}
