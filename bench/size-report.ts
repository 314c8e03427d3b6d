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
  const delta = (f: SizeFigure, base: SizeFigure): number => f.gzip - base.gzip;
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
  for (const f of [s.core, s.taskClientOnly, s.receiver, s.coreWithReceiver, s.extTasks, s.extTasksWithoutZod])
    if (f !== undefined) push(row(f));
  push('');
  push(
    `ext-tasks depends on zod, and so does SDK v2 (@modelcontextprotocol/client ${s.versions['@modelcontextprotocol/client'] ?? '?'}), which ships the part of zod it uses. ` +
      'What each library adds to a page on SDK v2 (its `Client` and Streamable HTTP transport; shared code counted once), bundled by esbuild as above ' +
      `and by Vite ${s.versions.vite ?? '?'} (production build in library mode, every chunk counted):`,
    '',
  );
  push('| bundle | esbuild raw | esbuild gzip | Vite raw | Vite gzip |', '|---|---:|---:|---:|---:|');
  const both = (f: SizeFigure, v: SizeFigure, base?: [SizeFigure, SizeFigure]): string =>
    base === undefined
      ? `| ${f.label} | ${kib(f.raw)} | ${kib(f.gzip)} | ${kib(v.raw)} | ${kib(v.gzip)} |`
      : `| ${f.label} | +${kib(f.raw - base[0].raw)} | +${kib(f.gzip - base[0].gzip)} | +${kib(v.raw - base[1].raw)} | +${kib(v.gzip - base[1].gzip)} |`;
  const bases: [SizeFigure, SizeFigure] = [s.sdkPage, s.vite.sdkPage];
  push(
    both(s.sdkPage, s.vite.sdkPage),
    both(s.sdkPagePlusCore, s.vite.sdkPagePlusCore, bases),
    both(s.sdkPagePlusExtTasks, s.vite.sdkPagePlusExtTasks, bases),
  );
  push('');
  push(
    'The two bundlers differ on the library because `TaskClient.connect` loads the SDK with `import()` of its package name (so that a page with only one SDK installed ' +
      "still builds): esbuild keeps every export of a module loaded that way, so with esbuild the page holds SDK v2's whole root entry; Vite keeps what is used. " +
      'On ext-tasks they differ the other way: Vite shares and tree-shakes zod with the SDK.',
    '',
  );
  push(
    `**Targets** (issue 25): the core ≤ ${kib(s.targetGzip)} gzip: ${kib(s.core.gzip)}, ${mark(met)}. ` +
      `Smaller than ext-tasks measured the same way (${kib(s.extTasks.gzip)}, its zod bundled): ${mark(s.core.gzip < s.extTasks.gzip)}; ` +
      `added to a page on SDK v2 by esbuild, +${kib(delta(s.sdkPagePlusCore, s.sdkPage))} against ext-tasks' +${kib(delta(s.sdkPagePlusExtTasks, s.sdkPage))}: ${mark(delta(s.sdkPagePlusCore, s.sdkPage) < delta(s.sdkPagePlusExtTasks, s.sdkPage))}; ` +
      `by Vite, +${kib(delta(s.vite.sdkPagePlusCore, s.vite.sdkPage))} against +${kib(delta(s.vite.sdkPagePlusExtTasks, s.vite.sdkPage))}: ${mark(delta(s.vite.sdkPagePlusCore, s.vite.sdkPage) < delta(s.vite.sdkPagePlusExtTasks, s.vite.sdkPage))}. ` +
      `Against ext-tasks' own code alone (zod left out altogether, ${kib(s.extTasksWithoutZod.gzip)}), the core is ${s.core.gzip < s.extTasksWithoutZod.gzip ? 'smaller' : 'larger'}.`,
    '',
  );
  push(
    "How the core came down from the 45.7 KiB gzip (149.2 KiB raw) issue 25 first measured: the receiver role (a client running the server's " +
      'task-augmented elicitation and sampling as tasks of its own) moved behind its own entry point, `mcp-task-client/receiver`, which the root entry ' +
      'never imports: `taskReceiver()` there makes the receiver that the `serve` option and `TaskClient.serve()` take ([Receiver tasks](receiver.md)), ' +
      'so a host that serves no receiver tasks bundles none of it, and one that does pays for it in the rows above. ' +
      "Then the bundle was read file by file (esbuild's metafile): it has no dead code or unused export of any size, and the rest is what gzip compresses " +
      'least, code that is not repeated; option checks written as tables and shorter messages were measured too, and saved next to nothing gzipped ' +
      '(a name or phrase that repeats costs gzip almost nothing), so only the messages that said a thing twice were shortened. ' +
      "The largest later saving came from the compiler's output, not the code: TypeScript's ES2022 output declared every class field twice, in " +
      'the class body and again in its constructor; fields are now assigned, not defined (`useDefineForClassFields: false`), which with a smaller ' +
      'SHA-256 and the code the two wires each had a copy of written once took 793 bytes gzip off the core, with the same behaviour.',
    '',
  );
  if (!met) {
    const c = s.ceilings;
    const needed = s.core.gzip - s.targetGzip;
    const saves = (gzip: number): string => kib(s.core.gzip - gzip);
    push(
      `The core is still ${kib(needed)} over its target. What each cut left would save, measured on this bundle, not made` +
        (c === undefined
          ? '. '
          : `: emptying every string literal (every message, option name and method name) ${saves(c.withoutStringsGzip)}; ` +
            `cutting every property name to two characters (minifiers leave them alone) ${saves(c.shortPropertiesGzip)}` +
            (c.withoutExtensionWireGzip === undefined || c.without2025WireGzip === undefined
              ? '. '
              : `; making the tasks extension's wire a plug-in of its own, as the receiver is, ${saves(c.withoutExtensionWireGzip)} ` +
                `(the 2025-11-25 wire, ${saves(c.without2025WireGzip)}). `)) +
        'None is made. Messages are what users read and match on, and two-letter names would make the code unreadable. A wire as a plug-in would make ' +
        'every host name the wires it may meet when it creates its client, and a host that guessed wrong would find out only from a server that speaks the ' +
        'other one; the receiver is different, since a host knows whether it serves receiver tasks' +
        (c?.withoutExtensionWireGzip === undefined || c.without2025WireGzip === undefined
          ? '. '
          : `. The four savings added come to ${kib(4 * s.core.gzip - c.withoutStringsGzip - c.shortPropertiesGzip - c.withoutExtensionWireGzip - c.without2025WireGzip)} ` +
            `(cut together they would save somewhat less), against the ${kib(needed)} the target asks. `) +
        'The budget that `npm test` checks (spec/package/size.spec.ts) is therefore the figure reached, so the core cannot grow unnoticed.',
      '',
    );
  }
  push("Where the core's bytes go (raw, minified, by lib/ folder, top-level module or dependency):", '');
  push('| part | raw | share |', '|---|---:|---:|');
  for (const { part, raw } of s.breakdown)
    push(`| ${part} | ${kib(raw)} | ${((raw / s.core.raw) * 100).toFixed(1)}% |`);
  push('');
  return lines;
}
