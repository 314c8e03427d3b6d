/**
 * How long a task's path is: how many times each function was entered per task in the warm phase,
 * counted by V8's precise coverage with call counts (bench/scenario.ts writes `calls.json` under
 * `npm run bench:profile -- --calls=1`). V8 counts every entry into a function, in optimized and
 * inlined code too: a call, and also a resumption after an `await` or a `yield` (an async
 * function with two awaits counts three per call). The library's figures depend on its code and
 * the workload, not on the machine's speed; those of Node's streams and timers and the SDK's
 * transport also depend on how messages and timer expiries batch together, which timing decides.
 * They show where a change adds or removes work per task before a timed run can. A function
 * entered at least once per task is on every task's path, and is what V8's optimizing compiler
 * ends up compiling (the compilations `--jit=1` counts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LIBRARY, owner, where } from './owners.js';

/** One script's functions as `Profiler.takePreciseCoverage` returns them (`detailed: false`). */
interface ScriptCoverage {
  readonly url: string;
  readonly functions: ReadonlyArray<{
    readonly functionName: string;
    readonly ranges: ReadonlyArray<{ readonly startOffset: number; readonly count: number }>;
  }>;
}

/** Entries per task of one owner (see bench/owners.ts). */
export interface OwnerCalls {
  readonly owner: string;
  /** Entries per task, all functions of the owner together. */
  readonly callsPerTask: number;
  /** Functions of the owner entered at least once per task on average. */
  readonly perTaskFunctions: number;
}

/** One function of the library and its entries per task. */
export interface FunctionCalls {
  readonly name: string;
  readonly callsPerTask: number;
}

/** The phase's entries per task, by owner and by library function. */
export interface CallSummary {
  readonly byOwner: readonly OwnerCalls[];
  readonly libraryFunctions: readonly FunctionCalls[];
}

/** The line (0-based) of each character offset of a script, from its source. */
function lineOf(url: string): (offset: number) => number {
  let starts: number[] = [];
  try {
    const source = readFileSync(fileURLToPath(url), 'utf8');
    starts = [0];
    for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
  } catch {
    // Not a file (node: internals): no lines.
  }
  return (offset) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return starts.length === 0 ? -1 : low;
  };
}

/** Reads `calls.json` and sums it per task of the phase's `n`. */
export function callSummary(file: string, n: number): CallSummary {
  const scripts = JSON.parse(readFileSync(file, 'utf8')) as ScriptCoverage[];
  const owners = new Map<string, { calls: number; functions: number }>();
  const library: FunctionCalls[] = [];
  for (const script of scripts) {
    const lines = script.url.startsWith('file:') ? lineOf(script.url) : () => -1;
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      // The script's top level (an empty name at offset 0) ran when it loaded, not per task.
      if (range === undefined || range.count === 0 || (fn.functionName === '' && range.startOffset === 0)) continue;
      const frame = { url: script.url, functionName: fn.functionName, lineNumber: lines(range.startOffset) };
      const who = owner(frame);
      const sums = owners.get(who) ?? { calls: 0, functions: 0 };
      sums.calls += range.count;
      if (range.count >= n) sums.functions += 1;
      owners.set(who, sums);
      if (who === LIBRARY)
        library.push({ name: `${fn.functionName || '(anonymous)'}  ${where(frame)}`, callsPerTask: range.count / n });
    }
  }
  return {
    byOwner: [...owners]
      .map(([name, sums]) => ({ owner: name, callsPerTask: sums.calls / n, perTaskFunctions: sums.functions }))
      .sort((a, b) => b.callsPerTask - a.callsPerTask),
    libraryFunctions: library.sort((a, b) => b.callsPerTask - a.callsPerTask),
  };
}

/** The summary as printable tables (owners, then the library's `top` functions). */
export function callTables(summary: CallSummary, top: number): string {
  const rows = summary.byOwner.filter((o) => o.callsPerTask >= 0.05);
  const width = Math.max(5, ...rows.map((o) => o.owner.length));
  const lines = [
    `${'owner'.padEnd(width)}  entries/task  functions entered ≥ once per task`,
    ...rows.map(
      (o) =>
        `${o.owner.padEnd(width)}  ${o.callsPerTask.toFixed(1).padStart(10)}  ${String(o.perTaskFunctions).padStart(6)}`,
    ),
    '',
  ];
  const fns = summary.libraryFunctions.slice(0, top);
  const fnWidth = Math.max(8, ...fns.map((f) => f.name.length));
  lines.push(`${'library function'.padEnd(fnWidth)}  entries/task`);
  for (const f of fns) lines.push(`${f.name.padEnd(fnWidth)}  ${f.callsPerTask.toFixed(2).padStart(12)}`);
  return lines.join('\n');
}
