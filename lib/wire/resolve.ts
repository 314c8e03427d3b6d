/**
 * Picks the task wire of a connection ([A19], [E20]). Adding a wire means one wire module, its
 * decoders, and one entry here.
 *
 * | era | server offers | wire |
 * | --- | --- | --- |
 * | legacy (2025-11-25 and earlier) | `capabilities.tasks` | 2025-11-25 |
 * | legacy | only `extensions["io.modelcontextprotocol/tasks"]` | none: plain calls only ([E20]) |
 * | modern (2026-07-28 and later) | `extensions["io.modelcontextprotocol/tasks"]` (any value) | the extension |
 * | either | nothing | none: plain calls only |
 */
import type { SessionPort } from '../port/port.js';
import { isObject } from './decode.js';
import { Wire2025 } from './v2025/wire.js';
import type { TaskWire } from './wire.js';

/** The tasks extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** True when the server advertises the tasks extension (whatever settings object it sends). */
export function offersExtension(port: SessionPort): boolean {
  const extensions = port.serverCapabilities()?.extensions;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined && extensions[TASKS_EXTENSION] !== null;
}

/** The wire for `port`'s connection. */
export function resolveWire(port: SessionPort): TaskWire {
  const legacyTasks = isObject(port.serverCapabilities()?.tasks);
  if (port.era() === 'modern') {
    return new Wire2025(port, 'The tasks extension wire is not available in this build');
  }
  if (!legacyTasks && offersExtension(port)) {
    // [E20]: on a legacy session the extension does not apply; the server has no task wire here.
    return new Wire2025(
      port,
      'The server offers tasks only through the io.modelcontextprotocol/tasks extension, which needs the 2026-07-28 protocol: connect with SDK v2 (@modelcontextprotocol/client) in automatic version negotiation (TaskClient.connect does this)',
    );
  }
  return new Wire2025(port);
}
