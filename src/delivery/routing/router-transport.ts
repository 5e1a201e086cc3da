// A Transport over the named connectors of the routing table: each part takes the first route that accepts
// its message, then a connector of that route by the route's strategy (failover: the first ready one;
// weighted: smooth weighted round robin over the ready ones). A routing or throttling refusal, or a connection
// lost before the answer, sends the part through the next ready connector of the route at once; a part still
// waiting for a connector whose binds all dropped moves to another ready one. Every part of a message goes
// through the connector that took its first part while that one is ready.

import type { Log } from '../../shared/log.ts';
import { DlrStatus } from '../../sms/dlr-status.ts';
import { countryOf } from '../../sms/numbers.ts';
import type { InboundHandler, OutboundPart, SubmitOutcome, Transport } from '../transport.ts';
import type { ConnectorSpec, RouteSpec, RoutingTable } from './connectors-file.ts';
import { findRoute, type RoutedMessage } from './routes.ts';
import { TokenBucket } from './token-bucket.ts';

/** What the router reports of a connector's binds (SmppTransport.usage()). */
interface Usage {
  bindsUp: number;
  binds: number;
  windowInUse: number;
  windowSize: number;
}

export interface Connector {
  spec: ConnectorSpec;
  transport: Transport & { usage?(): Usage };
  /** The connector's own parts-per-second budget when its transport does not keep one (the simulator). */
  budget?: TokenBucket;
}

interface Route {
  spec: RouteSpec;
  match: RouteSpec['match'];
  members: Connector[];
  /** Smooth weighted round robin: each member's current weight. */
  current: number[];
}

/** SMPP command statuses by which an SMSC says it has no route for the destination (ESME_RSUBMITFAIL). */
const noRouteStatuses: ReadonlySet<number> = new Set([0x45]);

/**
 * A refusal another connector may not give: throttled, queue full, connection lost, no route. Decided on the
 * SMSC's command status, never on the wording of the error.
 */
export function isRoutingRefusal(outcome: Extract<SubmitOutcome, { ok: false }>): boolean {
  if (outcome.retry || outcome.dlrStatus === DlrStatus.routeNotAvailable) return true;
  return outcome.commandStatus !== undefined && noRouteStatuses.has(outcome.commandStatus);
}

/** How often parts waiting for a connector check whether it went down while another is up. */
const watchMs = 50;

export class RouterTransport implements Transport {
  readonly name: string;
  readonly capacity: number;
  readonly connectors: Connector[];
  private readonly routes: Route[];
  private readonly routeCountries: boolean;
  /** Whether any sender has a parts-per-second limit. */
  private readonly senderLimits: boolean;
  /** The connector and route of each message whose first parts went and whose last has not. */
  private readonly carriers = new Map<number, { connector: Connector; route: Route }>();
  private readonly senderBudgets = new Map<string, TokenBucket | null>();
  private readonly watches = new Set<() => void>();
  private watchTimer: NodeJS.Timeout | undefined;
  /** Binds and window summed over the SMPP connectors; absent when every connector is a simulator. */
  readonly usage?: () => Usage;

  constructor(
    private readonly table: RoutingTable,
    connectors: Connector[],
    private readonly log: Log,
  ) {
    this.connectors = connectors;
    const byName = new Map(connectors.map((c) => [c.spec.name, c]));
    this.routes = table.routes.map((spec) => ({
      spec,
      match: spec.match,
      members: spec.connectors.map((name) => byName.get(name)!),
      current: spec.connectors.map(() => 0),
    }));
    this.routeCountries = table.routes.some((r) => r.match.country !== undefined);
    this.senderLimits = table.senderTps.size > 0 || table.defaultSenderTps > 0;
    this.capacity = connectors.reduce((sum, c) => sum + c.transport.capacity, 0);
    this.name = connectors.some((c) => c.spec.kind === 'smpp') ? 'smpp' : 'simulator';
    const withUsage = connectors.filter((c) => c.transport.usage);
    if (withUsage.length > 0) {
      this.usage = () => {
        const total = { bindsUp: 0, binds: 0, windowInUse: 0, windowSize: 0 };
        for (const c of withUsage) {
          const u = c.transport.usage!();
          total.bindsUp += u.bindsUp;
          total.binds += u.binds;
          total.windowInUse += u.windowInUse;
          total.windowSize += u.windowSize;
        }
        return total;
      };
    }
  }

  async start(handler: InboundHandler): Promise<void> {
    await Promise.all(
      this.connectors.map((c) =>
        c.transport.start({
          onReceipt: (receipt) => handler.onReceipt({ ...receipt, connector: c.spec.name }),
          onInbound: (message) => handler.onInbound({ ...message, connector: c.spec.name }),
        }),
      ),
    );
  }

  ready(): boolean {
    return this.connectors.some((c) => c.transport.ready());
  }

  /** The route a message would take now; undefined when it has none. */
  routeOf(message: RoutedMessage): RouteSpec | undefined {
    return findRoute(this.routes, message)?.spec;
  }

  private routeFor(part: OutboundPart): Route | undefined {
    const context = part.context;
    return findRoute(this.routes, {
      destination: part.destination,
      country: context?.country ?? (this.routeCountries ? countryOf(part.destination) : undefined),
      sender: part.sender,
      pushtype: context?.pushtype ?? 'alert',
      accountId: context?.accountId,
    });
  }

  /** The next connector of the route by its strategy, among the ready ones not tried yet. */
  private pick(route: Route, tried: ReadonlySet<Connector>): Connector | undefined {
    if (route.spec.strategy === 'failover') {
      return route.members.find((c) => !tried.has(c) && c.transport.ready());
    }
    let total = 0;
    let best = -1;
    route.members.forEach((c, i) => {
      if (tried.has(c) || !c.transport.ready()) return;
      route.current[i] += route.spec.weights[i];
      total += route.spec.weights[i];
      if (best < 0 || route.current[i] > route.current[best]) best = i;
    });
    if (best < 0) return undefined;
    route.current[best] -= total;
    return route.members[best];
  }

  private async senderBudget(sender: string | null): Promise<void> {
    const key = (sender ?? '').toUpperCase();
    let budget = this.senderBudgets.get(key);
    if (budget === undefined) {
      const tps = this.table.senderTps.get(key) ?? this.table.defaultSenderTps;
      budget = tps > 0 ? new TokenBucket(tps) : null;
      this.senderBudgets.set(key, budget);
    }
    if (budget) await budget.take();
  }

  private watch(check: () => void): void {
    this.watches.add(check);
    this.watchTimer ??= setInterval(() => {
      for (const w of [...this.watches]) w();
      if (this.watches.size === 0) {
        clearInterval(this.watchTimer);
        this.watchTimer = undefined;
      }
    }, watchMs);
  }

  /**
   * Submits through one connector; `moved` when the connector went down before the part was written while
   * another connector of the route is ready (the part is then withdrawn from the first: it never goes out
   * there).
   */
  private async submitVia(
    connector: Connector,
    route: Route,
    part: OutboundPart,
    tried: ReadonlySet<Connector>,
    mayWrite?: () => boolean,
  ): Promise<SubmitOutcome | 'moved'> {
    if (connector.budget) await connector.budget.take();
    // A route of one connector has nowhere to move a part to: nothing to watch.
    if (route.members.length === 1) return connector.transport.submit(part, mayWrite);
    let written = false;
    let withdrawn = false;
    const guard = () => {
      if (withdrawn || (mayWrite && !mayWrite())) return false;
      written = true;
      return true;
    };
    return new Promise((resolve, reject) => {
      const check = () => {
        if (written || connector.transport.ready()) return;
        if (!route.members.some((c) => !tried.has(c) && c.transport.ready())) return;
        withdrawn = true;
        this.watches.delete(check);
        resolve('moved');
      };
      this.watch(check);
      connector.transport.submit(part, guard).then(
        (outcome) => {
          this.watches.delete(check);
          if (!withdrawn) resolve(outcome);
        },
        (error) => {
          this.watches.delete(check);
          if (!withdrawn) reject(error);
        },
      );
    });
  }

  async submit(part: OutboundPart, mayWrite?: () => boolean): Promise<SubmitOutcome> {
    const messageId = part.context?.messageId;
    // Our concatenation header: 05 00 03 ref total seq.
    const concatenated = part.udh !== undefined && part.udh.length >= 6 && part.udh[1] === 0x00;
    const seq = concatenated ? part.udh![5] : 1;
    const total = concatenated ? part.udh![4] : 1;
    // A first part starts the message afresh (a retry chooses again); later parts follow the first.
    const carrier = messageId !== undefined && seq > 1 ? this.carriers.get(messageId) : undefined;
    if (messageId !== undefined && seq === 1) this.carriers.delete(messageId);
    const route = carrier?.route ?? this.routeFor(part);
    if (!route) {
      return {
        ok: false,
        retry: false,
        dlrStatus: DlrStatus.routeNotAvailable,
        error: 'no route of CONNECTORS_FILE accepts this message',
        noRoute: true,
      };
    }
    if (this.senderLimits) await this.senderBudget(part.sender);

    const tried = new Set<Connector>();
    let next = carrier?.connector.transport.ready() ? carrier.connector : this.pick(route, tried);
    if (!next) {
      // No connector of the route is up. While others are (other routes' messages flow), this part is
      // answered at once, so it does not hold up its batch; when nothing is up at all it waits for the
      // route's first connector to bind again, as the single connector always did.
      if (this.ready()) {
        return {
          ok: false,
          retry: true,
          dlrStatus: DlrStatus.sent,
          error: `no connector of route "${route.spec.name}" is up`,
        };
      }
      next = route.members[0];
    }
    let refusal: Extract<SubmitOutcome, { ok: false }> | undefined;
    for (let connector: Connector | undefined = next; connector; connector = this.pick(route, tried)) {
      tried.add(connector);
      const outcome = await this.submitVia(connector, route, part, tried, mayWrite);
      if (outcome === 'moved') {
        this.log.warn(
          { connector: connector.spec.name, route: route.spec.name },
          'connector down before the part was written; sending it through the next one',
        );
        continue;
      }
      if (outcome.ok) {
        if (messageId !== undefined) {
          if (seq < total) this.carriers.set(messageId, { connector, route });
          else this.carriers.delete(messageId);
        }
        return { ...outcome, connector: connector.spec.name, route: route.spec.name };
      }
      refusal = outcome;
      if (!isRoutingRefusal(outcome) || (mayWrite && !mayWrite())) break;
    }
    if (messageId !== undefined) this.carriers.delete(messageId);
    return (
      refusal ?? {
        ok: false,
        retry: true,
        dlrStatus: DlrStatus.sent,
        error: `every connector of route "${route.spec.name}" went down before the part was written`,
      }
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.watchTimer);
    this.watchTimer = undefined;
    await Promise.all(this.connectors.map((c) => c.transport.stop()));
    // Parts still waiting for a connector resolve as they are withdrawn by their transport's stop.
    this.watches.clear();
  }
}
