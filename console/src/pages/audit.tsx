// The audit log: GET /audit with its filters (action, actor, period) and paging, kept in the page's address so
// that a reload, the back button or a shared link shows the same entries. A parent sees its sub-accounts'
// entries too, each naming its account.
import './account.css';
import './campaigns.css';
import { useEffect, useState } from 'preact/hooks';
import type { AuditEntryView } from '../../../src/audit/audit.schemas.ts';
import { api } from '../api.ts';
import { filterAddress, filterErrors } from '../components/filter-address.ts';
import { ErrorNotice, Field, Loading, Pager, PageTitle, TextField, useLoad } from '../components/ui.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { navigate, useLocation } from '../router.ts';
import { useSession } from '../session.ts';

const pageLength = 50;

const actorKinds: { value: string; label: string }[] = [
  { value: '', label: 'Anyone' },
  { value: 'user', label: 'A person (console, e-mail and password)' },
  { value: 'token', label: 'An API token' },
  { value: 'smpp', label: 'An SMPP user' },
  { value: 'cli', label: 'The operator (CLI)' },
  { value: 'pigeon', label: 'Pigeon itself' },
];

/** The filters as the address holds them: days as `Y-m-d` (the date inputs' form, and GET /audit's). */
interface Filters {
  action: string;
  actor: string;
  from: string;
  to: string;
}

const readFilters = (q: URLSearchParams): Filters => ({
  action: q.get('action') ?? '',
  actor: q.get('actor') ?? '',
  from: q.get('from') ?? '',
  to: q.get('to') ?? '',
});

const addressOf = (filters: Filters, start: number) => filterAddress('/audit', { ...filters }, start);

/** The API's fields a -7 error may name, and the form's field each belongs to. */
const formField: Record<string, keyof Filters> = {
  action: 'action',
  actor: 'actor',
  date_start: 'from',
  date_end: 'to',
};

/** Who acted, in words: the token's name, the e-mail that signed in, the operator, Pigeon. */
function actorText(actor: AuditEntryView['actor']): string {
  const label = actor.label ?? (actor.id ? `#${actor.id}` : '');
  switch (actor.kind) {
    case 'token':
      return `Token ${label}`.trim();
    case 'smpp':
      return `SMPP ${label}`.trim();
    case 'cli':
      return 'Operator (CLI)';
    case 'pigeon':
      return 'Pigeon';
    default:
      return label || 'A person';
  }
}

export function AuditPage() {
  const { session } = useSession();
  const tz = session.timezone;
  const { query } = useLocation();
  const applied = readFilters(query);
  const start = Math.max(0, Number(query.get('start')) || 0);
  const key = addressOf(applied, start);
  // The form edits a draft; the list follows the address, which a submit changes.
  const [draft, setDraft] = useState<Filters>(applied);
  useEffect(() => setDraft(readFilters(query)), [key]);

  const list = useLoad(
    () =>
      api<{ entries: AuditEntryView[]; totalRecords: number }>('GET', '/audit', {
        query: {
          start,
          length: pageLength,
          action: applied.action,
          actor: applied.actor,
          date_start: applied.from,
          date_end: applied.to,
        },
      }),
    [key],
  );
  const { wrong, errorOf } = filterErrors(list.error, formField);
  const set = (field: keyof Filters) => (value: string) => setDraft({ ...draft, [field]: value });
  const filtered = Object.values(applied).some(Boolean);
  const showAccount = list.data?.entries.some((e) => Number(e.account_id) !== session.account_id) ?? false;

  return (
    <section>
      <PageTitle>Audit log</PageTitle>
      <p class="account-intro">
        Every change made to this account (and its sub-accounts) and every console sign-in, failed ones too:
        who, what, from which address and when. Entries are kept as long as your campaigns are (retention).
      </p>
      <form
        class="card filters"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(addressOf(draft, 0));
        }}
      >
        <div class="filters-fields">
          <TextField
            label="Action"
            value={draft.action}
            onValue={set('action')}
            placeholder="campaign.send"
            error={errorOf('action')}
          />
          <Field label="Actor" error={errorOf('actor')}>
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={draft.actor}
                onChange={(e) => setDraft({ ...draft, actor: (e.target as HTMLSelectElement).value })}
              >
                {actorKinds.map((k) => (
                  <option key={k.value} value={k.value}>
                    {k.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <TextField
            label="From date"
            type="date"
            value={draft.from}
            onValue={set('from')}
            error={errorOf('from')}
          />
          <TextField label="To date" type="date" value={draft.to} onValue={set('to')} error={errorOf('to')} />
        </div>
        <div class="actions">
          <button type="submit">Filter</button>
          {filtered && (
            <button type="button" class="secondary" onClick={() => navigate('/audit')}>
              Clear filters
            </button>
          )}
        </div>
      </form>

      {list.error && !wrong ? <ErrorNotice error={list.error} /> : null}
      {!list.data && !list.error && <Loading />}
      {list.data && (
        <>
          <p class="counter" aria-live="polite">
            {`${formatNumber(list.data.totalRecords)} ${list.data.totalRecords === 1 ? 'entry' : 'entries'}`}
            {list.loading && ' · updating…'}
          </p>
          {list.data.entries.length === 0 ? (
            <p class="empty">{filtered ? 'No entry matches these filters.' : 'No entry yet.'}</p>
          ) : (
            <div class="table-wrap">
              <table class="campaigns-table stacked-table audit-table">
                <thead>
                  <tr>
                    <th>Date</th>
                    {showAccount && <th>Account</th>}
                    <th>Who</th>
                    <th>Action</th>
                    <th>Object</th>
                    <th>Address</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.entries.map((e) => (
                    <tr key={e.id}>
                      <td data-label="Date" class="nowrap">
                        {formatDate(e.date, tz)}
                      </td>
                      {showAccount && <td data-label="Account">{e.account_id}</td>}
                      <td data-label="Who">{actorText(e.actor)}</td>
                      <td data-label="Action">
                        <code>{e.action}</code>
                      </td>
                      <td data-label="Object">
                        {e.object.type ? `${e.object.type}${e.object.id ? ` ${e.object.id}` : ''}` : '—'}
                      </td>
                      <td data-label="Address">{e.ip ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            start={start}
            length={pageLength}
            total={list.data.totalRecords}
            onStart={(next) => navigate(addressOf(applied, next))}
          />
        </>
      )}
    </section>
  );
}
