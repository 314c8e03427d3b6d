import { readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of lib/, each in its own folder, with import arrows only downward (the table in
 * `MAY_IMPORT` below, enforced by the local rule `layer-order`):
 *
 *   entry points (index.ts, internal.ts)
 *   facade
 *   engine, receiver (side by side: neither imports the other)
 *   wire (ext/, v2025/ and their helpers) over the seam (wire/wire.ts); the engine sees only the seam
 *   port (the only code touching an SDK, type-only imports included)
 *   floors, under every layer: util/ over api/ over errors.ts over types.ts
 *
 * `api/` is the floor of the public types: declarations only, importing only types (of api/,
 * errors.ts and types.ts). The CLI (lib/cli/) uses the public entry point only (`public-entry-only`),
 * and nothing imports the CLI.
 */
const SDK = ['@modelcontextprotocol/*', '@modelcontextprotocol/*/**'];
const sdkMessage = 'Only lib/port/ may import an MCP SDK package: use the library types (lib/types.ts) or the port.';
const sdkOnlyInPort = (files) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: SDK, message: sdkMessage }] }] },
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
 * A local rule: no import cycles among lib/ modules (type-only imports included). It walks the
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
              const short = path.map((p) => p.slice(p.lastIndexOf('/lib/') + 1));
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
 * A local rule for lib/cli/: the CLI uses the library through its public entry point
 * (lib/index.ts) only. Every relative import, re-export and `import()` is resolved against the
 * importing file, so the check holds at any depth (lib/cli/x.ts and lib/cli/commands/x.ts alike,
 * which glob patterns on the specifier, such as '../engine/**', do not).
 */
const LIB = resolve(import.meta.dirname, 'lib');
const CLI = resolve(LIB, 'cli');
const ENTRY = resolve(LIB, 'index.ts');
const publicEntryOnly = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { entry: "The CLI uses the public entry point (lib/index.ts) only, not lib/{{target}}." },
  },
  create(context) {
    const check = (node) => {
      const source = node?.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = resolve(dirname(context.filename), source.value.replace(/\.js$/, '.ts'));
      const inLib = target === LIB || target.startsWith(LIB + sep);
      const inCli = target === CLI || target.startsWith(CLI + sep);
      if (inLib && !inCli && target !== ENTRY) {
        context.report({ node: source, messageId: 'entry', data: { target: relative(LIB, target).split(sep).join('/') } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
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
  entry: ['facade', 'engine', 'receiver', 'wire', 'seam', 'port', ...FLOORS],
  facade: ['engine', 'receiver', 'wire', 'seam', 'port', ...FLOORS],
  engine: ['seam', ...FLOORS],
  receiver: ['port', ...FLOORS],
  wire: ['seam', 'port', ...FLOORS],
  seam: ['port', ...FLOORS],
  port: FLOORS,
  util: ['api', 'errors', 'types'],
  api: ['errors', 'types'],
  errors: ['types'],
  types: [],
  cli: [],
};

/** The layer of `file` (a path relative to lib/, with `/`), or undefined when it is in none. */
function layerOf(file) {
  if (file === 'index.ts' || file === 'internal.ts') return 'entry';
  if (file === 'errors.ts' || file === 'types.ts') return file.slice(0, -3);
  if (file === 'wire/wire.ts') return 'seam';
  const folder = file.split('/')[0];
  return file.includes('/') && folder in MAY_IMPORT && !['entry', 'seam', 'errors', 'types'].includes(folder) ? folder : undefined;
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
      arrow: 'lib/{{from}} ({{layer}}) may not import lib/{{to}} ({{target}}): {{layer}} imports only {{allowed}}. Layers, top down: entry points, facade, engine | receiver, wire, seam (wire/wire.ts), port, util, api, errors.ts, types.ts.',
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
          if (['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration'].includes(declaration.type)) continue;
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
const localRules = { rules: { 'no-import-cycles': noImportCycles, 'public-entry-only': publicEntryOnly, 'layer-order': layerOrder } };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', 'coverage/**'] },
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
    files: ['lib/**/*.ts'],
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/no-import-cycles': 'error' },
  },
  // Only the port touches an SDK (later entries override earlier ones for the same files).
  sdkOnlyInPort(['lib/**/*.ts']),
  {
    // Of the port, connect.ts is the one module that loads an SDK.
    files: ['lib/port/connect.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  // The direction of every import arrow between the layers.
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/cli/**'],
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/layer-order': 'error' },
  },
  {
    // The CLI may use an SDK (its transports) but of the library only the public entry point.
    files: ['lib/cli/**/*.ts'],
    plugins: { 'mcp-task-client': localRules },
    rules: { 'no-restricted-imports': 'off', 'mcp-task-client/public-entry-only': 'error' },
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
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
