import { defineConfig } from 'vitest/config';

/**
 * Suites that do not depend on the client SDK under test: they run once (project `sdk-free`).
 * spec/wire, spec/ext, spec/harness/ext-server and spec/ai/ext pick their SDKs themselves (the
 * tasks extension needs SDK v2); spec/cli drives the CLI (the cli/ package); spec/package packs and
 * installs the two packages; spec/project's spec-rules, docs-snippets and lint-rules read or lint
 * files, and bench-smoke runs the benchmark contenders; spec/ai/model-output maps outputs (no call
 * is made) and spec/ai/comparison runs `@ai-sdk/mcp`'s own client. The other spec/ai suites (AI SDK
 * tools on the 2025-11-25 wire) run per SDK. spec/doctor/ext and ext-scripted open SDK v2 sessions
 * of both eras themselves; spec/doctor/render only formats reports. spec/durable drives the BullMQ
 * workers (examples/durable) as processes; spec/otel/worlds drives the scripted servers of both
 * wires on SDK v2. spec/package's runtime-neutral and size read the build, and spec/runtimes runs
 * the library in Chromium, workerd, Deno and Bun with SDK v2 (the SDK that runs there).
 */
const SDK_FREE = [
  'spec/project/spec-rules.spec.ts',
  'spec/project/docs-snippets.spec.ts',
  'spec/project/doc-links.spec.ts',
  'spec/project/lint-rules.spec.ts',
  'spec/project/class-fields.spec.ts',
  'spec/project/bench-smoke.spec.ts',
  'spec/package/**/*.spec.ts',
  'spec/harness/ext-server.spec.ts',
  'spec/cli/**/*.spec.ts',
  'spec/wire/**/*.spec.ts',
  'spec/ext/**/*.spec.ts',
  'spec/ai/ext.spec.ts',
  'spec/ai/model-output.spec.ts',
  'spec/ai/comparison.spec.ts',
  'spec/otel/worlds.spec.ts',
  'spec/doctor/ext.spec.ts',
  'spec/doctor/ext-scripted.spec.ts',
  'spec/doctor/render.spec.ts',
  'spec/doctor/fuzz.spec.ts',
  'spec/durable/**/*.spec.ts',
  'spec/runtimes/**/*.spec.ts',
];

/**
 * Every other suite builds its SDK client through spec/support/sdk.ts, which reads `MCP_SDK`: it
 * runs twice, once per SDK major (projects `sdk-v1` and `sdk-v2`). A new suite runs on both unless
 * it is listed above. One major only: `npx vitest run --project sdk-v2 spec/v2025/sdk-server.spec.ts`.
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
    // Fails a test after which a scripted server had refused a request (spec/support/violations.ts).
    setupFiles: ['spec/support/no-violations.ts'],
    projects: [perSdk('v1'), perSdk('v2'), { extends: true, test: { name: 'sdk-free', include: SDK_FREE } }],
  },
});
