/**
 * Task ids are bearer secrets (whoever holds one can read or cancel the task): every message the
 * library writes names a task by a short one-way fingerprint instead, which still lets lines
 * about one task be correlated.
 */
import { sha256Hex } from './sha256.js';

/**
 * A short one-way fingerprint of a task id, e.g. `sha256:1a2b3c4d5e6f`: how the library's logs,
 * events and errors name a task (task ids are secrets), so that a host's own logs and traces can
 * name tasks the same way and be correlated with them. The same in every runtime and process.
 * @param taskId - the task id.
 * @returns `sha256:` and the first 12 hex digits of the SHA-256 of the id (UTF-8).
 */
export function fingerprint(taskId: string): string {
  return `sha256:${sha256Hex(taskId).slice(0, 12)}`;
}

/**
 * Shortest task id scrubbed from text: a shorter one guards nothing (it can be guessed), and
 * replacing it would mangle ordinary words.
 */
const MIN_SCRUBBED_LENGTH = 8;

/** `text` with every occurrence of `taskId` replaced by its fingerprint. */
export function scrub(text: string, taskId: string | undefined): string {
  if (taskId === undefined || taskId.length < MIN_SCRUBBED_LENGTH || !text.includes(taskId)) return text;
  return text.replaceAll(taskId, fingerprint(taskId));
}
