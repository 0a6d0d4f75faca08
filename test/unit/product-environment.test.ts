import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRODUCT_ENVIRONMENT } from '../../schemas/product-environment.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PRODUCT_DIRS = ['bin', 'streams', 'processors', 'service', 'schemas', 'infra'];
const DECLARATION = join('schemas', 'product-environment.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Variable names the code reads: `env.X` (and the other names an environment goes by here),
 * `env['X']`, and the upper-case keys of zod schemas that parse an environment.
 */
function readsIn(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/(?:\benv|\be|\bpresent|process\.env)\??\.([A-Z][A-Z0-9_]*[A-Z0-9])\b/g)) {
    names.add(m[1]!);
  }
  for (const m of text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)) names.add(m[1]!);
  if (/\bz\.object\(/.test(text)) {
    for (const m of text.matchAll(/^\s+([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])\??:\s/gm)) names.add(m[1]!);
  }
  return [...names];
}

const files = PRODUCT_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir))).filter(
  (path) => relative(ROOT, path) !== DECLARATION,
);
const readBy = new Map<string, string[]>();
for (const path of files) {
  for (const name of readsIn(readFileSync(path, 'utf8'))) {
    readBy.set(name, [...(readBy.get(name) ?? []), relative(ROOT, path)]);
  }
}
const declared = new Set(PRODUCT_ENVIRONMENT.map((v) => v.name));

describe('the declared product environment', () => {
  it('finds the reads it is meant to find (the scan itself works)', () => {
    expect(readsIn('const a = env.KAFKA_BROKERS; const b = process.env.NEON_FEEDS;')).toEqual([
      'KAFKA_BROKERS',
      'NEON_FEEDS',
    ]);
    expect(readsIn("z.object({\n  NEON_X_Y: z.string(),\n})\nconst c = env['NEON_Z'];")).toEqual([
      'NEON_Z',
      'NEON_X_Y',
    ]);
  });

  it('declares every variable the code reads', () => {
    const undeclared = [...readBy.keys()].filter((name) => !declared.has(name)).sort();
    expect(
      undeclared.map((name) => `${name} (read in ${readBy.get(name)!.join(', ')})`),
      'add these to schemas/product-environment.ts',
    ).toEqual([]);
  });

  it('declares nothing the code does not read', () => {
    expect([...declared].filter((name) => !readBy.has(name)).sort()).toEqual([]);
  });

  it('declares each variable once', () => {
    expect(PRODUCT_ENVIRONMENT.length).toBe(declared.size);
  });

  it('marks credentials secret', () => {
    const secretLooking = PRODUCT_ENVIRONMENT.filter((v) => /(_KEYS?|PASSWORD|SECRET|_TOKENS?)$/.test(v.name));
    expect(secretLooking.filter((v) => !v.secret).map((v) => v.name)).toEqual([]);
  });
});
