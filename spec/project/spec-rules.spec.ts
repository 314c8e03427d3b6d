/**
 * Every rule id cited in the package is explained in docs/spec-rules.md, and that page lists
 * each id once. Cited ids are bracketed (`[R29]`, `[V16]`, `[A11]`, `[S4]`, `[E3]`, ranges like
 * `[R6]-[R9]`) or bare whole words (`D6`, `D1-D4`, `A15`); `ID2`, `D3D`, `0xD3` or `D123` are not
 * ids. Pure file reads: no network, no child processes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES_PAGE = 'docs/spec-rules.md';
const SCANNED_DIRS = ['lib', 'cli', 'spec', 'docs', 'examples', 'bench'];
const SCANNED_FILES = ['README.md'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', '.git', 'bench/results']);
const SKIPPED_FILES = new Set(['bench/results.json']);
/** Text files only: images and SVG path data are not prose. */
const TEXT_EXTENSIONS = new Set([
  '.ts',
  '.mts',
  '.cts',
  '.js',
  '.mjs',
  '.cjs',
  '.md',
  '.json',
  '.yaml',
  '.yml',
  '.txt',
]);

/** The families and how many ids each must list at least (see the page's intro). */
const FAMILY_SIZES: Readonly<Record<string, number>> = { R: 39, V: 28, A: 19, S: 18, D: 18, E: 21 };

/** One id, bracketed or a bare whole word: letter, then one or two digits. */
const ID_PATTERN = /\[?\b([RVASDE])(\d{1,2})\b\]?/g;
/** What may stand between the two ends of a range, once backticks are dropped. */
const RANGE_GAP = /^\s*(?:-|–|\.\.)\s*$/;

interface Citation {
  readonly id: string;
  readonly line: number;
}

/** Ids cited in one line, ranges expanded; a backwards range is reported as `X9-X1`. */
function idsInLine(text: string): string[] {
  const ids: string[] = [];
  let previous: { family: string; number: number; end: number } | undefined;
  for (const match of text.matchAll(ID_PATTERN)) {
    const family = match[1]!;
    const number = Number(match[2]);
    const start = match.index;
    const gap = previous === undefined ? '' : text.slice(previous.end, start).replace(/`/g, '');
    if (previous !== undefined && previous.family === family && RANGE_GAP.test(gap)) {
      if (number < previous.number) ids.push(`${family}${previous.number}-${family}${number}`);
      for (let n = previous.number + 1; n < number; n += 1) ids.push(`${family}${n}`);
    }
    ids.push(`${family}${number}`);
    previous = { family, number, end: start + match[0].length };
  }
  return ids;
}

/** Ids cited in a whole file, with 1-based line numbers. */
function citationsIn(text: string): Citation[] {
  return text.split(/\r?\n/).flatMap((line, index) => idsInLine(line).map((id) => ({ id, line: index + 1 })));
}

/** Repo-relative paths (with `/`) of every scanned text file. */
function scannedFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !SKIPPED_DIRS.has(path)) walk(path);
      } else if (entry.isFile() && TEXT_EXTENSIONS.has(extname(entry.name)) && !SKIPPED_FILES.has(path)) {
        found.push(path);
      }
    }
  };
  for (const dir of SCANNED_DIRS) walk(dir);
  return [...found, ...SCANNED_FILES].sort();
}

/** The ids docs/spec-rules.md lists: the first cell of a table row, e.g. `| R29 | ... |`. */
function listedIds(page: string): Citation[] {
  const listed: Citation[] = [];
  page.split(/\r?\n/).forEach((line, index) => {
    const row = /^\|\s*`?\[?([RVASDE]\d{1,2})\]?`?\s*\|/.exec(line);
    if (row) listed.push({ id: row[1]!, line: index + 1 });
  });
  return listed;
}

const page = readFileSync(join(ROOT, RULES_PAGE), 'utf8');
const listed = listedIds(page);
const listedSet = new Set(listed.map((entry) => entry.id));

describe('rule ids (docs/spec-rules.md)', () => {
  it('finds bracketed, bare and ranged ids, and nothing else', () => {
    expect(idsInLine('see [R7]-[R9], [A1] and D1-D4')).toEqual(['R7', 'R8', 'R9', 'A1', 'D1', 'D2', 'D3', 'D4']);
    expect(idsInLine('`D1`-`D3` and R20-R22, A11')).toEqual(['D1', 'D2', 'D3', 'R20', 'R21', 'R22', 'A11']);
    expect(idsInLine('[S4] ([E3]); D12.')).toEqual(['S4', 'E3', 'D12']);
    expect(idsInLine('no ID2, D3D, 0xD3, #D3D3D3, E2E, D123, d6, v2 or [R#] here')).toEqual([]);
    expect(idsInLine('D3-R5 is no range')).toEqual(['D3', 'R5']);
  });

  it('lists every id at most once', () => {
    const seen = new Map<string, number>();
    const duplicates: string[] = [];
    for (const { id, line } of listed) {
      const first = seen.get(id);
      if (first === undefined) seen.set(id, line);
      else duplicates.push(`${RULES_PAGE}:${line}: ${id} (first listed on line ${first})`);
    }
    expect(duplicates).toEqual([]);
  });

  it('lists every family in full', () => {
    const missing = Object.entries(FAMILY_SIZES).flatMap(([family, size]) =>
      Array.from({ length: size }, (_, i) => `${family}${i + 1}`).filter((id) => !listedSet.has(id)),
    );
    expect(missing).toEqual([]);
  });

  it('explains every id cited in lib, cli, spec, docs, examples, bench and README.md', () => {
    const files = scannedFiles();
    expect(files).toContain(RULES_PAGE);
    expect(files.some((file) => file.startsWith('lib/'))).toBe(true);
    expect(files.some((file) => file.startsWith('cli/src/'))).toBe(true);
    const unknown: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const { id, line } of citationsIn(text)) {
        if (!listedSet.has(id)) unknown.push(`${file}:${line}: ${id} is not listed in ${RULES_PAGE}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
