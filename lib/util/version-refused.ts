/**
 * A handshake refused for its protocol version: -32022 with the versions the server supports
 * ([E12]). SDK v1 offers the 2025-11-25 protocol and earlier only; SDK v2 negotiates the era when
 * it runs over its own transport. Used by `TaskClient.connect` and the doctor alike.
 */
import { TaskConnectError } from '../errors.js';
import { rpcFieldsOf } from './rpc-error.js';
import { clip, messageOf } from './text.js';

/** The `TaskConnectError` (reason `'version'`) for `error`, or `undefined` when it is no -32022. */
export function versionRefused(error: unknown): TaskConnectError | undefined {
  const { code, data } = rpcFieldsOf(error);
  if (code !== -32022) return undefined;
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  const versions = Array.isArray(supported)
    ? supported.filter((v): v is string => typeof v === 'string').slice(0, 5)
    : [];
  const listed =
    versions.length === 0 ? '' : ` (it lists ${versions.map((v) => JSON.stringify(v.slice(0, 32))).join(', ')})`;
  return new TaskConnectError(
    `The server refused the protocol version offered (-32022)${listed}. SDK v1 offers 2025-11-25 and earlier ` +
      "only; SDK v2 negotiates the era over its own transport (as TaskClient.connect does with sdk 'v2'). " +
      `The server said: ${clip(messageOf(error), 512)}`,
    { reason: 'version', cause: error },
  );
}
