// One campaign: its counters, refreshed every 2 seconds while it still changes by itself, the delivery funnel,
// the clicks over time, its messages with their states, the replies and STOPs it drew, and cancelling it while
// no message has been taken for sending.
import './campaign.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type {
  CampaignMessageView,
  CampaignReplyView,
  ClicksBucketView,
  NumberOfCampaignView,
} from '../../../src/reads/reads.schemas.ts';
import { ApiFailure, api } from '../api.ts';
import {
  type Campaign,
  CampaignProgress,
  CampaignStatus,
  dlrStates,
  failedOf,
  isFinished,
  MessageState,
} from '../components/campaign-parts.tsx';
import { type ChartSeries, TimeChart } from '../components/chart.tsx';
import {
  ErrorNotice,
  Field,
  Loading,
  Notice,
  Pager,
  PageTitle,
  Stat,
  useAction,
  useLoad,
} from '../components/ui.tsx';
import { formatDate, formatNumber, formatPercent, wallTimeMs } from '../format.ts';
import { linkTo } from '../router.ts';
import { useMay, useSession } from '../session.ts';

const pollMs = 2_000;
const pageLength = 20;
/** Campaigns older than this plot their clicks per day; younger ones per hour. */
const hourlyClicksMs = 3 * 24 * 3_600_000;

/**
 * The campaign, read again every `pollMs` while it is not finished; no timer is left once it is, or once the
 * page is gone. `refresh` reads it again now (and restarts the polling if it changed again).
 */
function useCampaign(ticket: string) {
  const [campaign, setCampaign] = useState<Campaign | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const answer = await api<{ campaign: Campaign[] }>('GET', `/campaign/${encodeURIComponent(ticket)}`);
        if (stopped) return;
        const next = answer.campaign[0];
        setCampaign(next);
        setError(undefined);
        if (!isFinished(next)) timer = setTimeout(load, pollMs);
      } catch (e) {
        if (stopped) return;
        setError(e);
        // A lost connection is retried; an unknown campaign or an ended session will not change by waiting.
        const final = e instanceof ApiFailure && (e.status === -5 || e.status === -1 || e.status === -7);
        if (!final) timer = setTimeout(load, pollMs);
      }
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [ticket, round]);
  return { campaign, error, refresh: () => setRound((r) => r + 1), round };
}

export function CampaignPage({ ticket }: { ticket: string }) {
  const { session } = useSession();
  const may = useMay();
  const tz = session.timezone;
  const { campaign, error, refresh, round } = useCampaign(ticket);
  const [cancelled, setCancelled] = useState<{ refund: number; credits: number } | null>(null);

  if (!campaign) {
    return (
      <section>
        <PageTitle>Campaign {ticket}</PageTitle>
        {error ? <ErrorNotice error={error} /> : <Loading what="Loading the campaign" />}
        <p>
          <a {...linkTo('/campaigns')}>All campaigns</a>
        </p>
      </section>
    );
  }

  // What the tables and the chart show changes only when a counter does: they read again then, not on every poll.
  const version = [
    round,
    campaign.state,
    campaign.pending,
    campaign.delivered,
    failedOf(campaign),
    campaign.expired,
    campaign.clicks,
    campaign.stop,
  ].join(':');
  const live = !isFinished(campaign);

  return (
    <section>
      <PageTitle
        actions={
          <button type="button" class="secondary" onClick={refresh}>
            Refresh
          </button>
        }
      >
        Campaign {campaign.id} <CampaignStatus status={campaign.state} />
      </PageTitle>
      <ErrorNotice error={error} />
      {cancelled && (
        <Notice kind="success">
          Campaign cancelled: {formatNumber(cancelled.refund)} credits refunded. Your balance is now{' '}
          {formatNumber(cancelled.credits)} credits.
        </Notice>
      )}

      <div class="card campaign-summary">
        <dl class="campaign-facts">
          <div>
            <dt>Due</dt>
            <dd>{formatDate(campaign.date, tz, true)}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatDate(campaign.creation_date, tz)}</dd>
          </div>
          <div>
            <dt>Sender</dt>
            <dd>{campaign.sender || 'default'}</dd>
          </div>
          {campaign.lists.length > 0 && (
            <div>
              <dt>Lists</dt>
              <dd>
                {campaign.lists.map((l, i) => (
                  <span key={l.id}>
                    {i > 0 && ', '}
                    <a {...linkTo(`/lists/${l.id}`)}>list {l.id}</a>
                  </span>
                ))}
              </dd>
            </div>
          )}
        </dl>
        <p class="campaign-message">{campaign.text}</p>
        {campaign.state !== 'cancelled' && (
          <div aria-live="polite">
            <CampaignProgress campaign={campaign} label="Delivery progress" />
            {live && (
              <p class="hint">
                {campaign.state === 'scheduled'
                  ? 'Waiting for its due time. This page follows it as it goes out.'
                  : 'Sending: this page updates every 2 seconds.'}
              </p>
            )}
          </div>
        )}
        {campaign.state === 'scheduled' && may('DELETE /send/:ticket') && (
          <CancelCampaign
            campaign={campaign}
            onCancelled={(credits) => {
              setCancelled({ refund: campaign.cost, credits });
              refresh();
            }}
          />
        )}
      </div>

      <div class="grid campaign-stats">
        <Stat label="Messages" value={formatNumber(campaign.total)} />
        <Stat label="Delivered" value={formatNumber(campaign.delivered)} tone="ok" />
        <Stat
          label="Failed"
          value={formatNumber(failedOf(campaign))}
          tone={failedOf(campaign) ? 'bad' : undefined}
        />
        <Stat
          label="Expired"
          value={formatNumber(campaign.expired)}
          tone={campaign.expired ? 'warn' : undefined}
        />
        <Stat label="Pending" value={formatNumber(campaign.pending)} />
        <Stat label="Delivery rate" value={campaign.total === 0 ? '—' : `${campaign.delivery_rate} %`} />
        <Stat label="Clicks" value={formatNumber(campaign.clicks)} />
        <Stat label="STOPs" value={formatNumber(campaign.stop)} />
        <Stat label="Cost (credits)" value={formatNumber(campaign.cost)} />
      </div>

      <div class="two-columns">
        <div class="card">
          <h2 class="card-title">Delivery funnel</h2>
          <Funnel campaign={campaign} />
        </div>
        <div class="card">
          <h2 class="card-title">Clicks over time</h2>
          <ClicksChart campaign={campaign} version={version} />
        </div>
      </div>

      <Messages ticket={campaign.id} version={version} />
      <div class="two-columns">
        <Replies ticket={campaign.id} version={version} />
        <Stops ticket={campaign.id} version={version} />
      </div>
      <p>
        <a {...linkTo('/campaigns')}>All campaigns</a>
      </p>
    </section>
  );
}

function CancelCampaign({
  campaign,
  onCancelled,
}: {
  campaign: Campaign;
  onCancelled: (credits: number) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const cancel = useAction(async () => {
    const answer = await api<{ credits: number | string }>(
      'DELETE',
      `/send/${encodeURIComponent(campaign.id)}`,
    );
    return Number(answer.credits);
  });
  const { refresh } = useSession();
  if (!confirming) {
    return (
      <div class="actions cancel-step">
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Cancel campaign
        </button>
      </div>
    );
  }
  return (
    <div class="cancel-confirm">
      <p id="cancel-question">
        Cancel campaign {campaign.id}? None of its {formatNumber(campaign.total)} messages will be sent, and
        its cost, {formatNumber(campaign.cost)} credits, goes back to your balance.
      </p>
      <ErrorNotice error={cancel.error} />
      <div class="actions">
        <button
          type="button"
          class="danger"
          disabled={cancel.pending}
          onClick={async () => {
            const credits = await cancel.act();
            if (credits === undefined) return;
            onCancelled(credits);
            await refresh();
          }}
        >
          {cancel.pending ? 'Cancelling…' : 'Yes, cancel it'}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={cancel.pending}
          onClick={() => setConfirming(false)}
        >
          Keep it
        </button>
      </div>
    </div>
  );
}

function Funnel({ campaign }: { campaign: Campaign }) {
  const rows: { label: string; value: number; tone: string }[] = [
    { label: 'Sent', value: campaign.total, tone: 'sent' },
    { label: 'Delivered', value: campaign.delivered, tone: 'delivered' },
    { label: 'Failed', value: failedOf(campaign), tone: 'failed' },
    { label: 'Expired', value: campaign.expired, tone: 'expired' },
  ];
  const top = Math.max(1, campaign.total);
  return (
    <ul class="funnel campaign-funnel" aria-label="Delivery funnel">
      {rows.map((r) => (
        <li key={r.label} class="funnel-row">
          <span>{r.label}</span>
          <span class="funnel-track">
            <span class={`funnel-bar funnel-${r.tone}`} style={{ width: `${(r.value / top) * 100}%` }} />
          </span>
          <span class="num" data-testid={`funnel-${r.tone}`}>
            {formatNumber(r.value)}
            {r.label !== 'Sent' && campaign.total > 0 && (
              <span class="counter"> · {formatPercent(r.value / campaign.total)}</span>
            )}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** The most buckets the clicks chart draws: the latest ones, when a campaign's clicks span more. */
const maxBuckets = 400;
/** The fewest buckets the clicks chart draws. */
const minBuckets = 12;

/** A bucket's key: `Y-m-d H` per hour, `Y-m-d` per day, on the wall clock of the account's zone. */
const bucketKey = (wall: string, bucket: 'hour' | 'day') => wall.slice(0, bucket === 'hour' ? 13 : 10);

/** Every bucket from the one holding `fromWall` to the one holding the instant `toMs`, oldest first. */
function bucketKeys(fromWall: string, toMs: number, bucket: 'hour' | 'day', tz: string): string[] {
  const keys: string[] = [];
  if (bucket === 'hour') {
    // Stepping instants, not wall hours, so a daylight-saving change gives its hours once each.
    for (let ms = wallTimeMs(`${bucketKey(fromWall, 'hour')}:00:00`, tz); ms <= toMs; ms += 3_600_000) {
      const key = bucketKey(formatDate(ms, tz), 'hour');
      if (keys[keys.length - 1] !== key) keys.push(key);
    }
    return keys;
  }
  const last = bucketKey(formatDate(toMs, tz), 'day');
  const [y, m, d] = fromWall.slice(0, 10).split('-').map(Number);
  for (let day = Date.UTC(y, m - 1, d); ; day += 86_400_000) {
    const key = new Date(day).toISOString().slice(0, 10);
    if (key > last) break;
    keys.push(key);
  }
  return keys;
}

type ClickBucket = ClicksBucketView;

function ClicksChart({ campaign, version }: { campaign: Campaign; version: string }) {
  const { session } = useSession();
  const tz = session.timezone;
  const bucket = Date.now() - wallTimeMs(campaign.date, tz) > hourlyClicksMs ? 'day' : 'hour';
  const clicks = useLoad(
    () =>
      api<{ clicks: ClickBucket[] }>('GET', `/campaign/${encodeURIComponent(campaign.id)}/clicks`, {
        query: { bucket },
      }),
    [campaign.id, bucket, version],
  );
  const chart = useMemo(() => {
    const list = clicks.data?.clicks ?? [];
    if (list.length === 0) return { x: [], series: [] };
    // The API answers only the buckets that had clicks: the quiet ones between are zeros on the chart.
    const byKey = new Map(list.map((b) => [bucketKey(b.date, bucket), b]));
    const from = [campaign.date, list[0].date].sort()[0];
    // At least `minBuckets` from the first, so one busy hour is drawn as an hour, not as the whole axis.
    const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
    const keys = bucketKeys(
      from,
      Math.max(
        Date.now(),
        wallTimeMs(list[list.length - 1].date, tz),
        wallTimeMs(from, tz) + (minBuckets - 1) * step,
      ),
      bucket,
      tz,
    );
    const firstClick = bucketKey(list[0].date, bucket);
    const shown = keys.length > maxBuckets ? keys.filter((k) => k >= firstClick).slice(-maxBuckets) : keys;
    const series: ChartSeries[] = [
      { label: 'Clicks', values: shown.map((k) => byKey.get(k)?.clicks ?? 0), color: '#2456c7', bars: true },
      { label: 'Unique visitors', values: shown.map((k) => byKey.get(k)?.unique ?? 0), color: '#a15c00' },
    ];
    const x = shown.map((k) => wallTimeMs(bucket === 'hour' ? `${k}:00:00` : `${k} 00:00:00`, tz));
    return { x, series };
  }, [clicks.data, tz, bucket, campaign.date]);
  if (clicks.error) return <ErrorNotice error={clicks.error} />;
  if (!clicks.data) return <Loading />;
  return (
    <>
      <TimeChart
        x={chart.x}
        series={chart.series}
        title={`Clicks per ${bucket} on the campaign's short links`}
        timeZone={tz}
      />
      <p class="hint">
        {formatNumber(campaign.clicks)} {campaign.clicks === 1 ? 'click' : 'clicks'} in all, per {bucket}.
        Link previews and prefetches are not counted.
      </p>
    </>
  );
}

type MessageRow = CampaignMessageView;

function Messages({ ticket, version }: { ticket: string; version: string }) {
  const { session } = useSession();
  const tz = session.timezone;
  const [start, setStart] = useState(0);
  const [status, setStatus] = useState('');
  const messages = useLoad(
    () =>
      api<{ messages: MessageRow[]; totalRecords: number; totalDisplayRecords: number }>(
        'GET',
        `/campaign/${encodeURIComponent(ticket)}/messages`,
        { query: { start, length: pageLength, status } },
      ),
    [ticket, start, status, version],
  );
  return (
    <section class="card" aria-labelledby="messages-title">
      <div class="section-head">
        <h2 id="messages-title" class="card-title">
          Messages
        </h2>
        <Field label="State">
          {(id) => (
            <select
              id={id}
              value={status}
              onChange={(e) => {
                setStatus((e.target as HTMLSelectElement).value);
                setStart(0);
              }}
            >
              <option value="">All states</option>
              {dlrStates.map((s) => (
                <option key={s.code} value={String(s.code)}>
                  {s.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNotice error={messages.error} />
      {!messages.data && !messages.error && <Loading />}
      {messages.data && (
        <>
          {messages.data.messages.length === 0 ? (
            <p class="empty">{status ? 'No message in this state.' : 'No message.'}</p>
          ) : (
            <div class="table-wrap">
              <table class="stacked-table">
                <thead>
                  <tr>
                    <th>Number</th>
                    <th>Your id</th>
                    <th>State</th>
                    <th>Due</th>
                    <th>Outcome at</th>
                    <th class="num">Clicks</th>
                  </tr>
                </thead>
                <tbody>
                  {messages.data.messages.map((m) => (
                    <tr key={m.id}>
                      <td data-label="Number" class="mono number-cell">
                        {m.destination}
                      </td>
                      <td data-label="Your id">{m.gsmsmsid || '—'}</td>
                      <td data-label="State">
                        <MessageState code={m.status} />
                      </td>
                      <td data-label="Due" class="nowrap">
                        {formatDate(m.date, tz)}
                      </td>
                      <td data-label="Outcome at" class="nowrap">
                        {formatDate(m.delivery_date, tz)}
                      </td>
                      <td data-label="Clicks" class="num">
                        {formatNumber(m.clicks)}
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
            total={messages.data.totalDisplayRecords}
            onStart={setStart}
          />
        </>
      )}
    </section>
  );
}

function SmallTable({
  title,
  id,
  error,
  empty,
  head,
  rows,
  pager,
}: {
  title: string;
  id: string;
  error: unknown;
  empty: string;
  head: string[];
  rows: ComponentChildren[][] | undefined;
  pager: ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id} class="card-title">
        {title}
      </h2>
      <ErrorNotice error={error} />
      {!rows && !error && <Loading />}
      {rows && rows.length === 0 && <p class="empty">{empty}</p>}
      {rows && rows.length > 0 && (
        <div class="table-wrap">
          <table class="stacked-table">
            <thead>
              <tr>
                {head.map((h) => (
                  <th key={h}>{h}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((cells, i) => (
                <tr key={i}>
                  {cells.map((cell, j) => (
                    <td key={j} data-label={head[j]}>
                      {cell}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pager}
    </section>
  );
}

type Reply = CampaignReplyView;

function Replies({ ticket, version }: { ticket: string; version: string }) {
  const { session } = useSession();
  const [start, setStart] = useState(0);
  const replies = useLoad(
    () =>
      api<{ replies: Reply[]; totalDisplayRecords: number }>(
        'GET',
        `/campaign/${encodeURIComponent(ticket)}/mo`,
        {
          query: { start, length: pageLength },
        },
      ),
    [ticket, start, version],
  );
  return (
    <SmallTable
      title="Replies"
      id="replies-title"
      error={replies.error}
      empty="No reply yet."
      head={['Number', 'Message', 'Received']}
      rows={replies.data?.replies.map((r) => [
        <span class="mono number-cell">{r.destination}</span>,
        <span class="reply-text">{r.message}</span>,
        <span class="nowrap">{formatDate(r.date, session.timezone)}</span>,
      ])}
      pager={
        replies.data && (
          <Pager
            start={start}
            length={pageLength}
            total={replies.data.totalDisplayRecords}
            onStart={setStart}
          />
        )
      }
    />
  );
}

type Stop = NumberOfCampaignView;

function Stops({ ticket, version }: { ticket: string; version: string }) {
  const { session } = useSession();
  const [start, setStart] = useState(0);
  const stops = useLoad(
    () =>
      api<{ stops: Stop[]; totalDisplayRecords: number }>(
        'GET',
        `/campaign/${encodeURIComponent(ticket)}/blacklist`,
        { query: { start, length: pageLength } },
      ),
    [ticket, start, version],
  );
  return (
    <SmallTable
      title="STOPs"
      id="stops-title"
      error={stops.error}
      empty="Nobody has opted out of this campaign."
      head={['Number', 'Opted out']}
      rows={stops.data?.stops.map((s) => [
        <span class="mono number-cell">{s.destination}</span>,
        <span class="nowrap">{formatDate(s.date, session.timezone)}</span>,
      ])}
      pager={
        stops.data && (
          <Pager
            start={start}
            length={pageLength}
            total={stops.data.totalDisplayRecords}
            onStart={setStart}
          />
        )
      }
    />
  );
}
