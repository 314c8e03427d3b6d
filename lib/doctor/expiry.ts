/**
 * The expiry probe, on either wire: a task read again after its ttl ran out. The server may have
 * forgotten it (then -32602: [V11], [V12]; the extension may also fail it first, [E13]) or keep
 * it; any other error breaks [V26] / [E25]. Only when the ttl is short enough for the wait budget:
 * on 2025-11-25 the doctor asks for a ttl twice as long as the tool took (so that the task ends
 * well before it: a task that expires while it runs crashes some servers, D9); on the extension
 * the server's own ttlMs decides.
 */
import type { Battery } from './battery.js';
import { follow } from './follow.js';
import { durationOf, isObject, ms, seenTask, ttlWords } from './shape.js';

/** The check of {@link expiryProbe}. */
export const EXPIRY_CHECKS = ['expiry.read'] as const;

/** How long after its ttl the doctor reads a task. */
const MARGIN_MS = 1_000;

/** Runs the expiry probe. */
export async function expiryProbe(b: Battery): Promise<void> {
  const { s, rows } = b;
  const budget = s.settings.expiryBudgetMs;
  let taskId: string;
  let createdAt: number;
  let ttl: unknown;
  if (s.wire === '2025-11-25') {
    if (b.toolMs === undefined) return rows.untestable('expiry.read', 'the lifecycle probe could not time the tool');
    const asked = Math.ceil(Math.max(2 * b.toolMs + 1_000, 2_000) / 100) * 100;
    if (asked + MARGIN_MS > budget) {
      return rows.untestable(
        'expiry.read',
        `the tool runs ${ms(b.toolMs)}: a ttl it ends well within (${asked} ms) takes longer to wait out than the budget (${ms(budget)}, expiryBudgetMs)`,
      );
    }
    const created = await s.call('tools/call', {
      name: b.tool.name,
      arguments: b.tool.arguments,
      task: { ttl: asked },
    });
    const task = created.ok && isObject(created.result.task) ? seenTask(created.result.task, s.wire) : undefined;
    if (task?.taskId === undefined)
      return rows.untestable(
        'expiry.read',
        `no task was created (${created.ok ? 'a plain result' : s.describe(created)})`,
      );
    s.ledger.track(task.taskId, b.tool.name, s, task.status);
    ({ taskId } = task);
    createdAt = created.at;
    ttl = task.ttl;
    const applied = durationOf(ttl);
    if (applied === undefined || applied + MARGIN_MS > budget) {
      return rows.untestable(
        'expiry.read',
        `asked ${asked} ms; the server applies ${ttlWords(ttl)}, longer than the wait budget (${ms(budget)})`,
      );
    }
    const followed = await follow(s, taskId, task, { until: Math.min(b.until, createdAt + applied) });
    if (followed.terminal !== undefined && followed.terminal.status !== 'cancelled')
      await s.call('tasks/result', { taskId });
  } else {
    const main = b.mainTask;
    if (main === undefined) return rows.untestable('expiry.read', 'no task of the doctor to read');
    ({ taskId, ttl } = main);
    createdAt = main.createdLocal;
    const applied = durationOf(ttl);
    if (applied === undefined || applied + MARGIN_MS > budget) {
      return rows.untestable(
        'expiry.read',
        `the server applies ttlMs ${ttlWords(ttl)}, longer than the wait budget (${ms(budget)}, expiryBudgetMs)`,
      );
    }
  }
  const applied = durationOf(ttl) ?? 0;
  await s.sleep(createdAt + applied + MARGIN_MS - s.now());
  const read = await s.call('tasks/get', { taskId });
  const after = `${ms(read.at - createdAt)} after it was created (ttl ${ttlWords(ttl)})`;
  if (read.ok) {
    const status = seenTask(read.result, s.wire).status;
    s.ledger.seen(taskId, status);
    return rows.ok('expiry.read', `still readable ${after}, ${status ?? ''}: kept longer than its ttl`);
  }
  if (read.kind === 'server' && read.code === -32602) {
    s.ledger.gone(taskId);
    return rows.ok('expiry.read', `forgotten: tasks/get answered ${s.describe(read)} ${after}`, { quirk: 'D9' });
  }
  // Only the server's own answer is judged: a local timeout or a closed connection says nothing.
  if (read.kind !== 'server') return rows.untestable('expiry.read', `tasks/get got ${s.describe(read)} ${after}`);
  rows.deviation('expiry.read', `tasks/get answered ${s.describe(read)} ${after}, not -32602`, {
    rule: s.wire === '2025-11-25' ? 'V26' : 'E25',
    severity: 'MUST',
  });
}
