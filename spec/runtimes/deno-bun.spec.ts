/**
 * Deno and Bun, from their npm packages, run spec/runtimes/web/smoke.ts (the scenario of
 * scenarios.ts) and must exit on their own once it printed its report:
 *
 * - Deno runs it bundled (esbuild, Deno's and the browser conditions: SDK v2's web build), so
 *   nothing goes through its Node compatibility layer, with no permission but network access to
 *   127.0.0.1.
 * - Bun runs the TypeScript source as a Bun user would, packages from node_modules (Bun has no
 *   mode without its Node compatibility).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll } from 'vitest';
import { bundleWeb } from './bundle.js';
import { runtimeScenarios } from './scenarios.js';
import { ROOT, bin, describeRuntime, probe } from './support.js';
import type { Report } from './web/scenario.js';

const run = promisify(execFile);
const DENO = bin('deno');
const BUN = bin('bun');

/** Runs `command args… server [deadlineMs]`; the report is its last line of output. */
async function report(command: string, args: string[], server: URL, deadlineMs: number | undefined): Promise<Report> {
  const { stdout } = await run(
    command,
    [...args, server.href, ...(deadlineMs === undefined ? [] : [String(deadlineMs)])],
    {
      cwd: ROOT,
      timeout: 45_000,
      env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
    },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Report;
}

describeRuntime('Deno', probe(DENO, 'npm install: the deno package ships its binary'), () => {
  let bundle: string;
  beforeAll(async () => {
    bundle = join(mkdtempSync(join(tmpdir(), 'mcp-task-deno-')), 'smoke.js');
    await bundleWeb('smoke', bundle, ['deno', 'browser']);
  }, 60_000);
  runtimeScenarios((server, deadlineMs) =>
    report(DENO, ['run', '--no-prompt', '--allow-net=127.0.0.1', bundle], server, deadlineMs),
  );
});

describeRuntime('Bun', probe(BUN, 'npm install: the bun package ships its binary'), () => {
  runtimeScenarios((server, deadlineMs) => report(BUN, ['spec/runtimes/web/smoke.ts'], server, deadlineMs));
});
