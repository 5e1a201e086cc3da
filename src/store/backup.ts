// `pigeon backup`: a consistent copy of a live SQLite database, by SQLite's online backup, safe while the server
// runs and writes. Its pages are copied in one step, inside one read transaction: in WAL mode writers go on
// meanwhile, and the copy is the database as it stood when the step began (a copy made in small steps would
// start over each time another process writes, and might never finish under a steady load).
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { isPostgresUrl, sqlitePath } from './db.ts';

export class BackupRefused extends Error {}

export interface BackupReport {
  backup: string;
  bytes: number;
  pages: number;
  integrity: string;
}

/** The most pages better-sqlite3 copies in one step: the whole database. */
const allPages = 0x7fffffff;

/** Copies the SQLite database of `databaseUrl` to the new file `file`, then checks the copy's integrity. */
export async function backupSqlite(databaseUrl: string, file: string): Promise<BackupReport> {
  if (isPostgresUrl(databaseUrl)) {
    throw new BackupRefused(
      'DATABASE_URL is PostgreSQL: back it up with pg_dump -Fc (see docs/operations.md, "Backups"); ' +
        'pigeon backup copies a SQLite database',
    );
  }
  const path = sqlitePath(databaseUrl);
  if (path === ':memory:') throw new BackupRefused('DATABASE_URL is :memory:: there is no file to back up');
  if (!existsSync(path)) throw new BackupRefused(`no database at ${path} (DATABASE_URL)`);
  if (existsSync(file)) throw new BackupRefused(`${file} already exists: name a new file for the backup`);
  if (!existsSync(dirname(file))) throw new BackupRefused(`no folder ${dirname(file)} to write ${file} in`);
  const source = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  let pages: number;
  try {
    ({ totalPages: pages } = await source.backup(file, { progress: () => allPages }));
  } finally {
    source.close();
  }
  const copy = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = copy.pragma('integrity_check', { simple: true }) as string;
    return { backup: file, bytes: statSync(file).size, pages, integrity };
  } finally {
    copy.close();
  }
}
