/**
 * What a 2025-11-25 server declares: `capabilities.tasks` and its sub-capabilities ([R1], [R4],
 * [R5]; D18) and each tool's `execution.taskSupport` ([R7]-[R9]). No request is sent but the
 * tools listing.
 */
import type { JsonObject } from '../../types.js';
import { TASKS_EXTENSION } from '../../wire/resolve.js';
import type { RowSink } from '../rows.js';
import { isObject, nameText } from '../shape.js';
import type { ListedTool } from '../tools.js';

/** What the declaration allows the battery to do. */
export interface Offer {
  /** Tool calls can run as tasks: the battery runs. */
  readonly offered: boolean;
  readonly canCancel: boolean;
  readonly canList: boolean;
  /** Why the battery does not run, when it does not. */
  readonly why: string;
}

const SUPPORT: ReadonlySet<unknown> = new Set(['forbidden', 'optional', 'required', undefined]);

/** The capability and tool rows; `named` is true when the caller named a task tool. */
export function checkOffer(
  caps: JsonObject | undefined,
  tools: readonly ListedTool[],
  rows: RowSink,
  named: boolean,
): Offer {
  const tasks = isObject(caps?.tasks) ? caps.tasks : undefined;
  const taskTools = tools.filter((tool) => tool.taskSupport === 'optional' || tool.taskSupport === 'required');
  checkSupport(tools, rows);
  const extensions = isObject(caps?.extensions) ? caps.extensions : undefined;
  const elsewhere = extensions?.[TASKS_EXTENSION] !== undefined && extensions[TASKS_EXTENSION] !== null;
  // [E20]: the extension listed on a 2025-11-25 session turns nothing on there.
  const extNote = elsewhere
    ? '; it lists the io.modelcontextprotocol/tasks extension, which applies only to 2026-07-28 sessions'
    : '';
  if (tasks === undefined) {
    const why = `no capabilities.tasks${extNote}`;
    if (taskTools.length > 0)
      rows.deviation('offer', `no capabilities.tasks, yet ${names(taskTools)} declare task support${extNote}`);
    else
      rows.untestable(
        'offer',
        `no capabilities.tasks and no tool declares task support: no 2025-11-25 tasks here${extNote}`,
      );
    return { offered: false, canCancel: false, canList: false, why };
  }
  const requests = isObject(tasks.requests) ? tasks.requests : undefined;
  const toolsCall = isObject(requests?.tools) && requests.tools.call !== undefined;
  const canCancel = tasks.cancel !== undefined;
  const canList = tasks.list !== undefined;
  const declared = ['list', 'cancel', 'requests.tools.call'].filter((key, i) => [canList, canCancel, toolsCall][i]);
  rows.ok(
    'offer',
    `capabilities.tasks declared: ${declared.length === 0 ? 'no sub-capability' : declared.join(', ')}${extNote}`,
    declared.length === 3 ? { quirk: 'D18' } : {},
  );
  if (!toolsCall) {
    if (taskTools.length > 0)
      rows.deviation(
        'caps.toolsCall',
        `tasks.requests.tools.call is missing, yet ${names(taskTools)} declare task support (A17)`,
      );
    else rows.ok('caps.toolsCall', 'tasks.requests.tools.call is missing, and no tool declares task support');
  } else {
    rows.ok(
      'caps.toolsCall',
      `tasks.requests.tools.call declared; ${taskTools.length} of ${tools.length} tools declare task support`,
    );
  }
  if (canCancel) rows.ok('caps.cancel', 'tasks.cancel declared');
  else rows.deviation('caps.cancel', 'tasks.cancel not declared: tasks cannot be cancelled');
  rows.ok(
    'caps.list',
    canList ? 'tasks.list declared' : 'tasks.list not declared (right for a server that cannot tell its clients apart)',
  );
  if (!toolsCall)
    return {
      offered: false,
      canCancel,
      canList,
      why: 'tasks.requests.tools.call is not declared, so no tool call may run as a task (R6)',
    };
  if (taskTools.length === 0 && !named)
    return { offered: true, canCancel, canList, why: 'no tool declares task support' };
  return { offered: true, canCancel, canList, why: '' };
}

/** The `taskSupport` row: the values as declared, an unknown one a deviation. */
function checkSupport(tools: readonly ListedTool[], rows: RowSink): void {
  const odd = tools.filter((tool) => !SUPPORT.has(tool.taskSupport));
  const count = (value: unknown): number => tools.filter((tool) => tool.taskSupport === value).length;
  const seen = `${tools.length} tools: ${count('required')} required, ${count('optional')} optional, ${count('forbidden')} forbidden, ${count(undefined)} without taskSupport`;
  if (odd.length === 0) rows.ok('tools.taskSupport', seen);
  else
    rows.deviation(
      'tools.taskSupport',
      `${seen}; unknown values: ${odd.map((tool) => `${nameText(tool.name)}=${JSON.stringify(tool.taskSupport)}`).join(', ')}`,
    );
}

/** Tool names for a sentence: `a, b and 3 more`. */
function names(tools: readonly ListedTool[]): string {
  const shown = tools.slice(0, 3).map((tool) => nameText(tool.name));
  return tools.length > 3 ? `${shown.join(', ')} and ${tools.length - 3} more` : shown.join(', ');
}
