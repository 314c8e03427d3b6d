/**
 * `npm run bench:compare -- <base> [<head>]`: the library's figures of two stored runs side by
 * side, to tell a regression from the noise of the machine. `<base>` and `<head>` are a path to a
 * results.json or a git revision (its bench/results.json is read with `git show`); `<head>`
 * defaults to the working tree's bench/results.json.
 *
 * For every row of mcp-task-client (and its SDK v2 variant) present in both runs, in process and
 * over stdio unless `--all` is given, it compares CPU per task (cold and warm), median lag, and heap
 * per in-flight task. A figure has **regressed beyond the spread** only when the head's best
 * process is worse than the base's worst one (head.min > base.max): the same rule the page uses for
 * "another contender is ahead". Improvements are counted the same way the other way round. It
 * measures nothing and writes nothing; the exit code is 1 when a figure regressed beyond the spread.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Row, Stat } from './report.js';

interface Stored {
  readonly generatedAt: string;
  readonly rows: readonly Row[];
}

/** One compared figure: its name, where it lives in a row, and whether lower is better (all are). */
const FIGURES: ReadonlyArray<readonly [string, (row: Row) => Stat | undefined]> = [
  ['CPU/task cold (ms)', (row) => row.cold?.cpuPerTaskMs],
  ['CPU/task warm (ms)', (row) => row.warm?.cpuPerTaskMs],
  ['lag median warm (ms)', (row) => row.warm?.lagMedianMs],
  ['heap/in-flight task (B)', (row) => row.heapPerTaskBytes],
];

const LIBRARY = new Set(['mcp-task-client', 'mcp-task-client-v2']);

function load(source: string): Stored {
  const text = existsSync(source)
    ? readFileSync(source, 'utf8')
    : execFileSync('git', ['show', `${source}:bench/results.json`], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(text) as Stored;
}

function keyOf(row: Row): string {
  return `${row.wire} ${row.transport} ${row.workload} N=${row.n} ${row.contender}`;
}

function usable(stat: Stat | undefined): stat is Stat {
  return stat !== undefined && Number.isFinite(stat.median) && Number.isFinite(stat.min) && Number.isFinite(stat.max);
}

function format(value: number): string {
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3);
}

function main(argv: readonly string[]): number {
  const all = argv.includes('--all');
  const [baseSource, headSource = 'bench/results.json'] = argv.filter((arg) => !arg.startsWith('--'));
  if (baseSource === undefined) {
    console.error('usage: npm run bench:compare -- <base: path or git revision> [<head>] [--all]');
    return 2;
  }
  const base = load(baseSource);
  const head = load(headSource);
  const before = new Map(base.rows.map((row) => [keyOf(row), row]));
  const lines: string[] = [];
  let compared = 0;
  let worse = 0;
  let better = 0;
  for (const row of head.rows) {
    if (!LIBRARY.has(row.contender) || (!all && row.transport === 'http')) continue;
    const old = before.get(keyOf(row));
    if (old === undefined) continue;
    for (const [name, read] of FIGURES) {
      const a = read(old);
      const b = read(row);
      if (!usable(a) || !usable(b)) continue;
      compared += 1;
      const verdict = b.min > a.max ? 'worse beyond spread' : b.max < a.min ? 'better beyond spread' : 'within spread';
      if (verdict.startsWith('worse')) worse += 1;
      if (verdict.startsWith('better')) better += 1;
      lines.push(
        `| ${keyOf(row)} | ${name} | ${format(a.median)} [${format(a.min)}–${format(a.max)}] | ${format(b.median)} [${format(b.min)}–${format(b.max)}] | ${(b.median / a.median).toFixed(2)}× | ${verdict} |`,
      );
    }
  }
  console.log(`Base: ${baseSource} (run of ${base.generatedAt}); head: ${headSource} (run of ${head.generatedAt}).\n`);
  console.log('| row | figure | base median [spread] | head median [spread] | head ÷ base | verdict |');
  console.log('|---|---|---:|---:|---:|---|');
  for (const line of lines) console.log(line);
  console.log(
    `\n${compared} figures compared: ${worse} worse beyond the spread, ${better} better beyond it, the rest within it.`,
  );
  return worse > 0 ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
