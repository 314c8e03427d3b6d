/**
 * Terminal hygiene: a server's text (tool descriptions, status messages, results, a failed task's
 * message, a question and its field titles, its stderr) reaches a terminal with its control
 * characters neutralised, so a window-title, clear-screen or clipboard-write (OSC 52) sequence
 * never drives the terminal; `--json` output stays JSON and keeps the text exactly.
 */
import { describe, expect, it } from 'vitest';
import { ESCAPES } from '../fixtures/escapes.js';
import { FAULTY_SERVER, KEY, PtyRun, jsonLines, runPiped } from './support/cli.js';

const env = { SCRIPT: 'escapes' };
const HOSTILE = ['\u001b]0;PWNED', '\u001b]52;', '\u001b[2J', '\u009b', 'over\rwritten'];

/** Fails if the terminal received any of the server's sequences raw. */
function expectClean(raw: string): void {
  for (const sequence of HOSTILE)
    expect(raw.includes(sequence), `raw ${JSON.stringify(sequence)} reached the terminal`).toBe(false);
}

describe('server text on a terminal', { timeout: 90_000 }, () => {
  it('status messages and the result (call), the tool list (tools) and a failure (call broken): shown, neutralised', async () => {
    const runs = [
      new PtyRun(['call', 'job', '--stdio', FAULTY_SERVER], env),
      new PtyRun(['tools', '--stdio', FAULTY_SERVER], env),
      new PtyRun(['call', 'broken', '--stdio', FAULTY_SERVER], env),
    ];
    try {
      const [call, tools, broken] = runs as [PtyRun, PtyRun, PtyRun];
      const codes = await Promise.all(runs.map(async (run) => (await run.exited).exitCode));
      expect(codes).toEqual([0, 0, 1]);
      for (const run of runs) expectClean(run.raw);
      // What the server sent is still there to read, its controls made visible.
      expect(call.text).toContain('starting␛[2J␛[H␛]0;PWNED-TITLE␇');
      expect(call.text).toContain('done␛]0;PWNED-TITLE␇');
      expect(call.text).toContain('over␍written');
      expect(tools.text).toMatch(/job\s+required\s+Does things␛\]0;PWNED-TITLE␇/);
      expect(broken.text).toContain('boom␛]0;PWNED-TITLE␇');
    } finally {
      for (const run of runs) run.kill();
    }
  });

  it('a question: its message and field title in the form are neutralised too', async () => {
    const run = new PtyRun(['call', 'ask', '--stdio', FAULTY_SERVER], env);
    try {
      await run.waitFor('Proceed?', 30_000);
      const at = await run.waitFor('Answer this form?');
      run.type(KEY.enter); // Answer
      await run.waitFor('OK␛]0;PWNED-TITLE␇', 15_000, at);
      run.type('y');
      run.type(KEY.enter);
      await run.waitFor('answer: accept', 15_000, at);
      expect((await run.exited).exitCode).toBe(0);
      expect(run.text).toContain('Proceed?␛]0;PWNED-TITLE␇');
      expectClean(run.raw);
    } finally {
      run.kill();
    }
  });
});

describe('--json keeps the server text exactly, as JSON', { timeout: 60_000 }, () => {
  it('every line parses, the text round-trips, and no raw control character is on stdout', async () => {
    const { code, stdout } = await runPiped(['call', 'job', '--stdio', FAULTY_SERVER], env).done;
    expect(code).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(stdout)).toBe(false);
    const result = jsonLines(stdout).at(-1) as { result: { content: { text: string }[] } };
    expect(result.result.content[0]!.text).toBe(`done${Object.values(ESCAPES).join('')}`);
  });
});
