import { readdirSync } from 'node:fs';
import { join, sep } from 'node:path';

/** The project root, where package.json, README.md and the code's folders are. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** Every TypeScript file under a folder of the project, as a path from the root. */
export function tsFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.split(sep).includes('node_modules'))
    .map((f) => join(folder, f));
}
