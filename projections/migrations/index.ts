import { fileURLToPath } from 'node:url';
import type { Dialect } from '../../infra/store/sql-literal.ts';

/** The folder of one store's migration files, for the adapters' `migrationsDir` option. */
export function migrationsDir(dialect: Dialect): string {
  return fileURLToPath(new URL(`./${dialect}/`, import.meta.url));
}
