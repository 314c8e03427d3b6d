import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, relative, resolve, sep } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of lib/, each in its own folder, with imports only downward:
 * facade -> engine -> wire -> port -> SDK. `errors.ts`, `types.ts` and `util/` are leaves every
 * layer may use. Only the port layer touches an SDK package (type-only imports included).
 */
const SDK = ['@modelcontextprotocol/*', '@modelcontextprotocol/*/**'];
const sdkMessage = 'Only lib/port/ may import an MCP SDK package: use the library types (lib/types.ts) or the port.';

/**
 * The library runs wherever its SDK does (browsers, Workers, Deno, Bun, Node): lib/ uses web
 * APIs only (globalThis.crypto, TextEncoder, timers, AbortSignal, queueMicrotask), no Node module
 * and no Node global. Only the CLI (lib/cli/) may; spec/runtime-neutral.spec.ts checks the built
 * output too.
 */
const nodeMessage = 'lib/ runs in browsers and Workers too: use a web API (globalThis.crypto, TextEncoder, queueMicrotask...), not a Node module.';
const NODE_MODULES = {
  paths: builtinModules.filter((name) => !name.startsWith('_')).map((name) => ({ name, message: nodeMessage })),
  pattern: { group: ['node:*'], message: nodeMessage },
};
const NODE_GLOBALS = ['process', 'Buffer', 'setImmediate', 'clearImmediate', 'global', 'require', 'module', 'exports', '__dirname', '__filename'];

const layer = (files, forbidden, message) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: NODE_MODULES.paths,
        patterns: [
          { group: SDK, message: sdkMessage },
          NODE_MODULES.pattern,
          ...(forbidden.length === 0 ? [] : [{ group: forbidden, message }]),
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
 * The integrations built on the library, each in its own folder lib/<name>/ (with, for a subpath
 * export, an entry file lib/<name>.ts): the CLI and the Vercel AI SDK tools. They use the library
 * through its public entry point only, and the library never imports them.
 */
const INTEGRATIONS = ['cli', 'ai'];

/**
 * A local rule for the integrations: each uses the library through its public entry point
 * (lib/index.ts) only, besides its own folder (and its entry file). Every relative import,
 * re-export and `import()` is resolved against the importing file, so the check holds at any
 * depth (lib/cli/x.ts and lib/cli/commands/x.ts alike, which glob patterns on the specifier, such
 * as '../engine/**', do not).
 */
const LIB = resolve(import.meta.dirname, 'lib');
const ENTRY = resolve(LIB, 'index.ts');
const publicEntryOnly = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { entry: "lib/{{integration}} uses the public entry point (lib/index.ts) only, not lib/{{target}}." },
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
        context.report({ node: source, messageId: 'entry', data: { integration, target: relative(LIB, target).split(sep).join('/') } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

/** The local rules, as one plugin. */
const localRules = { rules: { 'no-import-cycles': noImportCycles, 'public-entry-only': publicEntryOnly } };

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
  // Layer boundaries (later entries override earlier ones for the same files).
  layer(['lib/**/*.ts'], [], ''),
  layer(['lib/util/**/*.ts', 'lib/errors.ts', 'lib/types.ts'], ['**/facade/**', '**/engine/**', '**/wire/**', '**/port/**', '**/cli/**'], 'Leaves (util, errors, types) import nothing of the layers.'),
  layer(['lib/port/**/*.ts'], ['**/facade/**', '**/engine/**', '**/wire/**', '**/cli/**'], 'The port layer is the bottom layer: it imports no layer above it.'),
  {
    files: ['lib/port/connect.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_MODULES.paths,
          patterns: [{ group: ['**/facade/**', '**/engine/**', '**/wire/**', '**/cli/**'], message: 'The port layer imports no layer above it.' }, NODE_MODULES.pattern],
        },
      ],
    },
  },
  layer(['lib/wire/**/*.ts'], ['**/facade/**', '**/engine/**', '**/cli/**'], 'A wire imports only the port below it.'),
  layer(
    ['lib/engine/**/*.ts'],
    ['**/facade/**', '**/port/**', '**/cli/**', '**/wire/v2025/**', '**/wire/ext/**', '**/wire/resolve*', '**/wire/decode*', '**/wire/errors*'],
    'The engine sees only the neutral seam (wire/wire.ts): no wire internals, no port, no facade.',
  ),
  layer(
    ['lib/facade/**/*.ts', 'lib/index.ts', 'lib/internal.ts'],
    INTEGRATIONS.flatMap((name) => [`**/${name}/**`, `**/${name}.js`]),
    'The library never imports an integration (the CLI, the AI SDK tools).',
  ),
  layer(
    ['lib/receiver/**/*.ts'],
    ['**/facade/**', '!**/facade/api.js', '**/engine/**', '!**/engine/scheduler.js', '**/wire/**', '**/cli/**'],
    'The receiver sits on the port: no wire, no engine but its scheduler, no facade but the public types (facade/api.ts).',
  ),
  {
    // Of the library, the integrations use only the public entry point.
    files: INTEGRATIONS.flatMap((name) => [`lib/${name}/**/*.ts`, `lib/${name}.ts`]),
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/public-entry-only': 'error' },
  },
  {
    // No Node global, and no Node module loaded with import() either (the CLI is Node-only).
    files: ['lib/**/*.ts'],
    ignores: ['lib/cli/**'],
    rules: {
      'no-restricted-globals': ['error', ...NODE_GLOBALS.map((name) => ({ name, message: `${name} is a Node global: ${nodeMessage}` }))],
      'no-restricted-syntax': ['error', { selector: 'ImportExpression > Literal[value=/^node:/]', message: nodeMessage }],
    },
  },
  {
    // The CLI may also use an SDK (its transports) and Node; the other integrations may not.
    files: ['lib/cli/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
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
