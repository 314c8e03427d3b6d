import { defineConfig, type Plugin } from 'vitest/config';

/**
 * Runs suites with the CLIENT side on the oldest SDKs the peer ranges in package.json allow
 * (`npm run test:sdk-floor` installs them and sets the paths below). Servers stay on the
 * installed SDK, so a server-side change never shows up as a client failure.
 *
 * - `OLD_V1`: an `@modelcontextprotocol/sdk` package directory. `@modelcontextprotocol/sdk/client/*`
 *   resolves there everywhere (specs, spec/support/sdk.ts, the library's lazy import in
 *   lib/port/connect.ts), and `@modelcontextprotocol/sdk/types.js` when spec/support/sdk.ts imports
 *   it (the schemas it hands to the old Client).
 * - `OLD_V2`: an `@modelcontextprotocol/client` package directory, for `@modelcontextprotocol/client`
 *   and `@modelcontextprotocol/client/stdio`.
 * - `MCP_SDK`: which major spec/support/sdk.ts builds clients with.
 *
 * Child processes (stdio servers, the CLI) are not redirected, so suites that drive the CLI are
 * not run here.
 */
const OLD_V1 = process.env.OLD_V1;
const OLD_V2 = process.env.OLD_V2;

const clientSideOnOldSdk: Plugin = {
  name: 'client-side-on-old-sdk',
  enforce: 'pre',
  resolveId(source, importer) {
    if (OLD_V1 !== undefined) {
      const client = /^@modelcontextprotocol\/sdk\/client\/(.+)$/.exec(source);
      if (client !== null) return `${OLD_V1}/dist/esm/client/${client[1]}`;
      if (source === '@modelcontextprotocol/sdk/types.js' && importer?.endsWith('/spec/support/sdk.ts') === true) {
        return `${OLD_V1}/dist/esm/types.js`;
      }
    }
    if (OLD_V2 !== undefined) {
      if (source === '@modelcontextprotocol/client') return `${OLD_V2}/dist/index.mjs`;
      if (source === '@modelcontextprotocol/client/stdio') return `${OLD_V2}/dist/stdio.mjs`;
    }
    return null;
  },
};

export default defineConfig({
  plugins: [clientSideOnOldSdk],
  test: {
    include: ['spec/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    setupFiles: ['spec/support/no-violations.ts'],
    env: { MCP_SDK: process.env.MCP_SDK ?? 'v1' },
  },
});
