/**
 * Terminal forms for a task's questions, with `@clack/prompts`: an elicitation's
 * `requestedSchema` becomes one prompt per field (enum → select, boolean → confirm, number or
 * integer → validated input with its bounds, string → input validated by its format; required
 * fields enforced), and a sampling request is shown as text to answer or reject. Escape (or the
 * request being withdrawn) dismisses a form: the elicitation is answered `cancel`.
 */
import { confirm, isCancel, multiselect, note, select, text } from '@clack/prompts';
import { terminalSafe } from './sanitize.js';
import { checkNumber, checkSelection, checkText, fieldsOf, hintOf, type Field } from './schema-fields.js';

/** An elicitation answer (the wire's `ElicitResult` without `_meta`). */
export interface ElicitAnswer {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Record<string, string | number | boolean | string[]>;
}

/** A sampling answer: a typed reply, or a rejection. */
export type SamplingAnswer = { readonly text: string } | { readonly reject: true };

type Value = string | number | boolean | string[];
const DISMISSED = Symbol('dismissed');

/**
 * Sets `key` as an own property of `target`. The keys are the server's property names, and plain
 * assignment of `"__proto__"` would drop the answer or, for an array, replace the prototype.
 */
function setOwn(target: Record<string, Value>, key: string, value: Value): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A check's message (it names the server's field title) as plain text. */
const plain = (problem: string | undefined): string | undefined =>
  problem === undefined ? undefined : terminalSafe(problem);

async function ask(field: Field, signal: AbortSignal): Promise<Value | undefined | typeof DISMISSED> {
  const hint = hintOf(field);
  // Titles, descriptions, formats and choice labels are the server's: shown only as plain text.
  const message = terminalSafe(
    `${field.label}${hint ? ` (${hint})` : ''}${field.description ? ` - ${field.description}` : ''}`,
  );
  switch (field.kind) {
    case 'select': {
      const skip = '\u0000skip';
      const options = field.choices.map((choice) => ({ value: choice.value, label: terminalSafe(choice.label) }));
      if (!field.required) options.push({ value: skip, label: '(no answer)' });
      const value = await select({ message, options, initialValue: field.default, signal });
      return isCancel(value) ? DISMISSED : value === skip ? undefined : value;
    }
    case 'multiselect': {
      const value = await multiselect({
        message,
        options: field.choices.map((choice) => ({ value: choice.value, label: terminalSafe(choice.label) })),
        initialValues: field.default,
        required: field.required,
        signal,
      });
      if (isCancel(value)) return DISMISSED;
      // An optional field with nothing chosen is left out, as any empty optional field is.
      return value.length === 0 && !field.required ? undefined : value;
    }
    case 'confirm': {
      const value = await confirm({ message, initialValue: field.default ?? false, signal });
      return isCancel(value) ? DISMISSED : value;
    }
    case 'number': {
      const value = await text({
        message,
        initialValue: field.default === undefined ? undefined : String(field.default),
        validate: (raw) => plain(checkNumber(field, raw ?? '')),
        signal,
      });
      if (isCancel(value)) return DISMISSED;
      return value.trim() === '' ? undefined : Number(value);
    }
    case 'text': {
      const value = await text({
        message,
        initialValue: field.default,
        validate: (raw) => plain(checkText(field, raw ?? '')),
        signal,
      });
      if (isCancel(value)) return DISMISSED;
      return value === '' ? undefined : value;
    }
  }
}

/**
 * Asks the user for an elicitation: first whether to answer, decline or cancel, then each field.
 * `params` is the request's params (form or URL mode).
 */
export async function askElicitation(params: Record<string, unknown>, signal: AbortSignal): Promise<ElicitAnswer> {
  const message = terminalSafe(typeof params.message === 'string' ? params.message : '(no message)', {
    multiline: true,
  });
  if (params.mode === 'url') {
    // The whole URL, as text: the CLI never opens it, the user decides whether to. The answer is
    // an action only (a URL-mode result has no content).
    note(
      `${message}\n\n${terminalSafe(String(params.url))}`,
      'The task asks you to open this URL (not opened for you)',
    );
    const choice = await select({
      message: 'Open it in your browser, complete it, then answer',
      options: [
        { value: 'accept' as const, label: 'Done: I completed it (accept)' },
        { value: 'decline' as const, label: 'Decline' },
        { value: 'cancel' as const, label: 'Cancel (dismiss)' },
      ],
      signal,
    });
    return { action: isCancel(choice) ? 'cancel' : choice };
  }
  const fields = fieldsOf(params.requestedSchema);
  note(message, 'The task asks');
  const choice = await select({
    message: fields.length === 0 ? 'Your answer' : 'Answer this form?',
    options: [
      { value: 'accept' as const, label: fields.length === 0 ? 'Accept' : 'Answer' },
      { value: 'decline' as const, label: 'Decline' },
      { value: 'cancel' as const, label: 'Cancel (dismiss)' },
    ],
    signal,
  });
  if (isCancel(choice)) return { action: 'cancel' };
  if (choice !== 'accept') return { action: choice };
  const content: Record<string, Value> = {};
  for (const field of fields) {
    for (;;) {
      const value = await ask(field, signal);
      if (value === DISMISSED) return { action: 'cancel' };
      if (field.kind === 'multiselect') {
        const problem = checkSelection(field, (value as string[] | undefined) ?? []);
        if (problem !== undefined) {
          note(terminalSafe(problem, { multiline: true }), terminalSafe(field.label));
          continue;
        }
      }
      if (value !== undefined) setOwn(content, field.key, value);
      break;
    }
  }
  return { action: 'accept', content };
}

function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? (content as unknown[]) : [content];
  return blocks
    .map((block) => {
      const b = block as { type?: unknown; text?: unknown; mimeType?: unknown };
      return b.type === 'text' && typeof b.text === 'string'
        ? b.text
        : `[${String(b.type)}${typeof b.mimeType === 'string' ? ` ${b.mimeType}` : ''}]`;
    })
    .join('\n');
}

/** The sampling request as readable text: the system prompt, then each message with its role. */
export function describeSampling(params: Record<string, unknown>): string {
  const lines: string[] = [];
  if (typeof params.systemPrompt === 'string') lines.push(`system: ${params.systemPrompt}`);
  const messages = Array.isArray(params.messages) ? (params.messages as { role?: unknown; content?: unknown }[]) : [];
  for (const m of messages) lines.push(`${String(m.role)}: ${textOf(m.content)}`);
  if (typeof params.maxTokens === 'number') lines.push(`(at most ${params.maxTokens} tokens)`);
  return lines.join('\n');
}

/** Shows a sampling request and asks the user to type the reply or reject it. */
export async function askSampling(params: Record<string, unknown>, signal: AbortSignal): Promise<SamplingAnswer> {
  note(terminalSafe(describeSampling(params), { multiline: true }), 'The task asks your model');
  const choice = await select({
    message: 'Reply as the model?',
    options: [
      { value: 'reply' as const, label: 'Type a reply' },
      { value: 'reject' as const, label: 'Reject' },
    ],
    signal,
  });
  if (isCancel(choice) || choice === 'reject') return { reject: true };
  const reply = await text({
    message: 'Reply',
    validate: (raw) => ((raw ?? '') === '' ? 'Type a reply, or press Escape to reject' : undefined),
    signal,
  });
  return isCancel(reply) ? { reject: true } : { text: reply };
}
