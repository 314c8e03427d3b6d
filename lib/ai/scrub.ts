/**
 * Task ids out of a server's text: a status, progress or error message may name its task, and a
 * tool's outputs and errors end up in the browser and the model's context (task ids are secrets).
 */
import { taskFingerprint } from '../index.js';

/**
 * Shortest task id taken out of a server's text, as the library's own messages do: a shorter one
 * guards nothing (it can be guessed), and replacing it would mangle ordinary words.
 */
const MIN_SCRUBBED_LENGTH = 8;

/**
 * `text` with every occurrence of the task id replaced by its fingerprint: a server's status or
 * progress message may name its task, and tool outputs end up in the browser (task ids are
 * secrets).
 */
export function scrubbed(text: string, taskId: string | undefined): string {
  if (taskId === undefined || taskId.length < MIN_SCRUBBED_LENGTH || !text.includes(taskId)) return text;
  return text.replaceAll(taskId, taskFingerprint(taskId));
}
