/**
 * URL-mode elicitation (MCP 2025-11-25): the CLI declares both elicitation modes, so a server's
 * url-mode request reaches it instead of being refused with -32602. On a terminal it shows the
 * message and the whole URL (never opening it) and asks whether the user completed it; without a
 * terminal it is answered like a form: from `--answer` (an action only, a URL-mode result has no
 * `content`), else declined with a note. The scripted server completes its task with the reply it
 * got (spec/fixtures/cli-faulty-server.ts, `SCRIPT=ask-url`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FAULTY_SERVER, KEY, PtyRun, jsonLines, runPiped } from './support/cli.js';

const URL = 'https://example.com/connect?session=abc';

/** The text of the task's result, from the `result` line. */
function resultText(line: Record<string, unknown> | undefined): string {
  const content = (line?.result as { content?: { text?: string }[] } | undefined)?.content;
  return content?.[0]?.text ?? JSON.stringify(line);
}

describe('a URL-mode elicitation without a terminal', { timeout: 120_000 }, () => {
  it('is answered from --answer with an action only, declined without one, and an answer with content does not fit it', async () => {
    const call = (answers: string[]): ReturnType<typeof runPiped>['done'] =>
      // Three at once: the 2025-11-25 wire (no SDK v2 probe process) and time to connect on a loaded machine.
      runPiped(
        [
          'call',
          'ask',
          '--stdio',
          FAULTY_SERVER,
          '--wire',
          '2025-11-25',
          '--connect-timeout',
          '2m',
          ...answers.flatMap((answer) => ['--answer', answer]),
        ],
        { SCRIPT: 'ask-url' },
      ).done;
    const [accepted, unanswered, unfit] = await Promise.all([
      call(['{"action":"accept"}']),
      call([]),
      call(['{"action":"accept","content":{"ok":true}}']),
    ]);

    expect(accepted.code, accepted.stderr).toBe(0);
    const lines = jsonLines(accepted.stdout);
    // The server got an answer, not -32602, and no content with it.
    expect(resultText(lines.at(-1))).toBe('answer: accept');
    expect(lines.find((line) => line.type === 'input')).toMatchObject({
      kind: 'elicitation',
      request: { mode: 'url', url: URL, elicitationId: 'el-1', message: 'Sign in to the archive' },
      answer: { action: 'accept' },
      source: 'answer',
    });
    expect((lines.find((line) => line.type === 'input')!.answer as Record<string, unknown>).content).toBeUndefined();

    // As a form without a terminal: declined, and said so.
    expect(unanswered.code, unanswered.stderr).toBe(0);
    expect(resultText(jsonLines(unanswered.stdout).at(-1))).toBe('answer: decline');
    expect(unanswered.stderr).toMatch(
      /declined a question from task \S+ \("Sign in to the archive"\): no answer given \(use --answer JSON or --answers FILE\)/,
    );

    expect(unfit.code, unfit.stderr).toBe(0);
    expect(resultText(jsonLines(unfit.stdout).at(-1))).toBe('answer: decline');
    expect(unfit.stderr).toContain(
      'answer #1 does not fit a URL elicitation (an action only: accept, decline or cancel)',
    );
  });
});

describe('a URL-mode elicitation on a terminal', { timeout: 60_000 }, () => {
  let run: PtyRun | undefined;
  afterEach(() => run?.kill());

  it('shows the message and the whole URL, and sends the action the user picks', async () => {
    run = new PtyRun(['call', 'ask', '--stdio', FAULTY_SERVER], { SCRIPT: 'ask-url' });
    await run.waitFor('The task asks you to open this URL (not opened for you)');
    await run.waitFor('Sign in to the archive');
    await run.waitFor(URL);
    const at = await run.waitFor('Done: I completed it (accept)');
    run.type(KEY.down); // Decline
    run.type(KEY.enter);
    await run.waitFor('elicitation answered decline (by you)', 15_000, at);
    const { exitCode } = await run.exited;
    expect(exitCode).toBe(0);
    expect(run.text).toContain('answer: decline');
  });
});
