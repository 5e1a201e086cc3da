// The dashboard: the balance, the limits the operator set (GET /account/limits, when any), the last 30 days of
// sending (messages per day, delivery rate per day) and the latest campaigns with their progress, each a link
// to its page.
import './dashboard.css';
import { useEffect, useMemo } from 'preact/hooks';
import type { EffectiveLimitsView } from '../../../src/limits/limits.schemas.ts';
import type { DayView } from '../../../src/reads/statistics.schemas.ts';
import { api } from '../api.ts';
import { type Campaign, CampaignProgress, CampaignStatus, truncate } from '../components/campaign-parts.tsx';
import { type ChartSeries, TimeChart } from '../components/chart.tsx';
import { ErrorNotice, Loading, PageTitle, Stat, useLoad } from '../components/ui.tsx';
import { formatDate, formatNumber, formatPercent, wallTimeMs } from '../format.ts';
import { linkTo } from '../router.ts';
import { useMay, useSession } from '../session.ts';

/** One day of GET /statistics/daily. */
type Day = DayView;

const days = 30;

/** The account's limits in words, those that apply only (none: no line at all). */
function limitsText(limits: EffectiveLimitsView): string {
  const parts: string[] = [];
  const count = (value: number, what: string) => {
    if (value > 0) parts.push(`${formatNumber(value)} ${what}`);
  };
  count(limits.daily_messages.value, 'messages a day');
  count(limits.monthly_messages.value, 'messages a month');
  count(limits.requests_per_second.value, `API requests a second (${limits.requests_per_second.counted})`);
  count(limits.parts_per_second.value, 'SMS parts a second (paced)');
  if (limits.countries.value !== 'all') parts.push(`recipients in ${limits.countries.value} only`);
  return parts.join(' · ');
}

export function DashboardPage() {
  const { session, refresh } = useSession();
  const may = useMay();
  const tz = session.timezone;
  // Sends made with a token since sign-in changed the balance: the top bar reads it again with this page.
  useEffect(() => {
    void refresh();
  }, []);
  const credits = useLoad(() => api<{ credits: number | string; unlimited: string }>('GET', '/credits'), []);
  const stats = useLoad(() => api<{ days: Day[] }>('GET', '/statistics/daily', { query: { days } }), []);
  const limits = useLoad(
    () => api<{ limits: EffectiveLimitsView }>('GET', '/account/limits').then((a) => limitsText(a.limits)),
    [],
  );
  const latest = useLoad(
    () =>
      api<{ campaigns: Campaign[]; totalRecords: number }>('GET', '/campaigns', {
        query: { length: 5, sort: '-id' },
      }),
    [],
  );

  const charts = useMemo(() => {
    const list = stats.data?.days ?? [];
    const x = list.map((d) => wallTimeMs(`${d.date} 00:00:00`, tz));
    const sent: ChartSeries[] = [
      { label: 'Messages sent', values: list.map((d) => d.sent), color: '#2456c7', bars: true },
    ];
    const rate: ChartSeries[] = [
      {
        label: 'Delivery rate',
        values: list.map((d) => {
          const settled = d.delivered + d.failed + d.expired;
          return settled === 0 ? null : d.delivered / settled;
        }),
        color: '#1d7a46',
        percent: true,
      },
    ];
    const totals = list.reduce(
      (t, d) => ({
        sent: t.sent + d.sent,
        delivered: t.delivered + d.delivered,
        settled: t.settled + d.delivered + d.failed + d.expired,
      }),
      { sent: 0, delivered: 0, settled: 0 },
    );
    return { x, sent, rate, totals };
  }, [stats.data, tz]);

  const balance = credits.data
    ? credits.data.unlimited === '1'
      ? 'unlimited'
      : formatNumber(credits.data.credits)
    : session.account.unlimited
      ? 'unlimited'
      : formatNumber(session.account.credits);

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
        Dashboard
      </PageTitle>
      <ErrorNotice error={credits.error} />
      <div class="grid">
        <Stat label="Balance (credits)" value={balance} />
        <Stat
          label={`Messages sent, last ${days} days`}
          value={stats.data ? formatNumber(charts.totals.sent) : '…'}
        />
        <Stat
          label={`Delivery rate, last ${days} days`}
          value={
            stats.data
              ? charts.totals.settled === 0
                ? '—'
                : formatPercent(charts.totals.delivered / charts.totals.settled)
              : '…'
          }
          tone="ok"
        />
      </div>

      {limits.data ? <p data-testid="account-limits">Limits: {limits.data}.</p> : null}

      <div class="two-columns">
        <div class="card">
          <h2 class="card-title">Messages sent per day</h2>
          {stats.error ? (
            <ErrorNotice error={stats.error} />
          ) : !stats.data ? (
            <Loading />
          ) : (
            <TimeChart
              x={charts.x}
              series={charts.sent}
              title={`Messages sent per day, last ${days} days`}
              timeZone={tz}
            />
          )}
        </div>
        <div class="card">
          <h2 class="card-title">Delivery rate per day</h2>
          {stats.error ? (
            <ErrorNotice error={stats.error} />
          ) : !stats.data ? (
            <Loading />
          ) : (
            <TimeChart
              x={charts.x}
              series={charts.rate}
              title={`Delivery rate per day (delivered over delivered, failed and expired), last ${days} days`}
              timeZone={tz}
            />
          )}
        </div>
      </div>

      <h2>Latest campaigns</h2>
      <ErrorNotice error={latest.error} />
      {!latest.data && !latest.error && <Loading />}
      {latest.data && latest.data.campaigns.length === 0 && (
        <p class="empty">
          No campaign yet. {may('POST /send') && <a {...linkTo('/send')}>Send your first campaign</a>}
        </p>
      )}
      {latest.data && latest.data.campaigns.length > 0 && (
        <>
          <ul class="latest-campaigns">
            {latest.data.campaigns.map((c) => (
              <li key={c.id} class="card latest-campaign">
                <div class="latest-head">
                  <a {...linkTo(`/campaigns/${c.id}`)}>Campaign {c.id}</a>
                  <CampaignStatus status={c.state} />
                  <span class="counter">{formatDate(c.date, tz)}</span>
                </div>
                <p class="latest-text" title={c.text}>
                  {truncate(c.text, 90)}
                </p>
                {c.state === 'cancelled' ? (
                  <p class="hint">Cancelled before sending; its cost was refunded.</p>
                ) : (
                  <CampaignProgress campaign={c} label={`Progress of campaign ${c.id}`} />
                )}
              </li>
            ))}
          </ul>
          <p>
            <a {...linkTo('/campaigns')}>All campaigns ({formatNumber(latest.data.totalRecords)})</a>
          </p>
        </>
      )}
    </section>
  );
}
