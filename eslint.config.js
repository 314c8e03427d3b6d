import { readFileSync } from 'node:fs';
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
const layer = (files, forbidden, message) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { group: SDK, message: sdkMessage },
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
              const short = path.map((p) => relative(import.meta.dirname, p).split(sep).join('/'));
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
 * export, an entry file lib/<name>.ts): the Vercel AI SDK tools. They use the library through its
 * public entry point only, and the library never imports them. (The CLI is a package of its own,
 * cli/: see {@link cliBoundary}.)
 */
const INTEGRATIONS = ['ai'];

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

/**
 * A local rule for the CLI package (cli/src/): it uses the library as any host does, by its package
 * name and root entry point (`'mcp-task-client'`), never by a path into lib/ or dist/, nor through
 * a subpath export (`mcp-task-client/internal`). Its relative imports stay inside cli/src/, with
 * one exception: the example server (examples/server.ts), which the CLI's build compiles into its
 * package as its default target. Specifiers are resolved against the importing file, so the check
 * holds at any depth.
 */
const REPO = import.meta.dirname;
const CLI_SRC = resolve(REPO, 'cli', 'src');
const EXAMPLE_SERVER = resolve(REPO, 'examples', 'server.ts');
const cliBoundary = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      outside: "The CLI uses the library through its package name only (import from 'mcp-task-client'), not {{target}}.",
      subpath: "The CLI uses the library's root entry point only ('mcp-task-client'), not '{{specifier}}'.",
    },
  },
  create(context) {
    const check = (node) => {
      const source = node?.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      const specifier = source.value;
      if (specifier.startsWith('mcp-task-client/')) {
        context.report({ node: source, messageId: 'subpath', data: { specifier } });
        return;
      }
      if (!specifier.startsWith('.')) return;
      const target = resolve(dirname(context.filename), specifier.replace(/\.js$/, '.ts'));
      if (target.startsWith(CLI_SRC + sep) || target === EXAMPLE_SERVER) return;
      context.report({ node: source, messageId: 'outside', data: { target: relative(REPO, target).split(sep).join('/') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

/** The local rules, as one plugin. */
const localRules = { rules: { 'no-import-cycles': noImportCycles, 'public-entry-only': publicEntryOnly, 'cli-boundary': cliBoundary } };

export default tseslint.config(
  { ignores: ['dist/**', 'cli/dist/**', 'node_modules/**', 'bench/results/**', 'coverage/**'] },
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
  // Layer boundaries (later entries override earlier ones for the same files).
  layer(['lib/**/*.ts'], [], ''),
  layer(['lib/util/**/*.ts', 'lib/errors.ts', 'lib/types.ts'], ['**/facade/**', '**/engine/**', '**/wire/**', '**/port/**', '**/cli/**'], 'Leaves (util, errors, types) import nothing of the layers.'),
  layer(['lib/port/**/*.ts'], ['**/facade/**', '**/engine/**', '**/wire/**', '**/cli/**'], 'The port layer is the bottom layer: it imports no layer above it.'),
  {
    files: ['lib/port/connect.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/facade/**', '**/engine/**', '**/wire/**', '**/cli/**'], message: 'The port layer imports no layer above it.' }] }] },
  },
  layer(['lib/wire/**/*.ts'], ['**/facade/**', '**/engine/**', '**/cli/**'], 'A wire imports only the port below it.'),
  layer(
    ['lib/engine/**/*.ts'],
    ['**/facade/**', '**/port/**', '**/cli/**', '**/wire/v2025/**', '**/wire/ext/**', '**/wire/resolve*', '**/wire/decode*', '**/wire/errors*'],
    'The engine sees only the neutral seam (wire/wire.ts): no wire internals, no port, no facade.',
  ),
  layer(
    ['lib/facade/**/*.ts', 'lib/index.ts', 'lib/internal.ts'],
    [...INTEGRATIONS.flatMap((name) => [`**/${name}/**`, `**/${name}.js`]), '**/cli/**', 'mcp-task', 'mcp-task/**'],
    'The library never imports an integration (the AI SDK tools) or the CLI package.',
  ),
  layer(
    ['lib/receiver/**/*.ts'],
    ['**/facade/**', '!**/facade/api.js', '**/engine/**', '!**/engine/scheduler.js', '**/wire/**', '**/cli/**'],
    'The receiver sits on the port: no wire, no engine but its scheduler, no facade but the public types (facade/api.ts).',
  ),
  {
    // A task's state changes only inside the engine (lib/engine/record.ts): everything above it
    // holds the read-only TaskView (lib/engine/task-view.ts), never the record. Its own rule name,
    // so the layer patterns above (no-restricted-imports) stay as they are.
    files: ['lib/**/*.ts'],
    ignores: ['lib/engine/**'],
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/engine/record.js', '**/engine/record-extras.js'],
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
    // The CLI package: the library by its package name only (it may use an SDK: its transports).
    files: ['cli/src/**/*.ts'],
    plugins: { 'mcp-task-client': localRules },
    rules: { 'mcp-task-client/cli-boundary': 'error' },
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
