/**
 * Bundles the page's script (page/main.ts, with the library and SDK v2) into dist/main.js with esbuild,
 * for browsers: ES modules, minified, with a source map.
 *
 * SDK v1 (`@modelcontextprotocol/sdk`) stays out: the page connects with `sdk: 'v2'`, so the
 * library never loads it, but its `TaskClient.connect` names both SDKs in dynamic imports and a
 * bundler would otherwise pack whichever is installed. An application that has only SDK v2
 * installed needs no such setting (the import of a package that is not there is left alone).
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('.', import.meta.url));

/** Builds dist/main.js (or into `outdir`); resolves with its size in bytes. */
export async function buildBrowserExample(outdir = `${HERE}dist`): Promise<number> {
  const result = await build({
    entryPoints: [`${HERE}page/main.ts`],
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    metafile: true,
    external: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'],
    logLevel: 'warning',
  });
  return result.metafile.outputs[Object.keys(result.metafile.outputs).find((file) => file.endsWith('main.js'))!]!.bytes;
}
