/**
 * The shape an answer to an elicitation or a sampling request must have before it goes to its
 * requester: the library's own answers to a server (a reply to a side-channel request, a
 * `tasks/update`, a `tools/call` sent again) and a receiver task's result. A callback typed
 * loosely (in JavaScript, or handing on a body read off the network) may return anything.
 */
import { isObject } from './json.js';

/** What is wrong with `answer` to a request of `kind`, or `undefined` when its shape is right. */
export function answerFlaw(kind: 'elicitation' | 'sampling', answer: unknown): string | undefined {
  if (!isObject(answer)) return 'it must be an object';
  if (kind === 'elicitation') {
    if (answer.action !== 'accept' && answer.action !== 'decline' && answer.action !== 'cancel') {
      return 'action must be "accept", "decline" or "cancel"';
    }
    return answer.content !== undefined && !isObject(answer.content) ? 'content must be an object' : undefined;
  }
  if (typeof answer.model !== 'string') return 'model must be a string';
  if (typeof answer.role !== 'string') return 'role must be a string';
  return !isObject(answer.content) && !Array.isArray(answer.content)
    ? 'content must be a content block or an array of them'
    : undefined;
}
