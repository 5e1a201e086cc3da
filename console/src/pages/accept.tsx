// Where an invitation's (or a reset's) link lands: `/console/accept?token=…`. The token and a new password go to
// POST /users/accept, which needs no session (a reset's also signs the user out everywhere); the user then signs
// in with the password.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { CredentialField, SignInCard } from '../components/sign-in-card.tsx';
import { ErrorNotice, useAction } from '../components/ui.tsx';
import { navigate } from '../router.ts';

export function AcceptPage({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState<string | undefined>(undefined);
  const [email, setEmail] = useState<string | undefined>(undefined);
  const accept = useAction(async () => {
    const answer = await api<{ user: { email: string } }>('POST', '/users/accept', {
      body: { user: { token, password } },
    });
    setEmail(answer.user.email);
  });
  if (email !== undefined) {
    return (
      <main class="sign-in" id="main">
        <section class="card">
          <h1>Your password is set</h1>
          <p>Sign in as {email} with it.</p>
          <button type="button" onClick={() => navigate('/', true)}>
            Sign in
          </button>
        </section>
      </main>
    );
  }
  return (
    <SignInCard
      title="Set your Pigeon password"
      onSubmit={() => {
        const why = password === '' ? 'Choose a password of at least 10 characters.' : undefined;
        setMissing(why);
        if (!why) void accept.act();
      }}
    >
      {token === '' ? (
        <p class="notice notice-error">This link has no token: open the one you received.</p>
      ) : null}
      <ErrorNotice error={accept.error} />
      <CredentialField kind="new-password" value={password} onValue={setPassword} error={missing} />
      <button type="submit" disabled={accept.pending || token === ''}>
        {accept.pending ? 'Setting it…' : 'Set the password'}
      </button>
    </SignInCard>
  );
}
