/**
 * The library in a host's shoes: it loads with only one of the two SDKs installed (issue 11: the
 * root entry point loads neither eagerly), and without the optional peers `ai` and `@opentelemetry/api`, and it classifies errors by their JSON-RPC code, so an
 * SDK client from the SDK's CommonJS build beside this ESM library works (reliability review,
 * item 15: two copies of every SDK error class then exist). And the two packages as published
 * (issue 24): the library's tarball installed alone brings no CLI dependency and no lifecycle
 * script, and the CLI's tarball installed beside it runs a task on its bundled example server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TaskClient, TaskFailedError, TaskNotFoundError, type McpClient } from '../../lib/index.js';
import { within } from '../helpers.js';
import { mustRun, npmInstall, pack, productionTree, runIn, scratchProject, type Packed } from '../support/packages.js';
import { ScriptedServer, creating, rpcError } from '../support/scripted-server.js';
import { createLinkedPair } from '../support/sdk.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('one SDK installed', () => {
  for (const hidden of ['v1', 'v2'] as const) {
    it(`imports and runs a task with ${hidden === 'v1' ? '@modelcontextprotocol/sdk' : '@modelcontextprotocol/client'} missing`, async () => {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', 'spec/fixtures/only-one-sdk.ts'],
        { cwd: root, env: { ...process.env, HIDE_SDK: hidden }, timeout: 30_000 },
      );
      expect(stdout).toContain(`ok hidden=${hidden} wire=2025-11-25 text=done`);
    });
  }
});

describe('without the optional peer `ai`', () => {
  it('the root entry point loads (it never imports mcp-task-client/ai); mcp-task-client/ai says ai is missing', async () => {
    const probe = [
      "const root = await import('./lib/index.ts');",
      "console.log('root', typeof root.TaskClient);",
      "await import('./lib/ai.ts').then(() => console.log('ai loaded'), (error) => console.log('ai', error.code, error.message.split(' imported')[0]));",
    ].join('\n');
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', '--input-type=module', '-e', probe],
      {
        cwd: root,
        env: { ...process.env, HIDE_PACKAGE: 'ai' },
        timeout: 30_000,
      },
    );
    expect(stdout).toBe("root function\nai ERR_MODULE_NOT_FOUND Cannot find package 'ai'\n");
  });
});

describe('without the optional peer `@opentelemetry/api`', () => {
  it('the root entry point loads (it never imports OpenTelemetry); mcp-task-client/otel says the API is missing', async () => {
    const probe = [
      "const root = await import('./lib/index.ts');",
      "console.log('root', typeof root.TaskClient);",
      "await import('./lib/otel.ts').then(() => console.log('otel loaded'), (error) => console.log('otel', error.code, error.message.split(' imported')[0]));",
    ].join('\n');
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', '--input-type=module', '-e', probe],
      {
        cwd: root,
        env: { ...process.env, HIDE_PACKAGE: '@opentelemetry/api' },
        timeout: 30_000,
      },
    );
    expect(stdout).toBe("root function\notel ERR_MODULE_NOT_FOUND Cannot find package '@opentelemetry/api'\n");
  });
});

/** Runs `mcp-task tools [args]` with a package hidden (spec/fixtures/hide-sdk.ts); its failure, or undefined if it succeeded. */
function cliWithout(
  hide: { HIDE_SDK: 'v1' } | { HIDE_PACKAGE: string },
  args: readonly string[] = [],
): Promise<{ code?: number; stderr?: string } | undefined> {
  return run(
    process.execPath,
    ['--import', 'tsx', '--import', './spec/fixtures/hide-sdk.ts', 'cli/src/main.ts', 'tools', ...args],
    {
      cwd: root,
      env: { ...process.env, ...hide },
      timeout: 30_000,
    },
  ).then(
    () => undefined,
    (error: unknown) => error as { code?: number; stderr?: string },
  );
}

describe('the mcp-task CLI without SDK v1', () => {
  // It runs on SDK v2 alone against a server it is given (spec/cli/sdk-v2-only.spec.ts); only the
  // bundled example server, built on SDK v1's McpServer, needs SDK v1.
  it('without a target, says in one line that the example server needs @modelcontextprotocol/sdk, and exits 1 (no stack trace)', async () => {
    const failure = await cliWithout({ HIDE_SDK: 'v1' });
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('the bundled example server needs @modelcontextprotocol/sdk (SDK v1)');
    expect(failure?.stderr).toContain('--stdio');
    expect(failure?.stderr).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
  });

  it('a package the SDK needs that is missing is reported as itself, not as the SDK missing', async () => {
    const failure = await cliWithout({ HIDE_PACKAGE: 'cross-spawn' }, ['--stdio', 'cat']);
    expect(failure?.code).not.toBe(0);
    expect(failure?.stderr).toContain("Cannot find package 'cross-spawn'");
    expect(failure?.stderr).not.toContain('needs');
  });
});

describe('an SDK client from the CommonJS build', () => {
  async function cjsPair() {
    const require = createRequire(import.meta.url);
    const { Client } = require('@modelcontextprotocol/sdk/client/index.js') as {
      Client: new (info: object) => McpClient & { connect(transport: unknown): Promise<void> };
    };
    const server = new ScriptedServer({ tools: [{ name: 'job', taskSupport: 'required' }] });
    const [clientSide, serverSide] = createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'cjs-client', version: '1.0.0' });
    await client.connect(clientSide);
    const tasks = new TaskClient(client);
    cleanups.push(async () => {
      await tasks.close();
      await client.close();
      await server.close();
    });
    return { server, tasks };
  }

  it("a failed task's -32603 still gives TaskFailedError, at once, with no retries", async () => {
    const { server, tasks } = await cjsPair();
    creating(server, { taskId: 'cjs-task-1', pollInterval: 10 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.finish('cjs-task-1', 'failed', { error: rpcError(-32603, 'the tool crashed') }, {}, true);
    const error = await within(handle.result().catch((e: unknown) => e));
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).rpcError).toMatchObject({ code: -32603, message: 'the tool crashed' });
    expect(server.count('tasks/result')).toBe(1);
  });

  it('-32602 still means the task vanished', async () => {
    const { server, tasks } = await cjsPair();
    creating(server, { taskId: 'cjs-task-2', pollInterval: 10 });
    const handle = await tasks.callToolAsTask('job');
    server.tasks.delete('cjs-task-2');
    const error = await within(handle.result().catch((e: unknown) => e));
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });
});

/** The lifecycle scripts npm runs (or warns about) when a host installs a package. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];
/** The CLI's own dependencies, which a host of the library alone must not get. */
const CLI_ONLY = ['commander', '@clack/prompts', 'picocolors', 'zod'];

/** Every file under `dir`, as paths relative to it with `/`. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(dir, path) : [path];
  });
}

describe('the packages as published (npm pack, npm install)', { timeout: 600_000 }, () => {
  let packs: string;
  let library: Packed;
  let cli: Packed;
  const removals: Array<() => void> = [];
  beforeAll(async () => {
    packs = mkdtempSync(join(tmpdir(), 'mcp-task-packs-'));
    removals.push(() => rmSync(packs, { recursive: true, force: true }));
    library = await pack('library', packs);
    cli = await pack('cli', packs);
  }, 240_000);
  afterAll(() => {
    for (const remove of removals.splice(0)) remove();
  });

  /** The tarball unpacked into a scratch directory: its package/ folder. */
  async function unpacked(tarball: string): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-task-unpacked-'));
    removals.push(() => rmSync(dir, { recursive: true, force: true }));
    await mustRun(dir, 'tar', ['-xzf', tarball]);
    return join(dir, 'package');
  }

  it("the library's tarball: no lifecycle script a host would run or be warned about, no CLI, every source map with its sources, no declaration maps", async () => {
    const dir = await unpacked(library.tarball);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
      bin?: unknown;
      dependencies?: Record<string, string>;
    };
    for (const script of INSTALL_SCRIPTS) expect(manifest.scripts?.[script], script).toBeUndefined();
    expect(manifest.bin).toBeUndefined();
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['eventemitter3', 'p-retry']);

    const files = filesUnder(dir);
    expect(
      files.filter((file) => file.startsWith('dist/cli/') || (file.startsWith('dist/') && file.includes('example'))),
    ).toEqual([]);
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.d.ts.map'))).toEqual([]);
    // A map that names lib/*.ts without carrying it points at files the package does not have.
    const scripts = files.filter((file) => file.startsWith('dist/') && file.endsWith('.js'));
    const maps = files.filter((file) => file.endsWith('.js.map'));
    expect(maps.length).toBe(scripts.length);
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(readFileSync(join(dir, map), 'utf8')) as {
        sources: string[];
        sourcesContent?: unknown[];
      };
      expect(sourcesContent?.length, map).toBe(sources.length);
      for (const content of sourcesContent ?? [])
        expect(typeof content === 'string' && content.length > 0, map).toBe(true);
    }
  });

  it('a host that installs only the library gets p-retry and eventemitter3, no CLI dependency (npm ls --omit=dev), and no install-script warning', async () => {
    const host = scratchProject('library-host');
    removals.push(host.remove);
    const installed = await npmInstall(host.dir, [library.tarball]);
    expect(installed.stderr).not.toMatch(/install-scripts.*mcp-task-client|mcp-task-client.*prepare/);
    const tree = await productionTree(host.dir);
    expect(tree.has('mcp-task-client')).toBe(true);
    expect(tree.has('p-retry') && tree.has('eventemitter3')).toBe(true);
    for (const name of [...CLI_ONLY, 'mcp-task']) expect(tree.has(name), name).toBe(false);
    // The root entry point loads with neither SDK nor ai installed (they are optional peers).
    const loaded = await mustRun(host.dir, process.execPath, [
      '--input-type=module',
      '-e',
      "const m = await import('mcp-task-client'); console.log(typeof m.TaskClient);",
    ]);
    expect(loaded.stdout).toBe('function\n');
  });

  it("the CLI's tarball: the launcher, the compiled CLI and the example server it embeds; no maps, no sources, no lifecycle script", async () => {
    const dir = await unpacked(cli.tarball);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
      bin?: Record<string, string>;
      dependencies?: Record<string, string>;
    };
    for (const script of INSTALL_SCRIPTS) expect(manifest.scripts?.[script], script).toBeUndefined();
    expect(manifest.bin?.['mcp-task']?.replace(/^\.\//, '')).toBe('bin/mcp-task.js');
    expect(manifest.dependencies?.['mcp-task-client']).toMatch(/^\^?\d+\.\d+\.\d+$/);
    const files = filesUnder(dir);
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/mcp-task.js',
        'dist/cli/src/main.js',
        'dist/cli/src/commands/call.js',
        'dist/examples/server.js',
        'README.md',
      ]),
    );
    expect(files.filter((file) => file.endsWith('.map') || file.endsWith('.ts'))).toEqual([]);
    // The CLI reaches the library by its package name only: no copy of it, no path into it.
    expect(files.filter((file) => file.startsWith('dist/lib/') || file.startsWith('lib/'))).toEqual([]);
  });

  it('the CLI installed beside the library: mcp-task --help and --version, then a real call against its bundled example server', async () => {
    const host = scratchProject('cli-host');
    removals.push(host.remove);
    const installed = await npmInstall(host.dir, [library.tarball, cli.tarball]);
    expect(installed.stderr).not.toMatch(/install-scripts.*mcp-task|mcp-task.*prepare/);
    // One library: the CLI's dependency is the tarball installed beside it, not a second copy.
    expect(
      filesUnder(join(host.dir, 'node_modules', 'mcp-task')).filter((file) =>
        file.startsWith('node_modules/mcp-task-client/'),
      ),
    ).toEqual([]);
    const bin = join(host.dir, 'node_modules', '.bin', 'mcp-task');

    const help = await runIn(host.dir, bin, ['--help'], 30_000);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: mcp-task');
    expect(help.stdout).toContain('call [options] <tool> [args...]');
    const version = await runIn(host.dir, bin, ['--version'], 30_000);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+ \(mcp-task-client \d+\.\d+\.\d+\)$/);

    const call = await runIn(host.dir, bin, ['call', 'analyze', 'id=7', 'steps=2', 'stepMs=50'], 60_000);
    expect(call.code, call.stderr).toBe(0);
    const last = JSON.parse(call.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({
      type: 'result',
      outcome: 'completed',
      exitCode: 0,
      wire: '2025-11-25',
      result: { content: [{ type: 'text', text: 'analysis of 7 done in 2 steps' }] },
    });
  });
});
