/**
 * The input probe, on either wire, with a tool that asks for input. First the question is
 * answered (declined: the doctor never approves what a tool asks): on 2025-11-25 it must name its
 * task in related-task `_meta` ([V7]; D14) and come while the task is `input_required` ([V7]); on
 * the extension it rides on `tasks/get` as `inputRequests` ([E3]) and is answered with an
 * acknowledged `tasks/update` ([E5], [E24]). Either way the task then goes on ([V7], [E5]).
 * Then a second task's question is left unanswered for a while and the task cancelled: what the
 * server does is recorded (the spec leaves it open, [A3]; the extension repeats the key, [E4]).
 */
import type { Battery } from './battery.js';
import { ackFault } from './ext/ack.js';
import { follow, type Followed } from './follow.js';
import type { Question } from './inbound.js';
import { serverAnswered, type Reply } from './reply.js';
import type { Session } from './session.js';
import { isObject, ms, nameText, seenTask } from './shape.js';

/** The checks of {@link inputProbe} on each wire. */
export const INPUT_CHECKS = {
  '2025-11-25': ['input.status', 'input.tagged', 'input.resumes', 'input.unanswered'],
  'io.modelcontextprotocol/tasks': ['input.requests', 'input.update', 'input.resumes', 'input.unanswered'],
} as const;

/** Starts a task of the input tool; its id, or `undefined` (rows written). */
async function start(
  b: Battery,
  checks: readonly string[],
): Promise<{ taskId: string; first: ReturnType<typeof seenTask> } | undefined> {
  const { s, rows } = b;
  const tool = b.inputTool;
  if (tool === undefined) return void rows.rest(checks, 'no tool that asks for input named (inputTool option)');
  const params =
    s.wire === '2025-11-25'
      ? { name: tool.name, arguments: tool.arguments, task: { ttl: 300_000 } }
      : { name: tool.name, arguments: tool.arguments };
  const created = await s.call('tools/call', params);
  const raw = !created.ok
    ? undefined
    : s.wire === '2025-11-25'
      ? created.result.task
      : created.result.resultType === 'task'
        ? created.result
        : undefined;
  const first = isObject(raw) ? seenTask(raw, s.wire) : undefined;
  if (first?.taskId === undefined)
    return void rows.rest(
      checks,
      `${nameText(tool.name)} created no task (${created.ok ? 'a plain result' : s.describe(created)})`,
    );
  s.ledger.track(first.taskId, tool.name, s, first.status);
  return { taskId: first.taskId, first };
}

/** Questions that belong to `taskId`: tagged with it, or untagged while it ran (D14). */
function questionsOf(s: Session, taskId: string, since: number): Question[] {
  return s.questions.filter((q) => q.taskId === taskId || (q.taskId === undefined && q.at >= since));
}

/** Runs the input probe. */
export async function inputProbe(b: Battery): Promise<void> {
  const { s, rows } = b;
  const checks = INPUT_CHECKS[s.wire];
  if (!b.canAnswer)
    return rows.rest(checks, 'the client declared neither elicitation nor sampling, so the server may ask nothing');
  const since = s.now();
  const started = await start(b, checks);
  if (started === undefined) return;
  const followed = await follow(s, started.taskId, started.first, { until: b.until });
  const questions = questionsOf(s, started.taskId, since);
  const asked = questions.length > 0 || followed.statuses.includes('input_required');
  if (!asked)
    return rows.rest(
      checks,
      `${b.inputTool?.name ?? ''} asked nothing (its task went ${followed.statuses.join(' → ')})`,
    );
  if (s.wire === '2025-11-25') answered2025(b, started.taskId, followed, questions);
  else answeredExt(b, followed, questions);
  // What the doctor sent back: a declined answer to each question (2025), a tasks/update (extension).
  const sent =
    s.wire === '2025-11-25' ? questions.some((q) => q.answeredAt !== undefined) : followed.updates.length > 0;
  resumes(b, followed, sent);
  await unanswered(b);
}

/** 2025: was the question tagged, asked while `input_required`, delivered on the open `tasks/result`? */
function answered2025(b: Battery, taskId: string, followed: Followed, questions: readonly Question[]): void {
  const { s, rows } = b;
  const noteStatuses = s.notesOf(taskId).map((note) => note.status);
  const asking = questions.flatMap((q) => q.statusAtAsk);
  const wasInputRequired =
    asking.includes('input_required') ||
    followed.statuses.includes('input_required') ||
    noteStatuses.includes('input_required');
  if (questions.length === 0) {
    rows.deviation('input.tagged', 'the task went input_required, but no question reached the client');
    rows.untestable('input.status', 'no question arrived');
    return;
  }
  const untagged = questions.filter((q) => q.taskId === undefined);
  const open = s.openedResult(taskId);
  const how =
    open !== undefined && open.sentAt <= (questions[0]?.at ?? 0)
      ? 'while tasks/result was open'
      : 'before any tasks/result';
  const kinds = [...new Set(questions.map((q) => q.method))].join(', ');
  if (untagged.length === 0)
    rows.ok('input.tagged', `${kinds} named the task (related-task _meta), delivered ${how}`, { quirk: 'D14' });
  else
    rows.deviation(
      'input.tagged',
      `${untagged.length} of ${questions.length} questions (${kinds}) named no task; delivered ${how}`,
      { quirk: 'D14' },
    );
  if (wasInputRequired) rows.ok('input.status', 'input_required while it asked');
  else
    rows.deviation(
      'input.status',
      `the task was ${[...new Set(asking)].join(', ') || followed.statuses.join(' → ')} while it asked`,
      { quirk: 'D14' },
    );
}

/** Extension: did `inputRequests` ride on `tasks/get`, and was `tasks/update` acknowledged? */
function answeredExt(b: Battery, followed: Followed, questions: readonly Question[]): void {
  const { s, rows } = b;
  if (questions.length === 0)
    rows.deviation('input.requests', `${followed.bareInputRequired} reads showed input_required without inputRequests`);
  else if (followed.bareInputRequired > 0)
    rows.deviation(
      'input.requests',
      `inputRequests on some reads, but ${followed.bareInputRequired} input_required reads had none`,
    );
  else rows.ok('input.requests', `${questions.map((q) => q.method).join(', ')} in inputRequests`);
  const updates = followed.updates;
  if (updates.length === 0) return rows.untestable('input.update', 'no answer was sent');
  // [E24]: each reply the server gave is an empty acknowledgement; one it did not give (a local
  // timeout, a closed connection) is not judged.
  const answered = updates.filter(serverAnswered);
  const bad = answered.flatMap((reply) => {
    if (!reply.ok) return [s.describe(reply)];
    const fault = ackFault(reply.result);
    return fault === undefined ? [] : [`a reply with ${fault}`];
  });
  const lost = updates.length - answered.length;
  const unanswered = lost === 0 ? '' : `; ${lost} got no answer`;
  if (bad.length > 0) rows.deviation('input.update', `tasks/update answered ${bad.join(', ')}${unanswered}`);
  else if (answered.length === 0)
    rows.untestable('input.update', `no tasks/update was answered (${s.describe(updates[0] as Reply)})`);
  else rows.ok('input.update', `${answered.length} tasks/update acknowledged${unanswered}`);
}

/**
 * Once answered, the task goes on: back to working, or to its end ([V7], [E5]). Judged only when
 * an answer was sent (`sent`) and the task was read until the probe's bound: a task never
 * answered, or no longer readable, says nothing of what an answer does.
 */
function resumes(b: Battery, followed: Followed, sent: boolean): void {
  const { rows, s } = b;
  const after = followed.statuses.slice(followed.statuses.lastIndexOf('input_required') + 1);
  if (followed.statuses.includes('input_required') && after.length === 0) {
    if (!sent) rows.untestable('input.resumes', 'no answer was sent (no question reached the doctor)');
    else if (followed.stoppedBy !== undefined)
      rows.untestable(
        'input.resumes',
        `still input_required when reading the task stopped: tasks/get answered ${s.describe(followed.stoppedBy)}`,
      );
    else rows.deviation('input.resumes', `still input_required ${ms(s.settings.probeTimeoutMs)} after it was answered`);
  } else {
    rows.ok(
      'input.resumes',
      `after the answer: ${after.length === 0 ? followed.statuses.join(' → ') : after.join(' → ')}`,
    );
  }
}

/** A second task's question left unanswered, then the task cancelled. */
async function unanswered(b: Battery): Promise<void> {
  const { s, rows } = b;
  s.inputMode = 'hold';
  const since = s.now();
  const started = await start(b, ['input.unanswered']);
  if (started === undefined) return;
  const { taskId } = started;
  const asked = (): boolean => questionsOf(s, taskId, since).length > 0;
  const waiting = await follow(s, taskId, started.first, { until: b.until, stop: asked });
  if (!asked())
    return rows.untestable(
      'input.unanswered',
      waiting.terminal !== undefined
        ? `the second task ended ${waiting.terminal.status ?? ''} without asking`
        : 'the second task asked nothing in time',
    );
  const during = await follow(s, taskId, waiting.polls.at(-1)?.task ?? started.first, {
    until: Math.min(b.until, s.now() + s.settings.noAnswerMs),
  });
  const statuses = [...new Set(during.statuses)].join(' → ') || 'unread';
  const repeated = s.wire === 'io.modelcontextprotocol/tasks' ? keysRepeated(during) : '';
  if (during.terminal !== undefined)
    return rows.ok(
      'input.unanswered',
      `unanswered, the task ended ${during.terminal.status ?? ''} within ${ms(s.settings.noAnswerMs)}`,
    );
  const parts = [`unanswered for ${ms(s.settings.noAnswerMs)}: ${statuses}${repeated}`];
  if (b.canCancel) {
    const cancel = await s.call('tasks/cancel', { taskId });
    await s.sleep(200);
    const read = await s.call('tasks/get', { taskId });
    const status = read.ok ? seenTask(read.result, s.wire).status : undefined;
    s.ledger.seen(taskId, status);
    parts.push(
      `after tasks/cancel (${cancel.ok ? 'accepted' : s.describe(cancel)}) the task is ${status ?? 'unreadable'}`,
    );
    if (s.wire === '2025-11-25') {
      const question = questionsOf(s, taskId, since)[0];
      parts.push(
        question?.withdrawn === true
          ? 'the question was withdrawn (notifications/cancelled)'
          : 'the question was left open',
      );
      const open = s.openedResult(taskId)?.answered;
      parts.push(
        open === undefined ? 'the open tasks/result still waits' : `the open tasks/result answered ${s.describe(open)}`,
      );
    }
  }
  rows.ok('input.unanswered', parts.join('; '));
  s.release();
}

/** Extension: whether the unanswered key was listed again on every read ([E4]). */
function keysRepeated(during: Followed): string {
  const reads = during.polls.filter((poll) => poll.task?.status === 'input_required');
  const withKeys = reads.filter(
    (poll) => isObject(poll.task?.raw.inputRequests) && Object.keys(poll.task.raw.inputRequests).length > 0,
  );
  return reads.length === 0 ? '' : `, the question listed again on ${withKeys.length} of ${reads.length} reads`;
}
