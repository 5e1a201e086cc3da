// Which route a message takes: the first of the ordered routes whose every given criterion accepts it.
import type { RouteMatch, RouteSpec } from './connectors-file.ts';

/** What a route is chosen by. */
export interface RoutedMessage {
  /** Digits, country code first. */
  destination: string;
  /** ISO alpha-2 of the destination, when the numbering plan knows it. */
  country?: string;
  sender: string | null;
  pushtype: string;
  accountId?: number;
}

export function matches(match: RouteMatch, message: RoutedMessage): boolean {
  if (match.prefix && !match.prefix.some((prefix) => message.destination.startsWith(prefix))) return false;
  if (match.country && (message.country === undefined || !match.country.includes(message.country)))
    return false;
  // Sender IDs are compared without case: carriers register them so, and `MyShop` is `MYSHOP` on a handset.
  if (match.sender && (message.sender === null || !match.sender.includes(message.sender.toUpperCase())))
    return false;
  if (match.pushtype && !match.pushtype.includes(message.pushtype as 'alert' | 'marketing')) return false;
  if (match.account && (message.accountId === undefined || !match.account.includes(message.accountId)))
    return false;
  return true;
}

/** The first route that accepts the message; undefined when none does (the message has no route). */
export function findRoute<R extends Pick<RouteSpec, 'match'>>(
  routes: readonly R[],
  message: RoutedMessage,
): R | undefined {
  for (const route of routes) if (matches(route.match, message)) return route;
  return undefined;
}
