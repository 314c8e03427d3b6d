/**
 * The shape the params of a server's elicitation or sampling request must have before a callback
 * is given them: the callbacks are typed `ElicitRequestParams` / `CreateMessageRequestParams`, and
 * the library takes these requests off the transport before the SDK client (which would answer a
 * malformed one with -32602) sees them. Only what the 2025-11-25 schema requires is checked, so
 * that any well-formed request passes: an elicitation's `message`, its `mode`, a url-mode one's
 * `url` and `elicitationId`, a form-mode one's `requestedSchema` when present (with its
 * `properties`); a sampling request's `messages` (objects) and `maxTokens`. An elicitation must
 * also be in a mode the client declared ({@link requestRefusal}), as the SDK clients (v1 and v2)
 * require.
 */
import { isObject } from './json.js';

/**
 * Why a client that declared `capabilities` refuses a request of `kind` with `params` before any
 * callback sees it (answered with -32602 where the request can be answered with an error), or
 * `undefined` when a callback may be given it. The messages are the SDK clients': "Invalid
 * elicitation request: …" (or sampling) for params that break the schema, "Client does not
 * support URL-mode elicitation requests" (or form-mode) for a mode the client did not declare:
 * `elicitation.url` declares url mode, `elicitation.form` form mode, and an `elicitation` that
 * names neither declares form mode only (the SDKs' reading, kept for older clients).
 */
export function requestRefusal(
  kind: 'elicitation' | 'sampling',
  params: Record<string, unknown>,
  capabilities: Record<string, unknown>,
): string | undefined {
  const flaw = requestFlaw(kind, params);
  if (flaw !== undefined) return `Invalid ${kind} request: ${flaw}`;
  if (kind === 'sampling') return undefined;
  const declared = isObject(capabilities.elicitation) ? capabilities.elicitation : undefined;
  const url = declared?.url !== undefined;
  const form = declared !== undefined && (declared.form !== undefined || !url);
  if (params.mode === 'url') {
    return url
      ? undefined
      : 'Client does not support URL-mode elicitation requests (it did not declare the elicitation.url capability)';
  }
  if (form) return undefined;
  const why = declared === undefined ? 'did not declare the elicitation capability' : 'declared elicitation.url only';
  return `Client does not support form-mode elicitation requests (it ${why})`;
}

/** What is wrong with `params` of a request of `kind`, or `undefined` when its shape is right. */
function requestFlaw(kind: 'elicitation' | 'sampling', params: Record<string, unknown>): string | undefined {
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
