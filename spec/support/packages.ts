/**
 * The two packages of this repository as a host gets them: `npm pack` tarballs of the library
 * (the root) and of the CLI (cli/), installed with npm into scratch projects. Packing uses the
 * builds already made (`npm run build:all`, which `npm test` runs first) and skips the packages'
 * lifecycle scripts, so a running suite never sees dist/ rebuilt under it. Installing reaches the
 * npm registry for the packages' dependencies (the local npm cache first).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The file list `npm pack --json` reports for one package. */
export interface Packed {
  /** The tarball's absolute path. */
  readonly tarball: string;
  /** Paths inside the package, e.g. `dist/index.js`. */
  readonly files: readonly string[];
}

/** What a command printed, and its exit code. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment for a nested npm: without the variables an enclosing `npm test` sets for its own
 * package (npm_package_*, npm_lifecycle_*, npm_config_workspace*), which would leak into it.
 */
function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_|^npm_config_workspaces?$|^INIT_CWD$/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs `command args` in `cwd`; never throws for a non-zero exit (the result says it). */
export async function runIn(
  cwd: string,
  command: string,
  args: readonly string[],
  timeoutMs = 240_000,
  env: Record<string, string> = {},
): Promise<Ran> {
  try {
    const { stdout, stderr } = await exec(command, [...args], {
      cwd,
      env: npmEnv(env),
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string; message: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? failed.message,
    };
  }
}

/** Like {@link runIn}, but a non-zero exit throws with what the command printed. */
export async function mustRun(cwd: string, command: string, args: readonly string[], timeoutMs?: number): Promise<Ran> {
  const ran = await runIn(cwd, command, args, timeoutMs);
  if (ran.code !== 0)
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${ran.code}:\n${ran.stderr}\n${ran.stdout}`);
  return ran;
}

/** Packs the library (`package: 'library'`, the root) or the CLI (cli/) into `destination`. */
export async function pack(which: 'library' | 'cli', destination: string): Promise<Packed> {
  const dir = which === 'library' ? ROOT : join(ROOT, 'cli');
  const built =
    which === 'library' ? join(ROOT, 'dist', 'index.js') : join(ROOT, 'cli', 'dist', 'cli', 'src', 'main.js');
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build:all\` first (npm test does)`);
  const { stdout } = await mustRun(dir, 'npm', [
    'pack',
    '--ignore-scripts',
    '--json',
    '--pack-destination',
    destination,
  ]);
  const [report] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (report === undefined) throw new Error(`npm pack printed no report:\n${stdout}`);
  return { tarball: join(destination, report.filename), files: report.files.map((file) => file.path) };
}

/** A new scratch project (`package.json` only) in a temporary directory; `remove()` deletes it. */
export function scratchProject(name: string): { readonly dir: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `mcp-task-${name}-`));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `npm install <specs>` in `dir`, from the local cache where it can. */
export function npmInstall(dir: string, specs: readonly string[]): Promise<Ran> {
  return mustRun(dir, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn', ...specs]);
}

/** Every package name in `npm ls --omit=dev --all --json` of `dir`, at any depth. */
export async function productionTree(dir: string): Promise<Set<string>> {
  const { stdout } = await runIn(dir, 'npm', ['ls', '--omit=dev', '--all', '--json']);
  type Node = { dependencies?: Record<string, Node> };
  const names = new Set<string>();
  const walk = (node: Node): void => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      names.add(name);
      walk(child);
    }
  };
  walk(JSON.parse(stdout) as Node);
  return names;
}
