// Sub-accounts: the account's sub-accounts (GET /sub-accounts) with their balance and state, a new one (POST
// /account, isChild 1), moving credits to or from one (POST /account/transfer), locking and unlocking one
// (GET /account/:id/lock and /unlock) after a confirmation, and opening its console view. Sub-accounts have
// one level: a sub-account's own view explains that instead.
import './account.css';
import { useState } from 'preact/hooks';
import { ApiFailure, api, errorText } from '../api.ts';
import { CheckField, ConfirmButton, errorFor, formLevelError } from '../components/account-parts.tsx';
import {
  ErrorNotice,
  Field,
  Loading,
  Notice,
  PageTitle,
  TextField,
  useAction,
  useLoad,
} from '../components/ui.tsx';
import { formatNumber } from '../format.ts';
import { type Account, actingAsSubAccount, useMay, useSession } from '../session.ts';

const accountFields = ['email', 'password', 'firstname', 'lastname', 'company'];
const transferFields = ['to_account', 'credits'];

const nameOf = (a: Account) => [a.firstname, a.lastname].filter(Boolean).join(' ');

const emptyAccount = { email: '', password: '', firstname: '', lastname: '', company: '', unlimited: false };

export function SubAccountsPage() {
  const state = useSession();
  const { session } = state;
  if (session.parent_id !== null) {
    return (
      <section>
        <PageTitle>Sub-accounts</PageTitle>
        <Notice kind="info">
          {actingAsSubAccount(session)
            ? 'You are looking at a sub-account. Sub-accounts cannot have sub-accounts of their own: go back to your account to manage them.'
            : 'This is a sub-account: sub-accounts cannot have sub-accounts of their own. The account that created it manages its credits, tokens and lock.'}
        </Notice>
      </section>
    );
  }
  return <SubAccountsOfParent />;
}

function SubAccountsOfParent() {
  const state = useSession();
  const may = useMay();
  const subs = useLoad(
    () => api<{ 'sub-accounts': Account[] }>('GET', '/sub-accounts').then((a) => a['sub-accounts']),
    [],
  );
  const [notice, setNotice] = useState('');
  const [draft, setDraft] = useState(emptyAccount);
  const [missing, setMissing] = useState<{ email?: string; password?: string }>({});
  const [chosen, setTo] = useState('');
  const [amount, setAmount] = useState('');
  const [amountMissing, setAmountMissing] = useState<string | undefined>();
  const [balances, setBalances] = useState<{ mine: number; theirs: number; who: string } | null>(null);
  const [switchError, setSwitchError] = useState('');

  const create = useAction(async () => {
    const answer = await api<{ id: string }>('POST', '/account', {
      body: {
        account: {
          email: draft.email.trim(),
          password: draft.password,
          firstname: draft.firstname.trim(),
          lastname: draft.lastname.trim(),
          company: draft.company.trim(),
          isChild: 1,
          unlimited: draft.unlimited ? 1 : 0,
        },
      },
    });
    setNotice(
      `Sub-account ${draft.email.trim()} created (id ${answer.id}). It has no credits yet: transfer some below.`,
    );
    setDraft(emptyAccount);
    setTo(answer.id);
    await subs.reload();
  });
  // The sub-account chosen, else the first that has its own balance.
  const to = chosen || (subs.data?.find((s) => s.unlimited !== 1)?.client_id ?? '');
  const transfer = useAction(async () => {
    const answer = await api<{ credits: number; child_credits: number }>('POST', '/account/transfer', {
      body: { transfer: { to_account: to, credits: amount.trim() } },
    });
    const who = subs.data?.find((s) => s.client_id === to)?.email ?? `account ${to}`;
    setBalances({ mine: Number(answer.credits), theirs: Number(answer.child_credits), who });
    setAmount('');
    await Promise.all([subs.reload(), state.refresh()]);
  });
  const lock = useAction(async (sub: Account, locked: boolean) => {
    const answer = await api<{ state: string }>(
      'GET',
      `/account/${sub.client_id}/${locked ? 'lock' : 'unlock'}`,
    );
    setNotice(
      answer.state === 'locked'
        ? `${sub.email} is locked: its tokens and console are refused and its queued messages wait.`
        : `${sub.email} is unlocked: it can use Pigeon again.`,
    );
    await subs.reload();
  });

  // Not enough credits (-3) is about the amount too.
  const amountError =
    amountMissing ??
    (transfer.error instanceof ApiFailure && transfer.error.status === -3
      ? transfer.error.details || transfer.error.message
      : errorFor(transfer.error, transferFields, 'credits'));
  const transferFormError =
    transfer.error instanceof ApiFailure && transfer.error.status === -3
      ? undefined
      : formLevelError(transfer.error, transferFields);

  return (
    <section>
      <PageTitle>Sub-accounts</PageTitle>
      <p class="account-intro">
        A sub-account has its own sign-in, tokens, lists and campaigns. You give it credits, can take them
        back, lock it, and open its console to see what it sees.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      {switchError && <Notice kind="error">{switchError}</Notice>}
      <ErrorNotice error={lock.error} />

      {subs.error ? (
        <ErrorNotice error={subs.error} />
      ) : !subs.data ? (
        <Loading what="Loading your sub-accounts" />
      ) : subs.data.length === 0 ? (
        <p class="empty">No sub-accounts yet{may('POST /account') ? ': create one below' : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="account-table">
            <caption class="account-hidden">Your sub-accounts</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Name</th>
                <th scope="col" class="num">
                  Credits
                </th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="account-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {subs.data.map((s) => {
                const locked = s.state === 'locked';
                return (
                  <tr key={s.client_id}>
                    <td data-label="E-mail" class="account-url">
                      {s.email}
                    </td>
                    <td data-label="Name">
                      {nameOf(s) || '—'}
                      {s.company && <span class="hint"> · {s.company}</span>}
                    </td>
                    <td data-label="Credits" class="num">
                      {s.unlimited ? (
                        <span title="It spends your credits">unlimited</span>
                      ) : (
                        formatNumber(s.credits)
                      )}
                    </td>
                    <td data-label="State">
                      <span class={`state ${locked ? 'state-paused' : 'state-live'}`}>
                        {locked ? 'locked' : 'active'}
                      </span>
                    </td>
                    <td class="account-row-actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Open this account's console: ${s.email}`}
                        onClick={async () => {
                          setSwitchError('');
                          try {
                            await state.switchTo(Number(s.client_id));
                          } catch (e) {
                            setSwitchError(errorText(e));
                          }
                        }}
                      >
                        Open this account's console
                      </button>
                      {may(locked ? 'GET /account/:id/unlock' : 'GET /account/:id/lock') && (
                        <ConfirmButton
                          label={locked ? 'Unlock' : 'Lock'}
                          ariaLabel={`${locked ? 'Unlock' : 'Lock'} ${s.email}`}
                          danger={!locked}
                          question={
                            locked
                              ? `Unlock ${s.email}? Its tokens work again and its waiting messages go out.`
                              : `Lock ${s.email}? Its tokens and sign-in are refused and its queued messages wait.`
                          }
                          confirmLabel={locked ? 'Yes, unlock' : 'Yes, lock'}
                          pending={lock.pending}
                          onConfirm={() => lock.act(s, !locked)}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      <div class="two-columns">
        {subs.data && subs.data.length > 0 && may('POST /account/transfer') && (
          <form
            class="card account-form"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              setBalances(null);
              const missingAmount = /^-?\d+$/.test(amount.trim())
                ? undefined
                : 'Enter a whole number of credits; a negative number takes credits back.';
              setAmountMissing(missingAmount);
              if (!missingAmount) void transfer.act();
            }}
          >
            <h2>Transfer credits</h2>
            <ErrorNotice error={transferFormError} />
            <Field label="Sub-account" error={errorFor(transfer.error, transferFields, 'to_account')}>
              {(id, describedBy) => (
                <select
                  id={id}
                  value={to}
                  aria-describedby={describedBy}
                  onChange={(e) => setTo((e.target as HTMLSelectElement).value)}
                >
                  <option value="" disabled>
                    Choose a sub-account
                  </option>
                  {subs.data!.map((s) => (
                    <option key={s.client_id} value={s.client_id} disabled={s.unlimited === 1}>
                      {s.email}
                      {s.unlimited ? ' (unlimited)' : ` (${formatNumber(s.credits)} credits)`}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <TextField
              label="Credits"
              inputMode="numeric"
              value={amount}
              onValue={setAmount}
              error={amountError}
              hint={`You have ${formatNumber(state.session.account.credits)} credits. A negative number takes credits back.`}
            />
            <button type="submit" disabled={transfer.pending || to === ''}>
              {transfer.pending ? 'Transferring…' : 'Transfer'}
            </button>
            {balances && (
              <div class="account-balances" role="status">
                <p>Done. Balances now:</p>
                <dl>
                  <div class="account-balance-row">
                    <dt>Your account</dt>
                    <dd data-testid="my-balance">{formatNumber(balances.mine)} credits</dd>
                  </div>
                  <div class="account-balance-row">
                    <dt>{balances.who}</dt>
                    <dd data-testid="sub-balance">{formatNumber(balances.theirs)} credits</dd>
                  </div>
                </dl>
              </div>
            )}
          </form>
        )}

        {may('POST /account') && (
          <form
            class="card account-form"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              setNotice('');
              const check = {
                email: draft.email.trim() === '' ? 'Enter the e-mail address it signs in with.' : undefined,
                password: draft.password === '' ? 'Choose its password.' : undefined,
              };
              setMissing(check);
              if (!check.email && !check.password) void create.act();
            }}
          >
            <h2>New sub-account</h2>
            <ErrorNotice error={formLevelError(create.error, accountFields)} />
            <TextField
              label="E-mail"
              type="email"
              autoComplete="off"
              value={draft.email}
              onValue={(email) => setDraft({ ...draft, email })}
              error={missing.email ?? errorFor(create.error, accountFields, 'email')}
            />
            <TextField
              label="Password"
              type="password"
              autoComplete="new-password"
              value={draft.password}
              onValue={(password) => setDraft({ ...draft, password })}
              error={missing.password ?? errorFor(create.error, accountFields, 'password')}
              hint="It signs in to the console with this e-mail and password."
            />
            <div class="account-names">
              <TextField
                label="First name"
                value={draft.firstname}
                onValue={(firstname) => setDraft({ ...draft, firstname })}
                error={errorFor(create.error, accountFields, 'firstname')}
              />
              <TextField
                label="Last name"
                value={draft.lastname}
                onValue={(lastname) => setDraft({ ...draft, lastname })}
                error={errorFor(create.error, accountFields, 'lastname')}
              />
            </div>
            <TextField
              label="Company"
              value={draft.company}
              onValue={(company) => setDraft({ ...draft, company })}
              error={errorFor(create.error, accountFields, 'company')}
            />
            <CheckField
              label="Unlimited: it spends your credits"
              checked={draft.unlimited}
              onChange={(unlimited) => setDraft({ ...draft, unlimited })}
              hint="Otherwise it has its own balance, which you fill by transfers."
            />
            <button type="submit" disabled={create.pending}>
              {create.pending ? 'Creating…' : 'Create sub-account'}
            </button>
          </form>
        )}
      </div>
    </section>
  );
}
