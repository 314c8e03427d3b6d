/**
 * The tasks extension's identity, and whether a server offers it ([E20]: on the modern era only;
 * any settings object counts, since servers send e.g. `{ specVersion, stability }`, not only `{}`).
 */
import type { SessionPort } from '../port/port.js';
import { isObject } from './decode.js';

/** The tasks extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * JSON-RPC codes a server answers when a request lacks a client capability it needs, such as the
 * tasks extension: -32021, and -32003 as early drafts numbered it.
 */
export const MISSING_EXTENSION_CODES: ReadonlySet<number> = new Set([-32021, -32003]);

/** True when the server advertises the tasks extension (whatever settings object it sends). */
export function offersExtension(port: SessionPort): boolean {
  const extensions = port.serverCapabilities()?.extensions;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined && extensions[TASKS_EXTENSION] !== null;
}
