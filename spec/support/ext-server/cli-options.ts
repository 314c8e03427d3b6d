/**
 * Command-line flags of the runnable extension server (`stdio.ts`), mapped to {@link ExtServerOptions}.
 *
 * `--legacy` `--no-extension` `--extension=<json>` `--versions=a,b` `--notifications=on|off|ack-only`
 * `--get-result-type=complete|task|omit` `--whole-seconds` `--raw-inner-result` `--ttl-ms=<n|null>`
 * `--poll-interval-ms=<n[,n...]>` `--expiry=keep|fail|delete` `--cancel=cancel|deferred|ignore|complete`
 * `--require-input-capabilities` `--tick-ms=<n>` `--http[=port]` `--verbose`.
 */
import type { ExtServerOptions } from './server.js';
import type { NotificationMode } from './subscriptions.js';
import type { CancelMode } from './task-store.js';
import type { Json } from './wire.js';

/** Server options plus how to run it. */
export interface CliOptions {
  readonly server: ExtServerOptions;
  readonly tickMs: number | undefined;
  /** Serve Streamable HTTP on 127.0.0.1 at this port (0 = ephemeral) instead of stdio. */
  readonly httpPort: number | undefined;
  readonly verbose: boolean;
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T {
  if (value === undefined || !(allowed as readonly string[]).includes(value))
    throw new Error(`--${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}
function int(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} needs a non-negative integer`);
  return n;
}

/** Parses `argv` (without node and script); throws on an unknown flag. */
export function parseCliOptions(argv: readonly string[]): CliOptions {
  const server: Record<string, unknown> = {};
  let tickMs: number | undefined;
  let httpPort: number | undefined;
  let verbose = false;
  for (const arg of argv) {
    const [flag = '', value] = arg.replace(/^--/, '').split(/=(.*)/s, 2);
    switch (flag) {
      case 'legacy':
        server.legacy = true;
        break;
      case 'no-extension':
        server.extension = null;
        break;
      case 'extension':
        server.extension = JSON.parse(value ?? '{}') as Json;
        break;
      case 'versions':
        server.supportedVersions = (value ?? '').split(',').filter(Boolean);
        break;
      case 'notifications':
        server.notifications = oneOf<NotificationMode>(flag, value, ['on', 'off', 'ack-only']);
        break;
      case 'get-result-type':
        server.getResultType = oneOf(flag, value, ['complete', 'task', 'omit'] as const);
        break;
      case 'whole-seconds':
        server.wholeSeconds = true;
        break;
      case 'raw-inner-result':
        server.stampInnerResultType = false;
        break;
      case 'ttl-ms':
        server.ttlMs = value === 'null' ? null : int(flag, value);
        break;
      case 'poll-interval-ms': {
        const values = (value ?? '').split(',').map((v) => int(flag, v));
        server.pollIntervalMs = values.length === 1 ? values[0] : values;
        break;
      }
      case 'expiry':
        server.expiry = oneOf(flag, value, ['keep', 'fail', 'delete'] as const);
        break;
      case 'cancel':
        server.cancel = oneOf<CancelMode>(flag, value, ['cancel', 'deferred', 'ignore', 'complete', 'fail']);
        break;
      case 'require-input-capabilities':
        server.requireInputCapabilities = true;
        break;
      case 'tick-ms':
        tickMs = int(flag, value);
        break;
      case 'http':
        httpPort = value === undefined ? 0 : int(flag, value);
        break;
      case 'verbose':
        verbose = true;
        break;
      default:
        throw new Error(`unknown flag: ${arg}`);
    }
  }
  const options: ExtServerOptions = server;
  return { server: options, tickMs, httpPort, verbose };
}
