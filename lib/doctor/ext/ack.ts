/**
 * The extension's empty acknowledgement ([E24]): the reply to `tasks/update` and `tasks/cancel`
 * is a result whose `resultType` is `"complete"` and that carries nothing of the task (the spec
 * says MUST for both methods; a missing `resultType` is tolerated only on the result embedded in
 * a `tasks/get` reply, [E16], never on an acknowledgement). The library's own client accepts `{}`
 * too, for robustness; the doctor reports it.
 */
import type { JsonObject } from '../../port/port.js';

/** The fields of a task, which an acknowledgement must not carry. */
const TASK_FIELDS = ['taskId', 'status', 'result', 'error', 'inputRequests'] as const;

/**
 * What keeps `result` from being an empty acknowledgement, in a few words (`no resultType and the
 * task's taskId, status`); `undefined` for one that is.
 */
export function ackFault(result: JsonObject): string | undefined {
  const faults: string[] = [];
  const type = result.resultType;
  if (type !== 'complete') faults.push(type === undefined ? 'no resultType' : `resultType ${JSON.stringify(type)}`);
  const fields = TASK_FIELDS.filter((field) => field in result);
  if (fields.length > 0) faults.push(`the task's ${fields.join(', ')}`);
  return faults.length === 0 ? undefined : faults.join(' and ');
}
