import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, relative, resolve, sep } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of lib/, each in its own folder, with import arrows only downward (the table in
 * `MAY_IMPORT` below, enforced by the local rule `layer-order`):
 *
 *   entry points (index.ts; internal.ts apart), and on them the integrations (lib/ai, lib/bullmq,
 *   lib/otel) and the doctor
 *   the receiver's entry point (receiver.ts, `mcp-task-client/receiver`): the receiver plugged into
 *   the facade's seam (facade/input/receiver-seam.ts)
 *   facade (never the receiver: the root entry point bundles none of it)
 *   engine, receiver (side by side: neither imports the other)
 *   wire (ext/, v2025/ and their helpers) over the seam (wire/wire.ts, with wire/input-types.ts); the engine sees only the seam
 *   port (the only code touching an SDK, type-only imports included)
 *   floors, under every layer: util/ over api/ over errors.ts over types.ts
 *
 * `api/` is the floor of the public types: declarations only, importing only types (of api/,
 * errors.ts and types.ts). The integrations (lib/ai/, lib/<name>.ts entries) use the public entry
 * point only (`public-entry-only`), and nothing in lib/ imports them. The CLI is a package of its
 * own (cli/), which uses the library by its package name only (`cli-boundary`).
 */
const SDK = ['@modelcontextprotocol/*', '@modelcontextprotocol/*/**'];
const sdkMessage = 'Only lib/port/ may import an MCP SDK package: use the library types (lib/types.ts) or the port.';

/**
 * The library runs wherever its SDK does (browsers, Workers, Deno, Bun, Node): lib/ uses web
 * APIs only (globalThis.crypto, TextEncoder, timers, AbortSignal, queueMicrotask), no Node module
 * and no Node global. The one exception is the BullMQ integration (lib/bullmq/, its own subpath
 * export `mcp-task-client/bullmq`): BullMQ and its Redis client run on Node only, so it may use
 * Node too (NODE_FOLDERS). spec/package/runtime-neutral.spec.ts checks the built output of the other
 * entry points.
 */
const nodeMessage =
  'lib/ runs in browsers and Workers too: use a web API (globalThis.crypto, TextEncoder, queueMicrotask...), not a Node module.';
const NODE_MODULES = {
  paths: builtinModules.filter((name) => !name.startsWith('_')).map((name) => ({ name, message: nodeMessage })),
  pattern: { group: ['node:*'], message: nodeMessage },
};
const NODE_GLOBALS = [
  'process',
  'Buffer',
  'setImmediate',
  'clearImmediate',
  'global',
  'require',
  'module',
  'exports',
  '__dirname',
  '__filename',
];
/** The folders of lib/ (with their entry files) that may use Node: integrations of Node-only packages. */
const NODE_FOLDERS = ['bullmq'];
const nodeFiles = NODE_FOLDERS.flatMap((name) => [`lib/${name}/**`, `lib/${name}.ts`]);

const OTEL = ['@opentelemetry/*', '@opentelemetry/*/**'];
const otelMessage =
  'Only lib/otel/ (mcp-task-client/otel) may import OpenTelemetry: the library reports through its instrumentation hook (lib/api/instrumentation.ts).';
/**
 * The restricted imports of lib/ files: no MCP SDK (but in the port), no CLI package, no
 * OpenTelemetry unless `otel`, no Node module unless `node`.
 */
const restrictedImports = (files, { node = false, otel = false } = {}) => ({
  files,
  ...(node ? {} : { ignores: nodeFiles }),
  rules: {
    'no-restricted-imports': [
      'error',
      {
        ...(node ? {} : { paths: NODE_MODULES.paths }),
        patterns: [
          { group: SDK, message: sdkMessage },
          { group: ['mcp-task', 'mcp-task/**'], message: 'The library never imports the CLI package (mcp-task).' },
          ...(node ? [] : [NODE_MODULES.pattern]),
          ...(otel ? [] : [{ group: OTEL, message: otelMessage }]),
        ],
      },
    ],
  },
});

/** Relative imports of a source file, resolved to absolute paths (`.js` specifiers map to `.ts`). */
function importsOf(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const found = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g)) {
    found.push(resolve(dirname(file), match[1].replace(/\.js$/, '.ts')));
  }
  return found;
}

/**
 * A local rule: no import cycles among lib/ modules, nor among the CLI's (type-only imports included). It walks the
 * graph from each file and reports the first import that leads back to it.
 */
const noImportCycles = {
  meta: { type: 'problem', schema: [], messages: { cycle: 'Import cycle: {{path}}' } },
  create(context) {
    const start = context.filename;
    return {
      Program() {
        for (const first of importsOf(start)) {
          const stack = [[first, [start, first]]];
          const seen = new Set();
          while (stack.length > 0) {
            const [file, path] = stack.pop();
            if (file === start) {
              const short = path.map((p) =>
                relative(import.meta.dirname, p)
                  .split(sep)
                  .join('/'),
              );
              context.report({ loc: { line: 1, column: 0 }, messageId: 'cycle', data: { path: short.join(' -> ') } });
              return;
            }
            if (seen.has(file)) continue;
            seen.add(file);
            for (const next of importsOf(file)) stack.push([next, [...path, next]]);
          }
        }
      },
    };
  },
};

/**
 * The integrations built into the library, each in its own folder lib/<name>/ (with, for a subpath
 * export, an entry file lib/<name>.ts or lib/<name>/index.ts): the Vercel AI SDK tools, the
 * BullMQ workers and the OpenTelemetry instrumentation. They use the library through its
 * public entry point only, and the library never imports them. (The CLI is a package of its own,
 * cli/: see {@link cliBoundary}.)
 */
const INTEGRATIONS = ['ai', 'bullmq', 'otel'];

/**
 * A local rule for the integrations: each uses the library through its public entry point
 * (lib/index.ts) only, besides its own folder (and its entry file). Every relative import,
 * re-export and `import()` is resolved against the importing file, so the check holds at any
 * depth (lib/ai/x.ts and lib/ai/sub/x.ts alike, which glob patterns on the specifier, such as
 * '../engine/**', do not).
 */
const LIB = resolve(import.meta.dirname, 'lib');
const ENTRY = resolve(LIB, 'index.ts');
const publicEntryOnly = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { entry: 'lib/{{integration}} uses the public entry point (lib/index.ts) only, not lib/{{target}}.' },
  },
  create(context) {
    // The integration the linted file belongs to: lib/<name>/… or its entry file lib/<name>.ts.
    const integration = relative(LIB, context.filename).split(sep)[0].replace(/\.ts$/, '');
    const own = resolve(LIB, integration);
    const check = (node) => {
      const source = node?.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = resolve(dirname(context.filename), source.value.replace(/\.js$/, '.ts'));
      const inLib = target === LIB || target.startsWith(LIB + sep);
      const inOwn = target === own || target === `${own}.ts` || target.startsWith(own + sep);
      if (inLib && !inOwn && target !== ENTRY) {
        context.report({
          node: source,
          messageId: 'entry',
          data: { integration, target: relative(LIB, target).split(sep).join('/') },
        });
      }
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

/**
 * A local rule for the CLI package (cli/src/): it uses the library as any host does, by its package
 * name: the root entry point (`'mcp-task-client'`) and the public doctor subpath
 * (`'mcp-task-client/doctor'`, which `mcp-task doctor` renders), never a path into lib/ or dist/,
 * nor another subpath export (`mcp-task-client/internal`, the wire seam outside semver, or
 * `mcp-task-client/ai`). Its relative imports stay inside cli/src/, with one exception: the example
 * server (examples/server.ts), which the CLI's build compiles into its package as its default
 * target. Specifiers are resolved against the importing file, so the check holds at any depth.
 */
const REPO = import.meta.dirname;
const CLI_SRC = resolve(REPO, 'cli', 'src');
const EXAMPLE_SERVER = resolve(REPO, 'examples', 'server.ts');
/** The library's subpath exports the CLI may import. */
const CLI_SUBPATHS = new Set(['mcp-task-client/doctor']);
const cliBoundary = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      outside:
        "The CLI uses the library through its package name only (import from 'mcp-task-client'), not {{target}}.",
      subpath:
        "The CLI uses the library's root entry point ('mcp-task-client') and 'mcp-task-client/doctor' only, not '{{specifier}}'.",
    },
  },
  create(context) {
    const check = (node) => {
      const source = node?.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      const specifier = source.value;
      if (specifier.startsWith('mcp-task-client/') && !CLI_SUBPATHS.has(specifier)) {
        context.report({ node: source, messageId: 'subpath', data: { specifier } });
        return;
      }
      if (!specifier.startsWith('.')) return;
      const target = resolve(dirname(context.filename), specifier.replace(/\.js$/, '.ts'));
      if (target.startsWith(CLI_SRC + sep) || target === EXAMPLE_SERVER) return;
      context.report({
        node: source,
        messageId: 'outside',
        data: { target: relative(REPO, target).split(sep).join('/') },
      });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

/** The floors: every layer may import them. */
const FLOORS = ['util', 'api', 'errors', 'types'];

/**
 * The layer of every lib/ module, and the layers each may import besides its own: the whole
 * architecture in one table. An arrow not listed here (upward, sideways, or to a module in no
 * layer) fails lint.
 */
const MAY_IMPORT = {
  entry: ['facade', 'engine', 'wire', 'seam', 'port', ...FLOORS],
  // lib/internal.ts, the entry point of the wire seam (not covered by semver): as entry, apart.
  internal: ['facade', 'engine', 'wire', 'seam', 'port', ...FLOORS],
  // lib/receiver.ts, `mcp-task-client/receiver`: the receiver (lib/receiver/), plugged into the
  // facade's seam. Neither the root entry point nor the facade imports the receiver, so a host that
  // serves no receiver tasks bundles none of it.
  'receiver-entry': ['facade', 'receiver', 'port', ...FLOORS],
  facade: ['engine', 'wire', 'seam', 'port', ...FLOORS],
  engine: ['seam', ...FLOORS],
  receiver: ['port', ...FLOORS],
  wire: ['seam', 'port', ...FLOORS],
  seam: ['port', ...FLOORS],
  port: FLOORS,
  util: ['api', 'errors', 'types'],
  api: ['errors', 'types'],
  errors: ['types'],
  types: [],
  // An integration (lib/<name>/ and its entry file lib/<name>.ts): the public entry point only.
  integration: ['entry'],
  // The doctor (lib/doctor/, entry lib/doctor.ts): a top layer that probes a server on the port
  // and the wires; nothing imports it.
  doctor: ['entry', 'wire', 'seam', 'port', ...FLOORS],
};

/** The layer of `file` (a path relative to lib/, with `/`), or undefined when it is in none. */
function layerOf(file) {
  if (file === 'index.ts') return 'entry';
  if (file === 'internal.ts') return 'internal';
  if (file === 'receiver.ts') return 'receiver-entry';
  if (INTEGRATIONS.includes(file.split('/')[0].replace(/\.ts$/, ''))) return 'integration';
  if (file === 'doctor.ts') return 'doctor';
  if (file === 'errors.ts' || file === 'types.ts') return file.slice(0, -3);
  // The seam is the wire contract: wire.ts and the input half it re-exports.
  if (file === 'wire/wire.ts' || file === 'wire/input-types.ts') return 'seam';
  const folder = file.split('/')[0];
  return file.includes('/') &&
    folder in MAY_IMPORT &&
    !['entry', 'internal', 'receiver-entry', 'seam', 'errors', 'types'].includes(folder)
    ? folder
    : undefined;
}

/** The declarations a module of the public-type floor (lib/api/) may hold. */
const DECLARATIONS = new Set(['TSTypeAliasDeclaration', 'TSInterfaceDeclaration']);

/** True when an import or re-export brings types only. */
function typeOnly(node) {
  if (node.type === 'ImportExpression') return false;
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

/**
 * A local rule: every relative import, re-export and `import()` of a lib/ module goes to a layer
 * its own layer may import (`MAY_IMPORT`), and never leaves lib/. The modules of lib/api/ hold
 * declarations only (types and interfaces) and import types only.
 */
const layerOrder = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      arrow:
        'lib/{{from}} ({{layer}}) may not import lib/{{to}} ({{target}}): {{layer}} imports only {{allowed}}. Layers, top down: entry points, the receiver entry point (receiver.ts), facade, engine | receiver, wire, seam (wire/wire.ts), port, util, api, errors.ts, types.ts.',
      outside: 'lib/{{from}} may not import {{to}}, outside lib/.',
      unplaced: 'lib/{{from}} is in no layer: place its folder in the layer table of eslint.config.js.',
      typeOnly: 'lib/api/ holds the public types and imports types only: use `import type` / `export type`.',
      declarationsOnly: 'lib/api/ holds declarations only (type aliases and interfaces): code belongs in its layer.',
    },
  },
  create(context) {
    const from = relative(LIB, context.filename).split(sep).join('/');
    const layer = layerOf(from);
    const check = (node) => {
      const source = node?.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = resolve(dirname(context.filename), source.value.replace(/\.js$/, '.ts'));
      const to = relative(LIB, target).split(sep).join('/');
      if (to.startsWith('..')) {
        context.report({ node: source, messageId: 'outside', data: { from, to: source.value } });
        return;
      }
      if (layer === 'api' && !typeOnly(node)) context.report({ node: source, messageId: 'typeOnly' });
      const targetLayer = layerOf(to) ?? 'no layer';
      if (targetLayer === layer || MAY_IMPORT[layer].includes(targetLayer)) return;
      const allowed = MAY_IMPORT[layer].length === 0 ? 'nothing of the library' : MAY_IMPORT[layer].join(', ');
      context.report({ node: source, messageId: 'arrow', data: { from, to, layer, target: targetLayer, allowed } });
    };
    return {
      Program(program) {
        if (layer === undefined) {
          context.report({ loc: { line: 1, column: 0 }, messageId: 'unplaced', data: { from } });
          return;
        }
        if (layer !== 'api') return;
        for (const statement of program.body) {
          const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
          if (declaration === null || DECLARATIONS.has(declaration.type)) continue;
          if (['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration'].includes(declaration.type))
            continue;
          context.report({ node: statement, messageId: 'declarationsOnly' });
        }
      },
      ImportDeclaration: (node) => layer !== undefined && check(node),
      ExportNamedDeclaration: (node) => layer !== undefined && check(node),
      ExportAllDeclaration: (node) => layer !== undefined && check(node),
      ImportExpression: (node) => layer !== undefined && check(node),
    };
  },
};

/** The local rules, as one plugin. */
const localRules = {
  rules: {
    'no-import-cycles': noImportCycles,
    'public-entry-only': publicEntryOnly,
    'cli-boundary': cliBoundary,
    'layer-order': layerOrder,
  },
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'cli/dist/**',
      'examples/browser/dist/**',
      'test-output/**',
      'node_modules/**',
      'bench/results/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    files: ['lib/**/*.ts', 'cli/src/**/*.ts'],
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/no-import-cycles': 'error' },
  },
  // Only the port touches an SDK, only the OpenTelemetry integration OpenTelemetry, and only the
  // Node folders Node (later entries override earlier ones for the same files).
  restrictedImports(['lib/**/*.ts']),
  restrictedImports(nodeFiles, { node: true }),
  restrictedImports(['lib/otel/**/*.ts', 'lib/otel.ts'], { otel: true }),
  {
    // Of the port, connect.ts is the one module that loads an SDK (and nothing else it may not).
    files: ['lib/port/connect.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_MODULES.paths,
          patterns: [
            NODE_MODULES.pattern,
            { group: OTEL, message: otelMessage },
            { group: ['mcp-task', 'mcp-task/**'], message: 'The library never imports the CLI package (mcp-task).' },
          ],
        },
      ],
    },
  },
  // The direction of every import arrow between the layers. The integrations' own imports are
  // checked by public-entry-only (below); as targets, they are a layer nothing may import.
  {
    files: ['lib/**/*.ts'],
    ignores: INTEGRATIONS.flatMap((name) => [`lib/${name}/**`, `lib/${name}.ts`]),
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/layer-order': 'error' },
  },
  {
    // A task's state changes only inside the engine (lib/engine/record.ts, record-schedule.ts and record-input.ts,
    // on the fields of record-layout.ts, shown by record-view.ts): everything above it holds the read-only
    // TaskView (lib/engine/task-view.ts), never the record. Its own rule name, so the layer
    // patterns above (no-restricted-imports) stay as they are.
    files: ['lib/**/*.ts'],
    ignores: ['lib/engine/**'],
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/engine/record.js',
                '**/engine/record-extras.js',
                '**/engine/record-layout.js',
                '**/engine/record-view.js',
                '**/engine/record-schedule.js',
                '**/engine/record-input.js',
              ],
              message:
                "Only the engine touches a task's record: use the read-only TaskView (engine/task-view.ts) and TaskEngine's operations.",
            },
          ],
        },
      ],
    },
  },
  {
    // Of the library, the integrations use only the public entry point.
    files: INTEGRATIONS.flatMap((name) => [`lib/${name}/**/*.ts`, `lib/${name}.ts`]),
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/public-entry-only': 'error' },
  },
  {
    // No Node global, and no Node module loaded with import() either (but in NODE_FOLDERS).
    files: ['lib/**/*.ts'],
    ignores: nodeFiles,
    rules: {
      'no-restricted-globals': [
        'error',
        ...NODE_GLOBALS.map((name) => ({ name, message: `${name} is a Node global: ${nodeMessage}` })),
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ImportExpression > Literal[value=/^node:/]', message: nodeMessage },
        {
          // Outside Node and Bun a timer is a number: `.unref()` on it throws.
          selector: 'CallExpression[optional=false] > MemberExpression[optional=false][property.name=/^(unref|ref)$/]',
          message: `A timer has ref()/unref() in Node and Bun only: call it as timer.unref?.(). ${nodeMessage}`,
        },
      ],
    },
  },
  {
    // The CLI package: the library by its package name only (it may use an SDK: its transports).
    files: ['cli/src/**/*.ts'],
    plugins: { 'mcp-task-client': localRules },
    rules: { 'no-restricted-imports': 'off', 'mcp-task-client/cli-boundary': 'error' },
  },
  {
    files: ['spec/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['eslint.config.js', 'cli/bin/*.js'], ...tseslint.configs.disableTypeChecked },
);
