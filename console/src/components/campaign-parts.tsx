// What the campaign pages share: a campaign as GET /campaign/:ticket and GET /campaigns answer it, its status
// and progress as the user reads them, and the names of the DLR codes a message's state is told by.
import '../pages/campaign.css';
import type { CampaignView } from '../../../src/reads/reads.schemas.ts';
import { formatNumber, formatPercent } from '../format.ts';

/** One campaign of GET /campaign/:ticket or GET /campaigns: the route's schema's view. */
export type Campaign = CampaignView;

/** What each campaign state (Pigeon's detail of `status`) means to the person reading the list (src/campaigns/README.md). */
export const campaignStatusText: Record<Campaign['state'], string> = {
  scheduled: 'scheduled',
  sending: 'sending',
  sent: 'awaiting receipts',
  done: 'done',
  cancelled: 'cancelled',
  moderation: 'awaiting moderation',
  refused: 'refused by moderation',
};

/**
 * Whether a campaign will still change by itself: its messages are not all final, and it was not cancelled or
 * refused (one awaiting moderation changes when the operator decides).
 */
export const isFinished = (c: Campaign) =>
  c.state === 'done' || c.state === 'cancelled' || c.state === 'refused';

/** The part of a campaign's messages that have their final outcome, 0 to 1. */
export function progressOf(c: Campaign): number {
  if (c.total === 0) return 1;
  return Math.min(1, Math.max(0, (c.total - c.pending) / c.total));
}

/** Messages that failed, whatever the reason: the API splits them into error, network error and NPAI. */
export const failedOf = (c: Campaign) => c.error + c.network_error + c.npai;

export function CampaignStatus({ status }: { status: Campaign['state'] }) {
  return <span class={`state state-${status}`}>{campaignStatusText[status] ?? status}</span>;
}

/** A campaign's progress: final outcomes over its messages, as a bar with its figure. */
export function CampaignProgress({ campaign, label }: { campaign: Campaign; label: string }) {
  const ratio = progressOf(campaign);
  const percent = Math.round(ratio * 100);
  return (
    <div class="campaign-progress">
      <div
        class="progress"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={`${percent} %`}
      >
        <span style={{ width: `${percent}%` }} />
      </div>
      <span class="counter">
        {formatNumber(campaign.total - campaign.pending)} / {formatNumber(campaign.total)} final ·{' '}
        {formatPercent(ratio)}
      </span>
    </div>
  );
}

/** DLR status codes (API.md) by the name a message's state is shown with, and its CSS class. */
export const dlrStates: { code: number; name: string; label: string }[] = [
  { code: 0, name: 'not-sent', label: 'not sent' },
  { code: 1, name: 'sent', label: 'sent' },
  { code: 2, name: 'not-delivered', label: 'not delivered' },
  { code: 3, name: 'delivered', label: 'delivered' },
  { code: 4, name: 'not-allowed', label: 'not allowed' },
  { code: 5, name: 'invalid-destination', label: 'invalid destination' },
  { code: 6, name: 'invalid-sender', label: 'invalid sender' },
  { code: 7, name: 'route-not-available', label: 'route not available' },
  { code: 9, name: 'rejected', label: 'rejected' },
  { code: 11, name: 'network-error', label: 'network error' },
  { code: 12, name: 'expired', label: 'expired' },
];

export function MessageState({ code }: { code: number | string }) {
  const state = dlrStates.find((s) => s.code === Number(code));
  return state ? (
    <span class={`state state-${state.name}`}>{state.label}</span>
  ) : (
    <span class="state">code {String(code)}</span>
  );
}

/** A campaign's text cut for a table cell; the whole of it stays in the title. */
export function truncate(text: string, max = 60): string {
  const chars = [...text.replace(/\s+/g, ' ')];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
}
