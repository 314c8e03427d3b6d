/**
 * Reading what a 2025-11-25 server sent about a task beside the replies: its status notifications
 * ([V21]) and the related-task `_meta` of its `tasks/result` ([V19]), and comparing payloads.
 */
import { decodeTask, RELATED_TASK_KEY } from '../../wire/v2025/decode.js';
import type { Battery } from '../battery.js';
import type { Followed } from '../follow.js';
import type { OpenResult, Reply } from '../reply.js';
import { isObject, isTerminal, ms } from '../shape.js';
import type { JsonObject } from '../../types.js';

/** Keys every notification must carry: it is the full Task ([V21]). */
const TASK_KEYS = ['taskId', 'status', 'createdAt', 'lastUpdatedAt', 'ttl'] as const;

/** The notification row of a followed task. */
export function checkNotifications(
  b: Battery,
  taskId: string,
  followed: Followed,
  blocking: OpenResult | undefined,
): void {
  const { rows, s } = b;
  const notes = s.notesOf(taskId);
  if (notes.length === 0) {
    const until = followed.terminal !== undefined ? 'until the task ended' : `in ${ms(s.settings.probeTimeoutMs)}`;
    return rows.deviation('notify.sent', `none, for any status, ${until}`);
  }
  const statuses: string[] = [];
  for (const note of notes)
    if (note.status !== undefined && !statuses.includes(note.status)) statuses.push(note.status);
  const parts = [`for ${statuses.join(', ')} (${notes.length} in all)`];
  // [V21]: a notification may come before the CreateTaskResult; it counts like the others.
  const early = notes.filter((note) => note.early === true).length;
  if (early > 0) parts.push(`${early === notes.length ? 'all' : early} before the CreateTaskResult`);
  const last = notes.find((note) => isTerminal(note.status));
  if (last !== undefined && followed.terminalAt !== undefined) {
    const byRead = last.at - followed.terminalAt;
    parts.push(
      `the ${last.status ?? ''} one came ${ms(Math.abs(byRead))} ${byRead <= 0 ? 'before' : 'after'} a read showed the end`,
    );
    const answer = blocking?.answered;
    if (answer !== undefined)
      parts.push(
        `${ms(Math.abs(last.at - answer.at))} ${last.at <= answer.at ? 'before' : 'after'} tasks/result answered`,
      );
  } else if (followed.terminal !== undefined) {
    parts.push('none for the end');
  }
  const partial = notes.filter((note) => !isFullTask(note.params));
  if (partial.length > 0) {
    const missing = TASK_KEYS.filter((key) => !Object.hasOwn(partial[0]?.params ?? {}, key));
    return rows.deviation(
      'notify.sent',
      `${parts.join('; ')}; ${partial.length} not the full Task (missing ${missing.join(', ') || 'valid fields'})`,
      { severity: 'SHOULD' },
    );
  }
  rows.ok('notify.sent', parts.join('; '), statuses.length > 0 && statuses.every(isTerminal) ? { quirk: 'D8' } : {});
}

/** True when a notification carries a whole, readable Task. */
function isFullTask(params: JsonObject): boolean {
  if (TASK_KEYS.some((key) => !Object.hasOwn(params, key))) return false;
  try {
    decodeTask(params, 'notifications/tasks/status');
    return true;
  } catch {
    return false;
  }
}

/** The related-task `_meta` of a `tasks/result` reply ([V19]). */
export function checkResultMeta(b: Battery, taskId: string, result: JsonObject): void {
  const related = isObject(result._meta) ? result._meta[RELATED_TASK_KEY] : undefined;
  if (related === undefined) return b.rows.deviation('result.meta', 'no related-task _meta on the tasks/result reply');
  if (!isObject(related) || related.taskId !== taskId)
    return b.rows.deviation('result.meta', 'the related-task _meta names another task');
  b.rows.ok('result.meta', 'related-task _meta names the task');
}

/** A payload in a few words: `1 content block, isError: true`, `only _meta, no content`. */
export function resultSummary(result: JsonObject): string {
  if (!Array.isArray(result.content)) {
    const keys = Object.keys(result).filter((key) => key !== '_meta');
    return keys.length === 0 ? 'only _meta, no content' : `no content (keys ${keys.slice(0, 4).join(', ')})`;
  }
  const blocks = `${result.content.length} content block${result.content.length === 1 ? '' : 's'}`;
  return result.isError === true ? `${blocks}, isError: true` : blocks;
}

/** True when two `tasks/result` replies carry the same payload (`_meta` aside) or the same error code. */
export function sameResult(a: Reply, b: Reply): boolean {
  if (!a.ok || !b.ok) return !a.ok && !b.ok && a.code === b.code;
  const strip = (result: JsonObject): string => JSON.stringify({ ...result, _meta: undefined });
  return strip(a.result) === strip(b.result);
}
