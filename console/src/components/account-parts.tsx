// Pieces the account pages share: a secret shown once with its copy button, a change that asks to be
// confirmed in place, and labelled on/off switches.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure, fieldOfError } from '../api.ts';
import { CopyButton, Field } from './ui.tsx';

/**
 * The message of a -7 error for the form field it names (`fields` are the API's names, in the order they
 * are looked for), or undefined when it names another field or none.
 */
export function errorFor(error: unknown, fields: readonly string[], field: string): string | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  return fieldOfError(error, fields) === field ? error.details || error.message : undefined;
}

/** The error when it names none of `fields`: shown above the form instead. */
export const formLevelError = (error: unknown, fields: readonly string[]): unknown =>
  error && !fieldOfError(error, fields) ? error : undefined;

/** A secret the API returns once (a token, a webhook's signing key): shown with a copy button and a warning. */
export function SecretOnce({
  label,
  value,
  children,
}: {
  label: string;
  value: string;
  children?: ComponentChildren;
}) {
  return (
    <div class="secret account-secret" role="status">
      <p class="account-secret-label">
        <strong>{label}</strong> It will not be shown again: copy it now and keep it somewhere safe.
      </p>
      <code class="account-secret-value">{value}</code>
      <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
      {children}
    </div>
  );
}

/**
 * A button whose change is asked once more in place (deleting, revoking, locking): the question with a
 * confirming and a cancelling button, no dialog window.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  pending,
  danger = true,
  ariaLabel,
}: {
  label: string;
  question: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<unknown> | unknown;
  pending?: boolean;
  danger?: boolean;
  ariaLabel?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="secondary" aria-label={ariaLabel} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="account-confirm">
      <span>{question}</span>
      <button
        type="button"
        class={danger ? 'danger' : undefined}
        disabled={pending}
        onClick={async () => {
          await onConfirm();
          setAsking(false);
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A labelled checkbox with its error and hint, like the other fields. */
export function CheckField({
  label,
  checked,
  onChange,
  error,
  hint,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  error?: string;
  hint?: ComponentChildren;
}) {
  return (
    <div class="account-check">
      <Field label={label} error={error} hint={hint}>
        {(id, describedBy) => (
          <input
            id={id}
            type="checkbox"
            checked={checked}
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={describedBy}
            onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
          />
        )}
      </Field>
    </div>
  );
}
