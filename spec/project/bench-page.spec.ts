/**
 * The published page is what its run measured: docs/performance.md and docs/performance.svg are
 * exactly what bench/render.ts makes of the committed bench/results.json. A hand edit of the page,
 * or a change to its layout (bench/report.ts, bench/chart.ts) not rendered again with
 * `npm run bench:render`, fails here.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callSummary } from '../../bench/calls.js';
import { causesMarkdown, clientEntries, codeCalls, type CauseProfile } from '../../bench/causes.js';
import { COLLECTIONS_PER_FORCE } from '../../bench/forced-gc.js';
import { compilesByPhase, lostBeforeWarm } from '../../bench/profile.js';
import { renderStored } from '../../bench/render.js';

const file = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/performance.md', () => {
  const page = renderStored(JSON.parse(file('bench/results.json')) as Parameters<typeof renderStored>[0]);

  it('is what bench/results.json gives, line for line', () => {
    expect(file('docs/performance.md').split('\n')).toEqual(page.markdown.split('\n'));
  });

  it('has the chart that bench/results.json gives', () => {
    expect(file('docs/performance.svg')).toBe(page.svg);
  });

  it('says which run it comes from', () => {
    const run = JSON.parse(file('bench/results.json')) as { generatedAt: string };
    expect(page.markdown).toContain(`on ${run.generatedAt}`);
  });

  it('shows a miss of requests per task with figures that differ (1.203 vs 1.200, never 1.20 vs 1.20)', () => {
    // The issue-15 table, whose last column is requests per task (the issue-29 table follows it).
    const section = page.markdown.split('## Targets (issue 15)')[1]?.split('\n## ')[0] ?? '';
    const misses = section.split('\n').filter((l) => l.startsWith('| ') && (l.split('|').at(-2) ?? '').includes('✗'));
    for (const line of misses) {
      const pairs = [...(line.split('|').at(-2) ?? '').matchAll(/([\d.]+) vs ([\d.]+)/g)];
      expect(pairs.length, line).toBe(2);
      // A half whose figures are equal is met; a miss has a half whose figures differ.
      expect(
        pairs.some(([, ours, theirs]) => ours !== theirs),
        line,
      ).toBe(true);
    }
  });

  it('gives each issue-29 check the best pair of processes, no worse than the medians, and marks a miss within spread exactly when that pair met the target', () => {
    const section = page.markdown.split('## Targets (issue 29)')[1]?.split('\n## ')[0] ?? '';
    const rows = section.split('\n').filter((l) => /^\| (CPU|heap)/.test(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const line of rows) {
      const cells = line.split('|').map((c) => c.trim());
      const [target = '', , , , ratio = '', best = '', met = ''] = cells.slice(1);
      const limit = Number(/≤ ([\d.]+)×/.exec(target)?.[1]);
      const medians = ratio.split(' / ').map((r) => Number.parseFloat(r));
      const pairs = best.split(' / ').map((r) => Number.parseFloat(r));
      expect(pairs.length, line).toBe(medians.length);
      pairs.forEach((pair, i) => expect(pair, line).toBeLessThanOrEqual((medians[i] ?? 0) + 0.005));
      // A pair shown rounded to the limit itself may fall either side of it.
      if (met === '✓' || pairs.some((pair) => Math.abs(pair - limit) < 0.006)) continue;
      expect(met.includes('within spread'), line).toBe(pairs.every((pair) => pair < limit));
    }
  });

  it("counts the optimizing compilations of each phase between the harness's forced collections, and prints them beside the floor's", () => {
    const gc = (ms: number, why: string): string =>
      `[1:0x1]    ${ms} ms: Mark-Compact 20.1 (54.2) -> 20.1 (54.2) MB, 23.45 / 0.00 ms  (average mu = 0.9) ${why}`;
    const compile = (name: string): string =>
      `[compiling method 0x1 <JSFunction ${name} (sfi = 0x2)> (target TURBOFAN), mode: ConcurrencyMode::kConcurrent]`;
    // The harness's forced collections, as many as one forceGc() makes, at `ms`, `ms + 1`, ...
    const forced = (ms: number): string[] =>
      Array.from({ length: COLLECTIONS_PER_FORCE }, (_, i) => gc(ms + i, 'testing; GC in old space requested'));
    const log = [
      compile('setup'),
      ...forced(10),
      compile('a'),
      compile('b'),
      '[completed compiling 0x1 <JSFunction a (sfi = 0x2)> (target TURBOFAN) - took 0.1, 1.0, 0.1 ms]',
      gc(30, 'allocation failure;'),
      compile('c'),
      ...forced(40),
      compile('warm-up'),
      ...forced(60),
      compile('d'),
      '[compiling method 0x1 <JSFunction e (sfi = 0x2)> (target MAGLEV), mode: ConcurrencyMode::kConcurrent]',
      ...forced(80),
      compile('after'),
    ].join('\n');
    expect(compilesByPhase(log)).toEqual({ cold: 3, warm: 1 });
    // Thrown away before the warm phase: printed during the forced collections before the warm
    // phase (each before its own line), or during the warm-up; not those of the cold phase's end or later.
    const lost = (name: string): string =>
      `[marking dependent code 0x1 <Code TURBOFAN> (0x2 <SharedFunctionInfo ${name}>) (opt id 1) for deoptimization, reason: weak objects]`;
    const afterCold = forced(40);
    const beforeWarm = forced(60);
    const weak = [
      lost('cold'),
      ...forced(10),
      lost('duringCold'),
      ...afterCold.slice(0, -1),
      lost('atColdEnd'),
      afterCold.at(-1)!,
      lost('warmUp'),
      '[marking dependent code 0x1 <Code TURBOFAN> (0x2 <SharedFunctionInfo warmUp>) (opt id 2) for deoptimization, reason: code dependencies]',
      lost(''),
      beforeWarm[0]!,
      lost('beforeWarm'),
      ...beforeWarm.slice(1, -1),
      lost('warmUp'),
      beforeWarm.at(-1)!,
      lost('duringWarm'),
    ].join('\n');
    expect(lostBeforeWarm(weak)).toEqual(['warmUp', '(anonymous)', 'beforeWarm']);
    const profile = (contender: CauseProfile['contender'], cold: number, warm: number): CauseProfile => ({
      wire: 'ext',
      transport: 'memory',
      workload: 'random-poll',
      n: 1000,
      contender,
      cpuPerTaskMs: 0.3,
      ownerUs: {},
      moduleUs: {},
      compiles: { cold, warm },
    });
    const text = causesMarkdown([profile('mcp-task-client', 60, 43), profile('floor', 27, 18)], []).join('\n');
    expect(text).toContain("60 in the cold phase and 43 in the warm one, against the floor's 27 and 18.");
  });

  it('counts the entries per task of the client code, and prints them beside the floor', () => {
    // Precise coverage as the inspector gives it (detailed: false): one range per function, its
    // count the entries since the last take; a script's top level (empty name, offset 0) ran once when it loaded.
    const dir = mkdtempSync(path.join(tmpdir(), 'calls-'));
    try {
      const lib = path.join(dir, 'lib', 'engine');
      mkdirSync(lib, { recursive: true });
      writeFileSync(path.join(lib, 'record.js'), 'function a() {}\nfunction b() {}\nfunction a() {}\n');
      const url = `file://${path.join(lib, 'record.js')}`;
      const fn = (functionName: string, startOffset: number, count: number) => ({
        functionName,
        ranges: [{ startOffset, count }],
      });
      writeFileSync(
        path.join(dir, 'calls.json'),
        JSON.stringify([
          { url, functions: [fn('', 0, 1), fn('a', 0, 2500), fn('b', 16, 500), fn('a', 32, 1200)] },
          { url: 'file:///x/bench/contenders/floor.js', functions: [fn('start', 0, 1000)] },
          { url: 'file:///x/node_modules/zod/v4/core/schemas.js', functions: [fn('parse', 0, 2000)] },
          { url: 'node:internal/timers', functions: [fn('processTimers', 0, 3000)] },
        ]),
      );
      const summary = callSummary(path.join(dir, 'calls.json'), 1000);
      expect(summary.libraryFunctions).toEqual([
        { name: 'a  lib/engine/record.js:1', callsPerTask: 2.5 },
        { name: 'a  lib/engine/record.js:3', callsPerTask: 1.2 },
        { name: 'b  lib/engine/record.js:2', callsPerTask: 0.5 },
      ]);
      const calls = codeCalls(summary);
      expect(calls.owners['Node timers']).toEqual({ perTask: 3, functions: 1 });
      // One entry per name: the most entered function of that name.
      expect(calls.top).toEqual({ a: 2.5, b: 0.5 });
      // The client's code: the library, the contender's own code and the schema validation it runs
      // (Node's timers are not the client's); b runs on every other task only.
      expect(clientEntries(calls)).toEqual({
        client: { perTask: 7, functions: 4 },
        library: { perTask: 4.2, functions: 2 },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const profile = (contender: CauseProfile['contender'], library: number, floorCode: number): CauseProfile => ({
      wire: 'ext',
      transport: 'memory',
      workload: 'random-poll',
      n: 1000,
      contender,
      cpuPerTaskMs: 0.3,
      ownerUs: {},
      moduleUs: {},
      calls: {
        owners: {
          ...(library > 0 ? { 'library under test (lib)': { perTask: library, functions: 240 } } : {}),
          'contender code (bench/contenders)': { perTask: floorCode, functions: floorCode > 10 ? 11 : 1 },
          'SDK v2 request path (Protocol, its maps, schemas)': { perTask: 6, functions: 3 },
          'Node timers': { perTask: 28, functions: 10 },
        },
        top: library > 0 ? { flag: 25, before: 16 } : {},
      },
    });
    const text = causesMarkdown([profile('mcp-task-client', 529.1, 2), profile('floor', 0, 15)], []).join('\n');
    expect(text).toContain(
      "enters functions 537 times per task, 244 of them on every task, against the floor's 21 and 14; the library's own code alone, 529 and 240. The library's most entered functions, per task: flag 25, before 16.",
    );
  });
});
