/**
 * Why a connection failed, in words a user can act on: the cause of a failed `fetch` (connection
 * refused, DNS, TLS), an HTTP status, a stdio command that is missing or exited, dug out of the
 * `cause` chains the SDKs wrap them in ("Version negotiation probe failed: fetch failed" alone
 * says none of that).
 */

interface ErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly hostname?: unknown;
  readonly path?: unknown;
  readonly syscall?: unknown;
  readonly cause?: unknown;
}

/** `error` and its causes, outermost first (at most 8, cycles cut). */
function chain(error: unknown): ErrorLike[] {
  const seen: ErrorLike[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && seen.length < 8 && !seen.includes(current)) {
    seen.push(current);
    current = (current as ErrorLike).cause;
  }
  return seen;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
]);

/** The network-level reason in one error of a chain, if it names one. */
function networkReason(e: ErrorLike): string | undefined {
  const code = text(e.code);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
      return `DNS lookup failed: no such host${text(e.hostname) === undefined ? '' : ` ${String(e.hostname)}`}`;
    case 'EAI_AGAIN':
      return `DNS lookup failed (temporary failure)${text(e.hostname) === undefined ? '' : ` for ${String(e.hostname)}`}`;
    case 'ECONNRESET':
      return 'connection reset';
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'connection closed by the other side';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connection timed out';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'the server stopped answering (HTTP timeout)';
    default:
      break;
  }
  if (code !== undefined && (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || TLS_CODES.has(code))) {
    return `TLS error: ${text(e.reason) ?? code}`;
  }
  if (text(e.message) === 'bad port') return 'fetch refuses to connect to that port (a "bad port")';
  return undefined;
}

/** The HTTP status an SDK error carries (SDK v2's `status`, SDK v1's numeric `code`), if any. */
function httpStatus(e: ErrorLike): number | undefined {
  for (const value of [e.status, e.code]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599) return value;
  }
  return undefined;
}

/**
 * The cause of a failed HTTP exchange, for a user: `connection refused`, `DNS lookup failed: …`,
 * `TLS error: …`, `HTTP 403`, …; `undefined` when the chain names none.
 */
export function httpFailureReason(error: unknown): string | undefined {
  const errors = chain(error);
  for (const e of errors) {
    const reason = networkReason(e);
    if (reason !== undefined) return reason;
  }
  for (const e of errors) {
    const status = httpStatus(e);
    if (status !== undefined) return `HTTP ${status}`;
  }
  return undefined;
}

/** The outermost message of `error`. */
export function topMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Why a stdio server could not be reached: a command that is missing or not executable, a server that exited. */
export function stdioFailureReason(error: unknown, command: string): string | undefined {
  for (const e of chain(error)) {
    const code = text(e.code);
    if (code === 'ENOENT' && text(e.syscall)?.startsWith('spawn') === true) return `command not found: ${command}`;
    if (code === 'EACCES' && text(e.syscall)?.startsWith('spawn') === true)
      return `permission denied running ${command}`;
  }
  if (/connection closed/i.test(topMessage(error)))
    return 'the server exited, or closed its output, before it answered';
  return undefined;
}

/**
 * One line for a connection that could not be made: `cannot connect to WHERE: REASON (the
 * library's or SDK's own message)`.
 */
export function describeConnectFailure(
  error: unknown,
  target: { readonly where: string; readonly url?: string | undefined; readonly command?: string | undefined },
): string {
  const message = topMessage(error);
  const reason =
    target.url !== undefined
      ? httpFailureReason(error)
      : target.command !== undefined
        ? stdioFailureReason(error, target.command)
        : undefined;
  return reason === undefined
    ? `cannot connect to ${target.where}: ${message}`
    : `cannot connect to ${target.where}: ${reason} (${message})`;
}

/** The connection could not be made (exit 1): the message says where, why, and what was tried. */
export class ConnectError extends Error {
  override readonly name = 'ConnectError';
}
