// The Pigeon console: a single page served at /console, signed in by a session cookie, and a client of the
// API's own routes for everything it shows and changes.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { ComponentChildren } from 'preact';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, errorText, onRoleRefused, onSignedOut, useCsrfToken } from './api.ts';
import { useLoad } from './components/ui.tsx';
import { formatNumber } from './format.ts';
import { AcceptPage } from './pages/accept.tsx';
import { AlertPage } from './pages/alert.tsx';
import { AuditPage } from './pages/audit.tsx';
import { BlacklistPage } from './pages/blacklist.tsx';
import { CampaignPage } from './pages/campaign.tsx';
import { CampaignsPage } from './pages/campaigns.tsx';
import { DashboardPage } from './pages/dashboard.tsx';
import { ListPage } from './pages/list.tsx';
import { ListsPage } from './pages/lists.tsx';
import { OperatorPage } from './pages/operator.tsx';
import { ProfilePage } from './pages/profile.tsx';
import { SendPage } from './pages/send.tsx';
import { SendersPage } from './pages/senders.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { SmppUsersPage } from './pages/smpp-users.tsx';
import { SubAccountsPage } from './pages/sub-accounts.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { UsersPage } from './pages/users.tsx';
import { WebhookPage } from './pages/webhook.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { linkTo, match, navigate, useLocation } from './router.ts';
import { actingAsSubAccount, mayCall, type Session, SessionContext, type SessionState } from './session.ts';

/**
 * The pages, by path; the first that matches is shown. `needs` is the API route a page cannot work without
 * (its first read, or the change it exists for): a role that may not call it is not shown the page in the
 * navigation, and is told so if it opens it.
 */
const routes: {
  path: string;
  title: string;
  needs: string;
  page: (params: Record<string, string>) => ComponentChildren;
}[] = [
  { path: '/', title: 'Dashboard', needs: 'GET /credits', page: () => <DashboardPage /> },
  { path: '/campaigns', title: 'Campaigns', needs: 'GET /campaigns', page: () => <CampaignsPage /> },
  {
    path: '/campaigns/:ticket',
    title: 'Campaign',
    needs: 'GET /campaign/:ticket',
    page: (p) => <CampaignPage ticket={p.ticket} />,
  },
  { path: '/send', title: 'Send', needs: 'POST /send', page: () => <SendPage /> },
  { path: '/lists', title: 'Lists', needs: 'GET /lists', page: () => <ListsPage /> },
  { path: '/lists/:id', title: 'List', needs: 'GET /list/:id', page: (p) => <ListPage id={p.id} /> },
  { path: '/blacklist', title: 'Blacklist and NPAI', needs: 'GET /blacklist', page: () => <BlacklistPage /> },
  { path: '/tokens', title: 'API tokens', needs: 'GET /token', page: () => <TokensPage /> },
  { path: '/smpp-users', title: 'SMPP users', needs: 'GET /smpp/user', page: () => <SmppUsersPage /> },
  { path: '/webhooks', title: 'Webhooks', needs: 'GET /webhook', page: () => <WebhooksPage /> },
  {
    path: '/webhooks/:id',
    title: 'Webhook',
    needs: 'GET /webhook/:id',
    page: (p) => <WebhookPage id={p.id} />,
  },
  { path: '/alert', title: 'Balance alert', needs: 'GET /notification/balance', page: () => <AlertPage /> },
  {
    path: '/sub-accounts',
    title: 'Sub-accounts',
    needs: 'GET /sub-accounts',
    page: () => <SubAccountsPage />,
  },
  { path: '/users', title: 'Users and roles', needs: 'GET /users', page: () => <UsersPage /> },
  { path: '/audit', title: 'Audit log', needs: 'GET /audit', page: () => <AuditPage /> },
  { path: '/senders', title: 'Sender IDs', needs: 'GET /sender', page: () => <SendersPage /> },
  { path: '/operator', title: 'Operator', needs: 'GET /operator/me', page: () => <OperatorPage /> },
  { path: '/profile', title: 'Profile', needs: 'GET /users/me', page: () => <ProfilePage /> },
];

const nav: { path: string; label: string }[] = [
  { path: '/', label: 'Dashboard' },
  { path: '/campaigns', label: 'Campaigns' },
  { path: '/send', label: 'Send' },
  { path: '/lists', label: 'Lists' },
  { path: '/blacklist', label: 'Blacklist' },
  { path: '/tokens', label: 'Tokens' },
  { path: '/smpp-users', label: 'SMPP' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/alert', label: 'Balance alert' },
  { path: '/sub-accounts', label: 'Sub-accounts' },
  { path: '/users', label: 'Users' },
  { path: '/audit', label: 'Audit log' },
  { path: '/senders', label: 'Sender IDs' },
  { path: '/profile', label: 'Profile' },
];

/** The operator's area, in the menu of an operator account only (GET /operator/me answers it alone). */
const operatorNav = { path: '/operator', label: 'Operator' };

/** Whether the session's role may open the page at `path` (every nav entry is a page of `routes`). */
const mayOpen = (session: Session, path: string) =>
  routes.some((r) => r.path === path && mayCall(session, r.needs));

function Shell({ state, children }: { state: SessionState; children: ComponentChildren }) {
  const { session } = state;
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const [switchError, setSwitchError] = useState('');
  const account = session.account;
  const name = [account.firstname, account.lastname].filter(Boolean).join(' ') || account.email;
  const sub = actingAsSubAccount(session);
  const operator = useLoad(
    () =>
      api('GET', '/operator/me').then(
        () => true,
        () => false,
      ),
    [session.account_id],
  );
  const items = operator.data ? [...nav, operatorNav] : nav;
  // Each page opened reads the session again: the balance in the top bar follows sends and transfers.
  const firstPath = useRef(path);
  useEffect(() => {
    setMenuOpen(false);
    if (path !== firstPath.current) void state.refresh();
  }, [path]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="topbar">
        <a class="brand" {...linkTo('/')}>
          Pigeon
        </a>
        <button
          type="button"
          class="menu-button secondary"
          aria-expanded={menuOpen ? 'true' : 'false'}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <div class="who">
          {/* The account's name, when it says more than the signed-in user's e-mail beside it. */}
          {(sub || name !== session.email) && (
            <span class="who-name">
              {name}
              {sub && <span class="badge">sub-account</span>}
            </span>
          )}
          <span class="who-user" data-testid="user">
            {session.email} <span class="badge badge-role">{session.role}</span>
          </span>
          <span class="who-balance" data-testid="balance">
            {account.unlimited ? 'unlimited credits' : `${formatNumber(account.credits)} credits`}
          </span>
          {sub && (
            <button
              type="button"
              class="secondary"
              onClick={async () => {
                try {
                  await state.switchTo(null);
                } catch (e) {
                  setSwitchError(errorText(e));
                }
              }}
            >
              Back to my account
            </button>
          )}
          <button type="button" class="secondary" onClick={() => void state.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      {switchError && <p class="notice notice-error">{switchError}</p>}
      <nav id="nav" class={`nav${menuOpen ? ' open' : ''}`} aria-label="Console">
        <ul>
          {items
            .filter((item) => mayOpen(session, item.path))
            .map((item) => {
              const current =
                item.path === '/' ? path === '/' : path === item.path || path.startsWith(`${item.path}/`);
              return (
                <li key={item.path}>
                  <a {...linkTo(item.path)} aria-current={current ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              );
            })}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No console page here. <a {...linkTo('/')}>Go to the dashboard</a>.
      </p>
    </section>
  );
}

/** A page the signed-in user's role may not open: said, rather than a page whose every call is refused. */
function NotForRole({ title, role }: { title: string; role: string }) {
  return (
    <section>
      <h1>{title}</h1>
      <p class="notice notice-info" role="status">
        Your role ({role}) does not give access to this page. Ask the account's owner if you need it.{' '}
        <a {...linkTo('/')}>Go to the dashboard</a>.
      </p>
    </section>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [loadError, setLoadError] = useState('');
  const { path, query } = useLocation();

  const adopt = (next: Session | null) => {
    if (next) useCsrfToken(next.csrf_token);
    setSession(next);
  };
  const refresh = async () => {
    try {
      const answer = await api<{ session: Session }>('GET', '/console/session');
      adopt(answer.session);
      setLoadError('');
    } catch (e) {
      if (e instanceof ApiFailure && e.status === -1) adopt(null);
      else setLoadError(errorText(e));
    }
  };
  useEffect(() => {
    void refresh();
    const unsubscribe = onSignedOut(() => adopt(null));
    // A call refused for the role: the role changed since the session was read; read it again.
    const unsubscribeRefused = onRoleRefused(() => void refresh());
    return () => {
      unsubscribe();
      unsubscribeRefused();
    };
  }, []);

  const route = routes.map((r) => ({ r, params: match(r.path, path) })).find((m) => m.params !== null);
  useEffect(() => {
    document.title = session ? `${route?.r.title ?? 'Not found'} · Pigeon` : 'Sign in · Pigeon';
  }, [session, route?.r.title]);

  // An invitation's or a reset's link: signed in or not, it sets the password of the user it was sent to.
  if (path === '/accept') return <AcceptPage token={query.get('token') ?? ''} />;

  if (session === undefined) {
    return loadError ? (
      <p class="notice notice-error">{loadError}</p>
    ) : (
      <p class="boot">Loading the console…</p>
    );
  }
  if (session === null) {
    return (
      <SignInPage
        onSignedIn={(next) => {
          adopt(next);
          if (path === '/sign-in') navigate('/', true);
        }}
      />
    );
  }
  const state: SessionState = {
    session,
    refresh,
    async switchTo(accountId) {
      const answer = await api<{ session: Session }>('PUT', '/console/session/account', {
        body: { account_id: accountId },
      });
      adopt(answer.session);
      navigate('/');
    },
    async signOut() {
      try {
        await api('DELETE', '/console/session');
      } finally {
        adopt(null);
        navigate('/', true);
      }
    },
  };
  return (
    <SessionContext.Provider value={state}>
      <Shell state={state}>
        {/* A page's key is its path and account: switching accounts starts each page afresh. */}
        <div key={`${session.account_id}:${path}`}>
          {!route ? (
            <NotFound />
          ) : mayCall(session, route.r.needs) ? (
            route.r.page(route.params ?? {})
          ) : (
            <NotForRole title={route.r.title} role={session.role} />
          )}
        </div>
      </Shell>
    </SessionContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
