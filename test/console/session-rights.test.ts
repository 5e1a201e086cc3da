// What the console is told a user may do is the server's own permission table: the session read answers each
// role's permissions and the routes they open exactly as src/users/permissions.ts grants them, the auth hook
// answers every listed route and refuses every other, and every route the page names to show a control
// (`may('POST /send')`, a page's `needs`) is a route of that table, so a misspelt one cannot hide a control.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roles } from '../../src/shared/auth-context.ts';
import { authorize, permissions, roleGrants, routePermissions } from '../../src/users/permissions.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { signedInUser } from '../users/users-fixture.ts';

/** Every `.ts`/`.tsx` file of the console's source. */
function consoleSources(dir = join(import.meta.dirname, '../../console/src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return consoleSources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe("the console session's rights", () => {
  let harness: Harness | undefined;
  const h = () => harness!;
  beforeAll(async () => {
    harness = await createHarness('sqlite');
  });
  afterAll(async () => {
    await harness?.close();
  });

  for (const role of roles) {
    it(`the ${role}'s session read lists the permissions and routes permissions.ts grants the role`, async () => {
      const account = await h().account();
      const user = await signedInUser(h(), account.id, role);
      const answer = await user.call('GET', '/console/session');
      const session = answer.body.session as { role: string; permissions: string[]; routes: string[] };
      expect(session.role).toBe(role);
      expect(session.permissions).toEqual(permissions.filter((p) => roleGrants[role].has(p)));
      const granted = Object.keys(routePermissions).filter((r) => roleGrants[role].has(routePermissions[r]));
      expect(session.routes).toEqual(granted);
      // What the page is told is what the auth hook does: each listed route passes, each other one is refused.
      const auth = { accountId: account.id, tokenId: 0, parentId: null, userId: user.id, role };
      for (const route of Object.keys(routePermissions)) {
        const [method, url] = route.split(' ');
        const passes = (() => {
          try {
            authorize(auth, method, url);
            return true;
          } catch {
            return false;
          }
        })();
        expect(passes, route).toBe(session.routes.includes(route));
      }
    });
  }

  it('a session read follows a role change at once', async () => {
    const account = await h().account();
    const user = await signedInUser(h(), account.id, 'sender');
    expect((await user.call('GET', '/console/session')).body.session.routes).toContain('POST /send');
    const owner = { accountId: account.id, tokenId: 0, parentId: null, role: 'owner' as const };
    await h().deps.services.users.changeRole(owner, String(user.id), { role: 'viewer' });
    const after = (await user.call('GET', '/console/session')).body.session;
    expect(after).toMatchObject({ role: 'viewer', permissions: ['read', 'profile'] });
    expect(after.routes).not.toContain('POST /send');
  });

  it('every route the console names to show a control is a route of the permission table', () => {
    const named = new Set<string>();
    for (const file of consoleSources()) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/'((?:GET|POST|PUT|DELETE) \/[^']*)'/g)) named.add(m[1]);
    }
    // The pages' own reads and the controls of sending, lists, tokens, webhooks, billing and users.
    expect(named.size).toBeGreaterThan(25);
    for (const route of named) expect(Object.keys(routePermissions), route).toContain(route);
  });
});
