/**
 * The tasks extension's identity, and whether a server offers it ([E20]: on the modern era only;
 * any settings object counts, since servers send e.g. `{ specVersion, stability }`, not only `{}`).
 */
import type { SessionPort } from '../port/port.js';
import { isObject } from './decode.js';

/** The tasks extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** True when the server advertises the tasks extension (whatever settings object it sends). */
export function offersExtension(port: SessionPort): boolean {
  const extensions = port.serverCapabilities()?.extensions;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined && extensions[TASKS_EXTENSION] !== null;
}
