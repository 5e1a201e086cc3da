// One's own profile, whatever one's role: the password (PUT /users/me/password), two-factor (enrolment with
// the secret as text and its otpauth link, confirmed by a first code, then the recovery codes shown once;
// new recovery codes or disabling, each with the password and a code), and one's sessions (GET/DELETE
// /users/me/sessions).
import './account.css';
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { SecretOnce } from '../components/account-parts.tsx';
import { CredentialField } from '../components/sign-in-card.tsx';
import { ErrorNotice, Loading, Notice, PageTitle, useAction, useLoad } from '../components/ui.tsx';
import { formatDate } from '../format.ts';
import { useSession } from '../session.ts';

interface Profile {
  email: string;
  role: string;
  two_factor: boolean;
  recovery_codes_left: number;
}

interface SessionRow {
  id: string;
  created_at: number;
  last_used_at: number | null;
  ip: string | null;
  user_agent: string | null;
  current: boolean;
}

export function ProfilePage() {
  const profile = useLoad(() => api<{ user: Profile }>('GET', '/users/me').then((a) => a.user), []);
  return (
    <section>
      <PageTitle>Profile</PageTitle>
      {profile.error ? <ErrorNotice error={profile.error} /> : null}
      {profile.data ? (
        <p>
          Signed in as <strong>{profile.data.email}</strong> ({profile.data.role}).
        </p>
      ) : null}
      <PasswordCard />
      {profile.data ? <TwoFactorCard profile={profile.data} reload={profile.reload} /> : <Loading />}
      <SessionsCard />
    </section>
  );
}

function PasswordCard() {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const change = useAction(async () => {
    setDone(false);
    await api('PUT', '/users/me/password', { body: { user: { current, password } } });
    setCurrent('');
    setPassword('');
    setDone(true);
  });
  return (
    <form
      class="card"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void change.act();
      }}
    >
      <h2>Password</h2>
      {done ? <Notice kind="success">Password changed; your other sessions were signed out.</Notice> : null}
      <ErrorNotice error={change.error} />
      <CredentialField kind="password" label="Current password" value={current} onValue={setCurrent} />
      <CredentialField kind="new-password" value={password} onValue={setPassword} />
      <button type="submit" disabled={change.pending}>
        {change.pending ? 'Changing…' : 'Change the password'}
      </button>
    </form>
  );
}

function TwoFactorCard({ profile, reload }: { profile: Profile; reload: () => Promise<void> }) {
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_uri: string } | null>(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const start = useAction(async () => {
    const answer = await api<{ two_factor: { secret: string; otpauth_uri: string } }>(
      'POST',
      '/users/me/two-factor',
    );
    setEnrolment(answer.two_factor);
    setCodes(null);
  });
  const confirm = useAction(async () => {
    const answer = await api<{ recovery_codes: string[] }>('PUT', '/users/me/two-factor', {
      body: { user: { code: code.trim() } },
    });
    setCodes(answer.recovery_codes);
    setEnrolment(null);
    setCode('');
    await reload();
  });
  const disable = useAction(async () => {
    await api('DELETE', '/users/me/two-factor', { body: { user: { password, code: code.trim() } } });
    setPassword('');
    setCode('');
    setCodes(null);
    await reload();
  });
  const renew = useAction(async () => {
    const answer = await api<{ recovery_codes: string[] }>('POST', '/users/me/two-factor/recovery-codes', {
      body: { user: { password, code: code.trim() } },
    });
    setPassword('');
    setCode('');
    setCodes(answer.recovery_codes);
    await reload();
  });
  return (
    <div class="card">
      <h2>Two-factor sign-in</h2>
      {codes ? (
        <SecretOnce label="Recovery codes." value={codes.join('\n')}>
          <p>Each works once in place of a code, if you lose your phone.</p>
        </SecretOnce>
      ) : null}
      {profile.two_factor ? (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void disable.act();
          }}
        >
          <p data-testid="two-factor-state">
            On: signing in asks for a code after the password. {profile.recovery_codes_left} recovery codes
            left.
          </p>
          <ErrorNotice error={disable.error ?? renew.error} />
          <CredentialField kind="password" value={password} onValue={setPassword} />
          <CredentialField kind="code" value={code} onValue={setCode} />
          <button type="button" disabled={renew.pending} onClick={() => void renew.act()}>
            New recovery codes
          </button>{' '}
          <button type="submit" class="danger" disabled={disable.pending}>
            Turn two-factor off
          </button>
        </form>
      ) : enrolment ? (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void confirm.act();
          }}
        >
          <p>
            Add this secret to your authenticator app (or open the{' '}
            <a href={enrolment.otpauth_uri}>otpauth link</a> on the phone that has it), then enter the code it
            shows.
          </p>
          <SecretOnce label="Secret." value={enrolment.secret} />
          <ErrorNotice error={confirm.error} />
          <CredentialField kind="code" label="Code from the app" value={code} onValue={setCode} />
          <button type="submit" disabled={confirm.pending}>
            Turn two-factor on
          </button>
        </form>
      ) : (
        <>
          <p data-testid="two-factor-state">Off: the password alone signs you in.</p>
          <ErrorNotice error={start.error} />
          <button type="button" disabled={start.pending} onClick={() => void start.act()}>
            Set up two-factor
          </button>
        </>
      )}
    </div>
  );
}

function SessionsCard() {
  const { session, signOut } = useSession();
  const sessions = useLoad(
    () => api<{ sessions: SessionRow[] }>('GET', '/users/me/sessions').then((a) => a.sessions),
    [],
  );
  const end = useAction(async (id: string) => {
    await api('DELETE', `/users/me/sessions/${encodeURIComponent(id)}`);
    await sessions.reload();
  });
  const everywhere = useAction(async () => {
    await api('DELETE', '/users/me/sessions');
    await signOut();
  });
  return (
    <div class="card">
      <h2>Sessions</h2>
      <ErrorNotice error={sessions.error ?? end.error ?? everywhere.error} />
      {sessions.data ? (
        <table>
          <thead>
            <tr>
              <th>Signed in</th>
              <th>Last used</th>
              <th>From</th>
              <th>Browser</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sessions.data.map((row) => (
              <tr key={row.id}>
                <td>{formatDate(row.created_at, session.timezone)}</td>
                <td>{formatDate(row.last_used_at, session.timezone)}</td>
                <td>{row.ip ?? '—'}</td>
                <td>{row.user_agent ?? '—'}</td>
                <td>
                  {row.current ? (
                    <strong>This session</strong>
                  ) : (
                    <button type="button" class="secondary" onClick={() => void end.act(row.id)}>
                      Sign out
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Loading />
      )}
      <button
        type="button"
        class="danger"
        disabled={everywhere.pending}
        onClick={() => void everywhere.act()}
      >
        Sign out everywhere
      </button>
    </div>
  );
}
