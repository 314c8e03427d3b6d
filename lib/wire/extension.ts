/**
 * The tasks extension's identity, and whether a server offers it ([E20]: on the modern era only;
 * any settings object counts, since servers send e.g. `{ specVersion, stability }`, not only `{}`).
 */
import type { SessionPort } from '../port/port.js';
import { isObject } from './decode.js';

/** The tasks extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The code a server answers when a request lacks a client capability it needs, such as the tasks extension ([E11]). */
const MISSING_CAPABILITY = -32021;

/**
 * The code early drafts gave that refusal ([E11]). It lies in the range -32000 to -32019 that
 * servers use for their own errors ([E29]: access denied, busy, ...), so it means a missing tasks
 * extension only when its `data` says so: `requiredCapabilities.extensions` names the extension.
 */
const DRAFT_MISSING_CAPABILITY = -32003;

/**
 * True when an error with `code` and `data` from the server says the request did not declare the
 * tasks extension: -32021 always; the drafts' -32003 only with the extension named in its `data`.
 */
export function missingExtension(code: number, data: unknown): boolean {
  if (code === MISSING_CAPABILITY) return true;
  if (code !== DRAFT_MISSING_CAPABILITY || !isObject(data)) return false;
  const required = data.requiredCapabilities;
  const extensions = isObject(required) ? required.extensions : undefined;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined;
}

/** True when the server advertises the tasks extension (whatever settings object it sends). */
export function offersExtension(port: SessionPort): boolean {
  const extensions = port.serverCapabilities()?.extensions;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined && extensions[TASKS_EXTENSION] !== null;
}
