/**
 * The benchmark runs compiled JavaScript, as users run the library: `tsc` compiles lib/ and
 * bench/ (bench/tsconfig.build.json) into a temporary directory once per run, and every scenario
 * process runs that copy with plain `node` (no on-the-fly TypeScript transform, whose helpers,
 * e.g. esbuild's `__name` on every closure, would be charged to the code under test). The copy
 * also freezes the library: one run measures one version of lib/ even while lib/ is edited.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A compiled copy of lib/ and bench/. */
export interface BenchBuild {
  /** The compiled bench/child.js. */
  readonly child: string;
  /** The compiled tree's root (bench/ and lib/ under it). */
  readonly dir: string;
  /** Human-readable origin of the library: commit, uncommitted changes, content hash. */
  readonly describe: string;
  remove(): void;
}

function hashDir(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else hash.update(path.relative(dir, full)).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

function git(args: readonly string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** Compiles lib/ and bench/ into a fresh temporary directory (with package.json and a node_modules link). */
export function buildBench(): BenchBuild {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-task-client-bench-'));
  const digest = hashDir(path.join(ROOT, 'lib'));
  try {
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        path.join(ROOT, 'bench/tsconfig.build.json'),
        '--outDir',
        dir,
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const out = error as { stdout?: Buffer };
    throw new Error(`Compiling lib/ and bench/ failed:\n${out.stdout?.toString('utf8') ?? String(error)}`, {
      cause: error,
    });
  }
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const commit = git(['rev-parse', '--short', 'HEAD']) || 'unknown commit';
  const dirty = git(['status', '--porcelain', '--', 'lib']) !== '';
  return {
    child: path.join(dir, 'bench', 'child.js'),
    dir,
    describe: `lib/ at ${commit}${dirty ? ' with uncommitted changes' : ''} (content sha256 ${digest}), compiled by tsc`,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
