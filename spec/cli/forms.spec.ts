/**
 * The CLI's elicitation form (cli/src/forms.ts) without a terminal: `@clack/prompts` is replaced
 * by a script of answers, one per prompt, so `askElicitation` runs as it does for a user.
 */
import type * as Prompts from '@clack/prompts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { askElicitation } from '../../cli/src/forms.js';

/** What the next prompts answer, in order (the first is "Answer this form?"). */
const script = vi.hoisted(() => ({ answers: [] as unknown[] }));

vi.mock('@clack/prompts', async (importOriginal) => {
  const original = await importOriginal<typeof Prompts>();
  const next = () => Promise.resolve(script.answers.shift());
  return { ...original, note: () => {}, select: next, multiselect: next, confirm: next, text: next };
});

afterEach(() => {
  script.answers.length = 0;
});

/** An elicitation's params whose `requestedSchema` comes off the wire (so `__proto__` is an own key). */
function form(schema: string): Record<string, unknown> {
  return { mode: 'form', message: 'Tell me', requestedSchema: JSON.parse(schema) as unknown };
}

describe('askElicitation', () => {
  it('keeps a property named __proto__ as an own key of content (a typed answer)', async () => {
    script.answers.push('accept', 'boo', '2');
    const answer = await askElicitation(
      form('{"type":"object","properties":{"__proto__":{"type":"string"},"n":{"type":"integer"}}}'),
      new AbortController().signal,
    );
    expect(answer.action).toBe('accept');
    const content = answer.content!;
    expect(Object.hasOwn(content, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(content, '__proto__')?.value).toBe('boo');
    expect(Object.getPrototypeOf(content)).toBe(Object.prototype);
    expect(JSON.stringify(content)).toBe('{"__proto__":"boo","n":2}');
    expect(script.answers).toEqual([]);
  });

  it('keeps a multiselect named __proto__ as an own key, leaving the prototype alone', async () => {
    script.answers.push('accept', ['a', 'b']);
    const answer = await askElicitation(
      form('{"type":"object","properties":{"__proto__":{"type":"array","items":{"enum":["a","b","c"]}}}}'),
      new AbortController().signal,
    );
    const content = answer.content!;
    expect(Object.hasOwn(content, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(content, '__proto__')?.value).toEqual(['a', 'b']);
    expect(Object.getPrototypeOf(content)).toBe(Object.prototype);
    expect(Array.isArray(content)).toBe(false);
    expect(JSON.stringify(answer)).toBe('{"action":"accept","content":{"__proto__":["a","b"]}}');
  });

  it('an optional multiselect with nothing chosen is left out, its minItems applying only to an answer given', async () => {
    const schema = '{"type":"object","properties":{"tags":{"type":"array","items":{"enum":["a","b"]},"minItems":1}}}';
    script.answers.push('accept', [], ['a']);
    expect(await askElicitation(form(schema), new AbortController().signal)).toEqual({
      action: 'accept',
      content: {},
    });
    // Asked once: the unused scripted answer is still there.
    expect(script.answers).toEqual([['a']]);
    script.answers.length = 0;
    // Required, nothing chosen is asked again.
    const required =
      '{"type":"object","properties":{"tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["tags"]}';
    script.answers.push('accept', [], ['b']);
    expect(await askElicitation(form(required), new AbortController().signal)).toEqual({
      action: 'accept',
      content: { tags: ['b'] },
    });
  });
});
