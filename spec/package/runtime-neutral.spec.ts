/**
 * The built package runs wherever its SDK does: browsers, Workers, Deno, Bun and Node. Each entry
 * point a host imports (dist/index.js, ai.js, internal.js, doctor.js, otel.js, receiver.js) is walked through its whole
 * import graph, dependencies included (esbuild resolves it as a bundler would, peers left out):
 * no module of Node's (`node:*` or a bare builtin) is imported, and no file uses a Node global.
 * The export map points every runtime at the same files (there is no Node-only variant to pick).
 * The one entry point left out is `mcp-task-client/bullmq`: BullMQ and its Redis client run on
 * Node only, and so does that integration (eslint.config.js lets lib/bullmq/ use Node).
 * It reads dist/: `npm run build` first (`npm test` does).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const DIST = join(ROOT, 'dist');
/**
 * Peers the host installs itself: the SDKs (each has its own browser and Worker builds), the AI
 * SDK and the OpenTelemetry API (whose one mention of Node's `global` is the last fallback after
 * `globalThis`, `self` and `window`).
 */
const PEERS = /^(@modelcontextprotocol\/|ai$|@opentelemetry\/api$)/;
/** Node's globals (as forbidden in lib/ by eslint.config.js); CommonJS files get module, exports and require from the bundler. */
const NODE_GLOBALS = ['process', 'Buffer', 'setImmediate', 'clearImmediate', 'global', '__dirname', '__filename'];
const COMMONJS_GLOBALS = ['require', 'module', 'exports'];

/** The newest modification time under `dir` of files whose path passes `keep`. */
function newest(dir: string, keep: (path: string) => boolean): number {
  let latest = 0;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, name);
    if (keep(path) && statSync(path).isFile()) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

/** Every specifier the graph of `entry` (a file of dist/, or a module's text) imports (with its importer), and the files in it. */
async function graphOf(
  entry: string | { contents: string },
): Promise<{ imports: Array<{ path: string; importer: string }>; inputs: Metafile['inputs'] }> {
  const imports: Array<{ path: string; importer: string }> = [];
  const record: Plugin = {
    name: 'record',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        imports.push({ path: args.path, importer: args.importer === '' ? 'probe.js' : relative(ROOT, args.importer) });
        const builtin = args.path.startsWith('node:') || builtinModules.includes(args.path);
        return builtin || PEERS.test(args.path) ? { path: args.path, external: true } : undefined;
      });
    },
  };
  const result = await build({
    ...(typeof entry === 'string'
      ? { entryPoints: [join(DIST, entry)] }
      : { stdin: { ...entry, resolveDir: ROOT, sourcefile: 'probe.js' } }),
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    logLevel: 'silent',
    plugins: [record],
  });
  return { imports, inputs: result.metafile.inputs };
}

const linter = new Linter({ configType: 'flat' });

/** The Node globals module text `source` uses, as `name (line)`. */
function nodeGlobalsIn(source: string, commonjs: boolean): string[] {
  const messages = linter.verify(source, [
    {
      linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'off' },
      languageOptions: { sourceType: commonjs ? 'commonjs' : 'module', ecmaVersion: 'latest', globals: {} },
      rules: {
        'no-restricted-globals': ['error', ...(commonjs ? NODE_GLOBALS : [...NODE_GLOBALS, ...COMMONJS_GLOBALS])],
      },
    },
  ]);
  // (Inline eslint comments are ignored, so none can hide a use; the notes about them are dropped.)
  return messages.flatMap((m) =>
    m.fatal === true
      ? [`unparsable: ${m.message}`]
      : m.ruleId === 'no-restricted-globals'
        ? [`${/'(\w+)'/.exec(m.message)?.[1]} (line ${m.line})`]
        : [],
  );
}

describe('the built package is runtime-neutral', () => {
  it('dist/ is built from the current lib/', () => {
    const built = statSync(join(DIST, 'index.js'), { throwIfNoEntry: false });
    expect(built, 'dist/index.js is missing: run npm run build').toBeDefined();
    const sources = newest(join(ROOT, 'lib'), (path) => path.endsWith('.ts'));
    expect(sources <= built!.mtimeMs, 'lib/ changed after the last build: run npm run build').toBe(true);
  });

  for (const entry of ['index.js', 'ai.js', 'internal.js', 'doctor.js', 'otel.js', 'receiver.js']) {
    it(
      `dist/${entry}: no Node module anywhere in its import graph, no Node global in any of its files`,
      { timeout: 60_000 },
      async () => {
        const { imports, inputs } = await graphOf(entry);
        const files = Object.keys(inputs);
        // The graph is the library and its bundled dependencies; it reached both.
        expect(files.filter((file) => file.startsWith('dist/')).length).toBeGreaterThan(
          { 'index.js': 50, 'ai.js': 5, 'internal.js': 20, 'doctor.js': 20, 'otel.js': 5, 'receiver.js': 10 }[entry]!,
        );
        if (entry === 'index.js') {
          expect(files.some((file) => file.includes('node_modules/eventemitter3/'))).toBe(true);
          // The receiver is its own entry point: the root's graph has none of it.
          expect(files.filter((file) => file.startsWith('dist/receiver'))).toEqual([]);
        }
        const fromNode = imports.filter(({ path }) => path.startsWith('node:') || builtinModules.includes(path));
        expect(fromNode.map(({ path, importer }) => `${importer} imports ${path}`)).toEqual([]);
        const globals = files.flatMap((file) =>
          nodeGlobalsIn(readFileSync(join(ROOT, file), 'utf8'), inputs[file]!.format === 'cjs').map(
            (use) => `${file}: ${use}`,
          ),
        );
        expect(globals).toEqual([]);
      },
    );
  }

  it('the check itself: a Node module or a Node global in the graph is reported', async () => {
    const probe = [
      "import { randomUUID } from 'node:crypto';",
      "export const load = () => import('fs');",
      'export const env = process.env.X;',
      "export const bytes = Buffer.from('x');",
      'export const cjs = typeof module === "object" ? require : undefined;',
      'export const local = (process) => process + randomUUID();',
    ].join('\n');
    expect(nodeGlobalsIn(probe, false)).toEqual([
      'process (line 3)',
      'Buffer (line 4)',
      'module (line 5)',
      'require (line 5)',
    ]);
    expect(nodeGlobalsIn('module.exports = { env: process.env.X, load: require, bytes: Buffer };', true)).toEqual([
      'process (line 1)',
      'Buffer (line 1)',
    ]);
    const { imports } = await graphOf({ contents: probe });
    expect(imports.map(({ path }) => path)).toEqual(['node:crypto', 'fs']);
  });

  it('the export map points every runtime at one build: one JavaScript file per entry point, whatever the conditions', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
      sideEffects: unknown;
    };
    expect(pkg.sideEffects).toBe(false);
    /** Every file a condition (other than `types`) can pick under `target`. */
    const files = (target: unknown): string[] =>
      typeof target === 'string'
        ? [target]
        : Object.entries(target as Record<string, unknown>).flatMap(([condition, value]) =>
            condition === 'types' ? [] : files(value),
          );
    const entries = Object.fromEntries(
      Object.entries(pkg.exports)
        .filter(([subpath]) => subpath !== './package.json')
        .map(([subpath, target]) => [subpath, [...new Set(files(target))]]),
    );
    expect(entries).toEqual({
      '.': ['./dist/index.js'],
      './internal': ['./dist/internal.js'],
      './ai': ['./dist/ai.js'],
      './doctor': ['./dist/doctor.js'],
      './bullmq': ['./dist/bullmq/index.js'],
      './otel': ['./dist/otel.js'],
      './receiver': ['./dist/receiver.js'],
    });
  });
});
