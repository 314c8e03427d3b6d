/**
 * An HTML form for an elicitation (`elicitation/create` in form mode): one field per property of
 * `requestedSchema` (a select for an enum, a checkbox for a boolean, a number box for a number,
 * a text box otherwise), with Submit, Decline and Cancel. It resolves with the user's answer, or
 * with `cancel` when the answer is no longer wanted (`signal`: the task ended or was cancelled).
 */
import type { ElicitRequestParams, ElicitResult, JsonObject } from '../../../lib/index.js';

type Field = {
  readonly name: string;
  readonly schema: JsonObject;
  readonly input: HTMLInputElement | HTMLSelectElement;
};

/** The choices of an enum property, `[value, label]`: `enum` or `oneOf: [{ const, title }]`. */
function choicesOf(schema: JsonObject): Array<[string, string]> | undefined {
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => [String(value), String(value)]);
  if (!Array.isArray(schema.oneOf)) return undefined;
  return schema.oneOf.map((option) => {
    const { const: value, title } = option as JsonObject;
    return [String(value), typeof title === 'string' ? title : String(value)];
  });
}

function inputFor(name: string, schema: JsonObject, required: boolean): HTMLInputElement | HTMLSelectElement {
  const choices = choicesOf(schema);
  if (choices !== undefined) {
    const select = document.createElement('select');
    for (const [value, label] of choices) select.add(new Option(label, value, false, value === schema.default));
    select.name = name;
    return select;
  }
  const input = document.createElement('input');
  input.name = name;
  if (schema.type === 'boolean') {
    input.type = 'checkbox';
    input.checked = schema.default === true;
    return input;
  }
  if (schema.type === 'number' || schema.type === 'integer') {
    input.type = 'number';
    input.step = schema.type === 'integer' ? '1' : 'any';
    if (typeof schema.minimum === 'number') input.min = String(schema.minimum);
    if (typeof schema.maximum === 'number') input.max = String(schema.maximum);
  } else {
    input.type = schema.format === 'email' ? 'email' : 'text';
  }
  if (typeof schema.default === 'string' || typeof schema.default === 'number') input.value = String(schema.default);
  input.required = required;
  return input;
}

/** The value of a field, typed as its schema says; `undefined` for an empty optional one. */
function valueOf({ schema, input }: Field): string | number | boolean | undefined {
  if (input instanceof HTMLInputElement && input.type === 'checkbox') return input.checked;
  if (input.value === '') return undefined;
  return schema.type === 'number' || schema.type === 'integer' ? Number(input.value) : input.value;
}

/** Shows `params` in `form` and waits for the user's answer. */
export function askInForm(
  form: HTMLFormElement,
  params: ElicitRequestParams,
  signal: AbortSignal,
): Promise<ElicitResult> {
  const schema = params.requestedSchema;
  const required = new Set(schema?.required ?? []);
  const fields: Field[] = Object.entries(schema?.properties ?? {}).map(([name, property]) => ({
    name,
    schema: property,
    input: inputFor(name, property, required.has(name)),
  }));
  const legend = document.createElement('p');
  legend.textContent = params.message;
  form.replaceChildren(legend);
  for (const field of fields) {
    const label = document.createElement('label');
    const title = typeof field.schema.title === 'string' ? field.schema.title : field.name;
    label.append(`${title} `, field.input);
    form.append(label);
  }
  const button = (text: string, type: 'submit' | 'button'): HTMLButtonElement => {
    const b = document.createElement('button');
    b.type = type;
    b.textContent = text;
    form.append(b);
    return b;
  };
  button('Submit', 'submit');
  const decline = button('Decline', 'button');
  const dismiss = button('Cancel', 'button');
  form.hidden = false;
  fields[0]?.input.focus();

  return new Promise<ElicitResult>((resolve) => {
    const finish = (answer: ElicitResult): void => {
      form.hidden = true;
      form.replaceChildren();
      form.onsubmit = null;
      signal.removeEventListener('abort', gone);
      resolve(answer);
    };
    const gone = (): void => finish({ action: 'cancel' });
    if (signal.aborted) return gone();
    signal.addEventListener('abort', gone, { once: true });
    decline.onclick = () => finish({ action: 'decline' });
    dismiss.onclick = () => finish({ action: 'cancel' });
    form.onsubmit = (event) => {
      event.preventDefault();
      const content: Record<string, string | number | boolean> = {};
      for (const field of fields) {
        const value = valueOf(field);
        if (value !== undefined) content[field.name] = value;
      }
      finish({ action: 'accept', content });
    };
  });
}
