// Starts what this process serves: the API and the link server, per ROLE.
import type { Deps } from '../deps.ts';
import { buildApp } from './app.ts';

export interface Running {
  apiUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startServers(deps: Deps): Promise<Running> {
  const { config, logger } = deps;
  const stops: (() => Promise<void>)[] = [];
  let apiUrl: string | undefined;
  if (config.ROLE !== 'worker') {
    const app = buildApp({ config, logger, services: deps.services });
    apiUrl = await app.listen({ host: config.HOST, port: config.PORT });
    logger.info({ url: apiUrl }, 'API listening');
    stops.push(() => app.close());
  }
  return {
    apiUrl,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
