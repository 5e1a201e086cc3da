// A campaign result as POST /send and its simulation answer it: what it costs and where each recipient went.

import type { CampaignResultView } from '../../../src/campaigns/campaigns.schemas.ts';
import { formatNumber } from '../format.ts';
import { Notice, Stat } from './ui.tsx';

export function SendResult({ result, title }: { result: CampaignResultView; title: string }) {
  const filtered: [string, number][] = [
    ['Blacklisted', result.blacklisted],
    ['Duplicated', result.duplicated],
    ['Invalid', result.invalid],
    ['NPAI', result.npai],
    ['Not allowed', result.not_allowed],
  ];
  return (
    <section class="card send-result" aria-labelledby="send-result-title" data-testid="send-result">
      <h2 id="send-result-title">{title}</h2>
      {result.moderation === 'pending' && (
        <Notice kind="info">
          Held for moderation by the operator ({result.held_by}): it is charged, and goes out once approved;
          if refused, its credits come back.
        </Notice>
      )}
      <div class="grid">
        <Stat label="Cost" value={`${formatNumber(result.cost)} credits`} />
        <Stat label="Credits after" value={formatNumber(result.credits)} />
        <Stat label="Recipients given" value={formatNumber(result.total)} />
        <Stat label="Sent" value={formatNumber(result.sent)} tone={result.sent > 0 ? 'ok' : 'warn'} />
      </div>
      <dl class="send-filtered">
        {filtered.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{formatNumber(value)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
