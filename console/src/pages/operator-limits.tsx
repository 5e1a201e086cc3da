// The operator's limits of one account (GET/PUT/DELETE /operator/accounts/:id/limits): its effective limits,
// each with whose value it is (the account's, its parent's or the instance's), and a form of its own values,
// where an empty field inherits. As `pigeon account limits` shows and changes them.
import { useState } from 'preact/hooks';
import type { OperatorLimitsView } from '../../../src/limits/limits.schemas.ts';
import { api } from '../api.ts';
import { errorFor, formLevelError } from '../components/account-parts.tsx';
import { ErrorNotice, TextField, useAction } from '../components/ui.tsx';
import { formatNumber } from '../format.ts';

type AccountLimits = OperatorLimitsView;
type OwnName = keyof AccountLimits['own'] & string;

const limits: { name: OwnName; label: string; hint: string }[] = [
  { name: 'daily_messages', label: 'Messages per day', hint: 'Messages accepted per day. 0: no limit.' },
  {
    name: 'monthly_messages',
    label: 'Messages per month',
    hint: 'Messages accepted per month. 0: no limit.',
  },
  {
    name: 'requests_per_second',
    label: 'Requests per second',
    hint: 'API requests per second, all its tokens together. 0: no limit.',
  },
  {
    name: 'parts_per_second',
    label: 'Parts per second',
    hint: 'SMS parts per second its messages leave at (paced, never refused). 0: no limit.',
  },
  { name: 'countries', label: 'Countries', hint: 'ISO codes separated by commas (FR,BE), or all.' },
];
const fields = limits.map((l) => l.name);
const whose = { account: 'its own', parent: "its parent's", instance: "the instance's" } as const;

const valueText = (value: number | string) =>
  typeof value === 'number' ? (value === 0 ? 'no limit' : formatNumber(value)) : value;

const draftOf = (account: AccountLimits): Record<OwnName, string> =>
  Object.fromEntries(
    limits.map(({ name }) => [name, account.own[name] === null ? '' : String(account.own[name])]),
  ) as Record<OwnName, string>;

export function AccountLimitsSection({ onNotice }: { onNotice: (text: string) => void }) {
  const [accountId, setAccountId] = useState('');
  const [account, setAccount] = useState<AccountLimits | null>(null);
  const [draft, setDraft] = useState<Record<OwnName, string> | null>(null);
  const shown = (answer: { account: AccountLimits }) => {
    setAccount(answer.account);
    setDraft(draftOf(answer.account));
  };
  const address = () => `/operator/accounts/${encodeURIComponent(accountId.trim())}/limits`;
  const show = useAction(async () => {
    setAccount(null);
    shown(await api<{ account: AccountLimits }>('GET', address()));
  });
  const save = useAction(async () => {
    const body = Object.fromEntries(
      limits.map(({ name }) => [name, draft![name].trim() === '' ? 'inherit' : draft![name].trim()]),
    );
    shown(await api<{ account: AccountLimits }>('PUT', address(), { body: { limits: body } }));
    onNotice(`Limits of account ${accountId.trim()} saved.`);
  });
  const clear = useAction(async () => {
    shown(await api<{ account: AccountLimits }>('DELETE', address()));
    onNotice(`Account ${accountId.trim()} inherits every limit again.`);
  });
  return (
    <section aria-labelledby="limits-title">
      <h2 id="limits-title">Limits of an account</h2>
      <form
        class="card account-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void show.act();
        }}
      >
        <ErrorNotice error={show.error} />
        <TextField
          label="Account"
          inputMode="numeric"
          value={accountId}
          onValue={setAccountId}
          hint="Its id: its limits, and whose each is."
        />
        <button type="submit" disabled={show.pending}>
          Show its limits
        </button>
      </form>
      {account && draft ? (
        <form
          class="card account-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void save.act();
          }}
        >
          <table>
            <caption>Limits of account {account.account_id}</caption>
            <thead>
              <tr>
                <th scope="col">Limit</th>
                <th scope="col">Applies</th>
                <th scope="col">Whose</th>
              </tr>
            </thead>
            <tbody>
              {limits.map(({ name, label }) => (
                <tr key={name}>
                  <td data-label="Limit">{label}</td>
                  <td data-label="Applies">{valueText(account.limits[name].value)}</td>
                  <td data-label="Whose">{whose[account.limits[name].from]}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>Its own values</h3>
          <p>An empty field inherits: its parent's value, else the instance's.</p>
          <ErrorNotice error={formLevelError(save.error, fields) ?? clear.error} />
          {limits.map(({ name, label, hint }) => (
            <TextField
              key={name}
              label={label}
              value={draft[name]}
              onValue={(v) => setDraft({ ...draft, [name]: v })}
              hint={hint}
              error={errorFor(save.error, fields, name)}
            />
          ))}
          <button type="submit" disabled={save.pending}>
            Save the limits
          </button>{' '}
          <button type="button" class="secondary" disabled={clear.pending} onClick={() => void clear.act()}>
            Inherit every limit
          </button>
        </form>
      ) : null}
    </section>
  );
}
