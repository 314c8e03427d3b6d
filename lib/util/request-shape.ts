/**
 * The shape the params of a server's elicitation or sampling request must have before a callback
 * is given them: the callbacks are typed `ElicitRequestParams` / `CreateMessageRequestParams`, and
 * the library takes these requests off the transport before the SDK client (which would answer a
 * malformed one with -32602) sees them. Only what the 2025-11-25 schema requires is checked, so
 * that any well-formed request passes: an elicitation's `message`, its `mode`, a url-mode one's
 * `url` and `elicitationId`, a form-mode one's `requestedSchema` when present (with its
 * `properties`); a sampling request's `messages` (objects) and `maxTokens`.
 */
import { isObject } from './json.js';

/** What is wrong with `params` of a request of `kind`, or `undefined` when its shape is right. */
export function requestFlaw(kind: 'elicitation' | 'sampling', params: Record<string, unknown>): string | undefined {
  if (kind === 'sampling') {
    const messages = params.messages;
    if (!Array.isArray(messages) || !messages.every((message) => isObject(message)))
      return 'messages must be an array of messages';
    const maxTokens = params.maxTokens;
    return typeof maxTokens === 'number' && Number.isFinite(maxTokens) ? undefined : 'maxTokens must be a number';
  }
  if (typeof params.message !== 'string') return 'message must be a string';
  const mode = params.mode;
  if (mode === 'url') {
    if (typeof params.url !== 'string') return 'url must be a string in url mode';
    return typeof params.elicitationId === 'string' ? undefined : 'elicitationId must be a string in url mode';
  }
  if (mode !== undefined && mode !== 'form') return 'mode must be "form" or "url"';
  const schema = params.requestedSchema;
  if (schema === undefined) return undefined;
  return isObject(schema) && isObject(schema.properties)
    ? undefined
    : 'requestedSchema must be an object schema with properties';
}
