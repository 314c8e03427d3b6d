/**
 * The lifecycle probe of the 2025-11-25 wire: one task of the battery's tool, followed from its
 * `CreateTaskResult` to its end. It reads the task's fields ([V5], [V9], [V10], [V13]), sends a
 * blocking `tasks/result` at once and times its answer against the task's end ([V16], [V19],
 * [V17]), sends three polls with no wait between them ([R13]), records the status notifications
 * ([V21]), reads the ended task again a while later ([V10]: kept for its ttl), then cancels it
 * and reads it once more: a completed task must keep its status and its result ([V23], [V5], [V15]).
 */
import { decodeStart } from '../../wire/v2025/decode.js';
import type { Battery } from '../battery.js';
import { follow, pollValues, type Followed } from '../follow.js';
import { serverAnswered, type OpenResult, type Reply } from '../reply.js';
import type { Session } from '../session.js';
import { durationOf, isObject, isTerminal, ms, precisionOf, seenTask, ttlWords, type SeenTask } from '../shape.js';
import { checkNotifications, checkResultMeta, resultSummary, sameResult } from './observe.js';

/** The checks this probe writes. */
export const LIFECYCLE_CHECKS = [
  'create.result',
  'create.status',
  'create.timestamps',
  'create.ttl',
  'create.pollInterval',
  'poll.fast',
  'notify.sent',
  'result.blocks',
  'result.meta',
  'result.shape',
  'ttl.honoured',
  'cancel.completed',
  'cancel.completed.status',
  'cancel.completed.result',
] as const;

/** The ttl the doctor asks for (5 minutes: long enough for any probe, short enough to be reaped). */
export const REQUESTED_TTL = 300_000;

/** Runs the probe. */
export async function lifecycle2025(b: Battery): Promise<void> {
  const { s, rows, tool } = b;
  const sent = s.now();
  const created = await s.call('tools/call', {
    name: tool.name,
    arguments: tool.arguments,
    task: { ttl: REQUESTED_TTL },
  });
  const task = createdTask(b, created);
  if (task === undefined) return;
  const taskId = task.taskId as string;
  s.ledger.track(taskId, tool.name, s, task.status);
  b.mainTask = { taskId, createdLocal: created.at, ttl: task.ttl, retained: true };
  rows.ok('create.result', `a CreateTaskResult, ${ms(created.at - sent)} after the call`);
  if (task.status === 'working') rows.ok('create.status', 'working');
  else rows.deviation('create.status', `the task started ${JSON.stringify(task.status)}`);

  // [V16]: asked at once, the blocking tasks/result may only answer once the task has ended.
  const blocking = s.openResult(taskId);
  const fast = await fastPolls(s, taskId);
  const followed = await follow(s, taskId, task, { until: b.until });
  const ended = followed.terminal;
  if (ended !== undefined && followed.terminalAt !== undefined) b.toolMs = followed.terminalAt - sent;

  const tasks: SeenTask[] = [
    task,
    ...fast.flatMap((r) => (r.ok ? [seenTask(r.result, s.wire)] : [])),
    ...followed.polls.flatMap((p) => (p.task === undefined ? [] : [p.task])),
  ];
  checkTimestamps(b, tasks);
  checkTtl(b, tasks);
  checkPollInterval(
    b,
    tasks,
    s.notesOf(taskId).map((note) => seenTask(note.params, s.wire)),
  );
  checkFastPolls(b, fast);
  checkNotifications(b, taskId, followed, blocking);
  await checkBlocking(b, taskId, followed, blocking, [...fast, ...followed.polls.map((poll) => poll.reply)]);
  if (ended === undefined) {
    const why = followed.timedOut
      ? `the task did not end within ${ms(s.settings.probeTimeoutMs)}`
      : `reading the task failed: ${s.describe(followed.stoppedBy as Reply)}`;
    rows.rest(['ttl.honoured', 'cancel.completed', 'cancel.completed.status', 'cancel.completed.result'], why);
    if (followed.stoppedBy !== undefined) b.mainTask.retained = false;
    return;
  }
  // The result to compare later answers with: only one the server gave.
  const first = blocking.answered !== undefined && serverAnswered(blocking.answered) ? blocking.answered : undefined;
  await checkRetention(b, taskId, ended, first);
  await cancelEnded(b, taskId, ended, first);
}

/** The task of a `tools/call` reply, or `undefined` (its rows then written). */
function createdTask(b: Battery, created: Reply): SeenTask | undefined {
  const { rows, s } = b;
  const skip = (why: string): undefined => {
    rows.rest(LIFECYCLE_CHECKS, why);
    return undefined;
  };
  if (!created.ok) {
    rows.deviation('create.result', `tools/call with task answered ${s.describe(created)}`);
    return skip('no task was created');
  }
  if (!isObject(created.result.task)) {
    rows.deviation('create.result', 'a plain result to a task-augmented call, not a CreateTaskResult', {
      quirk: 'D16',
    });
    return skip('no task was created');
  }
  try {
    decodeStart(created.result, true);
  } catch (error) {
    rows.deviation('create.result', `a CreateTaskResult the library cannot read: ${(error as Error).message}`);
    return skip('the task cannot be read');
  }
  return seenTask(created.result.task, s.wire);
}

/** Three `tasks/get` with no wait between them, right after creation ([R13]: a client should not). */
async function fastPolls(s: Session, taskId: string): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < 3; i += 1) replies.push(await s.call('tasks/get', { taskId }));
  return replies;
}

function checkFastPolls(b: Battery, replies: readonly Reply[]): void {
  const { rows, s } = b;
  const failed = replies.filter((reply) => !reply.ok);
  if (failed.length === 0)
    return rows.ok('poll.fast', `${replies.length} polls sent with no wait between them were all answered`);
  const unknown = failed.find((reply) => !reply.ok && reply.code === -32602);
  if (unknown !== undefined) {
    return rows.deviation(
      'poll.fast',
      `a poll faster than pollInterval was answered ${s.describe(unknown)}, as if the task did not exist`,
      { rule: 'V26', severity: 'MUST' },
    );
  }
  rows.ok(
    'poll.fast',
    `polls faster than pollInterval were refused (${failed.map((reply) => s.describe(reply)).join(', ')}): rate limiting is allowed`,
  );
}

function checkTimestamps(b: Battery, tasks: readonly SeenTask[]): void {
  const bad = tasks
    .flatMap((task) => [task.createdAt, task.lastUpdatedAt])
    .filter((value) => precisionOf(value) === undefined);
  if (bad.length > 0)
    return b.rows.deviation(
      'create.timestamps',
      `not ISO 8601: ${bad
        .slice(0, 2)
        .map((value) => JSON.stringify(value))
        .join(', ')}`,
    );
  const precision = precisionOf(tasks[0]?.createdAt) ?? 'unknown';
  b.rows.ok('create.timestamps', `ISO 8601, ${precision}`, precision === 'whole seconds' ? { quirk: 'D4' } : {});
}

function checkTtl(b: Battery, tasks: readonly SeenTask[]): void {
  const { rows } = b;
  const missing = tasks.filter((task) => !task.hasTtl || !(task.ttl === null || durationOf(task.ttl) !== undefined));
  if (missing.length > 0) {
    const where = missing[0] === tasks[0] ? 'the CreateTaskResult' : 'a tasks/get reply';
    return rows.deviation(
      'create.ttl',
      `${where} has ${missing[0]?.hasTtl === true ? `ttl ${ttlWords(missing[0]?.ttl)}` : 'no ttl key'}`,
      { quirk: missing[0]?.hasTtl === true ? undefined : 'D1' },
    );
  }
  const applied = tasks[0]?.ttl;
  const changed = tasks.some((task) => task.ttl !== applied);
  const how = applied === REQUESTED_TTL ? 'applies it' : `applies ${ttlWords(applied)} (a server may choose)`;
  rows.ok(
    'create.ttl',
    `asked ${REQUESTED_TTL} ms; the server ${how}${changed ? '; the ttl changed during the task' : ''}`,
  );
}

function checkPollInterval(b: Battery, tasks: readonly SeenTask[], notes: readonly SeenTask[]): void {
  const values = pollValues([...tasks, ...notes]);
  const numbers = values.filter((value): value is number => durationOf(value) !== undefined);
  if (numbers.length === 0)
    return b.rows.deviation('create.pollInterval', 'no pollInterval on the task', { quirk: 'D2' });
  const shown = values.map((value) => (value === undefined ? 'none' : `${JSON.stringify(value)} ms`));
  b.rows.ok(
    'create.pollInterval',
    values.length === 1
      ? `${shown[0]}, unchanged over ${tasks.length} reads`
      : `changed during the task: ${shown.join(' then ')}`,
  );
}

/**
 * The first read sent after `answer` arrived that still showed the task not terminal ([V16]).
 * Only a read SENT after the answer counts: one sent before may have been answered late by a
 * slow server, and says nothing of the moment the answer came.
 */
function runningAfter(s: Session, answer: Reply, reads: readonly Reply[]): string | undefined {
  for (const read of reads) {
    if (!read.ok || read.sentSeq <= answer.seq) continue;
    const status = seenTask(read.result, s.wire).status;
    if (!isTerminal(status)) return status ?? 'without a status';
  }
  return undefined;
}

/** [V16]: the blocking `tasks/result` answered after the end (D5: up to a poll interval late), not before. */
async function checkBlocking(
  b: Battery,
  taskId: string,
  followed: Followed,
  blocking: OpenResult,
  reads: readonly Reply[],
): Promise<void> {
  const { rows, s } = b;
  if (followed.terminal === undefined || followed.terminalAt === undefined) {
    // Only the server's own answer counts: a local timeout is no answer.
    const answer = blocking.answered;
    if (answer === undefined || !serverAnswered(answer))
      rows.ok(
        'result.blocks',
        `sent at once, still unanswered ${ms(s.now() - blocking.sentAt)} later while the task ran`,
      );
    else {
      const running = runningAfter(s, answer, reads);
      if (running !== undefined)
        rows.deviation(
          'result.blocks',
          `answered ${s.describe(answer)} while the task had not ended: a tasks/get sent after that answer still showed it ${running}`,
        );
      else
        rows.untestable(
          'result.blocks',
          `answered ${s.describe(answer)}; the doctor saw no end, and no read sent after the answer showed the task still running`,
        );
    }
    rows.rest(['result.meta', 'result.shape'], 'the task did not end');
    return;
  }
  const ended = Math.min(
    followed.terminalAt,
    ...s
      .notesOf(taskId)
      .filter((note) => isTerminal(note.status))
      .map((note) => note.at),
  );
  const wait = Math.max(2_000, 3 * (durationOf(followed.terminal.pollInterval) ?? 1_000));
  const reply = await Promise.race([
    blocking.reply,
    s.sleep(Math.max(0, ended + wait - s.now())).then(() => undefined),
  ]);
  if (reply === undefined) {
    rows.deviation('result.blocks', `sent at once, still unanswered ${ms(wait)} after the task ended`);
    rows.rest(['result.meta', 'result.shape'], 'tasks/result did not answer');
    return;
  }
  // Answered before the doctor saw the end: a tasks/get sent after the answer arrived tells
  // whether the task had ended by then (the reads of the probe, not one made now: that one
  // would always find the task ended).
  const running = serverAnswered(reply) ? runningAfter(s, reply, reads) : undefined;
  if (running !== undefined) {
    rows.deviation(
      'result.blocks',
      `answered ${ms(Math.max(0, ended - reply.at))} before the task ended: a tasks/get sent after the answer still showed it ${running}`,
    );
    checkShape(b, taskId, followed.terminal, reply);
    return;
  }
  const late = reply.at - ended;
  rows.ok(
    'result.blocks',
    late > 100
      ? `waited for the end; answered ${ms(late)} after it`
      : late < -100
        ? `answered ${ms(-late)} before a read showed the end, but no read sent after the answer showed the task still running`
        : 'waited for the end, and answered as it came',
    late > 100 ? { quirk: 'D5' } : {},
  );
  checkShape(b, taskId, followed.terminal, reply);
}

/** [V17], [V19]: the payload of the ended task. */
function checkShape(b: Battery, taskId: string, ended: SeenTask, reply: Reply): void {
  const { rows, s } = b;
  if (!reply.ok) {
    if (ended.status === 'completed')
      rows.deviation('result.shape', `a completed task's tasks/result answered ${s.describe(reply)}`);
    else rows.ok('result.shape', `the ${ended.status ?? ''} task's JSON-RPC error: ${s.describe(reply)}`);
    rows.untestable('result.meta', 'tasks/result answered an error');
    return;
  }
  checkResultMeta(b, taskId, reply.result);
  const summary = resultSummary(reply.result);
  if (Array.isArray(reply.result.content))
    rows.ok('result.shape', `a CallToolResult (${summary}) for the ${ended.status ?? ''} task`);
  else
    rows.deviation(
      'result.shape',
      `not a CallToolResult: ${summary}`,
      ended.status === 'failed' ? { quirk: 'D6' } : {},
    );
}

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
async function checkRetention(b: Battery, taskId: string, ended: SeenTask, first: Reply | undefined): Promise<void> {
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

/** [V23], [V5], [V15]: a cancel of the ended task is refused, and changes nothing. */
async function cancelEnded(b: Battery, taskId: string, ended: SeenTask, first: Reply | undefined): Promise<void> {
  const { rows, s } = b;
  const checks = ['cancel.completed', 'cancel.completed.status', 'cancel.completed.result'];
  if (!b.canCancel) return rows.rest(checks, 'the server declared no tasks.cancel');
  if (b.mainTask?.retained === false)
    return rows.rest(checks, 'the task was gone before the cancel (see ttl.honoured)');
  // A verdict on a single reply only when the server answered it: a local timeout or a closed
  // connection says nothing of the server.
  const cancel = await s.call('tasks/cancel', { taskId });
  if (cancel.ok) {
    const status = seenTask(cancel.result, s.wire).status;
    rows.deviation('cancel.completed', `accepted: the reply says ${JSON.stringify(status)}`);
  } else if (cancel.kind !== 'server') rows.untestable('cancel.completed', `the cancel got ${s.describe(cancel)}`);
  else if (cancel.code === -32602) rows.ok('cancel.completed', `refused: ${s.describe(cancel)}`, { quirk: 'D11' });
  else rows.deviation('cancel.completed', `refused with ${s.describe(cancel)}, not -32602`);
  const read = await s.call('tasks/get', { taskId });
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
  if (sameResult(first, again)) rows.ok('cancel.completed.result', 'tasks/result still returns the same result');
  else
    rows.deviation(
      'cancel.completed.result',
      `before the cancel ${first.ok ? resultSummary(first.result) : s.describe(first)}; after it ${again.ok ? resultSummary(again.result) : s.describe(again)}`,
    );
}
