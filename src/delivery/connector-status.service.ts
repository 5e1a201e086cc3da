// Each delivery process's connectors as it last published them (`connector_status`): written by the process's
// publisher (connector-status.ts), read by `pigeon connectors`, which runs in another process.
import type { Db } from '../store/db.ts';
import { connectorStatusRepo } from './connector-status.repo.ts';
import type { PublishedStatus } from './connector-status.ts';

export type ConnectorStatusService = ReturnType<typeof createConnectorStatusService>;

export function createConnectorStatusService(deps: { db: Db }) {
  const { db } = deps;

  return {
    /** `pigeon connectors`: every delivery process's connectors as they last published them. */
    connectorStatus: () => connectorStatusRepo.list(db),
    /** The delivery process's status publisher (connector-status.ts) writes through these. */
    saveConnectorStatus: (rows: PublishedStatus[]) => connectorStatusRepo.save(db, rows),
    removeConnectorStatus: (instance: string) => connectorStatusRepo.removeInstance(db, instance),
    pruneConnectorStatus: (before: number) => connectorStatusRepo.removeOlderThan(db, before),
  };
}
