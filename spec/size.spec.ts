/**
 * `npm run size` (bench/size.ts) measures what it says, and the library costs a page what its own
 * bundle weighs: building a page on SDK v2 with `TaskClient` adds the library's bytes, not a
 * second, untree-shaken copy of the SDK (which a dynamic import of the SDK's root entry once made
 * every bundler keep whole: the page grew by 242 KiB for a 146 KiB library). Reads dist/ (`npm run
 * build` first; `npm test` does).
 */
import { describe, expect, it } from 'vitest';
import { measureSize, sizeLines, type SizeResult } from '../bench/size.js';

describe('npm run size', () => {
  let size: SizeResult;

  it('bundles the root entry for the browser with the SDKs external, and ext-tasks the same way', { timeout: 120_000 }, async () => {
    size = await measureSize('vitest');
    for (const figure of [size.core, size.taskClientOnly, size.extTasks, size.extTasksWithoutZod, size.sdkPage, size.sdkPagePlusCore, size.sdkPagePlusExtTasks]) {
      expect(figure.gzip, figure.label).toBeGreaterThan(1_000);
      expect(figure.gzip, figure.label).toBeLessThan(figure.raw);
    }
    expect(size.core.external).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk', '@modelcontextprotocol/client']));
    // The core is the library and its own dependencies: no SDK code in it, every lib/ layer there.
    const parts = size.breakdown.map(({ part }) => part);
    expect(parts.filter((part) => part.startsWith('@modelcontextprotocol/'))).toEqual([]);
    expect(parts).toEqual(expect.arrayContaining(['lib/facade/', 'lib/engine/', 'lib/wire/', 'lib/port/', 'eventemitter3']));
    expect(size.breakdown.reduce((sum, { raw }) => sum + raw, 0)).toBeLessThanOrEqual(size.core.raw);
    // Without zod, ext-tasks is its own code only; with it, much larger.
    expect(size.extTasks.raw).toBeGreaterThan(size.extTasksWithoutZod.raw * 2);
    expect(sizeLines(size).some((line) => line.includes('core ≤ 30.0 KiB gzip'))).toBe(true);
  });

  it('a page on SDK v2 grows by the library alone when it adds TaskClient', () => {
    const added = size.sdkPagePlusCore.raw - size.sdkPage.raw;
    // (Within 5%: the bundler's glue around the lazily loaded Client class.)
    expect(added).toBeLessThanOrEqual(size.taskClientOnly.raw * 1.05);
    expect(added).toBeGreaterThan(size.taskClientOnly.raw / 2);
  });
});
