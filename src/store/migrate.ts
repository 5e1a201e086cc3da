import { type Migration, Migrator } from 'kysely';
import type { Store } from './db.ts';
import * as core from './migrations/001-core.ts';
import * as delivery from './migrations/002-delivery.ts';
import * as eventCampaign from './migrations/003-event-campaign.ts';
import * as webhookDeliveries from './migrations/004-webhook-deliveries.ts';
import * as balanceAlerts from './migrations/005-balance-alerts.ts';
import * as dropUnreadIndexes from './migrations/006-drop-unread-indexes.ts';
import * as clickFold from './migrations/007-click-fold.ts';
import * as eventsCampaignPartial from './migrations/008-events-campaign-partial.ts';
import * as replies from './migrations/009-replies.ts';
import * as linkClickerContext from './migrations/010-link-clicker-context.ts';
import * as listFields from './migrations/011-list-fields.ts';
import * as accountProfile from './migrations/012-account-profile.ts';
import * as campaignLists from './migrations/013-campaign-lists.ts';
import * as lookups from './migrations/014-lookups.ts';
import * as retention from './migrations/015-retention.ts';
import * as invoices from './migrations/016-invoices.ts';
import * as messageConsumption from './migrations/017-message-consumption.ts';
import * as idempotencyDailyCap from './migrations/018-idempotency-daily-cap.ts';
import * as lifecycleIndexes from './migrations/019-lifecycle-indexes.ts';
import * as leaseHolders from './migrations/020-lease-holders.ts';
import * as messageRoute from './migrations/021-message-route.ts';
import * as connectorStatus from './migrations/022-connector-status.ts';
import * as replyKeywords from './migrations/023-reply-keywords.ts';
import * as consoleSessions from './migrations/024-console-sessions.ts';
import * as webhookAttemptExchange from './migrations/025-webhook-attempt-exchange.ts';
import * as campaignClicks from './migrations/026-campaign-clicks.ts';
import * as webhookFormat from './migrations/027-webhook-format.ts';
import * as retentionSurvey from './migrations/028-retention-survey.ts';
import * as campaignSystem from './migrations/029-campaign-system.ts';
import * as smppServer from './migrations/030-smpp-server.ts';
import * as hotForeignKeys from './migrations/031-hot-foreign-keys.ts';
import * as users from './migrations/032-users.ts';
import * as auditLog from './migrations/033-audit-log.ts';
import * as pricesLimits from './migrations/034-prices-limits.ts';
import * as senderIdsContentRules from './migrations/035-sender-ids-content-rules.ts';
import * as recovery from './migrations/036-recovery.ts';
import * as accountLimits from './migrations/037-account-limits.ts';
import * as partsFillfactor from './migrations/038-parts-fillfactor.ts';
import * as smppBinds from './migrations/039-smpp-binds.ts';
import * as smppParts from './migrations/040-smpp-parts.ts';

/** Migrations in order; each is told the dialect so column types can differ where they must. */
export const migrations = {
  '001-core': core,
  '002-delivery': delivery,
  '003-event-campaign': eventCampaign,
  '004-webhook-deliveries': webhookDeliveries,
  '005-balance-alerts': balanceAlerts,
  '006-drop-unread-indexes': dropUnreadIndexes,
  '007-click-fold': clickFold,
  '008-events-campaign-partial': eventsCampaignPartial,
  '009-replies': replies,
  '010-link-clicker-context': linkClickerContext,
  '011-list-fields': listFields,
  '012-account-profile': accountProfile,
  '013-campaign-lists': campaignLists,
  '014-lookups': lookups,
  '015-retention': retention,
  '016-invoices': invoices,
  '017-message-consumption': messageConsumption,
  '018-idempotency-daily-cap': idempotencyDailyCap,
  '019-lifecycle-indexes': lifecycleIndexes,
  '020-lease-holders': leaseHolders,
  '021-message-route': messageRoute,
  '022-connector-status': connectorStatus,
  '023-reply-keywords': replyKeywords,
  '024-console-sessions': consoleSessions,
  '025-webhook-attempt-exchange': webhookAttemptExchange,
  '026-campaign-clicks': campaignClicks,
  '027-webhook-format': webhookFormat,
  '028-retention-survey': retentionSurvey,
  '029-campaign-system': campaignSystem,
  '030-smpp-server': smppServer,
  '031-hot-foreign-keys': hotForeignKeys,
  '032-users': users,
  '033-audit-log': auditLog,
  '034-prices-limits': pricesLimits,
  '035-sender-ids-content-rules': senderIdsContentRules,
  '036-recovery': recovery,
  '037-account-limits': accountLimits,
  '038-parts-fillfactor': partsFillfactor,
  '039-smpp-binds': smppBinds,
  '040-smpp-parts': smppParts,
};

/** Applies every pending migration. Safe to run from several processes at once (Kysely takes a lock). */
export async function migrate(store: Store): Promise<string[]> {
  const postgres = store.dialect === 'postgres';
  const withDialect: Record<string, Migration> = {};
  for (const [name, m] of Object.entries(migrations)) withDialect[name] = { up: (db) => m.up(db, postgres) };
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => withDialect },
    // Kysely looks for its own tables across every schema unless told which one is ours.
    migrationTableSchema: store.schema,
  });
  const { error, results } = await store.withMigrationLock(() => migrator.migrateToLatest());
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
