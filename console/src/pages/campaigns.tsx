// The campaigns: GET /campaigns with its filters and paging, kept in the page's address so that a reload, the
// back button or a shared link shows the same list.
import './campaigns.css';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { type Campaign, CampaignStatus, truncate } from '../components/campaign-parts.tsx';
import { filterAddress, filterErrors } from '../components/filter-address.ts';
import { ErrorNotice, Field, Loading, Pager, PageTitle, TextField, useLoad } from '../components/ui.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { linkTo, navigate, useLocation } from '../router.ts';
import { useMay, useSession } from '../session.ts';

const pageLength = 25;

const sorts: { value: string; label: string }[] = [
  { value: '-date', label: 'Newest first' },
  { value: 'date', label: 'Oldest first' },
  { value: '-id', label: 'Highest id first' },
  { value: 'id', label: 'Lowest id first' },
  { value: '-cost', label: 'Highest cost first' },
  { value: 'cost', label: 'Lowest cost first' },
  { value: 'text', label: 'Text, A to Z' },
  { value: 'status', label: 'Status' },
];

/** The filters as the address holds them: dates as `Y-m-d` (the date inputs' form). */
interface Filters {
  text: string;
  destination: string;
  from: string;
  to: string;
  sort: string;
}

const readFilters = (q: URLSearchParams): Filters => ({
  text: q.get('text') ?? '',
  destination: q.get('destination') ?? '',
  from: q.get('from') ?? '',
  to: q.get('to') ?? '',
  sort: q.get('sort') ?? '-date',
});

const addressOf = (filters: Filters, start: number) =>
  filterAddress('/campaigns', { ...filters }, start, { sort: '-date' });

/** The API's fields a -7 error may name, and the form's field each belongs to. */
const formField: Record<string, keyof Filters> = {
  text: 'text',
  destination: 'destination',
  date_start: 'from',
  date_end: 'to',
  sort: 'sort',
};

export function CampaignsPage() {
  const { session } = useSession();
  const may = useMay();
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
      api<{ campaigns: Campaign[]; totalRecords: number; totalDisplayRecords: number }>('GET', '/campaigns', {
        query: {
          start,
          length: pageLength,
          text: applied.text,
          destination: applied.destination,
          date_start: applied.from && `${applied.from} 00:00:00`,
          date_end: applied.to && `${applied.to} 23:59:59`,
          sort: applied.sort,
        },
      }),
    [key],
  );
  const { wrong, errorOf } = filterErrors(list.error, formField);
  const set = (field: keyof Filters) => (value: string) => setDraft({ ...draft, [field]: value });
  const filtered = Object.entries(applied).some(([k, v]) => v && !(k === 'sort' && v === '-date'));

  return (
    <section>
      <PageTitle
        actions={
          may('POST /send') && (
            <a class="link-button" {...linkTo('/send')}>
              Send a campaign
            </a>
          )
        }
      >
        Campaigns
      </PageTitle>
      <form
        class="card filters"
        aria-label="Filter campaigns"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(addressOf(draft, 0));
        }}
      >
        <div class="filters-fields">
          <TextField label="Text contains" value={draft.text} onValue={set('text')} error={errorOf('text')} />
          <TextField
            label="Sent to number"
            value={draft.destination}
            onValue={set('destination')}
            inputMode="tel"
            placeholder="33612345678"
            error={errorOf('destination')}
          />
          <TextField
            label="From date"
            type="date"
            value={draft.from}
            onValue={set('from')}
            error={errorOf('from')}
          />
          <TextField label="To date" type="date" value={draft.to} onValue={set('to')} error={errorOf('to')} />
          <Field label="Sort by" error={errorOf('sort')}>
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={draft.sort}
                onChange={(e) => setDraft({ ...draft, sort: (e.target as HTMLSelectElement).value })}
              >
                {sorts.map((s) => (
                  <option key={s.value} value={s.value}>
                    {s.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div class="actions">
          <button type="submit">Filter</button>
          {filtered && (
            <button type="button" class="secondary" onClick={() => navigate('/campaigns')}>
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
            {filtered
              ? `${formatNumber(list.data.totalDisplayRecords)} of ${formatNumber(list.data.totalRecords)} campaigns match`
              : `${formatNumber(list.data.totalRecords)} ${list.data.totalRecords === 1 ? 'campaign' : 'campaigns'}`}
            {list.loading && ' · updating…'}
          </p>
          {list.data.campaigns.length === 0 ? (
            <p class="empty">
              {filtered ? 'No campaign matches these filters.' : 'No campaign yet.'}{' '}
              {may('POST /send') && <a {...linkTo('/send')}>Send a campaign</a>}
            </p>
          ) : (
            <div class="table-wrap">
              <table class="campaigns-table stacked-table">
                <thead>
                  <tr>
                    <th>Id</th>
                    <th>Date</th>
                    <th>Text</th>
                    <th>Status</th>
                    <th class="num">Messages</th>
                    <th class="num">Delivered</th>
                    <th class="num">Delivery rate</th>
                    <th class="num">Cost</th>
                    <th class="num">Clicks</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.campaigns.map((c) => (
                    <tr key={c.id}>
                      <td data-label="Id">
                        <a {...linkTo(`/campaigns/${c.id}`)}>{c.id}</a>
                      </td>
                      <td data-label="Date" class="nowrap">
                        {formatDate(c.date, tz)}
                      </td>
                      <td data-label="Text" class="campaign-text" title={c.text}>
                        {truncate(c.text)}
                      </td>
                      <td data-label="Status">
                        <CampaignStatus status={c.state} />
                      </td>
                      <td data-label="Messages" class="num">
                        {formatNumber(c.total)}
                      </td>
                      <td data-label="Delivered" class="num">
                        {formatNumber(c.delivered)}
                      </td>
                      <td data-label="Delivery rate" class="num">
                        {c.total === 0 ? '—' : `${c.delivery_rate} %`}
                      </td>
                      <td data-label="Cost" class="num">
                        {formatNumber(c.cost)}
                      </td>
                      <td data-label="Clicks" class="num">
                        {formatNumber(c.clicks)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            start={start}
            length={pageLength}
            total={list.data.totalDisplayRecords}
            onStart={(next) => navigate(addressOf(applied, next))}
          />
        </>
      )}
    </section>
  );
}
