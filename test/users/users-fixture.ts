// Users of a test account as a person meets them: added by the operator's service, the link's password set
// through POST /users/accept, then signed in to the console, whose cookie and CSRF token sign each call.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Role } from '../../src/shared/auth-context.ts';
import {
  type CallOptions,
  type CallResult,
  call,
  createHarness,
  type Dialect,
  type Harness,
} from '../helpers/harness.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

export const userPassword = 'a user password of 31 characters';

export interface SignedInUser {
  id: number;
  email: string;
  cookie: string;
  csrf: string;
  call(method: string, url: string, options?: CallOptions): Promise<CallResult>;
}

export const linkToken = (link: string) => new URL(link).searchParams.get('token') ?? '';

/** Signs a user in to the console: its session's cookie and CSRF token, or the refusal. */
export async function consoleSignIn(h: Harness, email: string, password = userPassword) {
  const answer = await call(h.app, 'POST', '/console/session', { json: { email, password } });
  const cookie = /pigeon_session=([^;]+)/.exec(String(answer.headers['set-cookie'] ?? ''))?.[1];
  return { answer, cookie, csrf: answer.body.session?.csrf_token as string | undefined };
}

/** A call made with a console session (its cookie and CSRF token), as the console page makes them. */
export const sessionCall =
  (h: Harness, cookie: string, csrf: string) =>
  (method: string, url: string, options: CallOptions = {}) =>
    call(h.app, method, url, {
      ...options,
      headers: { cookie: `pigeon_session=${cookie}`, 'x-csrf-token': csrf, ...options.headers },
    });

/** A new user of the account with this role, its password set by its link, signed in to the console. */
export async function signedInUser(h: Harness, accountId: number, role: Role): Promise<SignedInUser> {
  const email = `${role}-${randomBytes(5).toString('hex')}@example.com`;
  const added = await h.deps.services.users.operatorAdd(accountId, email, role);
  const accepted = await call(h.app, 'POST', '/users/accept', {
    json: { user: { token: linkToken(added.link), password: userPassword } },
  });
  expect(accepted.body, 'the link sets the password').toMatchObject({ status: 1, user: { email, role } });
  const { answer, cookie, csrf } = await consoleSignIn(h, email);
  expect(answer.body.session, JSON.stringify(answer.body)).toMatchObject({ email, role });
  return { id: Number(added.id), email, cookie: cookie!, csrf: csrf!, call: sessionCall(h, cookie!, csrf!) };
}

/**
 * A harness whose e-mail goes to a real SMTP sink, its console at https://sms.example.com/console, made before
 * the describe block's tests and closed after them.
 */
export function smtpHarness(dialect: Dialect, env: Record<string, string> = {}) {
  const sink = new SmtpSink();
  let harness: Harness | undefined;
  beforeAll(async () => {
    await sink.listen();
    harness = await createHarness(dialect, {
      SMTP_URL: sink.url(),
      SMTP_FROM: 'pigeon@example.com',
      CONSOLE_URL: 'https://sms.example.com/console',
      ...env,
    });
  });
  afterAll(async () => {
    await harness?.close();
    await sink.close();
  });
  return { sink, h: () => harness! };
}

/** The audit log's actions about one user (or written by it), oldest first: what a user's changes left. */
export async function auditActionsOf(h: Harness, userId: number): Promise<string[]> {
  const rows = await h.deps.store.db
    .selectFrom('audit_log')
    .select('action')
    .where((eb) =>
      eb.or([
        eb.and([eb('object_type', '=', 'user'), eb('object_id', '=', String(userId))]),
        eb.and([eb('actor_kind', '=', 'user'), eb('actor_id', '=', String(userId))]),
      ]),
    )
    .orderBy('id')
    .execute();
  return rows.map((r) => r.action);
}
