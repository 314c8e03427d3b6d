/**
 * Answers given in advance for a task's questions: `--answer JSON` (repeatable) and
 * `--answers FILE` (a JSON array, or one JSON value per line), used in order, one per input
 * request.
 *
 * - For an elicitation: `{"action":"accept","content":{…}}`, `{"action":"decline"}`,
 *   `{"action":"cancel"}`, or any other object, taken as the `content` to accept. A URL-mode
 *   elicitation takes an action only (`{"action":"accept"}`: the user completed it); its result
 *   has no `content`.
 * - For a sampling request: a string (the reply's text), `{"action":"reject"}`, or an object with
 *   `content` (a `CreateMessageResult`; `role` and `model` are filled in when missing).
 */
import { readFileSync } from 'node:fs';
import { UsageError } from './args.js';
import type { ElicitAnswer } from './forms.js';

/** A sampling reply in the wire's `CreateMessageResult` shape, or a rejection. */
export type PresetSampling = { readonly result: Record<string, unknown> } | { readonly reject: true };

function parse(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Reads `stream` to its end, as text: how `--answers -` reads stdin. Through the stream, not a
 * read of fd 0: once Node opened stdin as a stream (the CLI does before it loads the answers), a
 * pipe is non-blocking, and a synchronous read of it fails with EAGAIN whenever the writer has not
 * written yet (`(sleep 1; echo …) | mcp-task … --answers -`).
 */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads the answers of `--answer` values, then of the `--answers` file; `-` is stdin, whose text
 * (read to its end with {@link readAll}) is `stdin` (`… | mcp-task call tool --answers -`).
 * @throws UsageError for invalid JSON or an unreadable file.
 */
export function loadAnswers(inline: readonly string[], file: string | undefined, stdin?: string): unknown[] {
  const answers = inline.map((text, i) => parse(text, `--answer #${i + 1}`));
  if (file !== undefined) {
    let text: string;
    try {
      text = file === '-' && stdin !== undefined ? stdin : readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (error) {
      throw new UsageError(`--answers: cannot read ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`);
    }
    const trimmed = text.trim();
    const source = file === '-' ? 'stdin' : file;
    if (trimmed.startsWith('[')) {
      answers.push(...(parse(trimmed, `--answers ${source}`) as unknown[]));
    } else {
      trimmed
        .split('\n')
        .filter((line) => line.trim() !== '')
        .forEach((line, i) => answers.push(parse(line, `--answers ${source} line ${i + 1}`)));
    }
  }
  return answers;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value an elicitation's `content` may hold: a string, number, boolean or array of strings. */
const isContentValue = (value: unknown): boolean =>
  typeof value === 'string' ||
  typeof value === 'number' ||
  typeof value === 'boolean' ||
  (Array.isArray(value) && value.every((item) => typeof item === 'string'));

/** `value` as an `ElicitResult`'s `content`: an object of content values; else `undefined`. */
function toContent(value: unknown): ElicitAnswer['content'] | undefined {
  if (!isObject(value) || !Object.values(value).every(isContentValue)) return undefined;
  return value as ElicitAnswer['content'];
}

/**
 * The elicitation answer `value` stands for; `undefined` when it cannot be one (it is then
 * declined, with a note): not an object, an unknown `action`, or content that is not an object
 * of strings, numbers, booleans and arrays of strings. `{"action":"accept"}` without `content`
 * accepts with empty content.
 */
export function toElicitAnswer(value: unknown): ElicitAnswer | undefined {
  if (!isObject(value)) return undefined;
  const action = value.action;
  if (action === 'decline' || action === 'cancel') return { action };
  if (action === 'accept') {
    if (value.content === undefined) return { action, content: {} };
    const content = toContent(value.content);
    return content === undefined ? undefined : { action, content };
  }
  if (action !== undefined) return undefined;
  const content = toContent(value);
  return content === undefined ? undefined : { action: 'accept', content };
}

/**
 * The answer `value` stands for to a URL-mode elicitation, whose result carries an action and no
 * `content`: `{"action":"accept"}` (the user completes what the URL asks), `{"action":"decline"}`
 * or `{"action":"cancel"}` (content given with these two is dropped, as for a form). Content to
 * accept (with `"accept"`, or as the object itself) does not fit, and is `undefined` (declined,
 * with a note).
 */
export function toUrlElicitAnswer(value: unknown): ElicitAnswer | undefined {
  if (!isObject(value)) return undefined;
  const action = value.action;
  if (action === 'decline' || action === 'cancel') return { action };
  return action === 'accept' && value.content === undefined ? { action } : undefined;
}

/** The sampling answer `value` stands for; `undefined` when it cannot be one. */
export function toSamplingAnswer(value: unknown): PresetSampling | undefined {
  if (typeof value === 'string') return { result: textReply(value) };
  if (!isObject(value)) return undefined;
  if (value.action === 'reject') return { reject: true };
  if (value.content === undefined) return undefined;
  return { result: { role: 'assistant', model: 'mcp-task', ...value } };
}

/** A `CreateMessageResult` with a text reply typed by a person. */
export function textReply(text: string): Record<string, unknown> {
  return {
    role: 'assistant',
    content: { type: 'text', text },
    model: 'mcp-task (typed by the user)',
    stopReason: 'endTurn',
  };
}

/** The answers, consumed in order. */
export class AnswerQueue {
  private index = 0;

  constructor(private readonly answers: readonly unknown[]) {}

  /** The next answer and its 1-based number, or `undefined` when none are left. */
  next(): { value: unknown; number: number } | undefined {
    if (this.index >= this.answers.length) return undefined;
    this.index += 1;
    return { value: this.answers[this.index - 1], number: this.index };
  }
}
