/**
 * The list probe of the 2025-11-25 wire: `tasks/list` read to its end (at most 50 pages; a cursor
 * that comes back, or 50 pages that bring no task not listed before, is a listing that never
 * ends, [V22]), the battery's task found in it ([V22]), and a made-up cursor refused with -32602
 * ([V26]). Cursors are passed back unchanged ([R23]).
 */
import type { Battery } from '../battery.js';
import { serverAnswered } from '../reply.js';
import { isObject } from '../shape.js';

/** The checks of {@link list2025}. */
export const LIST_CHECKS = ['list.paging', 'list.complete', 'list.badCursor'] as const;

const MAX_PAGES = 50;

/** Runs the list probe. */
export async function list2025(b: Battery): Promise<void> {
  const { s, rows } = b;
  if (!b.canList) return rows.rest(LIST_CHECKS, 'the server declared no tasks.list');
  const ids = new Set<string>();
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  let lastNewPage = 0;
  let endless: string | undefined;
  for (;;) {
    const reply = await s.call('tasks/list', cursor === undefined ? {} : { cursor });
    pages += 1;
    // Only the server's own answer is judged: a local timeout or a closed connection says nothing.
    if (!reply.ok && !serverAnswered(reply)) return rows.rest(LIST_CHECKS, `page ${pages} got ${s.describe(reply)}`);
    if (!reply.ok) {
      rows.deviation('list.paging', `page ${pages} answered ${s.describe(reply)}`);
      return rows.rest(LIST_CHECKS, 'the listing failed');
    }
    // D13: mcp-go answers tasks: null for no tasks.
    const tasks = reply.result.tasks === null ? [] : reply.result.tasks;
    if (!Array.isArray(tasks)) {
      rows.deviation('list.paging', `page ${pages} has no tasks array`);
      return rows.rest(LIST_CHECKS, 'the listing failed');
    }
    const before = ids.size;
    for (const task of tasks) if (isObject(task) && typeof task.taskId === 'string') ids.add(task.taskId);
    if (ids.size > before) lastNewPage = pages;
    const next = reply.result.nextCursor;
    if (next !== undefined && next !== null && typeof next !== 'string') {
      // [R23]: a cursor is an opaque string; the library refuses the page (TaskProtocolError).
      rows.deviation('list.paging', `page ${pages} has a nextCursor that is not a string (${typeof next})`);
      return rows.rest(LIST_CHECKS, 'the listing failed');
    }
    if (typeof next !== 'string' || next === '') break;
    if (cursors.has(next)) {
      endless = `a cursor came back on page ${pages + 1}`;
      break;
    }
    cursors.add(next);
    if (pages >= MAX_PAGES) {
      if (pages - lastNewPage >= 10)
        endless = `still a nextCursor after ${pages} pages, the last ${pages - lastNewPage} listing no task not listed before`;
      break;
    }
    cursor = next;
  }
  if (endless !== undefined) rows.deviation('list.paging', `the listing never ends: ${endless}`);
  else if (pages >= MAX_PAGES)
    rows.untestable('list.paging', `more than ${MAX_PAGES} pages of tasks: the doctor read no further`);
  else
    rows.ok('list.paging', `${ids.size} tasks in ${pages} page${pages === 1 ? '' : 's'}, then no nextCursor`, {
      quirk: 'D13',
    });

  const main = b.mainTask;
  if (main === undefined || !main.retained)
    rows.untestable('list.complete', 'no task of the doctor was known to be readable');
  else if (ids.has(main.taskId)) rows.ok('list.complete', "the doctor's task is listed");
  else if (endless !== undefined || pages >= MAX_PAGES)
    rows.untestable('list.complete', 'the listing was not read to its end');
  else {
    // [V22] binds only a task tasks/get still finds: the server may have forgotten it since it was
    // last read (after its ttl, [V11]; a cancelled one at any time, [V25]).
    const read = await s.call('tasks/get', { taskId: main.taskId });
    if (read.ok) rows.deviation('list.complete', "the doctor's task, readable with tasks/get, is not listed");
    else if (read.kind === 'server' && read.code === -32602) {
      main.retained = false;
      s.ledger.gone(main.taskId);
      rows.untestable(
        'list.complete',
        `the doctor's task is not listed, and tasks/get no longer finds it (${s.describe(read)})`,
      );
    } else rows.untestable('list.complete', `the doctor's task is not listed; tasks/get then got ${s.describe(read)}`);
  }

  const bogus = await s.call('tasks/list', { cursor: 'mcp-task-doctor:not-a-cursor' });
  if (!serverAnswered(bogus)) rows.untestable('list.badCursor', `a made-up cursor got ${s.describe(bogus)}`);
  else if (!bogus.ok && bogus.code === -32602) rows.ok('list.badCursor', `refused: ${s.describe(bogus)}`);
  else
    rows.deviation(
      'list.badCursor',
      bogus.ok
        ? 'a made-up cursor was answered with a page'
        : `a made-up cursor answered ${s.describe(bogus)}, not -32602`,
    );
}
