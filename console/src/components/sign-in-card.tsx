// The card of the pages seen signed out (sign-in, its code step, a forgotten password, a link's new password):
// one form whose submit runs `onSubmit`; and the fields those pages and the Profile share.
import type { ComponentChildren } from 'preact';
import { TextField } from './ui.tsx';

export function SignInCard(props: { title: string; onSubmit: () => void; children: ComponentChildren }) {
  return (
    <main class="sign-in" id="main">
      <form
        class="card"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          props.onSubmit();
        }}
      >
        <h1>{props.title}</h1>
        {props.children}
      </form>
    </main>
  );
}

const credentialFields = {
  email: { label: 'E-mail', type: 'email', autoComplete: 'username' },
  password: { label: 'Password', type: 'password', autoComplete: 'current-password' },
  // What the password policy asks (src/users/password-policy.ts) as the hint.
  'new-password': {
    label: 'New password',
    type: 'password',
    autoComplete: 'new-password',
    hint: 'At least 10 characters, and not a common password.',
  },
  // Six digits from the authenticator app, or a recovery code.
  code: { label: 'Code', type: 'text', autoComplete: 'one-time-code' },
} as const;

/** An e-mail, a password (current or new) or a two-factor code, labelled as `label` when given. */
export function CredentialField(props: {
  kind: keyof typeof credentialFields;
  label?: string;
  value: string;
  onValue: (v: string) => void;
  error?: string;
}) {
  const field = credentialFields[props.kind];
  return (
    <TextField
      {...field}
      label={props.label ?? field.label}
      value={props.value}
      onValue={props.onValue}
      error={props.error}
    />
  );
}
