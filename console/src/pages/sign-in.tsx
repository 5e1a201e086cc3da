import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorNotice, TextField, useAction } from '../components/ui.tsx';
import type { Session } from '../session.ts';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState<{ email?: string; password?: string }>({});
  const signIn = useAction(async () => {
    const answer = await api<{ session: Session }>('POST', '/console/session', { body: { email, password } });
    onSignedIn(answer.session);
  });
  return (
    <main class="sign-in" id="main">
      <form
        class="card"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const next = {
            email: email.trim() === '' ? 'Enter the e-mail address of your account.' : undefined,
            password: password === '' ? 'Enter your password.' : undefined,
          };
          setMissing(next);
          if (!next.email && !next.password) void signIn.act();
        }}
      >
        <h1>Sign in to Pigeon</h1>
        <ErrorNotice error={signIn.error} />
        <TextField
          label="E-mail"
          type="email"
          autoComplete="username"
          value={email}
          onValue={setEmail}
          error={missing.email}
        />
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          value={password}
          onValue={setPassword}
          error={missing.password}
        />
        <button type="submit" disabled={signIn.pending}>
          {signIn.pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
