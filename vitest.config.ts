import { defineConfig } from 'vitest/config';

/**
 * Suites that do not depend on the client SDK under test: they run once (project `sdk-free`).
 * spec/wire, spec/ext and spec/ext-server pick their SDKs themselves (the tasks extension needs
 * SDK v2); spec/cli drives the CLI; spec/durable drives the BullMQ workers (examples/durable) as processes; spec-rules and bench-smoke read files or run the benchmark
 * contenders; lint-rules lints probe sources.
 */
const SDK_FREE = [
  'spec/spec-rules.spec.ts',
  'spec/lint-rules.spec.ts',
  'spec/install.spec.ts',
  'spec/bench-smoke.spec.ts',
  'spec/ext-server.spec.ts',
  'spec/cli/**/*.spec.ts',
  'spec/wire/**/*.spec.ts',
  'spec/ext/**/*.spec.ts',
  'spec/durable/**/*.spec.ts',
];

/**
 * Every other suite builds its SDK client through spec/support/sdk.ts, which reads `MCP_SDK`: it
 * runs twice, once per SDK major (projects `sdk-v1` and `sdk-v2`). A new suite runs on both unless
 * it is listed above. One major only: `npx vitest run --project sdk-v2 spec/core.spec.ts`.
 */
const perSdk = (sdk: 'v1' | 'v2') => ({
  extends: true as const,
  test: { name: `sdk-${sdk}`, include: ['spec/**/*.spec.ts'], exclude: SDK_FREE, env: { MCP_SDK: sdk } },
});

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Two files at a time even on two cores: much of the suite waits on child processes and real
    // timers, and the SDK-dependent suites run twice.
    maxWorkers: 2,
    projects: [perSdk('v1'), perSdk('v2'), { extends: true, test: { name: 'sdk-free', include: SDK_FREE } }],
  },
});
