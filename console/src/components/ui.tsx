// The console's small building blocks: fields with labels and their errors, notices, tables, a pager, and a
// hook that loads what a page shows.
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from '../api.ts';

let fieldCounter = 0;
/** A stable id for a field, so its label and its error are tied to it. */
export function useFieldId(prefix: string): string {
  const ref = useRef('');
  if (!ref.current) ref.current = `${prefix}-${++fieldCounter}`;
  return ref.current;
}

interface FieldProps {
  label: string;
  /** The message to show under the field, tied to it for screen readers. */
  error?: string;
  hint?: ComponentChildren;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}

/** A labelled field: `children` renders the control with the id and aria-describedby it is given. */
export function Field({ label, error, hint, children }: FieldProps) {
  const id = useFieldId('f');
  const describedBy =
    [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children(id, describedBy)}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'label' | 'onInput' | 'value'> & {
  label: string;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  hint?: ComponentChildren;
};

/** A labelled text input. */
export function TextField({ label, value, onValue, error, hint, ...rest }: InputProps) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(id, describedBy) => (
        <input
          id={id}
          value={value}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={describedBy}
          onInput={(e) => onValue((e.target as HTMLInputElement).value)}
          {...rest}
        />
      )}
    </Field>
  );
}

type SelectProps = {
  label: string;
  value: string;
  onValue: (value: string) => void;
  options: readonly { value: string; label: string }[];
  error?: string;
  hint?: ComponentChildren;
  disabled?: boolean;
};

/**
 * A drop-down of `options` (their value and what it shows). Alone, `label` names it without showing it (a table's
 * cell); `SelectField` shows it as the other fields do.
 */
export function Select({
  label,
  value,
  onValue,
  options,
  disabled,
  ...rest
}: SelectProps & Omit<JSX.SelectHTMLAttributes<HTMLSelectElement>, 'label' | 'value'>) {
  return (
    <select
      aria-label={rest.id ? undefined : label}
      value={value}
      disabled={disabled}
      onChange={(e) => onValue((e.target as HTMLSelectElement).value)}
      {...rest}
    >
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

/** A labelled drop-down of `options`, with its error and hint, like the other fields. */
export function SelectField({ error, hint, ...select }: SelectProps) {
  return (
    <Field label={select.label} error={error} hint={hint}>
      {(id, describedBy) => (
        <Select
          {...select}
          id={id}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={describedBy}
        />
      )}
    </Field>
  );
}

export function Notice({
  kind,
  children,
}: {
  kind: 'error' | 'success' | 'info';
  children: ComponentChildren;
}) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function ErrorNotice({ error }: { error: unknown }) {
  return error ? <Notice kind="error">{errorText(error)}</Notice> : null;
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" aria-live="polite">
      {what}…
    </p>
  );
}

export function PageTitle({
  children,
  actions,
}: {
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <div class="page-title">
      <h1>{children}</h1>
      {actions && <div class="actions">{actions}</div>}
    </div>
  );
}

/** A figure on a card: a label and its value. */
export function Stat({ label, value, tone }: { label: string; value: ComponentChildren; tone?: string }) {
  return (
    <div class={`stat${tone ? ` stat-${tone}` : ''}`}>
      <span class="stat-label">{label}</span>
      <span class="stat-value">{value}</span>
    </div>
  );
}

/** Previous and next over a paged list (the API's `start` and `length`). */
export function Pager({
  start,
  length,
  total,
  onStart,
}: {
  start: number;
  length: number;
  total: number;
  onStart: (start: number) => void;
}) {
  if (total <= length && start === 0) return null;
  const last = Math.min(start + length, total);
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        class="secondary"
        disabled={start === 0}
        onClick={() => onStart(Math.max(0, start - length))}
      >
        Previous
      </button>
      <span>
        {total === 0 ? 0 : start + 1}–{last} of {total}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={last >= total}
        onClick={() => onStart(start + length)}
      >
        Next
      </button>
    </nav>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads what a page shows, again whenever `deps` change; `reload` after a change. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (e) {
      if (mine === generation.current) setError(e);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/** Runs a change (a form's submit): its pending state and its error, for the button and the form. */
export function useAction<A extends unknown[], R>(run: (...args: A) => Promise<R>) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const act = async (...args: A): Promise<R | undefined> => {
    setPending(true);
    setError(undefined);
    try {
      return await run(...args);
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setPending(false);
    }
  };
  return { act, pending, error, setError };
}

/** Copies text to the clipboard, saying so on the button for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Without clipboard access (plain HTTP), the text stays selectable on the page.
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}
