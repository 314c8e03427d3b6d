/**
 * `npm run size` (bench/size.ts) measures what it says; and a page that has only SDK v2 installed
 * bundles: `TaskClient.connect` may load either SDK, and the one that is not installed must be
 * left to fail at run time (where the library catches it), not break the page's build. Reads dist/
 * (`npm run build` first; `npm test` does).
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { SIZE_BUDGET_GZIP, SIZE_TARGET_GZIP, measureCore, measureSize, sizeLines } from '../../bench/size.js';

const ROOT = new URL('../../', import.meta.url).pathname;

describe("the root entry's budget", () => {
  it('the root entry, bundled for the browser as npm run size does, stays within its gzip budget', async () => {
    const core = await measureCore();
    expect(core.gzip, `${core.gzip} bytes gzip, budget ${SIZE_BUDGET_GZIP}`).toBeLessThanOrEqual(SIZE_BUDGET_GZIP);
    // The budget only ever goes down, towards the target.
    expect(SIZE_BUDGET_GZIP).toBeGreaterThanOrEqual(SIZE_TARGET_GZIP);
    // It measured the library (an entry that failed to resolve would weigh next to nothing).
    expect(core.raw).toBeGreaterThan(50_000);
  });
});

describe('npm run size', () => {
  it(
    'bundles the root entry for the browser with the SDKs external, ext-tasks the same way, and pages on SDK v2',
    { timeout: 180_000 },
    async () => {
      const size = await measureSize('vitest');
      const figures = [
        size.core,
        size.taskClientOnly,
        size.extTasks,
        size.extTasksWithoutZod,
        size.sdkPage,
        size.sdkPagePlusCore,
        size.sdkPagePlusExtTasks,
      ];
      for (const figure of [...figures, ...Object.values(size.vite)]) {
        expect(figure.gzip, figure.label).toBeGreaterThan(1_000);
        expect(figure.gzip, figure.label).toBeLessThan(figure.raw);
      }
      expect(size.core.external).toEqual(
        expect.arrayContaining(['@modelcontextprotocol/sdk', '@modelcontextprotocol/client']),
      );
      // The core is the library and its own dependencies: no SDK code in it, every lib/ layer there.
      const parts = size.breakdown.map(({ part }) => part);
      expect(parts.filter((part) => part.startsWith('@modelcontextprotocol/'))).toEqual([]);
      expect(parts).toEqual(
        expect.arrayContaining(['lib/facade/', 'lib/engine/', 'lib/wire/', 'lib/port/', 'eventemitter3']),
      );
      expect(size.breakdown.reduce((sum, { raw }) => sum + raw, 0)).toBeLessThanOrEqual(size.core.raw);
      // Without zod, ext-tasks is its own code only; with it, much larger.
      expect(size.extTasks.raw).toBeGreaterThan(size.extTasksWithoutZod.raw * 2);
      // A page grows by at least the library when it adds TaskClient, with either bundler.
      expect(size.sdkPagePlusCore.raw - size.sdkPage.raw).toBeGreaterThan(size.taskClientOnly.raw);
      expect(size.vite.sdkPagePlusCore.raw - size.vite.sdkPage.raw).toBeGreaterThan(size.taskClientOnly.raw);
      expect(sizeLines(size).some((line) => line.includes('core ≤ 30.0 KiB gzip'))).toBe(true);
      // The cuts measured, not made: each a rewrite of the core's bundle, each smaller.
      const { ceilings } = size;
      expect(ceilings).toBeDefined();
      for (const gzip of [ceilings!.withoutStringsGzip, ceilings!.shortPropertiesGzip]) {
        expect(gzip).toBeGreaterThan(size.core.gzip / 2);
        expect(gzip).toBeLessThan(size.core.gzip);
      }
      // The receiver is its own entry point: none of it in the core, all of it in its own row.
      expect(parts.filter((part) => part.startsWith('lib/receiver'))).toEqual([]);
      expect(size.receiver!.gzip).toBeGreaterThan(2_000);
      expect(size.coreWithReceiver!.raw).toBeGreaterThan(size.core.raw + size.receiver!.raw / 2);
      expect(sizeLines(size).some((line) => line.startsWith('mcp-task-client/receiver (all of it)'))).toBe(true);
    },
  );

  it(
    'a page with SDK v2 and without SDK v1 installed bundles TaskClient, leaving the import of SDK v1 to fail at run time',
    { timeout: 60_000 },
    async () => {
      // A project of its own (outside this repository, whose node_modules has both SDKs): the
      // installed package, and every dependency but SDK v1.
      const project = mkdtempSync(join(tmpdir(), 'mcp-task-size-'));
      try {
        const modules = join(project, 'node_modules');
        mkdirSync(join(modules, '@modelcontextprotocol'), { recursive: true });
        for (const name of readdirSync(join(ROOT, 'node_modules'))) {
          if (name === '@modelcontextprotocol' || name === 'mcp-task-client' || name.startsWith('.')) continue;
          symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
        }
        for (const name of readdirSync(join(ROOT, 'node_modules/@modelcontextprotocol')).filter(
          (name) => name !== 'sdk',
        )) {
          symlinkSync(
            join(ROOT, 'node_modules/@modelcontextprotocol', name),
            join(modules, '@modelcontextprotocol', name),
          );
        }
        cpSync(join(ROOT, 'package.json'), join(modules, 'mcp-task-client/package.json'));
        cpSync(join(ROOT, 'dist'), join(modules, 'mcp-task-client/dist'), { recursive: true });
        const result = await build({
          stdin: {
            contents:
              "export { TaskClient } from 'mcp-task-client';\nexport { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';",
            resolveDir: project,
            sourcefile: 'page.js',
          },
          absWorkingDir: project,
          bundle: true,
          write: false,
          format: 'esm',
          platform: 'browser',
          logLevel: 'silent',
        });
        const page = result.outputFiles[0]!.text;
        expect(page).toContain('import("@modelcontextprotocol/sdk/client/index.js")');
        expect(page).toMatch(/export \{[^}]*\bTaskClient\b/);
      } finally {
        rmSync(project, { recursive: true, force: true });
      }
    },
  );
});
