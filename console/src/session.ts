// The signed-in session as the page knows it (GET /console/session), shared by every page.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AccountView } from '../../src/accounts/accounts.schemas.ts';

/** GET /account's object: the route's schema's view. */
export type Account = AccountView;

export interface Session {
  csrf_token: string;
  signed_in_account_id: number;
  /** The user who signed in, and its role (owner, admin, sender, developer, viewer). */
  user_id: number;
  email: string;
  role: string;
  /** What that role may do now: its permissions, and every API route (`POST /send`) they open. */
  permissions: string[];
  routes: string[];
  /** The account whose view is shown. */
  account_id: number;
  parent_id: number | null;
  account: Account;
  timezone: string;
  /** Appended to marketing texts (STOP_MENTION); the send form counts it. */
  stop_mention: string;
  /** How many characters each `<-short->` becomes: the send form's counter prices links exactly. */
  short_url_length: number;
  expires_at: number;
}

export interface SessionState {
  session: Session;
  /** Reloads the session (after a switch, a transfer that changed the balance…). */
  refresh(): Promise<void>;
  /** Shows a sub-account's view (its id), or the signed-in account's again (null). */
  switchTo(accountId: number | null): Promise<void>;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in page');
  return state;
}

/** Whether the view shown is a sub-account's, entered by its parent. */
export const actingAsSubAccount = (s: Session) => s.account_id !== s.signed_in_account_id;

/**
 * Whether the signed-in user's role may call an API route, named as the server's permission table names it
 * (`POST /send`, `DELETE /list/:id`): the session lists the routes the role opens, so a page shows a control
 * only when its route would answer, and never holds a copy of the rules.
 */
export const mayCall = (s: Session, route: string) => s.routes.includes(route);

/** `mayCall` for the page's session. */
export function useMay(): (route: string) => boolean {
  const { session } = useSession();
  return (route) => mayCall(session, route);
}
