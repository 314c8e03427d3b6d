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
import { follow, pollValues } from '../follow.js';
import { awaitEndNote } from '../late-note.js';
import { REFUSED, refusedAsInvalid, serverAnswered, type Reply } from '../reply.js';
import type { Session } from '../session.js';
import { durationOf, isObject, ms, precisionOf, seenTask, ttlWords, type SeenTask } from '../shape.js';
import { checkBlocking } from './blocking.js';
import { cancelEnded, checkRetention } from './ended.js';
import { checkNotifications } from './observe.js';

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
  // The end's notification may come after the read that showed the end: not judged before.
  await awaitEndNote(s, taskId, followed.terminal !== undefined);
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
    // A verdict needs the server's own answer: no answer in time, or a lost connection, leaves the
    // row not testable (its reason says why).
    if (!serverAnswered(created)) return skip(`tools/call with task: ${s.describe(created)}`);
    if (refusedAsInvalid(created)) return skip(`tools/call with task answered ${s.describe(created)}: ${REFUSED}`);
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
    // The server may run the task all the same: tracked, the clean-up reads it and cancels it, and
    // no row quotes its id ([V4]).
    const taskId = seenTask(created.result.task, s.wire).taskId;
    if (taskId !== undefined) s.ledger.track(taskId, b.tool.name, s, undefined);
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
