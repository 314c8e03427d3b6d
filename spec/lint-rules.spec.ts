/**
 * The import rules of eslint.config.js hold at every folder depth: the layer boundaries
 * (no-restricted-imports patterns) and the CLI's "public entry point only" rule, which once missed
 * lib/cli/commands/* because its patterns were written for one level ('../engine/**'). Probe
 * sources are linted in memory under file names in lib/ (nothing is written to disk).
 */
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const IMPORT_RULES = ['no-restricted-imports', 'mcp-task-client/public-entry-only', 'no-restricted-globals', 'no-restricted-syntax'];

type Entry = { files?: unknown; ignores?: unknown; plugins?: unknown; rules?: Record<string, unknown> };

// The config is plain JavaScript without types: loaded by URL, typed here.
const { default: config } = (await import(new URL('../eslint.config.js', import.meta.url).href)) as { default: Entry[] };

/** The config reduced to its import rules (no type information, no file reading). */
const configs = config.flatMap((entry) => {
  const rules = Object.fromEntries(Object.entries(entry.rules ?? {}).filter(([name]) => IMPORT_RULES.includes(name)));
  if (Object.keys(rules).length === 0) return [];
  return [
    {
      ...(entry.files === undefined ? {} : { files: entry.files }),
      ...(entry.ignores === undefined ? {} : { ignores: entry.ignores }),
      ...(entry.plugins === undefined ? {} : { plugins: entry.plugins }),
      rules,
    },
  ];
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
  it('the CLI reaches the library through lib/index.ts only, from lib/cli/ and from lib/cli/commands/', () => {
    const rule = 'mcp-task-client/public-entry-only';
    for (const [file, up] of [
      ['lib/cli/probe.ts', '../'],
      ['lib/cli/commands/probe.ts', '../../'],
    ] as const) {
      for (const inside of ['engine/engine.js', 'facade/client.js', 'wire/wire.js', 'port/open.js', 'util/abort.js', 'receiver/receiver.js', 'errors.js', 'types.js', 'internal.js']) {
        expect(broken(file, importing(`${up}${inside}`)), `${file} importing ${up}${inside}`).toEqual([rule]);
      }
      expect(broken(file, `export * from '${up}engine/engine.js';\n`)).toEqual([rule]);
      expect(broken(file, `export const load = () => import('${up}facade/client.js');\n`)).toEqual([rule]);
      expect(broken(file, importing(`${up}index.js`))).toEqual([]);
      expect(broken(file, importing('@modelcontextprotocol/sdk/client/stdio.js'))).toEqual([]);
    }
    expect(broken('lib/cli/commands/probe.ts', importing('./session.js'))).toEqual([]);
    expect(broken('lib/cli/commands/probe.ts', importing('../args.js'))).toEqual([]);
    expect(broken('lib/cli/probe.ts', importing('./commands/call.js'))).toEqual([]);
  });

  it('the AI SDK tools (lib/ai/, lib/ai.ts) reach the library through lib/index.ts only, may import ai, no MCP SDK', () => {
    const rule = 'mcp-task-client/public-entry-only';
    for (const inside of ['engine/engine.js', 'facade/client.js', 'wire/wire.js', 'port/open.js', 'util/abort.js', 'errors.js', 'types.js', 'internal.js', 'cli/target.js']) {
      expect(broken('lib/ai/probe.ts', importing(`../${inside}`)), `lib/ai/probe.ts importing ../${inside}`).toEqual([rule]);
      expect(broken('lib/ai.ts', importing(`./${inside}`)), `lib/ai.ts importing ./${inside}`).toEqual([rule]);
    }
    expect(broken('lib/ai/probe.ts', importing('../index.js'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('./tools.js'))).toEqual([]);
    expect(broken('lib/ai.ts', importing('./ai/tools.js'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('ai'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('@modelcontextprotocol/sdk/client/index.js'))).toEqual(['no-restricted-imports']);
    expect(broken('lib/ai/probe.ts', importing('@modelcontextprotocol/client'))).toEqual(['no-restricted-imports']);
    // The CLI is an integration of its own: lib/ai is not its to import, nor the library's.
    expect(broken('lib/cli/probe.ts', importing('../ai/tools.js'))).toEqual([rule]);
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
      ['lib/facade/probe.ts', '../cli/target.js'],
      ['lib/engine/probe.ts', '@modelcontextprotocol/sdk/types.js'],
    ];
    for (const [file, specifier] of cases) expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual(['no-restricted-imports']);
    expect(broken('lib/engine/probe.ts', importing('../wire/wire.js'))).toEqual([]);
    expect(broken('lib/receiver/probe.ts', importing('../facade/api.js'))).toEqual([]);
    // Of the port, connect.ts is the one module that loads an SDK.
    expect(broken('lib/port/connect.ts', importing('@modelcontextprotocol/sdk/types.js'))).toEqual([]);
    expect(broken('lib/port/connect.ts', importing('../facade/client.js'))).toEqual(['no-restricted-imports']);
  });

  it('lib/ uses no Node module and no Node global, at any depth and in every layer; the CLI may', () => {
    const files = ['lib/index.ts', 'lib/ai.ts', 'lib/util/probe.ts', 'lib/port/probe.ts', 'lib/port/connect.ts', 'lib/wire/v2025/probe.ts', 'lib/engine/probe.ts', 'lib/facade/probe.ts', 'lib/receiver/probe.ts', 'lib/ai/probe.ts'];
    for (const file of files) {
      for (const specifier of ['node:crypto', 'node:fs/promises', 'crypto', 'events', 'fs/promises']) {
        expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual(['no-restricted-imports']);
      }
      expect(broken(file, `export const load = () => import('node:crypto');\n`), `${file} import()`).toEqual(['no-restricted-syntax']);
      for (const global of ['process.env.X', 'Buffer.from("x")', 'setImmediate(() => {})', '__dirname', 'require("x")', 'global.x']) {
        expect(broken(file, `export const x = ${global};\n`), `${file} using ${global}`).toEqual(['no-restricted-globals']);
      }
      // Web APIs, and a local that happens to share a Node global's name, are fine.
      expect(broken(file, 'export const id = globalThis.crypto.randomUUID(); queueMicrotask(() => {}); new TextEncoder();\n')).toEqual([]);
      expect(broken(file, 'export function f(process) { return process; }\n')).toEqual([]);
    }
    for (const file of ['lib/cli/probe.ts', 'lib/cli/commands/probe.ts']) {
      expect(broken(file, `import { readFileSync } from 'node:fs';\nexport const x = readFileSync(process.argv[1] ?? '', 'utf8');\n`)).toEqual([]);
    }
  });
});
