// Builds the delivery transport from the configuration: a router over the connectors of CONNECTORS_FILE, or
// over the one connector `default` that TRANSPORT and SMPP_* / SIM_* describe (src/delivery/routing/).
import type { Config } from '../config.ts';
import type { Log } from '../shared/log.ts';
import { type ConnectorSpec, loadRoutingTable, type RoutingTable } from './routing/connectors-file.ts';
import { type Connector, RouterTransport } from './routing/router-transport.ts';
import { TokenBucket } from './routing/token-bucket.ts';
import { SimulatorTransport } from './simulator/simulator-transport.ts';
import { type SmppMetrics, SmppTransport } from './smpp/smpp-transport.ts';

function createConnector(
  spec: ConnectorSpec,
  table: RoutingTable,
  log: Log,
  metrics: SmppMetrics | undefined,
): Connector {
  if (spec.kind === 'simulator') {
    return {
      spec,
      transport: new SimulatorTransport({ dlrDelayMs: spec.dlrDelayMs, outcomes: spec.outcomes }),
      budget: spec.tps > 0 ? new TokenBucket(spec.tps) : undefined,
    };
  }
  // A throttled connector that shares a route with another gives the part back at once, so the router sends
  // it through the other; alone on its routes it keeps offering it, as the single connector always did.
  const shared = table.routes.some((r) => r.connectors.length > 1 && r.connectors.includes(spec.name));
  return {
    spec,
    transport: new SmppTransport(
      {
        name: spec.name,
        url: spec.url,
        tls: spec.tls,
        bindMode: spec.bindMode,
        binds: spec.binds,
        window: spec.window,
        tps: spec.tps,
        systemType: spec.systemType,
        defaultTon: spec.defaultTon,
        defaultNpi: spec.defaultNpi,
        enquireLinkMs: spec.enquireLinkMs,
        responseTimeoutMs: spec.responseTimeoutMs,
        reconnectMinMs: 500,
        reconnectMaxMs: 30_000,
        backpressureRetries: shared ? 0 : 8,
        bindTimeoutMs: spec.bindTimeoutMs,
      },
      log,
      metrics,
    ),
  };
}

/**
 * `metrics`: told of the SMPP connectors' throttling and reconnections. `table`: the routing table when the
 * caller already read it (else it is read from the configuration here).
 */
export function createTransport(
  config: Config,
  log: Log,
  metrics?: SmppMetrics,
  table: RoutingTable = loadRoutingTable(config),
): RouterTransport {
  return new RouterTransport(
    table,
    table.connectors.map((spec) => createConnector(spec, table, log, metrics)),
    log,
  );
}
