/**
 * `npm run test:sdk-floor`: installs the oldest SDK versions the peer ranges in package.json
 * allow into a scratch directory (node_modules/.cache/sdk-floor, reused while the versions stay
 * the same), then runs the suites that exercise each SDK's seams with the client side on them
 * (spec/compat/sdk-floor.config.ts). Keeps the ranges honest when the port starts using a newer
 * SDK member. Below the floors these suites fail: SDK v1 1.23 drops the server's `tasks`
 * capability (no tasks at all), and SDK v2 2.0 sends no `Mcp-Name` header on `tasks/*` over
 * Streamable HTTP.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
};
/** The floor of a caret range: `^1.24.1` gives `1.24.1`. */
const floorOf = (range: string | undefined): string => {
  const match = /^\^(\d+\.\d+\.\d+)$/.exec(range ?? '');
  if (match === null) throw new Error(`sdk-floor: expected a caret range, got ${JSON.stringify(range)}`);
  return match[1]!;
};
const v1 = floorOf(manifest.peerDependencies['@modelcontextprotocol/sdk']);
const v2 = floorOf(manifest.peerDependencies['@modelcontextprotocol/client']);
const scratch = join(root, 'node_modules', '.cache', 'sdk-floor', `sdk-${v1}-client-${v2}`);
const modules = join(scratch, 'node_modules', '@modelcontextprotocol');

function run(command: string, args: string[], env: Record<string, string> = {}): void {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!existsSync(join(modules, 'sdk', 'package.json')) || !existsSync(join(modules, 'client', 'package.json'))) {
  mkdirSync(scratch, { recursive: true });
  console.log(
    `sdk-floor: installing @modelcontextprotocol/sdk@${v1} and @modelcontextprotocol/client@${v2} into ${scratch}`,
  );
  run('npm', [
    'install',
    '--prefix',
    scratch,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--ignore-scripts',
    `@modelcontextprotocol/sdk@${v1}`,
    `@modelcontextprotocol/client@${v2}`,
  ]);
}

const vitest = join(root, 'node_modules', '.bin', 'vitest');
const config = join(root, 'spec', 'compat', 'sdk-floor.config.ts');
/** Suites that exercise the SDK v1 seams: connection, handlers, input, the receiver, sessions, negotiation. */
const V1_SUITES = [
  'spec/v2025/sdk-server.spec.ts',
  'spec/harness/sdk.spec.ts',
  'spec/v2025/input.spec.ts',
  'spec/receiver',
  'spec/connection/sessions.spec.ts',
  // The port reads the SSE streams of its own requests through the transport's _handleSseStream.
  'spec/connection/http-faults.spec.ts',
  'spec/v2025/negotiation.spec.ts',
];
/** Suites that exercise the SDK v2 seams: HTTP headers and streams, detection, input and cancel on the extension, the legacy era. */
const V2_SUITES = [
  'spec/ext/transports.spec.ts',
  'spec/ext/http-streams.spec.ts',
  'spec/ext/input.spec.ts',
  'spec/ext/cancel.spec.ts',
  'spec/v2025/sdk-server.spec.ts',
  'spec/v2025/negotiation.spec.ts',
];

console.log(`sdk-floor: client side on @modelcontextprotocol/sdk ${v1}`);
run(vitest, ['run', '--config', config, ...V1_SUITES], { OLD_V1: join(modules, 'sdk'), MCP_SDK: 'v1' });
console.log(`sdk-floor: client side on @modelcontextprotocol/client ${v2}`);
run(vitest, ['run', '--config', config, ...V2_SUITES], { OLD_V2: join(modules, 'client'), MCP_SDK: 'v2' });
