// The SMPP server as SMPP_SERVER_* configure it, started by the API's role (src/runtime.ts): off without
// SMPP_SERVER_PORT or SMPP_SERVER_TLS_PORT.
import { type Config, durationMs } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { Store } from '../store/db.ts';
import { createBindRegistry } from './smpp-binds.ts';
import type { SmppMessagesService } from './smpp-messages.service.ts';
import { createSmppServer, type Log, type SmppServer } from './smpp-server.ts';
import type { SmppUsersService } from './smpp-users.service.ts';

/** How often the outbox is read while a receiving bind is up, besides the nudges that wake it at once. */
const outboxPollMs = 1_000;
/** How long the parts of a long message wait for the rest. */
const concatTtlMs = 5 * 60_000;
/** How often the bound users are checked and this process's binds renewed; a bind counts 3 times as long. */
const userCheckMs = 5_000;

export async function smppServerFromConfig(deps: {
  config: Pick<
    Config,
    | 'HOST'
    | 'SMPP_SERVER_PORT'
    | 'SMPP_SERVER_HOST'
    | 'SMPP_SERVER_TLS_PORT'
    | 'SMPP_SERVER_TLS_CERT'
    | 'SMPP_SERVER_TLS_KEY'
    | 'RATE_LIMIT_AUTH_FAILURES'
    | 'RATE_LIMIT_AUTH_WINDOW'
  >;
  clock: Clock;
  logger: Log;
  store: Pick<Store, 'db' | 'dialect'>;
  services: { smppUsers: SmppUsersService; smppMessages: SmppMessagesService };
}): Promise<SmppServer | undefined> {
  const { config, logger } = deps;
  if (config.SMPP_SERVER_PORT === undefined && config.SMPP_SERVER_TLS_PORT === undefined) return undefined;
  const server = createSmppServer({
    users: deps.services.smppUsers,
    messages: deps.services.smppMessages,
    binds: createBindRegistry({ ...deps.store, clock: deps.clock, ttlMs: 3 * userCheckMs }),
    clock: deps.clock,
    log: logger,
    options: {
      brakeFailures: config.RATE_LIMIT_AUTH_FAILURES,
      brakeWindowMs: durationMs(config.RATE_LIMIT_AUTH_WINDOW),
      pollMs: outboxPollMs,
      concatTtlMs,
      userCheckMs,
    },
  });
  const host = config.SMPP_SERVER_HOST ?? config.HOST;
  if (config.SMPP_SERVER_PORT !== undefined) {
    const port = await server.listen(host, config.SMPP_SERVER_PORT);
    logger.info({ host, port }, 'SMPP server listening');
  }
  if (config.SMPP_SERVER_TLS_PORT !== undefined) {
    const port = await server.listenTls(host, config.SMPP_SERVER_TLS_PORT, {
      cert: config.SMPP_SERVER_TLS_CERT!,
      key: config.SMPP_SERVER_TLS_KEY!,
    });
    logger.info({ host, port }, 'SMPP server listening (TLS)');
  }
  server.start();
  return server;
}
