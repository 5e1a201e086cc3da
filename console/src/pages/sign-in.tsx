// The sign-in: e-mail and password (POST /console/session), then, for a user with two-factor on, a code from
// the app or a recovery code (POST /console/session/code with the pending token the first step answered); and
// the forgotten password's path (POST /users/forgot), which answers the same for every e-mail.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { CredentialField, SignInCard } from '../components/sign-in-card.tsx';
import { ErrorNotice, Notice, useAction } from '../components/ui.tsx';
import type { Session } from '../session.ts';

type FirstStep = { session: Session } | { code_needed: true; pending_token: string };

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState<{ email?: string; password?: string }>({});
  const [pending, setPending] = useState<string | null>(null);
  const [forgot, setForgot] = useState(false);
  const signIn = useAction(async () => {
    const answer = await api<FirstStep>('POST', '/console/session', { body: { email, password } });
    if ('session' in answer) onSignedIn(answer.session);
    else setPending(answer.pending_token);
  });
  if (forgot) return <ForgotForm email={email} onBack={() => setForgot(false)} />;
  if (pending !== null) {
    return <CodeForm pendingToken={pending} onSignedIn={onSignedIn} onRestart={() => setPending(null)} />;
  }
  return (
    <SignInCard
      title="Sign in to Pigeon"
      onSubmit={() => {
        const next = {
          email: email.trim() === '' ? 'Enter the e-mail address of your account.' : undefined,
          password: password === '' ? 'Enter your password.' : undefined,
        };
        setMissing(next);
        if (!next.email && !next.password) void signIn.act();
      }}
    >
      <ErrorNotice error={signIn.error} />
      <CredentialField kind="email" value={email} onValue={setEmail} error={missing.email} />
      <CredentialField kind="password" value={password} onValue={setPassword} error={missing.password} />
      <button type="submit" disabled={signIn.pending}>
        {signIn.pending ? 'Signing in…' : 'Sign in'}
      </button>
      <button type="button" class="secondary" onClick={() => setForgot(true)}>
        Forgot your password?
      </button>
    </SignInCard>
  );
}

/** The second step: a code from the authenticator app, or one of the recovery codes. */
function CodeForm(props: { pendingToken: string; onSignedIn: (s: Session) => void; onRestart: () => void }) {
  const [code, setCode] = useState('');
  const [missing, setMissing] = useState<string | undefined>(undefined);
  const send = useAction(async () => {
    const answer = await api<{ session: Session }>('POST', '/console/session/code', {
      body: { pending_token: props.pendingToken, code: code.trim() },
    });
    props.onSignedIn(answer.session);
  });
  return (
    <SignInCard
      title="Two-factor code"
      onSubmit={() => {
        const why = code.trim() === '' ? 'Enter the code your app shows, or a recovery code.' : undefined;
        setMissing(why);
        if (!why) void send.act();
      }}
    >
      <p>Enter the six-digit code of your authenticator app, or one of your recovery codes.</p>
      <ErrorNotice error={send.error} />
      <CredentialField kind="code" value={code} onValue={setCode} error={missing} />
      <button type="submit" disabled={send.pending}>
        {send.pending ? 'Checking…' : 'Continue'}
      </button>
      <button type="button" class="secondary" onClick={props.onRestart}>
        Start again
      </button>
    </SignInCard>
  );
}

/** The forgotten password: a link by e-mail; the answer is the same whether the address is known or not. */
function ForgotForm(props: { email: string; onBack: () => void }) {
  const [email, setEmail] = useState(props.email);
  const [missing, setMissing] = useState<string | undefined>(undefined);
  const [sent, setSent] = useState('');
  const ask = useAction(async () => {
    const answer = await api<{ message: string }>('POST', '/users/forgot', { body: { user: { email } } });
    setSent(answer.message);
  });
  return (
    <SignInCard
      title="Reset your password"
      onSubmit={() => {
        const why = email.trim() === '' ? 'Enter the e-mail address you sign in with.' : undefined;
        setMissing(why);
        if (!why) void ask.act();
      }}
    >
      {sent ? <Notice kind="success">{`Done: ${sent}.`}</Notice> : null}
      <ErrorNotice error={ask.error} />
      <CredentialField kind="email" value={email} onValue={setEmail} error={missing} />
      <button type="submit" disabled={ask.pending}>
        {ask.pending ? 'Sending…' : 'Send me a link'}
      </button>
      <button type="button" class="secondary" onClick={props.onBack}>
        Back to sign-in
      </button>
    </SignInCard>
  );
}
