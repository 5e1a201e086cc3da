// What each API route needs, in one table, and what each role and token scope grants. The HTTP auth hook asks
// `authorize` on every request (src/http/app.ts); a route missing here is refused to everyone, and
// test/users/role-matrix.test.ts fails for it.
import type { AuthContext, Role, TokenScope } from '../shared/auth-context.ts';
import { ApiError } from '../shared/errors.ts';

/**
 * The rights routes need. `read` changes nothing; `send` sends, simulates, cancels and looks numbers up (it
 * spends credits); `lists` changes lists, contacts, the blacklist and NPAI; `tokens` creates and revokes API
 * tokens and SMPP credentials; `webhooks` changes webhooks; `accounts` locks and unlocks sub-accounts;
 * `settings` changes retention and erases numbers; `billing` moves money or who pays: credit transfers,
 * invoices, the balance notification, sub-account creation; `users` manages the account's users; `profile`
 * is a console user's own password, two-factor and sessions (every role; a token has no profile).
 */
export const permissions = [
  'read',
  'send',
  'lists',
  'tokens',
  'webhooks',
  'accounts',
  'settings',
  'billing',
  'users',
  'profile',
] as const;
export type Permission = (typeof permissions)[number];

const everything: readonly Permission[] = permissions;

/** What each role of a console user may do. */
export const roleGrants: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(everything),
  admin: new Set(everything.filter((p) => p !== 'users' && p !== 'billing')),
  sender: new Set(['read', 'send', 'lists', 'profile']),
  developer: new Set(['read', 'tokens', 'webhooks', 'profile']),
  viewer: new Set(['read', 'profile']),
};

/** What each token scope may do. `full` is every SMSFactor token's: the account's every right. */
export const scopeGrants: Record<TokenScope, ReadonlySet<Permission>> = {
  full: new Set(everything),
  send: new Set(['read', 'send']),
  read: new Set(['read']),
};

/**
 * Every API route's permission, by method and URL pattern as the route registers it. HEAD answers as its GET.
 * GET /send sends and GET /account/:id/lock locks: a route's permission is what it does, not its method.
 */
export const routePermissions: Readonly<Record<string, Permission>> = {
  'GET /account': 'read',
  'POST /account': 'billing',
  'GET /sub-accounts': 'read',
  'GET /sub-accounts/:id': 'read',
  'GET /account/:id/lock': 'accounts',
  'GET /account/:id/unlock': 'accounts',
  'POST /token': 'tokens',
  'POST /token/account/:accountID': 'tokens',
  'GET /token': 'read',
  'GET /token/:id': 'read',
  'DELETE /token/:id': 'tokens',
  'GET /credits': 'read',
  'POST /account/transfer': 'billing',
  'GET /notification/balance': 'read',
  'PUT /notification/balance': 'billing',
  'GET /account/invoice': 'billing',
  'GET /account/invoice/:id': 'billing',
  'GET /account/invoice/:id/download': 'billing',
  'POST /webhook': 'webhooks',
  'GET /webhook': 'read',
  'GET /webhook/:id': 'read',
  'PUT /webhook/:id': 'webhooks',
  'PUT /webhook/:id/status': 'webhooks',
  'DELETE /webhook/:id': 'webhooks',
  'GET /webhook/:id/deliveries': 'read',
  'POST /webhook/:id/test': 'webhooks',
  'POST /send': 'send',
  'GET /send': 'send',
  'DELETE /send/:ticket': 'send',
  'POST /send/lists': 'send',
  'POST /send/simulate': 'send',
  'GET /send/simulate': 'send',
  'POST /send/lists/simulate': 'send',
  'POST /lookup': 'send',
  'GET /campaign/:ticket': 'read',
  'GET /campaigns': 'read',
  'GET /campaign/:ticket/messages': 'read',
  'GET /campaign/:ticket/clicks': 'read',
  'GET /campaign/:ticket/mo': 'read',
  'GET /campaign/:ticket/blacklist': 'read',
  'GET /campaign/:ticket/npai': 'read',
  'PUT /campaign/:ticket/npai': 'lists',
  'GET /messages': 'read',
  'GET /messages/mo': 'read',
  'GET /statistics/daily': 'read',
  'GET /metrics/consumption': 'read',
  'GET /account/prices': 'read',
  'GET /account/limits': 'read',
  'GET /audit': 'read',
  // Sender IDs: asking for one is the senders' business; the operator's area (an operator account's, checked
  // beside the role) reads as any read, and its decisions are the account's settings.
  'GET /sender': 'read',
  'POST /sender': 'send',
  'GET /operator/me': 'read',
  'GET /operator/senders': 'read',
  'PUT /operator/sender/:id/approve': 'settings',
  'PUT /operator/sender/:id/refuse': 'settings',
  'GET /operator/rules': 'read',
  'POST /operator/rule': 'settings',
  'DELETE /operator/rule/:id': 'settings',
  'GET /operator/campaigns': 'read',
  'PUT /operator/campaign/:id/approve': 'settings',
  'PUT /operator/campaign/:id/refuse': 'settings',
  'GET /operator/accounts/:id/limits': 'read',
  'PUT /operator/accounts/:id/limits': 'settings',
  'DELETE /operator/accounts/:id/limits': 'settings',
  'POST /list': 'lists',
  'GET /lists': 'read',
  'GET /list/:id': 'read',
  'DELETE /list/:id': 'lists',
  'PUT /list/deduplicate/:id': 'lists',
  'PUT /list/:id/npai/clear': 'lists',
  'DELETE /list/contact/:id': 'lists',
  'PUT /list/contact/:id': 'lists',
  'POST /blacklist': 'lists',
  'GET /blacklist': 'read',
  'DELETE /blacklist/contact/:id': 'lists',
  'POST /npai': 'lists',
  'GET /npai': 'read',
  'DELETE /npai/contact/:id': 'lists',
  'GET /retention': 'read',
  'PUT /retention': 'settings',
  'POST /erase': 'settings',
  'GET /smpp/user': 'read',
  'POST /smpp/user': 'tokens',
  'DELETE /smpp/user/:system_id': 'tokens',
  'GET /users': 'users',
  'POST /users': 'users',
  'PUT /users/:id': 'users',
  'DELETE /users/:id': 'users',
  'GET /users/me': 'profile',
  'PUT /users/me/password': 'profile',
  'POST /users/me/two-factor': 'profile',
  'PUT /users/me/two-factor': 'profile',
  'DELETE /users/me/two-factor': 'profile',
  'POST /users/me/two-factor/recovery-codes': 'profile',
  'GET /users/me/sessions': 'profile',
  'DELETE /users/me/sessions/:id': 'profile',
  'DELETE /users/me/sessions': 'profile',
};

/** The permission a route needs, or undefined when the table has none (then everyone is refused). */
export function permissionOf(method: string, url: string): Permission | undefined {
  return routePermissions[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

/**
 * What a role may do, as the console is told it (GET /console/session): its permissions, and every route of the
 * table they open (`GET /send`, …), so the page shows only the controls whose route would answer and never keeps
 * a second copy of this table.
 */
export function rightsOfRole(role: Role): { permissions: Permission[]; routes: string[] } {
  const grants = roleGrants[role];
  return {
    permissions: permissions.filter((p) => grants.has(p)),
    routes: Object.keys(routePermissions).filter((route) => grants.has(routePermissions[route])),
  };
}

/** What a caller may do: its user's role, its token's scope, or (body credentials) everything. */
export function grantsOf(auth: Pick<AuthContext, 'role' | 'scope'>): ReadonlySet<Permission> {
  if (auth.role !== undefined) return roleGrants[auth.role];
  return scopeGrants[auth.scope ?? 'full'];
}

/** Whether every right of `scope` is the caller's: nobody creates a token wider than itself. */
export function mayGrantScope(auth: Pick<AuthContext, 'role' | 'scope'>, scope: TokenScope): boolean {
  const own = grantsOf(auth);
  for (const permission of scopeGrants[scope]) if (!own.has(permission)) return false;
  return true;
}

/** Refuses (-1, in the envelope) a caller whose role or token scope lacks what the route needs. */
export function authorize(auth: AuthContext, method: string, url: string): void {
  const needed = permissionOf(method, url);
  if (needed === undefined) {
    throw ApiError.auth(`${method} ${url} has no permission declared: refused to every caller`);
  }
  if (grantsOf(auth).has(needed)) return;
  const who = auth.role !== undefined ? `the role ${auth.role}` : `a token of scope ${auth.scope ?? 'full'}`;
  throw ApiError.auth(`${who} may not do this: ${method} ${url} needs the ${needed} permission`);
}
