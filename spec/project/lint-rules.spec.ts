/**
 * The import rules of eslint.config.js hold at every folder depth: the direction of every arrow
 * between the layers (the local layer-order rule), the public-type floor lib/api/ (declarations
 * and type imports only), "only the port touches an SDK", the integrations' "public entry point
 * only" rule and the CLI package's boundary (the library by its package name only), which once
 * missed the CLI's commands/ folder because its patterns were written for one level
 * ('../engine/**'). Probe sources are linted in memory under file names in lib/ and cli/src/
 * (nothing is written to disk). And a task's record stays the engine's: no module above imports
 * it, and each of its event methods is called only from the engine module its ownership map
 * (lib/engine/record.ts) names. And lib/ uses no Node module or global (the library runs in
 * browsers and Workers), but for the BullMQ integration, which is Node-only like BullMQ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const IMPORT_RULES = [
  'no-restricted-imports',
  '@typescript-eslint/no-restricted-imports',
  'mcp-task-client/public-entry-only',
  'mcp-task-client/cli-boundary',
  'mcp-task-client/layer-order',
  'no-restricted-globals',
  'no-restricted-syntax',
];
const LAYER_RULE = 'mcp-task-client/layer-order';

type Entry = { files?: unknown; ignores?: unknown; plugins?: unknown; rules?: Record<string, unknown> };

// The config is plain JavaScript without types: loaded by URL, typed here.
const { default: config } = (await import(new URL('../../eslint.config.js', import.meta.url).href)) as {
  default: Entry[];
};

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
  const parsing: Linter.Config = {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, sourceType: 'module', ecmaVersion: 'latest' },
  };
  const messages = linter.verify(source, [parsing, ...configs], {
    filename: `${ROOT}${file}`,
  });
  return messages.map((message) => message.ruleId ?? `fatal: ${message.message}`);
}

const importing = (specifier: string): string => `import x from '${specifier}';\nexport default x;\n`;
const importingType = (specifier: string): string => `import type { X } from '${specifier}';\nexport type Y = X;\n`;

describe('eslint import rules hold at every depth', () => {
  it("the CLI package reaches the library by its package name only ('mcp-task-client' and 'mcp-task-client/doctor'), from cli/src/ and from cli/src/commands/", () => {
    const rule = 'mcp-task-client/cli-boundary';
    for (const [file, up] of [
      ['cli/src/probe.ts', '../../'],
      ['cli/src/commands/probe.ts', '../../../'],
    ] as const) {
      for (const inside of [
        'lib/engine/engine.js',
        'lib/facade/client.js',
        'lib/index.js',
        'lib/internal.js',
        'lib/errors.js',
        'lib/ai/tools.js',
        'dist/index.js',
        'spec/helpers.js',
        'examples/demo.js',
      ]) {
        expect(broken(file, importing(`${up}${inside}`)), `${file} importing ${up}${inside}`).toEqual([rule]);
      }
      expect(broken(file, `export * from '${up}lib/engine/engine.js';\n`)).toEqual([rule]);
      expect(broken(file, `export const load = () => import('${up}lib/facade/client.js');\n`)).toEqual([rule]);
      for (const subpath of [
        'mcp-task-client/internal',
        'mcp-task-client/ai',
        'mcp-task-client/dist/index.js',
        'mcp-task-client/dist/doctor.js',
        'mcp-task-client/doctor/run.js',
        'mcp-task-client/lib/doctor.js',
      ]) {
        expect(broken(file, importing(subpath)), `${file} importing ${subpath}`).toEqual([rule]);
        expect(broken(file, `export const load = () => import('${subpath}');\n`), `${file} loading ${subpath}`).toEqual(
          [rule],
        );
      }
      expect(broken(file, importing('mcp-task-client'))).toEqual([]);
      // The doctor is a public subpath meant for `mcp-task doctor`: allowed, as a value and as types.
      expect(broken(file, importing('mcp-task-client/doctor'))).toEqual([]);
      expect(broken(file, importingType('mcp-task-client/doctor'))).toEqual([]);
      expect(broken(file, `export const load = () => import('mcp-task-client/doctor');\n`)).toEqual([]);
      // ... but not its files by path.
      expect(broken(file, importing(`${up}lib/doctor.js`))).toEqual([rule]);
      expect(broken(file, importing(`${up}lib/doctor/run.js`))).toEqual([rule]);
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
    for (const inside of [
      'engine/engine.js',
      'facade/client.js',
      'wire/wire.js',
      'port/open.js',
      'util/abort.js',
      'errors.js',
      'types.js',
      'internal.js',
    ]) {
      expect(broken('lib/ai/probe.ts', importing(`../${inside}`)), `lib/ai/probe.ts importing ../${inside}`).toEqual([
        rule,
      ]);
      expect(broken('lib/ai.ts', importing(`./${inside}`)), `lib/ai.ts importing ./${inside}`).toEqual([rule]);
    }
    expect(broken('lib/ai/probe.ts', importing('../index.js'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('./tools.js'))).toEqual([]);
    expect(broken('lib/ai.ts', importing('./ai/tools.js'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('ai'))).toEqual([]);
    expect(broken('lib/ai/probe.ts', importing('@modelcontextprotocol/sdk/client/index.js'))).toEqual([
      'no-restricted-imports',
    ]);
    expect(broken('lib/ai/probe.ts', importing('@modelcontextprotocol/client'))).toEqual(['no-restricted-imports']);
    // lib/ai is not the CLI's to import (it is not the root entry), nor the library's.
    expect(broken('cli/src/probe.ts', importing('../../lib/ai/tools.js'))).toEqual(['mcp-task-client/cli-boundary']);
    expect(broken('lib/index.ts', importing('./ai.js'))).toEqual([LAYER_RULE]);
    expect(broken('lib/facade/probe.ts', importing('../ai/tools.js'))).toEqual([LAYER_RULE]);
    // Nor does the library import the CLI package, by name or by path.
    expect(broken('lib/facade/probe.ts', importing('mcp-task'))).toEqual(['no-restricted-imports']);
    expect(broken('lib/facade/probe.ts', importing('../../cli/src/target.js'))).toEqual([LAYER_RULE]);
  });

  it('only the port touches an SDK, and of the port only connect.ts', () => {
    for (const file of [
      'lib/engine/probe.ts',
      'lib/facade/probe.ts',
      'lib/wire/ext/probe.ts',
      'lib/api/probe.ts',
      'lib/port/probe.ts',
    ]) {
      expect(broken(file, importingType('@modelcontextprotocol/sdk/types.js')), file).toEqual([
        'no-restricted-imports',
      ]);
    }
    expect(broken('lib/port/connect.ts', importingType('@modelcontextprotocol/sdk/types.js'))).toEqual([]);
  });
});

/**
 * The architecture, restated here on its own: each layer with a probe module (at depth 1 and 2
 * where the layer has sub-folders) and a module of it to import, and the layers it may import
 * besides its own. Every pair is linted both ways, so an arrow that runs upward or sideways fails
 * and every downward one passes; a change of the layer table in eslint.config.js must be made
 * here too.
 */
const FLOORS = ['util', 'api', 'errors', 'types'];
const LAYERS: Record<string, { probes: string[]; module: string[]; mayImport: string[] }> = {
  entry: {
    probes: ['lib/index.ts'],
    module: ['lib/index.ts'],
    mayImport: ['facade', 'engine', 'wire', 'seam', 'port', ...FLOORS],
  },
  internal: {
    probes: ['lib/internal.ts'],
    module: ['lib/internal.ts'],
    mayImport: ['facade', 'engine', 'wire', 'seam', 'port', ...FLOORS],
  },
  'receiver-entry': {
    probes: ['lib/receiver.ts'],
    module: ['lib/receiver.ts'],
    mayImport: ['facade', 'receiver', 'port', ...FLOORS],
  },
  facade: {
    probes: ['lib/facade/probe.ts', 'lib/facade/call/probe.ts'],
    module: ['lib/facade/client.ts', 'lib/facade/input/receiver-seam.ts'],
    mayImport: ['engine', 'wire', 'seam', 'port', ...FLOORS],
  },
  engine: {
    probes: ['lib/engine/probe.ts', 'lib/engine/deep/probe.ts'],
    module: ['lib/engine/engine.ts'],
    mayImport: ['seam', ...FLOORS],
  },
  receiver: {
    probes: ['lib/receiver/probe.ts', 'lib/receiver/deep/probe.ts'],
    module: ['lib/receiver/receiver.ts'],
    mayImport: ['port', ...FLOORS],
  },
  wire: {
    probes: ['lib/wire/probe.ts', 'lib/wire/ext/probe.ts', 'lib/wire/v2025/probe.ts'],
    module: ['lib/wire/v2025/wire.ts', 'lib/wire/ext/wire.ts', 'lib/wire/resolve.ts', 'lib/wire/errors.ts'],
    mayImport: ['seam', 'port', ...FLOORS],
  },
  seam: { probes: ['lib/wire/wire.ts'], module: ['lib/wire/wire.ts'], mayImport: ['port', ...FLOORS] },
  port: { probes: ['lib/port/probe.ts', 'lib/port/connect.ts'], module: ['lib/port/port.ts'], mayImport: FLOORS },
  util: {
    probes: ['lib/util/probe.ts'],
    module: ['lib/util/scheduler.ts', 'lib/util/abort.ts'],
    mayImport: ['api', 'errors', 'types'],
  },
  api: {
    probes: ['lib/api/probe.ts'],
    module: ['lib/api/index.ts', 'lib/api/handle.ts'],
    mayImport: ['errors', 'types'],
  },
  errors: { probes: ['lib/errors.ts'], module: ['lib/errors.ts'], mayImport: ['types'] },
  types: { probes: ['lib/types.ts'], module: ['lib/types.ts'], mayImport: [] },
  // An integration's modules are linted by public-entry-only (above), not here; nothing imports them.
  integration: {
    probes: [],
    module: ['lib/ai.ts', 'lib/ai/tools.ts', 'lib/bullmq/index.ts', 'lib/otel.ts', 'lib/otel/call.ts'],
    mayImport: ['entry'],
  },
  doctor: {
    probes: ['lib/doctor.ts', 'lib/doctor/probe.ts'],
    module: ['lib/doctor.ts', 'lib/doctor/run.ts'],
    mayImport: ['entry', 'wire', 'seam', 'port', ...FLOORS],
  },
};

/** The specifier `probe` would write to import `module` (both relative to the repository). */
function specifier(probe: string, module: string): string {
  const path = relative(dirname(probe), module).replace(/\.ts$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
}

describe('lint enforces the direction of every import arrow between the layers', () => {
  it('an upward or sideways import fails, a downward one passes, at every depth', () => {
    let upward = 0;
    for (const [layer, { probes, mayImport }] of Object.entries(LAYERS)) {
      for (const probe of probes) {
        for (const [target, { module }] of Object.entries(LAYERS)) {
          for (const file of module) {
            if (file === probe) continue;
            const allowed = target === layer || mayImport.includes(target);
            if (!allowed) upward++;
            const found = broken(probe, importingType(specifier(probe, file)));
            expect(found, `${probe} (${layer}) importing ${file} (${target})`).toEqual(allowed ? [] : [LAYER_RULE]);
          }
        }
      }
    }
    expect(upward).toBeGreaterThan(100);
  });

  it('the receiver imports neither the facade nor the engine (the two upward arrows it once had), and the engine not the receiver', () => {
    for (const [from, expected] of [
      ['../facade/client.js', [LAYER_RULE]],
      ['../facade/handle/handle.js', [LAYER_RULE]],
      ['../engine/engine.js', [LAYER_RULE]],
      ['../engine/scheduler.js', [LAYER_RULE]],
      ['../wire/wire.js', [LAYER_RULE]],
      ['../api/index.js', []],
      ['../util/scheduler.js', []],
      ['../port/port.js', []],
    ] as const) {
      expect(broken('lib/receiver/probe.ts', importing(from)), from).toEqual(expected);
    }
    expect(broken('lib/engine/probe.ts', importing('../receiver/receiver.js'))).toEqual([LAYER_RULE]);
  });

  it('the root entry point and the facade never reach the receiver (mcp-task-client/receiver plugs in through the seam)', () => {
    for (const [file, from] of [
      ['lib/index.ts', './receiver/receiver.js'],
      ['lib/index.ts', './receiver.js'],
      ['lib/internal.ts', './receiver/session.js'],
      ['lib/facade/input/probe.ts', '../../receiver/receiver.js'],
      ['lib/facade/probe.ts', '../receiver.js'],
    ] as const) {
      expect(broken(file, importingType(from)), `${file}: ${from}`).toEqual([LAYER_RULE]);
    }
    expect(broken('lib/receiver.ts', importing('./facade/input/receiver-seam.js'))).toEqual([]);
    expect(broken('lib/receiver.ts', importing('./receiver/receiver.js'))).toEqual([]);
    expect(broken('lib/receiver.ts', importing('./engine/engine.js'))).toEqual([LAYER_RULE]);
  });

  it('re-exports and import() are arrows too; so is an import that leaves lib/', () => {
    expect(broken('lib/engine/probe.ts', `export * from '../facade/client.js';\n`)).toEqual([LAYER_RULE]);
    expect(broken('lib/engine/probe.ts', `export { TaskClient } from '../facade/client.js';\n`)).toEqual([LAYER_RULE]);
    expect(broken('lib/port/probe.ts', `export const load = () => import('../wire/wire.js');\n`)).toEqual([LAYER_RULE]);
    expect(broken('lib/util/probe.ts', importing('../../spec/helpers.js'))).toEqual([LAYER_RULE]);
    expect(broken('lib/facade/probe.ts', importing('../../package.json'))).toEqual([LAYER_RULE]);
  });

  it('a module in no layer fails until its folder is placed in the table', () => {
    expect(broken('lib/queue/probe.ts', 'export const x = 1;\n')).toEqual([LAYER_RULE]);
    expect(broken('lib/probe.ts', 'export const x = 1;\n')).toEqual([LAYER_RULE]);
    expect(broken('lib/engine/probe.ts', importing('../queue/store.js'))).toEqual([LAYER_RULE]);
  });

  it('lib/api/ holds declarations only and imports types only', () => {
    const file = 'lib/api/probe.ts';
    expect(
      broken(
        file,
        `import type { Task } from '../types.js';\nimport { type TaskError } from '../errors.js';\nexport type A = Task | TaskError;\nexport interface B { readonly a: A }\nexport type { C } from './c.js';\n`,
      ),
    ).toEqual([]);
    expect(broken(file, `import { TaskError } from '../errors.js';\nexport type A = TaskError;\n`)).toEqual([
      LAYER_RULE,
    ]);
    expect(broken(file, `export { TaskError } from '../errors.js';\n`)).toEqual([LAYER_RULE]);
    expect(broken(file, `export * from './c.js';\n`)).toEqual([LAYER_RULE]);
    expect(broken(file, `import './c.js';\n`)).toEqual([LAYER_RULE]);
    expect(broken(file, 'export const DEFAULT = 1;\n')).toEqual([LAYER_RULE]);
    expect(broken(file, 'export function f(): void {}\n')).toEqual([LAYER_RULE]);
    expect(broken(file, 'export class C {}\n')).toEqual([LAYER_RULE]);
    expect(broken(file, 'export enum E { A }\n')).toEqual([LAYER_RULE]);
    expect(broken(file, 'export default interface D {}\n')).toEqual([LAYER_RULE]);
  });
});

describe("a task's record is changed inside the engine only", () => {
  const RECORD_RULE = '@typescript-eslint/no-restricted-imports';

  it('no module outside lib/engine imports the record: the facade holds the read-only TaskView', () => {
    for (const [file, specifier] of [
      ['lib/facade/probe.ts', '../engine/record.js'],
      ['lib/facade/probe.ts', '../engine/record-extras.js'],
      ['lib/facade/probe.ts', '../engine/record-layout.js'],
      ['lib/facade/probe.ts', '../engine/record-view.js'],
      ['lib/facade/probe.ts', '../engine/record-schedule.js'],
      ['lib/facade/probe.ts', '../engine/record-input.js'],
      ['lib/facade/room/probe.ts', '../../engine/record.js'],
      ['lib/index.ts', './engine/record.js'],
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
    // The class and its floors that change it (record-schedule.ts, record-input.ts), in sections
    // "// ---- poll.ts: ..." each holding the methods its module calls.
    const schedule = readFileSync(`${ROOT}lib/engine/record-schedule.ts`, 'utf8');
    const input = readFileSync(`${ROOT}lib/engine/record-input.ts`, 'utf8');
    const sectioned = new Map<string, string>();
    for (const body of [
      schedule.slice(schedule.indexOf('export abstract class RecordSchedule')),
      input.slice(input.indexOf('export abstract class RecordInput')),
      source.slice(source.indexOf('export class TaskRecord')),
    ]) {
      let owner: string | undefined;
      for (const line of body.split('\n')) {
        const section = /^ {2}\/\/ ---- (.*)$/.exec(line);
        if (section !== null) owner = /^([\w-]+\.ts):/.exec(section[1]!)?.[1];
        const method = /^ {2}(\w+)\(/.exec(line)?.[1];
        if (owner !== undefined && method !== undefined) sectioned.set(method, owner);
      }
    }
    expect(sectioned.size).toBeGreaterThan(30);
    expect(mapped).toEqual(sectioned);
    // Every call on a record in lib/ comes from the module that owns the method.
    const misplaced: string[] = [];
    const called = new Set<string>();
    for (const [file, text] of libSources()) {
      if (['engine/record.ts', 'engine/record-schedule.ts', 'engine/record-input.ts'].includes(file)) continue;
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

  it('the doctor (lib/doctor/, lib/doctor.ts) is a top layer on the port and the wires, and nothing in the library imports it', () => {
    for (const [file, up] of [
      ['lib/doctor/probe.ts', '../'],
      ['lib/doctor/v2025/probe.ts', '../../'],
    ] as const) {
      for (const allowed of [
        'port/port.js',
        'port/open.js',
        'port/connect.js',
        'wire/resolve.js',
        'wire/v2025/decode.js',
        'wire/ext/decode.js',
        'errors.js',
        'types.js',
        'index.js',
      ]) {
        expect(broken(file, importing(`${up}${allowed}`)), `${file} importing ${up}${allowed}`).toEqual([]);
      }
      for (const refused of [
        'engine/engine.js',
        'facade/client.js',
        'receiver/receiver.js',
        'cli/target.js',
        'ai/tools.js',
        'ai.js',
        'internal.js',
        '@modelcontextprotocol/sdk/types.js',
      ]) {
        const specifier = refused.startsWith('@') ? refused : `${up}${refused}`;
        expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual([
          refused.startsWith('@') ? 'no-restricted-imports' : LAYER_RULE,
        ]);
      }
    }
    expect(broken('lib/doctor.ts', importing('./doctor/run.js'))).toEqual([]);
    expect(broken('lib/doctor.ts', importing('./engine/engine.js'))).toEqual([LAYER_RULE]);
    for (const [file, specifier] of [
      ['lib/index.ts', './doctor.js'],
      ['lib/internal.ts', './doctor/run.js'],
      ['lib/facade/probe.ts', '../doctor/run.js'],
      ['lib/engine/probe.ts', '../doctor/run.js'],
      ['lib/wire/v2025/probe.ts', '../../doctor/run.js'],
      ['lib/port/probe.ts', '../doctor.js'],
      ['lib/receiver/probe.ts', '../doctor/run.js'],
      ['lib/util/probe.ts', '../doctor/shape.js'],
    ] as const) {
      expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual([LAYER_RULE]);
    }
  });

  it('the BullMQ integration reaches the library through lib/index.ts only, imports bullmq but no MCP SDK, and the library never imports it', () => {
    const rule = 'mcp-task-client/public-entry-only';
    for (const [file, up] of [
      ['lib/bullmq/probe.ts', '../'],
      ['lib/bullmq/deep/probe.ts', '../../'],
    ] as const) {
      for (const inside of [
        'engine/engine.js',
        'facade/client.js',
        'facade/handle/reference.js',
        'wire/wire.js',
        'errors.js',
        'types.js',
        'internal.js',
        'cli/args.js',
      ]) {
        expect(broken(file, importing(`${up}${inside}`)), `${file} importing ${up}${inside}`).toEqual([rule]);
      }
      expect(broken(file, `export const load = () => import('${up}facade/client.js');\n`)).toEqual([rule]);
      expect(broken(file, importing(`${up}index.js`))).toEqual([]);
      expect(broken(file, importing('bullmq'))).toEqual([]);
      expect(broken(file, importing('@modelcontextprotocol/sdk/client/index.js'))).toEqual(['no-restricted-imports']);
      expect(broken(file, importing('@modelcontextprotocol/client'))).toEqual(['no-restricted-imports']);
    }
    expect(broken('lib/bullmq/probe.ts', importing('./run.js'))).toEqual([]);
    expect(broken('lib/bullmq/deep/probe.ts', importing('../run.js'))).toEqual([]);
    expect(broken('lib/facade/probe.ts', importing('../bullmq/index.js'))).toEqual([LAYER_RULE]);
    expect(broken('lib/index.ts', importing('./bullmq/index.js'))).toEqual([LAYER_RULE]);
  });

  it('only the OpenTelemetry integration (lib/otel/, lib/otel.ts) imports OpenTelemetry; it reaches the library through lib/index.ts only, and the library never imports it', () => {
    const rule = 'mcp-task-client/public-entry-only';
    for (const file of ['lib/otel/probe.ts', 'lib/otel.ts']) {
      expect(broken(file, importing('@opentelemetry/api'))).toEqual([]);
      expect(broken(file, importingType('@opentelemetry/sdk-trace'))).toEqual([]);
      expect(broken(file, importing('@modelcontextprotocol/sdk/client/index.js'))).toEqual(['no-restricted-imports']);
    }
    // Everywhere else in the library, OpenTelemetry is out, type-only imports included: the library
    // reports through its instrumentation hook.
    for (const file of [
      'lib/facade/probe.ts',
      'lib/engine/probe.ts',
      'lib/port/probe.ts',
      'lib/port/connect.ts',
      'lib/api/probe.ts',
      'lib/wire/ext/probe.ts',
      'lib/index.ts',
      'lib/ai/probe.ts',
      'lib/bullmq/probe.ts',
      'lib/doctor/probe.ts',
    ]) {
      expect(broken(file, importingType('@opentelemetry/api')), file).toEqual(['no-restricted-imports']);
    }
    for (const [file, up] of [
      ['lib/otel/probe.ts', '../'],
      ['lib/otel/deep/probe.ts', '../../'],
    ] as const) {
      for (const inside of [
        'facade/client.js',
        'engine/engine.js',
        'api/instrumentation.js',
        'port/port.js',
        'errors.js',
        'internal.js',
      ]) {
        expect(broken(file, importing(`${up}${inside}`)), `${file} importing ${up}${inside}`).toEqual([rule]);
      }
      expect(broken(file, importing(`${up}index.js`))).toEqual([]);
    }
    expect(broken('lib/otel.ts', importing('./otel/instrumentation.js'))).toEqual([]);
    expect(broken('lib/otel.ts', importing('./facade/events/instrumentation.js'))).toEqual([rule]);
    expect(broken('lib/index.ts', importing('./otel.js'))).toEqual([LAYER_RULE]);
    expect(broken('lib/facade/probe.ts', importing('../otel/call.js'))).toEqual([LAYER_RULE]);
    expect(broken('lib/ai/probe.ts', importing('../otel.js'))).toEqual([rule]);
  });
});

describe('lib/ runs without Node', () => {
  const NODE_IMPORTS = ['node:crypto', 'node:fs/promises', 'crypto', 'events', 'fs/promises'];
  const NODE_GLOBALS = [
    'process.env.X',
    'Buffer.from("x")',
    'setImmediate(() => {})',
    '__dirname',
    'require("x")',
    'global.x',
  ];

  it('no Node module and no Node global, at any depth and in every layer, the integrations and the doctor included', () => {
    const files = [
      'lib/index.ts',
      'lib/internal.ts',
      'lib/ai.ts',
      'lib/doctor.ts',
      'lib/util/probe.ts',
      'lib/port/probe.ts',
      'lib/port/connect.ts',
      'lib/wire/v2025/probe.ts',
      'lib/engine/probe.ts',
      'lib/facade/probe.ts',
      'lib/receiver/probe.ts',
      'lib/ai/probe.ts',
      'lib/doctor/probe.ts',
      'lib/doctor/v2025/probe.ts',
    ];
    for (const file of files) {
      for (const specifier of NODE_IMPORTS) {
        expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual(['no-restricted-imports']);
      }
      expect(broken(file, `export const load = () => import('node:crypto');\n`), `${file} import()`).toEqual([
        'no-restricted-syntax',
      ]);
      for (const global of NODE_GLOBALS) {
        expect(broken(file, `export const x = ${global};\n`), `${file} using ${global}`).toEqual([
          'no-restricted-globals',
        ]);
      }
      // Web APIs, and a local that happens to share a Node global's name, are fine.
      expect(
        broken(
          file,
          'export const id = globalThis.crypto.randomUUID(); queueMicrotask(() => {}); new TextEncoder();\n',
        ),
      ).toEqual([]);
      expect(broken(file, 'export function f(process) { return process; }\n')).toEqual([]);
    }
    // Of the port, connect.ts still loads an SDK.
    expect(broken('lib/port/connect.ts', importingType('@modelcontextprotocol/sdk/types.js'))).toEqual([]);
  });

  it('the BullMQ integration (Node-only, like BullMQ) and the CLI package may use Node; the BullMQ integration still no MCP SDK', () => {
    for (const file of [
      'lib/bullmq/probe.ts',
      'lib/bullmq/deep/probe.ts',
      'lib/bullmq.ts',
      'cli/src/probe.ts',
      'cli/src/commands/probe.ts',
    ]) {
      for (const specifier of NODE_IMPORTS)
        expect(broken(file, importing(specifier)), `${file} importing ${specifier}`).toEqual([]);
      expect(
        broken(
          file,
          `import { readFileSync } from 'node:fs';\nexport const x = readFileSync(process.argv[1] ?? '', 'utf8') + String(Buffer.from('x'));\n`,
        ),
        file,
      ).toEqual([]);
      expect(broken(file, `export const load = () => import('node:crypto');\n`), `${file} import()`).toEqual([]);
    }
    expect(broken('lib/bullmq/probe.ts', importing('@modelcontextprotocol/client'))).toEqual(['no-restricted-imports']);
  });
});
