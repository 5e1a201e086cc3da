// Builds the transport TRANSPORT names, from the configuration.
import type { Config } from '../config.ts';
import { parseOutcomes, SimulatorTransport } from './simulator/simulator-transport.ts';
import { SmppTransport } from './smpp/smpp-transport.ts';
import type { Transport } from './transport.ts';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export function createTransport(config: Config, log: Log): Transport {
  if (config.TRANSPORT === 'smpp') {
    return new SmppTransport(
      {
        url: config.SMPP_URL!,
        binds: config.SMPP_BINDS,
        window: config.SMPP_WINDOW,
        tps: config.SMPP_TPS,
        systemType: config.SMPP_SYSTEM_TYPE,
        enquireLinkMs: config.SMPP_ENQUIRE_LINK_MS,
        responseTimeoutMs: config.SMPP_RESPONSE_TIMEOUT_MS,
        reconnectMinMs: 500,
        reconnectMaxMs: 30_000,
        backpressureRetries: 8,
      },
      log,
    );
  }
  return new SimulatorTransport({
    dlrDelayMs: config.SIM_DLR_DELAY_MS,
    outcomes: parseOutcomes(config.SIM_OUTCOMES),
  });
}
