// `pigeon config check`: what a start would refuse, found without starting anything. The environment is parsed
// as the server parses it (config.ts, every invalid variable named), then the connectors file it names is read
// and checked as the delivery worker would read it (delivery/routing/connectors-file.ts). Nothing is opened:
// no database, no SMSC, no port.
import { type Config, ConfigError, loadConfig } from './config.ts';
import { loadRoutingTable } from './delivery/routing/connectors-file.ts';
import { isPostgresUrl } from './store/db.ts';

/** One line of the check's report: one per thing checked. */
export type CheckLine =
  | {
      check: 'environment';
      ok: true;
      database: 'sqlite' | 'postgres';
      role: Config['ROLE'];
      transport: string;
    }
  | { check: 'connectors'; ok: true; file: string | null; connectors: string[]; routes: string[] }
  | { check: 'environment' | 'connectors'; ok: false; errors: string[] }
  | { check: 'connectors'; ok: null; skipped: string };

const problemsOf = (error: unknown): string[] =>
  error instanceof ConfigError ? error.problems : [(error as Error).message];

export function checkConfiguration(env: Record<string, string | undefined> = process.env): CheckLine[] {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    return [
      { check: 'environment', ok: false, errors: problemsOf(error) },
      { check: 'connectors', ok: null, skipped: 'the environment above must be valid first' },
    ];
  }
  const environment: CheckLine = {
    check: 'environment',
    ok: true,
    database: isPostgresUrl(config.DATABASE_URL) ? 'postgres' : 'sqlite',
    role: config.ROLE,
    transport: config.CONNECTORS_FILE ? 'connectors file' : config.TRANSPORT,
  };
  try {
    const table = loadRoutingTable(config);
    return [
      environment,
      {
        check: 'connectors',
        ok: true,
        file: table.file ?? null,
        connectors: table.connectors.map((c) => c.name),
        routes: table.routes.map((r) => r.name),
      },
    ];
  } catch (error) {
    return [environment, { check: 'connectors', ok: false, errors: problemsOf(error) }];
  }
}
