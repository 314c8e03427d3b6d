/**
 * Picks the task wire of a connection ([A19], [E20]). Adding a wire means one wire module, its
 * decoders, and one entry here.
 *
 * | era | server offers | wire |
 * | --- | --- | --- |
 * | legacy (2025-11-25 and earlier) | `capabilities.tasks` | 2025-11-25 |
 * | legacy | only `extensions["io.modelcontextprotocol/tasks"]` | none: plain calls only ([E20]) |
 * | modern (2026-07-28 and later) | `extensions["io.modelcontextprotocol/tasks"]` (any value) | the extension |
 * | modern | no extension | the extension, with no tasks (`features().tasks` false): plain calls only |
 * | legacy | nothing | 2025-11-25, with no tasks: plain calls only |
 */
import type { SessionPort } from '../port/port.js';
import { isObject } from './decode.js';
import { ExtensionWire } from './ext/wire.js';
import { offersExtension } from './extension.js';
import { Wire2025 } from './v2025/wire.js';
import type { TaskWire } from './wire.js';

export { TASKS_EXTENSION, offersExtension } from './extension.js';

/** The wire for `port`'s connection. */
export function resolveWire(port: SessionPort): TaskWire {
  // [E20]: the extension applies on the modern era only, where the legacy task runtime does not exist.
  if (port.era() === 'modern') return new ExtensionWire(port, offersExtension(port));
  const legacyTasks = isObject(port.serverCapabilities()?.tasks);
  if (!legacyTasks && offersExtension(port)) {
    return new Wire2025(
      port,
      'The server offers tasks only through the io.modelcontextprotocol/tasks extension (protocol 2026-07-28): connect with SDK v2 in automatic version negotiation, as TaskClient.connect does',
    );
  }
  return new Wire2025(port);
}
