import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tsFiles } from '../helpers/project-files.ts';

/**
 * The layering of the code (DESIGN.md §4), lowest first. A file may import only from its own
 * layer or lower ones; research/ and webhooks/ share a level and may not import each other;
 * cli/ is the composition root, which nothing else imports (bin/, test/ and bench/ may).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['schemas'],
  ['infra'],
  ['presenters'],
  ['processors'],
  ['projections'],
  ['research', 'webhooks'],
  ['api'],
  ['stream'],
  ['client'],
  ['console'],
  ['cli'],
];

const LEVEL = new Map(LAYERS.flatMap((folders, level) => folders.map((folder) => [folder, level] as const)));

/** Source text without its comments; strings and template literals are kept as they are. */
function withoutComments(source: string): string {
  return source.replace(/('(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (match, literal: string | undefined) =>
    literal ?? match.replace(/[^\n]/g, ' '),
  );
}

const IMPORT_FORMS = [
  // import x from '…', import type { X } from '…', export { x } from '…', export * from '…'
  /\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
  // import '…' (for its side effects)
  /\bimport\s*(['"])([^'"\n]+)\1/g,
  // import('…')
  /\bimport\s*\(\s*(['"`])([^'"`\n]+)\1\s*\)/g,
];

/** The relative specifiers a source imports, statically or dynamically, in order of appearance. */
function relativeImports(source: string): string[] {
  const code = withoutComments(source);
  const found: { at: number; specifier: string }[] = [];
  for (const form of IMPORT_FORMS) {
    for (const m of code.matchAll(form)) if (m[2].startsWith('.')) found.push({ at: m.index, specifier: m[2] });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.specifier);
}

interface Violation {
  file: string;
  specifier: string;
  why: string;
}

function violations(): { checked: number; found: Violation[] } {
  let checked = 0;
  const found: Violation[] = [];
  for (const [from, level] of LEVEL) {
    for (const file of tsFiles(from)) {
      for (const specifier of relativeImports(readFileSync(join(ROOT, file), 'utf8'))) {
        checked++;
        const to = relative(ROOT, resolve(ROOT, dirname(file), specifier)).split(sep)[0];
        const toLevel = LEVEL.get(to);
        if (toLevel === undefined || to === from) continue;
        if (to === 'cli') found.push({ file, specifier, why: `${from}/ imports cli/, the composition root` });
        else if (toLevel > level) found.push({ file, specifier, why: `${from}/ imports the higher layer ${to}/` });
        else if (toLevel === level) found.push({ file, specifier, why: `${from}/ and ${to}/ are one level and may not import each other` });
      }
    }
  }
  return { checked, found };
}

describe('layers', () => {
  it('finds every form of relative import and none in comments', () => {
    const source = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      'import {',
      '  c,',
      '  type C,',
      "} from \"../c.ts\";",
      "import d, * as e from './d.ts';",
      "import './side-effect.ts';",
      "export { f } from './f.ts';",
      "export * from './g.ts';",
      "export type { H } from './h.ts';",
      "const i = await import('./i.ts');",
      'const j = await import(`./j.ts`);',
      "import { z } from 'zod';",
      "// import { k } from './commented.ts';",
      "/* const l = await import('./commented-too.ts'); */",
      "const url = 'https://example.com/a//b'; const m = await import('./m.ts');",
    ].join('\n');
    expect(relativeImports(source)).toEqual(['./a.ts', '../b.ts', '../c.ts', './d.ts', './side-effect.ts', './f.ts', './g.ts', './h.ts', './i.ts', './j.ts', './m.ts']);
  });

  it('holds: no file imports a higher layer, research and webhooks do not import each other, only cli imports cli', () => {
    const { checked, found } = violations();
    expect(checked).toBeGreaterThan(1_000);
    const report = found.map((v) => `${v.file} imports '${v.specifier}': ${v.why}`);
    expect(report, `imports that break the layering (DESIGN.md §4):\n${report.join('\n')}`).toEqual([]);
  });
});
