/**
 * Every ```ts block in README.md and docs/*.md compiles on its own, against the library's source
 * (`mcp-task-client` and its subpaths map to lib/), under `strict` and `exactOptionalPropertyTypes`
 * as a careful user's project would. A block declares what it assumes (`declare const tasks:
 * TaskClient;`), so a reader can paste it. Each block is its own module: names from one block are
 * not seen by another.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = join(ROOT, 'node_modules', '.cache', 'doc-snippets');

interface Snippet {
  readonly source: string;
  readonly line: number;
  readonly code: string;
}

/** The ```ts blocks of one markdown file, with the line each starts on. */
function snippetsOf(file: string): Snippet[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split(/\r?\n/);
  const found: Snippet[] = [];
  let start = -1;
  let body: string[] = [];
  lines.forEach((text, index) => {
    if (start < 0 && /^```ts\s*$/.test(text)) {
      start = index + 1;
      body = [];
    } else if (start >= 0 && /^```\s*$/.test(text)) {
      found.push({ source: file, line: start, code: body.join('\n') });
      start = -1;
    } else if (start >= 0) body.push(text);
  });
  return found;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

/** The library's subpath entries, mapped to their sources. */
function paths(): Record<string, string[]> {
  type Exports = Record<string, string | { import?: string }>;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Exports };
  const mapped: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    const built = typeof target === 'string' ? target : target.import;
    if (built === undefined || !built.startsWith('./dist/') || !built.endsWith('.js')) continue;
    const name = key === '.' ? 'mcp-task-client' : `mcp-task-client/${key.slice(2)}`;
    // ./dist/<path>.js is built from lib/<path>.ts.
    mapped[name] = [join(ROOT, 'lib', `${built.slice('./dist/'.length, -'.js'.length)}.ts`)];
  }
  return mapped;
}

describe('code blocks in the docs', () => {
  const snippets = markdownFiles().flatMap(snippetsOf);

  it('finds the blocks', () => {
    expect(snippets.length).toBeGreaterThan(20);
  });

  it('every ```ts block compiles on its own', () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const files = new Map<string, Snippet>();
    snippets.forEach((snippet, index) => {
      const name = join(OUT, `${snippet.source.replace(/[/.]/g, '_')}_${snippet.line}_${index}.ts`);
      // `export {}` makes each block a module of its own (top-level await, no shared names).
      writeFileSync(name, `${snippet.code}\nexport {};\n`);
      files.set(name, snippet);
    });
    writeFileSync(join(OUT, 'package.json'), '{ "type": "module" }\n');
    const program = ts.createProgram([...files.keys()], {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts', 'lib.dom.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      exactOptionalPropertyTypes: true,
      noUnusedLocals: false,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      allowImportingTsExtensions: true,
      paths: paths(),
    });
    const problems: string[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const file = diagnostic.file?.fileName;
      const snippet = file === undefined ? undefined : files.get(file);
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      if (snippet === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
        problems.push(`${file === undefined ? '(global)' : relative(ROOT, file)}: ${message}`);
        continue;
      }
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      problems.push(`${snippet.source}:${snippet.line + line + 1}: ${message}`);
    }
    expect(problems.join('\n')).toBe('');
  }, 120_000);
});
