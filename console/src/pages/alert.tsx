// The balance alert (GET and PUT /notification/balance): the credits at or below which Pigeon warns, by
// e-mail and by SMS, once per crossing. Errors show next to the field they name.
import './account.css';
import { useEffect, useState } from 'preact/hooks';
import type { NotificationView } from '../../../src/accounts/balance-alerts.schemas.ts';
import { api } from '../api.ts';
import { CheckField, errorFor, formLevelError } from '../components/account-parts.tsx';
import { ErrorNotice, Loading, Notice, PageTitle, TextField, useAction, useLoad } from '../components/ui.tsx';
import { formatNumber } from '../format.ts';
import { useMay, useSession } from '../session.ts';

type Notification = NotificationView;

// Looked for in this order: an e-mail error also names alert_email, a phone error alert_gsm.
const fields = ['alert_trigger', 'email', 'phone_number', 'alert_email', 'alert_gsm'];

export function AlertPage() {
  const { session } = useSession();
  const mayChange = useMay()('PUT /notification/balance');
  const stored = useLoad(
    () => api<{ notification: Notification }>('GET', '/notification/balance').then((a) => a.notification),
    [],
  );
  const [form, setForm] = useState<Notification | null>(null);
  const [saved, setSaved] = useState(false);
  const [missing, setMissing] = useState<Partial<Record<keyof Notification, string>>>({});
  useEffect(() => {
    if (stored.data) setForm(stored.data);
  }, [stored.data]);

  const save = useAction(async (next: Notification) => {
    const answer = await api<{ notification: Notification }>('PUT', '/notification/balance', {
      body: { notification: next },
    });
    setForm(answer.notification);
    setSaved(true);
  });

  if (stored.error) return <ErrorNotice error={stored.error} />;
  if (!form) return <Loading what="Loading the balance alert" />;
  const set = (patch: Partial<Notification>) => {
    setSaved(false);
    setForm({ ...form, ...patch });
  };
  const error = (field: keyof Notification) => missing[field] ?? errorFor(save.error, fields, field);
  const emailOn = form.alert_email === '1';
  const smsOn = form.alert_gsm === '1';
  const trigger = Number(form.alert_trigger);

  return (
    <section>
      <PageTitle>Balance alert</PageTitle>
      <p class="account-intro">
        When your balance falls to the trigger or below it, Pigeon warns you once, by e-mail, by SMS (free of
        charge) or both, and calls your BALANCE_ALERT webhooks. It warns again after the balance has risen
        above the trigger. Your balance now: {formatNumber(session.account.credits)} credits.
      </p>
      {saved && (
        <Notice kind="success">
          Saved.{' '}
          {trigger > 0
            ? `You will be warned when the balance reaches ${formatNumber(trigger)} credits.`
            : 'With a trigger of 0, you are warned when no credits are left.'}
        </Notice>
      )}
      <form
        class="card account-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          // A number written +33 6 12 34 56 78 is sent as the API wants it: digits only.
          const next = {
            ...form,
            alert_trigger: form.alert_trigger.trim(),
            email: form.email.trim(),
            phone_number: form.phone_number.replace(/[\s.()+-]/g, ''),
          };
          const check: typeof missing = {
            alert_trigger: /^\d+$/.test(next.alert_trigger) ? undefined : 'Enter a whole number of credits.',
            email:
              emailOn && next.email === '' ? 'Enter the address to warn, or turn the e-mail off.' : undefined,
            phone_number:
              smsOn && next.phone_number === ''
                ? 'Enter the number to warn, or turn the SMS off.'
                : undefined,
          };
          setMissing(check);
          if (!Object.values(check).some(Boolean)) void save.act(next);
        }}
      >
        <ErrorNotice error={formLevelError(save.error, fields)} />
        {!mayChange && <p class="hint">Your role ({session.role}) can read this alert, not change it.</p>}
        <fieldset class="account-plain" disabled={!mayChange}>
          <TextField
            label="Trigger (credits)"
            inputMode="numeric"
            value={form.alert_trigger}
            onValue={(alert_trigger) => set({ alert_trigger })}
            error={error('alert_trigger')}
            hint="The alert goes out when the balance is at or below this number of credits."
          />
          <fieldset class="account-fieldset">
            <legend>By e-mail</legend>
            <CheckField
              label="Send an e-mail"
              checked={emailOn}
              onChange={(on) => set({ alert_email: on ? '1' : '0' })}
              error={errorFor(save.error, fields, 'alert_email')}
            />
            <TextField
              label="E-mail address"
              type="email"
              autoComplete="email"
              value={form.email}
              onValue={(email) => set({ email })}
              error={error('email')}
            />
          </fieldset>
          <fieldset class="account-fieldset">
            <legend>By SMS</legend>
            <CheckField
              label="Send an SMS"
              checked={smsOn}
              onChange={(on) => set({ alert_gsm: on ? '1' : '0' })}
              error={errorFor(save.error, fields, 'alert_gsm')}
            />
            <TextField
              label="Mobile number"
              type="tel"
              inputMode="tel"
              autoComplete="tel"
              value={form.phone_number}
              onValue={(phone_number) => set({ phone_number })}
              error={error('phone_number')}
              hint="Digits with the country code first, such as 33612345678."
            />
          </fieldset>
        </fieldset>
        {mayChange && (
          <button type="submit" disabled={save.pending}>
            {save.pending ? 'Saving…' : 'Save the alert'}
          </button>
        )}
      </form>
    </section>
  );
}
