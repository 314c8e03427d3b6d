/**
 * The blocking `tasks/result` of the 2025-11-25 lifecycle probe (lifecycle.ts): sent at once, it
 * may only answer once the task has ended ([V16]; D5: up to a poll interval late), told apart
 * from an early answer by the reads sent after it came; and the payload it answers with ([V17],
 * [V19]).
 */
import type { Battery } from '../battery.js';
import type { Followed } from '../follow.js';
import { serverAnswered, type OpenResult, type Reply } from '../reply.js';
import type { Session } from '../session.js';
import { durationOf, isTerminal, ms, seenTask, type SeenTask } from '../shape.js';
import { checkResultMeta, resultSummary } from './observe.js';

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
export async function checkBlocking(
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
  if (reply === undefined || (!serverAnswered(reply) && reply.at >= ended + wait)) {
    rows.deviation('result.blocks', `sent at once, still unanswered ${ms(wait)} after the task ended`);
    rows.rest(['result.meta', 'result.shape'], 'tasks/result did not answer');
    return;
  }
  if (!serverAnswered(reply)) {
    // Only the server's own answer is judged: the request's own bound (the probe's) or a closed
    // connection ended it before the wait for the answer was over.
    rows.untestable(
      'result.blocks',
      `tasks/result got ${s.describe(reply)} ${ms(Math.max(0, reply.at - ended))} after the task ended, before the ${ms(wait)} the doctor waits for its answer`,
    );
    rows.rest(['result.meta', 'result.shape'], `tasks/result got ${s.describe(reply)}`);
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
