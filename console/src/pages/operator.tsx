// The operator's area, shown to an operator account only (GET /operator/me): the campaigns content rules held
// (approve: they go out; refuse: cancelled and refunded), the sender IDs accounts asked for, the content rules,
// and an account's limits (operator-limits.tsx). Every change is one /operator/* call, as the API and the CLI
// make it.
import './account.css';
import { useState } from 'preact/hooks';
import type {
  ContentRuleView,
  HeldCampaignView,
  SenderIdView,
} from '../../../src/moderation/moderation.schemas.ts';
import { api } from '../api.ts';
import { ConfirmButton, errorFor, formLevelError } from '../components/account-parts.tsx';
import { LoadedTable } from '../components/loaded-table.tsx';
import { ErrorNotice, Field, Notice, PageTitle, TextField, useAction, useLoad } from '../components/ui.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { useSession } from '../session.ts';
import { AccountLimitsSection } from './operator-limits.tsx';

/** Approve, or refuse with a reason typed in place. */
function Decision({
  what,
  onApprove,
  onRefuse,
  pending,
}: {
  what: string;
  onApprove: () => Promise<unknown>;
  onRefuse: (reason: string) => Promise<unknown>;
  pending: boolean;
}) {
  const [refusing, setRefusing] = useState(false);
  const [reason, setReason] = useState('');
  if (!refusing) {
    return (
      <span class="account-confirm">
        <button
          type="button"
          disabled={pending}
          aria-label={`Approve ${what}`}
          onClick={() => void onApprove()}
        >
          Approve
        </button>
        <button
          type="button"
          class="secondary"
          aria-label={`Refuse ${what}`}
          onClick={() => setRefusing(true)}
        >
          Refuse…
        </button>
      </span>
    );
  }
  return (
    <span class="account-confirm">
      <input
        aria-label={`Reason for refusing ${what}`}
        value={reason}
        maxLength={500}
        placeholder="Reason"
        onInput={(e) => setReason((e.target as HTMLInputElement).value)}
      />
      <button
        type="button"
        class="danger"
        disabled={pending}
        onClick={async () => {
          await onRefuse(reason.trim());
          setRefusing(false);
        }}
      >
        Refuse {what}
      </button>
      <button type="button" class="secondary" onClick={() => setRefusing(false)}>
        Cancel
      </button>
    </span>
  );
}

function HeldCampaigns({ onNotice }: { onNotice: (text: string) => void }) {
  const { session } = useSession();
  const held = useLoad(
    () => api<{ campaigns: HeldCampaignView[] }>('GET', '/operator/campaigns').then((a) => a.campaigns),
    [],
  );
  const decide = useAction(async (c: HeldCampaignView, approve: boolean, reason = '') => {
    const answer = await api<{ campaign: { messages: number; refunded: number } }>(
      'PUT',
      `/operator/campaign/${c.id}/${approve ? 'approve' : 'refuse'}`,
      approve ? {} : { body: { reason } },
    );
    onNotice(
      approve
        ? `Campaign ${c.id} approved: ${formatNumber(answer.campaign.messages)} messages go out.`
        : `Campaign ${c.id} refused: ${formatNumber(answer.campaign.refunded)} credits refunded.`,
    );
    await held.reload();
  });
  return (
    <section aria-labelledby="held-title">
      <h2 id="held-title">Moderation queue</h2>
      <ErrorNotice error={decide.error} />
      <LoadedTable
        loaded={held}
        loading="Loading the campaigns held"
        empty="No campaign is waiting for moderation."
        caption="Campaigns held for moderation"
        headings={['Campaign', 'Account', 'Text', 'Held by', 'Messages', 'Due', '']}
        row={(c) => (
          <tr key={c.id}>
            <td data-label="Campaign">{c.id}</td>
            <td data-label="Account">{c.account_id}</td>
            <td data-label="Text">
              {c.sender && <strong class="mono">{c.sender}: </strong>}
              {c.text}
            </td>
            <td data-label="Held by">{c.held_by}</td>
            <td data-label="Messages">{formatNumber(c.sent)}</td>
            <td data-label="Due">{formatDate(c.date, session.timezone)}</td>
            <td class="account-row-actions">
              <Decision
                what={`campaign ${c.id}`}
                pending={decide.pending}
                onApprove={() => decide.act(c, true)}
                onRefuse={(reason) => decide.act(c, false, reason)}
              />
            </td>
          </tr>
        )}
      />
    </section>
  );
}

function SenderRequests({ onNotice }: { onNotice: (text: string) => void }) {
  const senders = useLoad(
    () =>
      api<{ senders: SenderIdView[] }>('GET', '/operator/senders', { query: { state: 'pending' } }).then(
        (a) => a.senders,
      ),
    [],
  );
  const decide = useAction(async (s: SenderIdView, approve: boolean, reason = '') => {
    await api(
      'PUT',
      `/operator/sender/${s.id}/${approve ? 'approve' : 'refuse'}`,
      approve ? {} : { body: { reason } },
    );
    onNotice(`Sender ID “${s.sender}” of account ${s.account_id} ${approve ? 'approved' : 'refused'}.`);
    await senders.reload();
  });
  return (
    <section aria-labelledby="senders-title">
      <h2 id="senders-title">Sender ID requests</h2>
      <ErrorNotice error={decide.error} />
      <LoadedTable
        loaded={senders}
        loading="Loading the sender ID requests"
        empty="No sender ID is waiting for a decision."
        caption="Sender IDs waiting for a decision"
        headings={['Sender ID', 'Account', 'Note', '']}
        row={(s) => (
          <tr key={s.id}>
            <td data-label="Sender ID">
              <strong class="mono">{s.sender}</strong>
            </td>
            <td data-label="Account">{s.account_id}</td>
            <td data-label="Note">{s.note}</td>
            <td class="account-row-actions">
              <Decision
                what={`sender ${s.sender}`}
                pending={decide.pending}
                onApprove={() => decide.act(s, true)}
                onRefuse={(reason) => decide.act(s, false, reason)}
              />
            </td>
          </tr>
        )}
      />
    </section>
  );
}

function ContentRules({ onNotice }: { onNotice: (text: string) => void }) {
  const rules = useLoad(
    () => api<{ rules: ContentRuleView[] }>('GET', '/operator/rules').then((a) => a.rules),
    [],
  );
  const [kind, setKind] = useState('word');
  const [value, setValue] = useState('');
  const [action, setAction] = useState('hold');
  const [account, setAccount] = useState('');
  const add = useAction(async () => {
    const answer = await api<{ rule: ContentRuleView }>('POST', '/operator/rule', {
      body: { rule: { kind, value, action, ...(account.trim() ? { account_id: account.trim() } : {}) } },
    });
    onNotice(
      `Rule ${answer.rule.id} added: ${answer.rule.kind} “${answer.rule.value}” ${answer.rule.action}s.`,
    );
    setValue('');
    await rules.reload();
  });
  const remove = useAction(async (rule: ContentRuleView) => {
    await api('DELETE', `/operator/rule/${rule.id}`);
    onNotice(`Rule ${rule.id} deleted.`);
    await rules.reload();
  });
  const fields = ['value', 'kind', 'action', 'account_id'];
  const select = (label: string, current: string, set: (v: string) => void, options: string[]) => (
    <Field label={label} error={errorFor(add.error, fields, label.toLowerCase())}>
      {(id, describedBy) => (
        <select
          id={id}
          value={current}
          aria-describedby={describedBy}
          onChange={(e) => set((e.target as HTMLSelectElement).value)}
        >
          {options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
  return (
    <section aria-labelledby="rules-title">
      <h2 id="rules-title">Content rules</h2>
      <ErrorNotice error={remove.error} />
      <LoadedTable
        loaded={rules}
        loading="Loading the content rules"
        empty="No content rule: every text goes out."
        caption="Content rules"
        headings={['Rule', 'Kind', 'Value', 'Action', 'Account', '']}
        row={(r) => (
          <tr key={r.id}>
            <td data-label="Rule">{r.id}</td>
            <td data-label="Kind">{r.kind}</td>
            <td data-label="Value">
              <span class="mono">{r.value}</span>
            </td>
            <td data-label="Action">{r.action}</td>
            <td data-label="Account">{r.account_id ?? 'every account'}</td>
            <td class="account-row-actions">
              <ConfirmButton
                label="Delete"
                ariaLabel={`Delete rule ${r.id}`}
                question={<>Delete rule {r.id}?</>}
                confirmLabel="Yes, delete"
                pending={remove.pending}
                onConfirm={() => remove.act(r)}
              />
            </td>
          </tr>
        )}
      />
      <form
        class="card account-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void add.act();
        }}
      >
        <h3>New content rule</h3>
        <ErrorNotice error={formLevelError(add.error, fields)} />
        {select('Kind', kind, setKind, ['word', 'domain', 'pattern'])}
        <TextField
          label="Value"
          value={value}
          onValue={setValue}
          maxLength={200}
          hint="A word or words (without case or accents), a domain (its subdomains too), or a regular expression (no nested quantifiers)."
          error={errorFor(add.error, fields, 'value')}
        />
        {select('Action', action, setAction, ['hold', 'refuse'])}
        <TextField
          label="Account (optional)"
          inputMode="numeric"
          value={account}
          onValue={setAccount}
          hint="The account (and its sub-accounts) the rule applies to. Empty: every account."
          error={errorFor(add.error, fields, 'account_id')}
        />
        <button type="submit" disabled={add.pending}>
          {add.pending ? 'Adding…' : 'Add rule'}
        </button>
      </form>
    </section>
  );
}

export function OperatorPage() {
  const [notice, setNotice] = useState('');
  return (
    <section>
      <PageTitle>Operator</PageTitle>
      <p class="account-intro">
        What this server's operator decides for every account: campaigns a content rule held, sender IDs asked
        for, the content rules themselves, and an account's limits.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <HeldCampaigns onNotice={setNotice} />
      <SenderRequests onNotice={setNotice} />
      <ContentRules onNotice={setNotice} />
      <AccountLimitsSection onNotice={setNotice} />
    </section>
  );
}
