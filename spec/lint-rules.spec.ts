/**
 * The import rules of eslint.config.js hold at every folder depth: the layer boundaries
 * (no-restricted-imports patterns), the integrations' "public entry point only" rule and the CLI
 * package's boundary (the library by its package name only), which once missed the CLI's
 * commands/ folder because its patterns were written for one level ('../engine/**'). Probe
 * sources are linted in memory under file names in lib/ and cli/src/ (nothing is written to disk).
 * And a task's record stays the engine's: no module above imports it, and each of its event
 * methods is called only from the engine module its ownership map (lib/engine/record.ts) names.
 */
import { Linter } from 'eslint';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const IMPORT_RULES = [
  'no-restricted-imports',
  '@typescript-eslint/no-restricted-imports',
  'mcp-task-client/public-entry-only',
  'mcp-task-client/cli-boundary',
];

type Entry = { files?: unknown; ignores?: unknown; plugins?: unknown; rules?: Record<string, unknown> };

// The config is plain JavaScript without types: loaded by URL, typed here.
const { default: config } = (await import(new URL('../eslint.config.js', import.meta.url).href)) as { default: Entry[] };

/** The config reduced to its import rules (no type information, no file reading). */
const configs = config.flatMap((entry) => {
  const rules = Object.fromEntries(Object.entries(entry.rules ?? {}).filter(([name]) => IMPORT_RULES.includes(name)));
  if (Object.keys(rules).length === 0) return [];
  return [{ ...(entry.files === undefined ? {} : { files: entry.files }), ...(entry.plugins === undefined ? {} : { plugins: entry.plugins }), rules }];
}) as Linter.Config[];

const linter = new Linter({ configType: 'flat', cwd: ROOT });

/** The import rules `source` breaks as file `file` (relative to the repository). */
function broken(file: string, source: string): string[] {
  const messages = linter.verify(source, [{ files: ['**/*.ts'], languageOptions: { sourceType: 'module', ecmaVersion: 'latest' } }, ...configs], {
    filename: `${ROOT}${file}`,
  });
  return messages.map((message) => message.ruleId ?? `fatal: ${message.message}`);
}

const importing = (specifier: string): string => `import x from '${specifier}';\nexport default x;\n`;

describe('eslint import rules hold at every depth', () => {
  it("the CLI package reaches the library by its package name only ('mcp-task-client'), from cli/src/ and from cli/src/commands/", () => {
    const rule = 'mcp-task-client/cli-boundary';
    for (const [file, up] of [
      ['cli/src/probe.ts', '../../'],
      ['cli/src/commands/probe.ts', '../../../'],
    ] as const) {
      for (const inside of ['lib/engine/engine.js', 'lib/facade/client.js', 'lib/index.js', 'lib/internal.js', 'lib/errors.js', 'lib/ai/tools.js', 'dist/index.js', 'spec/helpers.js', 'examples/demo.js']) {
        expect(broken(file, importing(`${up}${inside}`)), `${file} importing ${up}${inside}`).toEqual([rule]);
      }
      expect(broken(file, `export * from '${up}lib/engine/engine.js';\n`)).toEqual([rule]);
      expect(broken(file, `export const load = () => import('${up}lib/facade/client.js');\n`)).toEqual([rule]);
      for (const subpath of ['mcp-task-client/internal', 'mcp-task-client/ai', 'mcp-task-client/dist/index.js']) {
        expect(broken(file, importing(subpath)), `${file} importing ${subpath}`).toEqual([rule]);
      }
      expect(broken(file, importing('mcp-task-client'))).toEqual([]);
      expect(broken(file, importing('@modelcontextprotocol/sdk/client/stdio.js'))).toEqual([]);
      // The example server, compiled into the CLI's package as its default target.
      expect(broken(file, `export const load = () => import('${up}examples/server.js');\n`)).toEqual([]);
    }
    expect(broken('cli/src/commands/probe.ts', importing('./session.js'))).toEqual([]);
    expect(broken('cli/src/commands/probe.ts', importing('../args.js'))).toEqual([]);
    expect(broken('cli/src/probe.ts', importing('./commands/call.js'))).toEqual([]);
  });

  it('the AI SDK tools (lib/ai/, lib/ai.ts) reach the library through lib/index.ts only, may import ai, no MCP SDK', () => {
    const rule = 'mcp-task-client/public-entry-only';
    for (const inside of ['engine/engine.js', 'facade/client.js', 'wire/wire.js', 'port/open.js', 'util/abort.js', 'errors.js', 'types.js', 'internal.js']) {
      expect(broken('lib/ai/probe.ts', importing(`../${inside}`)), `lib/ai/probe.ts importing ../${inside}`).toEqual([rule]);
      expect(broken('lib/ai.ts', importing(`./${inside}`)), `lib/ai.ts importing ./${inside}`).toEqual([rule]);
    }
    expect(broken('lib/ai/probe.ts', importing('../index.js'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('./tools.js'))).toEqual([]);
    expect(broken('lib/ai.ts', importing('./ai/tools.js'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('ai'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('@modelcontextprotocol/sdk/client/index.js'))).toEqual(['no-restricted-imports']);
    expect(broken('lib/ai/probe.ts', importing('@modelcontextprotocol/client'))).toEqual(['no-restricted-imports']);
    // lib/ai is not the CLI's to import (it is not the root entry), nor the library's.
    expect(broken('cli/src/probe.ts', importing('../../lib/ai/tools.js'))).toEqual(['mcp-task-client/cli-boundary']);
    expect(broken('lib/index.ts', importing('./ai.js'))).toEqual(['no-restricted-imports']);
    expect(broken('lib/facade/probe.ts', importing('../ai/tools.js'))).toEqual(['no-restricted-imports']);
  });

  it('the layer rules flag an upward import at depth 1 and 2 alike', () => {
    const cases: Array<[file: string, specifier: string]> = [
      ['lib/util/probe.ts', '../facade/api.js'],
      ['lib/port/probe.ts', '../wire/wire.js'],
      ['lib/wire/probe.ts', '../engine/engine.js'],
      ['lib/wire/ext/probe.ts', '../../engine/engine.js'],
      ['lib/wire/v2025/probe.ts', '../../facade/client.js'],
      ['lib/engine/probe.ts', '../facade/client.js'],
      ['lib/engine/probe.ts', '../wire/ext/wire.js'],
      ['lib/engine/probe.ts', '../port/port.js'],
      ['lib/receiver/probe.ts', '../engine/engine.js'],
      ['lib/facade/probe.ts', '../../cli/src/target.js'],
      ['lib/facade/probe.ts', 'mcp-task'],
      ['lib/engine/probe.ts', '@modelcontextprotocol/sdk/types.js'],
    ];
    for (const [file, specifier] of cases) expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual(['no-restricted-imports']);
    expect(broken('lib/engine/probe.ts', importing('../wire/wire.js'))).toEqual([]);
    expect(broken('lib/receiver/probe.ts', importing('../facade/api.js'))).toEqual([]);
    // Of the port, connect.ts is the one module that loads an SDK.
    expect(broken('lib/port/connect.ts', importing('@modelcontextprotocol/sdk/types.js'))).toEqual([]);
    expect(broken('lib/port/connect.ts', importing('../facade/client.js'))).toEqual(['no-restricted-imports']);
  });
});

describe("a task's record is changed inside the engine only", () => {
  const RECORD_RULE = '@typescript-eslint/no-restricted-imports';

  it('no module outside lib/engine imports the record: the facade holds the read-only TaskView', () => {
    for (const [file, specifier] of [
      ['lib/facade/probe.ts', '../engine/record.js'],
      ['lib/facade/probe.ts', '../engine/record-extras.js'],
      ['lib/facade/room/probe.ts', '../../engine/record.js'],
      ['lib/probe.ts', './engine/record.js'],
    ] as const) {
      expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual([RECORD_RULE]);
    }
    expect(broken('lib/facade/probe.ts', importing('../engine/task-view.js'))).toEqual([]);
    expect(broken('lib/facade/probe.ts', importing('../engine/engine.js'))).toEqual([]);
    expect(broken('lib/engine/probe.ts', importing('./record.js'))).toEqual([]);
  });

  /** `lib/**\/*.ts` (the CLI aside), by path relative to lib/. */
  function libSources(dir = `${ROOT}lib/`, prefix = ''): Map<string, string> {
    const found = new Map<string, string>();
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${prefix}${entry.name}`;
      if (entry.isDirectory()) {
        if (path === 'cli') continue;
        for (const [file, text] of libSources(`${dir}${entry.name}/`, `${path}/`)) found.set(file, text);
      } else if (entry.name.endsWith('.ts')) found.set(path, readFileSync(`${dir}${entry.name}`, 'utf8'));
    }
    return found;
  }

  it('each event method of TaskRecord is called from the one engine module its ownership map names', () => {
    const source = readFileSync(`${ROOT}lib/engine/record.ts`, 'utf8');
    // The map in the header: "- poll.ts (the poll schedule): `pollPlanned`, `readRequested`, ...;".
    const header = source
      .slice(0, source.indexOf('*/'))
      .split('\n')
      .map((line) => line.replace(/^ \* ?/, ''))
      .join(' ');
    const mapped = new Map<string, string>();
    for (const bullet of header.split(' - ').slice(1)) {
      const owner = /^([\w-]+\.ts) /.exec(bullet)?.[1];
      if (owner === undefined) continue;
      for (const [, method] of bullet.split('. ')[0]!.matchAll(/`(\w+)`/g)) mapped.set(method!, owner);
    }
    // The class, in sections "// ---- poll.ts: ..." each holding the methods its module calls.
    const sectioned = new Map<string, string>();
    let owner: string | undefined;
    for (const line of source.slice(source.indexOf('export class TaskRecord')).split('\n')) {
      const section = /^ {2}\/\/ ---- (.*)$/.exec(line);
      if (section !== null) owner = /^([\w-]+\.ts):/.exec(section[1]!)?.[1];
      const method = /^ {2}(\w+)\(/.exec(line)?.[1];
      if (owner !== undefined && method !== undefined) sectioned.set(method, owner);
    }
    expect(sectioned.size).toBeGreaterThan(30);
    expect(mapped).toEqual(sectioned);
    // Every call on a record in lib/ comes from the module that owns the method.
    const misplaced: string[] = [];
    const called = new Set<string>();
    for (const [file, text] of libSources()) {
      if (file === 'engine/record.ts') continue;
      for (const [, method] of text.matchAll(/\brecord\??\.(\w+)\(/g)) {
        const own = sectioned.get(method!);
        if (own === undefined) continue;
        called.add(method!);
        if (file !== `engine/${own}`) misplaced.push(`${file} calls record.${method}() (owned by engine/${own})`);
      }
    }
    expect(misplaced).toEqual([]);
    // None is left without its caller.
    expect([...sectioned.keys()].filter((method) => !called.has(method))).toEqual([]);
  });
});
