/**
 * Every relative link in README.md, the packages' READMEs and docs/*.md leads somewhere: the file
 * it names exists, and an anchor (`#…`) names a heading of that file, as GitHub makes heading
 * anchors (lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` for repeats). Links in
 * code blocks and inline code are not links; links to other sites are not checked (no network).
 * Every code block also closes on a line of its own (one that does not runs on over the prose).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The markdown files a reader follows links in. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  const readmes = ['README.md', 'cli/README.md', 'bench/README.md', 'examples/browser/README.md'];
  return [...readmes.filter((file) => existsSync(join(ROOT, file))), ...docs];
}

/** The text of a markdown file outside fenced code blocks and inline code. */
function proseOf(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/``[^`\n]*``|`[^`\n]*`/g, '');
}

/**
 * The lines where a fenced code block is closed with text after the fence (```` ``` text ````):
 * markdown does not read that as a close, so the block runs on over the prose after it.
 */
function badFenceCloses(text: string): number[] {
  const bad: number[] = [];
  let open: string | undefined;
  text.split('\n').forEach((line, index) => {
    const fence = /^(```|~~~)/.exec(line)?.[1];
    if (fence === undefined) return;
    if (open === undefined) open = fence;
    else if (fence === open) {
      if (line.slice(fence.length).trim() !== '') bad.push(index + 1);
      open = undefined;
    }
  });
  return bad;
}

/** GitHub's anchor for a heading's text. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** The anchors of a markdown file's headings (and of explicit `<a id>`/`<a name>` tags). */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached !== undefined) return cached;
  const text = readFileSync(file, 'utf8');
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slugOf(match[1]!.replace(/`/g, ''));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  anchorCache.set(file, anchors);
  return anchors;
}

/** Every broken relative link of one markdown file, as `target: why`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const prose = proseOf(readFileSync(join(ROOT, file), 'utf8'));
  for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
    const [path = '', anchor] = target.split('#', 2);
    const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURIComponent(path));
    if (!existsSync(resolved)) {
      broken.push(`${target}: no such file (${relative(ROOT, resolved)})`);
      continue;
    }
    if (anchor === undefined || anchor === '' || !resolved.endsWith('.md') || statSync(resolved).isDirectory())
      continue;
    if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) broken.push(`${target}: no such heading`);
  }
  return broken;
}

describe('links in the docs', () => {
  it('finds the headings and links it checks (the checker itself)', () => {
    expect(slugOf('What a task allocates (per task)')).toBe('what-a-task-allocates-per-task');
    expect(slugOf('`resume()` and references')).toBe('resume-and-references');
    expect(slugOf('R: requestor rules (MCP 2025-11-25)')).toBe('r-requestor-rules-mcp-2025-11-25');
    expect(proseOf('a [b](c) `[d](e)`\n```\n[f](g)\n```\n')).not.toMatch(/\(e\)|\(g\)/);
    expect(markdownFiles()).toContain('docs/getting-started.md');
    expect(badFenceCloses('a\n```text\nx\n``` more prose\n```ts\ny\n```\n')).toEqual([4]);
    expect(brokenLinks('spec/fixtures/doc-links.md')).toEqual([
      './no-such-file.md: no such file (spec/fixtures/no-such-file.md)',
      '#no-such-heading: no such heading',
    ]);
  });

  it.each(markdownFiles())('every relative link in %s leads to a file and heading that exist', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it.each(markdownFiles())('every code block in %s closes on a line of its own', (file) => {
    expect(badFenceCloses(readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });
});
