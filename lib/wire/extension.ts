/**
 * The tasks extension's identity, and whether a server offers it ([E20]: on the modern era only;
 * any settings object counts, since servers send e.g. `{ specVersion, stability }`, not only `{}`).
 */
import type { SessionPort } from '../port/port.js';
import { clip } from '../util/text.js';
import { isObject } from './decode.js';

/** The tasks extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * The code a server answers when a request lacks a client capability it needs ([E11]). It is
 * generic: its `data.requiredCapabilities` (in the `ClientCapabilities` shape, only the missing
 * ones) says which, the tasks extension or any other (`elicitation`, `sampling`, another extension).
 */
const MISSING_CAPABILITY = -32021;

/**
 * The code early drafts gave that refusal ([E11]). It lies in the range -32000 to -32019 that
 * servers use for their own errors ([E29]: access denied, busy, ...), so it means a missing tasks
 * extension only when its `data` says so: `requiredCapabilities.extensions` names the extension.
 */
const DRAFT_MISSING_CAPABILITY = -32003;

/** Longest capability name a message quotes (the names are the server's text). */
const MAX_NAME_LENGTH = 64;

/** Most capability names a message lists. */
const MAX_NAMES = 8;

/** The error `data`'s `requiredCapabilities`, if it is an object. */
function requiredOf(data: unknown): Record<string, unknown> | undefined {
  const required = isObject(data) ? data.requiredCapabilities : undefined;
  return isObject(required) ? required : undefined;
}

/**
 * True when an error with `code` and `data` from the server says the request did not declare the
 * tasks extension: -32021 or the drafts' -32003, each only with the extension named in
 * `data.requiredCapabilities.extensions` ([E11]; a -32021 naming another capability is about that
 * one, and a -32003 without it is the server's own error, [E29]).
 */
export function missingExtension(code: number, data: unknown): boolean {
  if (code !== MISSING_CAPABILITY && code !== DRAFT_MISSING_CAPABILITY) return false;
  const extensions = requiredOf(data)?.extensions;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined;
}

/**
 * What a -32021 that is not about the tasks extension means, for an error message: the client
 * capabilities its `data.requiredCapabilities` names ([E11]), each name clipped and at most
 * {@link MAX_NAMES} of them; `undefined` for any other error.
 */
export function missingCapability(code: number, data: unknown): string | undefined {
  if (code !== MISSING_CAPABILITY || missingExtension(code, data)) return undefined;
  const names = requiredCapabilities(data);
  const said = names === undefined ? ' (it did not say which)' : `: ${names}`;
  return `the server requires a client capability the request did not declare${said}`;
}

/**
 * The client capabilities an error's `data.requiredCapabilities` names, as text for a message
 * (`elicitation, extension com.example/x`): its keys (`elicitation`, `sampling`, ...), and for
 * `extensions` and `experimental` the names inside; each name the server's text, so clipped, at
 * most {@link MAX_NAMES} of them, control characters blanked. `undefined` when it names none.
 */
export function requiredCapabilities(data: unknown): string | undefined {
  const names: string[] = [];
  for (const [key, value] of Object.entries(requiredOf(data) ?? {})) {
    const inner = (key === 'extensions' || key === 'experimental') && isObject(value) ? Object.keys(value) : [];
    if (inner.length === 0) names.push(clip(key, MAX_NAME_LENGTH));
    for (const name of inner) names.push(`${key === 'extensions' ? 'extension' : key} ${clip(name, MAX_NAME_LENGTH)}`);
  }
  if (names.length === 0) return undefined;
  const more = names.length > MAX_NAMES ? `, and ${names.length - MAX_NAMES} more` : '';
  // Blanking keeps every length, so blanking the text once equals blanking each name before its clip.
  // eslint-disable-next-line no-control-regex
  return `${names.slice(0, MAX_NAMES).join(', ')}${more}`.replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** True when the server advertises the tasks extension (whatever settings object it sends). */
export function offersExtension(port: SessionPort): boolean {
  const extensions = port.serverCapabilities()?.extensions;
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined && extensions[TASKS_EXTENSION] !== null;
}
