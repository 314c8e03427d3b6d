/**
 * The import rules of eslint.config.js hold at every folder depth: the layer boundaries
 * (no-restricted-imports patterns), the integrations' "public entry point only" rule and the CLI
 * package's boundary (the library by its package name only), which once missed the CLI's
 * commands/ folder because its patterns were written for one level ('../engine/**'). Probe
 * sources are linted in memory under file names in lib/ and cli/src/ (nothing is written to disk).
 */
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../', import.meta.url).pathname;
const IMPORT_RULES = ['no-restricted-imports', 'mcp-task-client/public-entry-only', 'mcp-task-client/cli-boundary'];

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
