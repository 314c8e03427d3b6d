/**
 * Every class field of lib/ and cli/src/ is created by its constructor. The build assigns class
 * fields rather than defining them (tsconfig.json `useDefineForClassFields: false`, which keeps
 * each field from being declared twice in the emitted JS), so a field with neither an initializer
 * nor an assignment in the constructor would not exist until some method first sets it: objects of
 * one class would then change shape as they live, which V8 pays for on every access (the hidden
 * classes util/shapes.ts keeps). Such a field is written `= undefined`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The names `this.<name> = …` assigns anywhere in `body`. */
function assigned(body: ts.Node | undefined): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      node.left.expression.kind === ts.SyntaxKind.ThisKeyword
    )
      names.add(node.left.name.text);
    // A nested function or class has its own `this`.
    if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isClassLike(node)) return;
    ts.forEachChild(node, visit);
  };
  if (body !== undefined) visit(body);
  return names;
}

/** `file:line Class.field` for each instance field with no initializer that its constructor never assigns. */
function fieldsMadeLate(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const late: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassLike(node)) {
      const set = assigned(node.members.find(ts.isConstructorDeclaration)?.body);
      for (const member of node.members) {
        if (!ts.isPropertyDeclaration(member) || member.initializer !== undefined) continue;
        const kinds = (ts.getModifiers(member) ?? []).map((modifier) => modifier.kind);
        if (kinds.some((kind) => SKIPPED.has(kind))) continue;
        const name = member.name.getText(source);
        if (set.has(name)) continue;
        const line = source.getLineAndCharacterOfPosition(member.getStart(source)).line + 1;
        late.push(`${file}:${line} ${node.name?.getText(source) ?? '(class)'}.${name}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return late;
}

/** Fields that are not the instance's own data, or emit nothing. */
const SKIPPED = new Set([ts.SyntaxKind.DeclareKeyword, ts.SyntaxKind.AbstractKeyword, ts.SyntaxKind.StaticKeyword]);

describe('class fields are created by their constructor (fields are assigned, not defined)', () => {
  it('the build assigns class fields', () => {
    const config = ts.parseConfigFileTextToJson('tsconfig.json', readFileSync('tsconfig.json', 'utf8'));
    expect(
      (config.config as { compilerOptions: Record<string, unknown> }).compilerOptions.useDefineForClassFields,
    ).toBe(false);
  });

  it('every field of lib/ and cli/src/ has an initializer or an assignment in its constructor', () => {
    const late = [...sources('lib'), ...sources('cli/src')].flatMap((file) =>
      fieldsMadeLate(file, readFileSync(file, 'utf8')),
    );
    expect(late).toEqual([]);
  });

  it('the check finds a field only a method sets, and passes one set in the constructor or written `= undefined`', () => {
    const probe = [
      'class A {',
      '  private lazy: number | undefined;',
      '  private init: number | undefined = undefined;',
      '  private built: number;',
      '  declare readonly brand: string;',
      '  static count: number;',
      '  constructor(private readonly given: number) {',
      '    if (given > 0) this.built = given;',
      '    else this.built = 0;',
      '    const later = function (this: { lazy: number }) { this.lazy = 1; };',
      '    void later;',
      '  }',
      '  touch(): void { this.lazy = 1; }',
      '}',
    ].join('\n');
    expect(fieldsMadeLate('probe.ts', probe)).toEqual(['probe.ts:2 A.lazy']);
  });
});
