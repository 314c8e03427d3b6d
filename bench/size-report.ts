/**
 * The bundle-size section of docs/performance.md, from what bench/size.ts stored.
 */
import type { SizeFigure, SizeResult } from './size.js';

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
const mark = (met: boolean): string => (met ? '✓ met' : '**✗ not met**');

/** The section's lines. */
export function sizeMarkdown(s: SizeResult): string[] {
  const lines: string[] = [];
  const push = (...text: string[]): void => void lines.push(...text);
  const row = (f: SizeFigure): string => `| ${f.label} | ${kib(f.raw)} | ${kib(f.gzip)} |`;
  const added = (f: SizeFigure): string => `| ${f.label} | +${kib(f.raw - s.sdkPage.raw)} | +${kib(f.gzip - s.sdkPage.gzip)} |`;
  const met = s.core.gzip <= s.targetGzip;
  push('## Bundle size (browser)', '');
  push(
    `<!-- Measured by \`${s.command}\` (bench/size.ts) on ${s.generatedAt}. -->`,
    '',
    `esbuild ${s.versions.esbuild ?? '?'} bundles each entry point for the browser: an ES module, minified and tree-shaken, with the browser export conditions; ` +
      'the MCP SDKs are left external (the page ships its SDK anyway) and everything else is bundled. Bytes of the output, raw and gzipped (level 9); 1 KiB = 1,024 bytes. ' +
      `mcp-task-client ${s.versions['mcp-task-client'] ?? '?'} is its compiled JavaScript; @modelcontextprotocol/ext-tasks ${s.versions['@modelcontextprotocol/ext-tasks'] ?? '?'} is the version on the npm registry.`,
    '',
  );
  push('| bundle | raw | gzip |', '|---|---:|---:|');
  for (const f of [s.core, s.taskClientOnly, s.extTasks, s.extTasksWithoutZod]) push(row(f));
  push('');
  push(
    `ext-tasks depends on zod, and so does SDK v2 (@modelcontextprotocol/client ${s.versions['@modelcontextprotocol/client'] ?? '?'}), which ships the part of zod it uses. ` +
      'What each library adds to a page on SDK v2 (its `Client` and Streamable HTTP transport, bundled the same way, shared code counted once):',
    '',
  );
  push('| bundle | raw | gzip |', '|---|---:|---:|');
  push(row(s.sdkPage), added(s.sdkPagePlusCore), added(s.sdkPagePlusExtTasks));
  push('');
  push(
    `**Targets** (issue 25): the core ≤ ${kib(s.targetGzip)} gzip: ${kib(s.core.gzip)}, ${mark(met)}. ` +
      `Smaller than ext-tasks measured the same way (${kib(s.extTasks.gzip)}, its zod bundled): ${mark(s.core.gzip < s.extTasks.gzip)}; ` +
      `and added to a page on SDK v2, +${kib(s.sdkPagePlusCore.gzip - s.sdkPage.gzip)} against ext-tasks' +${kib(s.sdkPagePlusExtTasks.gzip - s.sdkPage.gzip)}: ${mark(s.sdkPagePlusCore.gzip < s.sdkPagePlusExtTasks.gzip)}. ` +
      `Against ext-tasks' own code alone (zod left out altogether, ${kib(s.extTasksWithoutZod.gzip)}), the core is ${s.core.gzip < s.extTasksWithoutZod.gzip ? 'smaller' : 'larger'}.`,
    '',
  );
  if (!met) {
    push(
      'Why the core is over its target: `TaskClient` reaches every layer (both task wires, the receiver, reconnection), so tree-shaking an import of `TaskClient` alone ' +
        `saves only ${kib(s.core.raw - s.taskClientOnly.raw)} raw. Loading a wire or the receiver on demand would cut the first load, but the wire is chosen and the receiver started ` +
        'synchronously (`new TaskClient(client)`, `serve()`), so that needs an API change; the table below is where the bytes are.',
      '',
    );
  }
  push('Where the core\'s bytes go (raw, minified, by lib/ folder or dependency):', '');
  push('| part | raw | share |', '|---|---:|---:|');
  for (const { part, raw } of s.breakdown) push(`| ${part} | ${kib(raw)} | ${((raw / s.core.raw) * 100).toFixed(1)}% |`);
  push('');
  return lines;
}
