/**
 * Bundles a script of spec/runtimes/web/ (the library and SDK v2 with it) into one ES module for
 * a runtime that is not Node, as its own tooling would: esbuild, with the runtime's export
 * conditions (so SDK v2 picks its Worker or browser build). SDK v1 is left out: these runs use
 * SDK v2 only.
 */
import { build } from 'esbuild';
import { ROOT } from './support.js';

/** Writes `outfile`; resolves with its size in bytes. */
export async function bundleWeb(entry: 'worker' | 'smoke', outfile: string, conditions: string[]): Promise<number> {
  const result = await build({
    entryPoints: [`${ROOT}spec/runtimes/web/${entry}.ts`],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions,
    mainFields: ['browser', 'module', 'main'],
    external: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'],
    metafile: true,
    logLevel: 'warning',
  });
  return Object.values(result.metafile.outputs)[0]!.bytes;
}
