/**
 * The lifecycle probe of the tasks extension: a call of the battery's tool that declares the
 * extension, answered with a flat `CreateTaskResult` ([E2]), readable at once ([E9]), its fields
 * ([E28], [E14]), three polls with no wait between them ([E14]), the notifications of a
 * `subscriptions/listen` ([E18]), the result riding on the terminal `tasks/get` ([E3]), a cancel
 * of the ended task that changes nothing ([E27]), and the same requests without the declaration:
 * no task for the call ([E2]), -32021 for `tasks/get` ([E11]).
 */
import { decodeExtStart, decodeGetTask } from '../../wire/ext/decode.js';
import { missingExtension, requiredCapabilities } from '../../wire/extension.js';
import type { Battery } from '../battery.js';
import { follow, pollValues, type Followed } from '../follow.js';
import { ackFault } from './ack.js';
import { awaitEndNote } from '../late-note.js';
import { REFUSED, refusedAsInvalid, serverAnswered, type Reply } from '../reply.js';
import type { Session } from '../session.js';
import { cut, durationOf, isObject, isTerminal, ms, precisionOf, seenTask, ttlWords, type SeenTask } from '../shape.js';

/** The checks this probe writes. */
export const EXT_LIFECYCLE_CHECKS = [
  'create.result',
  'create.durable',
  'create.fields',
  'create.pollInterval',
  'poll.fast',
  'notify.sent',
  'listen.reply',
  'result.inline',
  'cancel.completed',
  'create.undeclared',
  'undeclared.get',
] as const;

/** The flat task of an extension `tools/call` reply, or why there is none. */
export function extTask(s: Session, reply: Reply): SeenTask | string {
  if (!reply.ok) return `the call${serverAnswered(reply) ? ' answered' : ':'} ${s.describe(reply)}`;
  const type = reply.result.resultType;
  if (type === 'task') return seenTask(reply.result, s.wire);
  if (type === 'input_required')
    return 'the call asked for input before it made a task (multi round-trip), which the doctor does not answer';
  return 'the server ran the tool at once (a plain result): name a tool it runs as a task';
}

/** Runs the probe. */
export async function lifecycleExt(b: Battery): Promise<void> {
  const { s, rows, tool } = b;
  const sent = s.now();
  const created = await s.call('tools/call', { name: tool.name, arguments: tool.arguments });
  const task = extTask(s, created);
  if (typeof task === 'string') {
    // A verdict needs the server's own answer: no answer in time, or a lost connection, leaves the
    // row not testable.
    if (refusedAsInvalid(created)) return rows.rest(EXT_LIFECYCLE_CHECKS, `${task}: ${REFUSED}`);
    if (!created.ok && serverAnswered(created)) rows.deviation('create.result', task);
    return rows.rest(EXT_LIFECYCLE_CHECKS, task);
  }
  try {
    decodeExtStart((created as Extract<Reply, { ok: true }>).result, true);
  } catch (error) {
    // The server may run the task all the same: tracked, the clean-up reads it and cancels it, and
    // no row quotes its id ([V4]).
    if (task.taskId !== undefined) s.ledger.track(task.taskId, tool.name, s, undefined);
    rows.deviation('create.result', `a CreateTaskResult the library cannot read: ${(error as Error).message}`);
    return rows.rest(EXT_LIFECYCLE_CHECKS, 'the task cannot be read');
  }
  if (task.taskId === undefined) return rows.rest(EXT_LIFECYCLE_CHECKS, 'the CreateTaskResult has no taskId');
  const taskId = task.taskId;
  s.ledger.track(taskId, tool.name, s, task.status);
  b.mainTask = { taskId, createdLocal: created.at, ttl: task.ttl, retained: true };
  rows.ok(
    'create.result',
    `a CreateTaskResult (resultType "task", ${task.status ?? 'no status'}), ${ms(created.at - sent)} after the call`,
  );

  const durable = await s.call('tasks/get', { taskId });
  if (durable.ok) rows.ok('create.durable', 'an immediate tasks/get found it');
  // Only the server's own answer is judged: a local timeout or a closed connection says nothing.
  else if (!serverAnswered(durable))
    rows.untestable('create.durable', `an immediate tasks/get got ${s.describe(durable)}`);
  else rows.deviation('create.durable', `an immediate tasks/get answered ${s.describe(durable)}`);

  const listen = s.subscribe([taskId]);
  const fast: Reply[] = [];
  for (let i = 0; i < 3; i += 1) fast.push(await s.call('tasks/get', { taskId }));
  let followed: Followed;
  try {
    followed = await follow(s, taskId, task, { until: b.until });
    // The end's notification may come after the read that showed the end: not judged before.
    await awaitEndNote(s, taskId, followed.terminal !== undefined);
  } finally {
    listen.stop();
  }
  if (followed.terminalAt !== undefined) b.toolMs = followed.terminalAt - sent;
  const reads = [durable, ...fast, ...followed.polls.map((poll) => poll.reply)].filter(
    (reply): reply is Extract<Reply, { ok: true }> => reply.ok,
  );
  const tasks = [task, ...reads.map((reply) => seenTask(reply.result, s.wire))];
  checkFields(b, tasks, reads);
  checkPollInterval(b, tasks);
  const refused = fast.filter((reply) => !reply.ok);
  const unknown = refused.find((reply) => !reply.ok && reply.kind === 'server' && reply.code === -32602);
  if (refused.length === 0) rows.ok('poll.fast', '3 polls sent with no wait between them were all answered');
  else if (unknown !== undefined)
    rows.deviation(
      'poll.fast',
      `a poll faster than pollIntervalMs was answered ${s.describe(unknown)}, as if the task did not exist`,
      { rule: 'E25', severity: 'MUST' },
    );
  else
    rows.ok(
      'poll.fast',
      `polls faster than pollIntervalMs were refused (${refused.map((reply) => s.describe(reply)).join(', ')}): rate limiting is allowed`,
    );
  checkNotes(b, taskId, followed.terminal);
  checkListen(b, listen.reply);

  const ended = followed.terminal;
  if (ended === undefined) {
    const why = followed.timedOut
      ? `the task did not end within ${ms(s.settings.probeTimeoutMs)}`
      : `reading the task failed: ${s.describe(followed.stoppedBy as Reply)}`;
    rows.rest(['result.inline', 'cancel.completed'], why);
  } else {
    checkInline(b, ended);
    await cancelEnded(b, taskId, ended);
  }
  await undeclared(b, taskId);
}

/** [E28]: timestamps and ttlMs on the CreateTaskResult and every read; [E16]: each read is one the library can decode. */
function checkFields(b: Battery, tasks: readonly SeenTask[], reads: ReadonlyArray<Extract<Reply, { ok: true }>>): void {
  const { rows } = b;
  const badTime = tasks
    .flatMap((task) => [task.createdAt, task.lastUpdatedAt])
    .find((value) => precisionOf(value) === undefined);
  if (badTime !== undefined)
    return rows.deviation('create.fields', `a timestamp that is not ISO 8601: ${JSON.stringify(badTime)}`);
  const noTtl = tasks.find((task) => !task.hasTtl || !(task.ttl === null || durationOf(task.ttl) !== undefined));
  if (noTtl !== undefined)
    return rows.deviation('create.fields', noTtl.hasTtl ? `ttlMs ${ttlWords(noTtl.ttl)}` : 'no ttlMs key');
  for (const reply of reads) {
    try {
      decodeGetTask(reply.result);
    } catch (error) {
      return rows.deviation('create.fields', `a tasks/get reply the library cannot read: ${(error as Error).message}`);
    }
  }
  rows.ok(
    'create.fields',
    `ISO 8601 timestamps (${precisionOf(tasks[0]?.createdAt) ?? ''}), ttlMs ${ttlWords(tasks[0]?.ttl)}`,
  );
}

function checkPollInterval(b: Battery, tasks: readonly SeenTask[]): void {
  const values = pollValues(tasks);
  if (!values.some((value) => durationOf(value) !== undefined))
    return b.rows.deviation('create.pollInterval', 'no pollIntervalMs on the task');
  const shown = values.map((value) => (value === undefined ? 'none' : `${JSON.stringify(value)} ms`));
  b.rows.ok(
    'create.pollInterval',
    values.length === 1
      ? `${shown[0]}, unchanged over ${tasks.length} reads`
      : `changed during the task: ${shown.join(' then ')}`,
  );
}

/** [E18]: the notifications of the doctor's subscription. */
function checkNotes(b: Battery, taskId: string, ended: SeenTask | undefined): void {
  const notes = b.s.notesOf(taskId);
  if (notes.length === 0)
    return b.rows.deviation(
      'notify.sent',
      `none after subscriptions/listen, ${ended === undefined ? 'while the task ran' : 'until the task ended'}`,
    );
  const statuses = [...new Set(notes.map((note) => note.status ?? '?'))];
  const last = notes.find((note) => isTerminal(note.status));
  const carries =
    last === undefined
      ? ''
      : isObject(last.params.result) || isObject(last.params.error)
        ? '; the terminal one carries the outcome'
        : '; the terminal one leaves the outcome out (the library then reads tasks/get)';
  b.rows.ok('notify.sent', `for ${statuses.join(', ')} (${notes.length} in all)${carries}`);
}

/**
 * [E36]: the doctor's `subscriptions/listen` is answered, if at all, with an empty result whose
 * `resultType` is "complete" (absent reads as "complete"), never with a task (the session tracks
 * a task in its place as it comes, so that the clean-up cancels it).
 */
function checkListen(b: Battery, reply: Reply | undefined): void {
  const { s, rows } = b;
  if (reply === undefined) return rows.ok('listen.reply', 'open until the doctor ended it, with no task in its place');
  if (!reply.ok)
    return serverAnswered(reply)
      ? rows.ok('listen.reply', `refused: ${s.describe(reply)} (the library then polls)`)
      : rows.untestable('listen.reply', `the listen got ${s.describe(reply)}`);
  const type = reply.result.resultType;
  if (type === undefined || type === 'complete')
    return rows.ok(
      'listen.reply',
      `ended by the server ${ms(reply.at - reply.sentAt)} after it was opened, with an empty result`,
    );
  rows.deviation(
    'listen.reply',
    type === 'task'
      ? 'answered with a CreateTaskResult: a task nobody asked for'
      : `answered with resultType ${cut(JSON.stringify(type), 40)}`,
  );
}

/** [E3]: the terminal read carries the result (completed) or the error (failed). */
function checkInline(b: Battery, ended: SeenTask): void {
  const { rows } = b;
  const raw = ended.raw;
  if (ended.status === 'completed') {
    if (isObject(raw.result) && Array.isArray(raw.result.content))
      rows.ok('result.inline', 'the completed task carries its result');
    else
      rows.deviation(
        'result.inline',
        isObject(raw.result)
          ? 'the completed task carries a result without content'
          : 'the completed task carries no result',
      );
  } else if (ended.status === 'failed') {
    if (isObject(raw.error) && typeof raw.error.code === 'number')
      rows.ok('result.inline', `the failed task carries its error (${raw.error.code})`);
    else rows.deviation('result.inline', 'the failed task carries no JSON-RPC error');
  } else {
    rows.untestable('result.inline', `the task ended ${ended.status ?? ''}`);
  }
}

/** [E27]: a cancel of the ended task leaves its status and outcome. */
async function cancelEnded(b: Battery, taskId: string, ended: SeenTask): Promise<void> {
  const { s, rows } = b;
  const cancel = await s.call('tasks/cancel', { taskId });
  const read = await s.call('tasks/get', { taskId });
  const said = cancel.ok ? (ackFault(cancel.result) === undefined ? 'acknowledged' : 'answered') : s.describe(cancel);
  if (!read.ok) {
    if (!serverAnswered(read))
      return rows.untestable('cancel.completed', `after the cancel (${said}) tasks/get got ${s.describe(read)}`);
    const main = b.mainTask;
    const ttl = durationOf(main?.ttl);
    if (main !== undefined && ttl !== undefined && read.code === -32602 && read.at - main.createdLocal >= ttl) {
      // [E13], [E25]: after its ttlMs the server may delete the task; its status is then not there to compare.
      main.retained = false;
      s.ledger.gone(taskId);
      return rows.untestable(
        'cancel.completed',
        `its ttlMs (${ttl} ms) ran out and the server forgot it, as it may: after the cancel (${said}) tasks/get answered ${s.describe(read)}`,
      );
    }
    return rows.deviation('cancel.completed', `after the cancel (${said}) tasks/get answered ${s.describe(read)}`);
  }
  const after = seenTask(read.result, s.wire);
  const outcome = (task: SeenTask): string => JSON.stringify(task.raw.result ?? task.raw.error ?? null);
  if (after.status !== ended.status)
    rows.deviation(
      'cancel.completed',
      `the cancel (${said}) turned ${ended.status ?? ''} into ${after.status ?? 'nothing'}${outcome(after) === 'null' ? ', without its outcome' : ''}`,
    );
  else if (outcome(after) !== outcome(ended))
    rows.deviation(
      'cancel.completed',
      `still ${after.status ?? ''} after the cancel (${said}), but its outcome changed`,
    );
  else rows.ok('cancel.completed', `the cancel was ${said}; still ${after.status ?? ''}, with the same outcome`);
}

/** [E2], [E11]: the same requests without the extension's declaration. */
async function undeclared(b: Battery, taskId: string): Promise<void> {
  const { s, rows, tool } = b;
  const get = await s.call('tasks/get', { taskId }, { declare: false });
  // [E11]: -32021 is generic (any capability the request lacks): it is this refusal only when its
  // data.requiredCapabilities.extensions names the extension, as a client reads it.
  const named = !get.ok && missingExtension(get.code, get.data);
  // Only the server's own answer is judged: a local timeout or a closed connection says nothing.
  if (!serverAnswered(get)) rows.untestable('undeclared.get', `tasks/get got ${s.describe(get)}`);
  else if (named && get.code === -32021) rows.ok('undeclared.get', `refused: ${s.describe(get)}`);
  else if (!get.ok && get.code === -32021)
    rows.deviation(
      'undeclared.get',
      `refused with -32021, but its data.requiredCapabilities names ${cut(requiredCapabilities(get.data) ?? 'nothing')}, not the io.modelcontextprotocol/tasks extension`,
    );
  else if (named)
    // [E11]: the drafts' code; servers now keep -32003 for errors of their own ([E29]).
    rows.deviation('undeclared.get', `refused with the drafts' code: ${s.describe(get)}, not -32021`);
  else rows.deviation('undeclared.get', get.ok ? 'answered with the task' : `answered ${s.describe(get)}, not -32021`);
  const call = await s.call('tools/call', { name: tool.name, arguments: tool.arguments }, { declare: false });
  if (call.ok && call.result.resultType === 'task') {
    const orphan = seenTask(call.result, s.wire);
    if (orphan.taskId !== undefined) s.ledger.track(orphan.taskId, tool.name, s, orphan.status);
    return rows.deviation('create.undeclared', 'a call that did not declare the extension got a task');
  }
  if (!serverAnswered(call))
    return rows.untestable('create.undeclared', `a call that did not declare the extension got ${s.describe(call)}`);
  rows.ok(
    'create.undeclared',
    call.ok
      ? 'a call that did not declare the extension got a plain result'
      : `a call that did not declare the extension was refused: ${s.describe(call)}`,
  );
}
