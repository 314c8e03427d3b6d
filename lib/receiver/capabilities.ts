/**
 * The client capabilities a receiver needs ([R1], §5 "Client-side declaration"): for each kind it
 * serves, the plain capability (`elicitation`, `sampling`: the server sends such requests at all)
 * and its task augmentation (`tasks.requests.elicitation.create`,
 * `tasks.requests.sampling.createMessage`). `tasks.list` and `tasks.cancel` are optional: the
 * receiver serves `tasks/list` and `tasks/cancel` only when they were declared ([R5]).
 */
import type { JsonObject } from '../port/port.js';
import type { ReceiverKind } from './types.js';
import { isObject, objectAt } from '../util/json.js';

/** The capability paths one kind needs, in the order they are checked. */
const NEEDED: Readonly<Record<ReceiverKind, readonly (readonly string[])[]>> = {
  elicitation: [['elicitation'], ['tasks', 'requests', 'elicitation', 'create']],
  sampling: [['sampling'], ['tasks', 'requests', 'sampling', 'createMessage']],
};

function declared(capabilities: JsonObject, path: readonly string[]): boolean {
  return objectAt(capabilities, path) !== undefined;
}

/** The first capability `kind` needs that `capabilities` lacks, dotted (e.g. `tasks.requests.sampling.createMessage`). */
export function missingCapability(capabilities: JsonObject, kind: ReceiverKind): string | undefined {
  return NEEDED[kind].find((path) => !declared(capabilities, path))?.join('.');
}

/** The `tasks/*` requests a receiver answers. */
export type TaskMethod = 'tasks/get' | 'tasks/result' | 'tasks/list' | 'tasks/cancel';

/**
 * The `tasks/*` requests a receiver answers on a client that declared `capabilities`: `tasks/get`
 * and `tasks/result` always, `tasks/list` and `tasks/cancel` only when `tasks.list` /
 * `tasks.cancel` were declared ([R5]; otherwise the SDK refuses them, -32601).
 */
export function servedTaskMethods(capabilities: JsonObject): TaskMethod[] {
  const methods: TaskMethod[] = ['tasks/get', 'tasks/result'];
  if (declared(capabilities, ['tasks', 'list'])) methods.push('tasks/list');
  if (declared(capabilities, ['tasks', 'cancel'])) methods.push('tasks/cancel');
  return methods;
}

/** The capabilities that serving `kinds` declares: each kind, its task augmentation, `tasks.list` and `tasks.cancel`. */
export function receiverCapabilities(kinds: readonly ReceiverKind[]): JsonObject {
  const requests: JsonObject = {};
  const plain: JsonObject = {};
  for (const kind of kinds) {
    plain[kind] = {};
    requests[kind] = kind === 'elicitation' ? { create: {} } : { createMessage: {} };
  }
  return { ...plain, tasks: { list: {}, cancel: {}, requests } };
}

/** `extra` merged into `base` recursively: objects merge, anything `base` already says is kept. */
export function mergeCapabilities(base: JsonObject, extra: JsonObject): JsonObject {
  const merged: JsonObject = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = merged[key];
    if (current === undefined) merged[key] = value;
    else if (isObject(current) && isObject(value)) merged[key] = mergeCapabilities(current, value);
  }
  return merged;
}
