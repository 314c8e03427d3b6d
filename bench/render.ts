/**
 * `npm run bench:render`: writes docs/performance.md and docs/performance.svg again from the
 * figures a run stored in bench/results.json, without measuring anything. A change to how the
 * page is laid out (bench/report.ts, bench/chart.ts) is thus published without a new run, and
 * every number on the page still comes from that one run. `--check` writes nothing and fails when
 * the committed page is not what the committed results give (spec/project/bench-page.spec.ts runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { svgChart } from './chart.js';
import { markdown, type ReportInput } from './report.js';

/** What a run writes to bench/results.json that the page is made of (format 2). */
interface StoredRun {
  readonly format: number;
  readonly generatedAt: string;
  readonly command: string;
  readonly versions: ReportInput['versions'];
  readonly machine: string;
  readonly elapsedS: number;
  readonly load?: ReportInput['load'];
  readonly workloads: ReportInput['workloads'];
  readonly rows: ReportInput['rows'];
  readonly soak?:
    (Omit<NonNullable<ReportInput['soak']>, 'output'> & { readonly output: readonly string[] }) | undefined;
  readonly causes?: ReportInput['causes'];
  readonly durable?: ReportInput['durable'];
  readonly size?: ReportInput['size'];
}

/** The page and the chart that the stored run gives. */
export function renderStored(run: StoredRun): { readonly markdown: string; readonly svg: string } {
  if (run.format !== 2)
    throw new Error(`bench/results.json has format ${String(run.format)}; this renderer reads format 2`);
  const soak = run.soak === undefined ? undefined : { ...run.soak, output: run.soak.output.join('\n') };
  return {
    markdown: markdown({
      generatedAt: run.generatedAt,
      versions: run.versions,
      machine: run.machine,
      command: run.command,
      workloads: run.workloads,
      rows: run.rows,
      chartFile: 'performance.svg',
      elapsedS: run.elapsedS,
      soak,
      load: run.load,
      causes: run.causes,
      durable: run.durable,
      size: run.size,
    }),
    svg: `${svgChart(run.rows, run.workloads)}\n`,
  };
}

function main(): void {
  const root = new URL('../', import.meta.url);
  const check = process.argv.includes('--check');
  const run = JSON.parse(readFileSync(new URL('bench/results.json', root), 'utf8')) as StoredRun;
  const page = renderStored(run);
  const files: ReadonlyArray<readonly [URL, string]> = [
    [new URL('docs/performance.md', root), page.markdown],
    [new URL('docs/performance.svg', root), page.svg],
  ];
  if (!check) {
    for (const [file, text] of files) writeFileSync(file, text);
    console.log(
      `Wrote docs/performance.md and docs/performance.svg from bench/results.json (run of ${run.generatedAt}).`,
    );
    return;
  }
  const stale = files
    .filter(([file, text]) => readFileSync(file, 'utf8') !== text)
    .map(([file]) => file.pathname.slice(root.pathname.length));
  if (stale.length > 0) {
    console.error(
      `${stale.join(' and ')} differ from what bench/results.json gives: run \`npm run bench:render\` and commit the result.`,
    );
    process.exitCode = 1;
    return;
  }
  console.log('docs/performance.md and docs/performance.svg are what bench/results.json gives.');
}

if (import.meta.url === `file://${process.argv[1]}`) main();
