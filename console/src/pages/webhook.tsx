// One webhook: its settings (PUT /webhook/:id), pausing and resuming it, a test event (POST
// /webhook/:id/test), and its attempt log (GET /webhook/:id/deliveries), newest first, with what each attempt
// sent and what the receiver answered.
import './account.css';
import { useEffect, useState } from 'preact/hooks';
import type { AttemptView } from '../../../src/webhooks/webhooks.schemas.ts';
import { api } from '../api.ts';
import { formLevelError } from '../components/account-parts.tsx';
import { ErrorNotice, Loading, Notice, Pager, PageTitle, useAction, useLoad } from '../components/ui.tsx';
import {
  typeLabel,
  type Webhook,
  type WebhookDraft,
  WebhookFields,
  webhookFields,
} from '../components/webhook-form.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { linkTo } from '../router.ts';
import { useMay, useSession } from '../session.ts';
import { answerTone, lastAnswer } from './webhooks.tsx';

type Attempt = AttemptView;

interface AttemptPage {
  deliveries: Attempt[];
  totalRecords: number;
}

const pageLength = 20;
/** How often the log is read again while a test event is on its way, and for how long at most. */
const testPollMs = 1000;
const testPollTimes = 30;

/** A body as sent or answered: JSON indented, anything else as it is. */
function readable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function AttemptExchange({ attempt }: { attempt: Attempt }) {
  return (
    <details class="webhook-exchange">
      <summary>
        Request and answer<span class="account-hidden"> of attempt {attempt.attempt_id}</span>
      </summary>
      <div class="webhook-exchange-parts">
        <div>
          <h3>Request</h3>
          {attempt.request_headers === null ? (
            <p class="hint">Not kept: this attempt was logged before Pigeon kept requests.</p>
          ) : (
            <>
              <p class="label">Headers</p>
              <dl class="webhook-headers">
                {Object.entries(attempt.request_headers).map(([name, value]) => (
                  <div key={name} class="webhook-header">
                    <dt>{name}</dt>
                    <dd class="mono">{value}</dd>
                  </div>
                ))}
              </dl>
              <p class="label">Body</p>
              <pre>{readable(attempt.request_body ?? '')}</pre>
            </>
          )}
        </div>
        <div>
          <h3>Answer</h3>
          {attempt.http_code === null ? (
            <p>No answer: {attempt.error ?? 'the request failed'}.</p>
          ) : (
            <>
              <p>
                <span class="label">Status</span> HTTP {attempt.http_code}
              </p>
              <p class="label">Body (the first 2 KB)</p>
              {attempt.response_body === null ? (
                <p class="hint">Not kept: this attempt was logged before Pigeon kept answers.</p>
              ) : attempt.response_body === '' ? (
                <p class="hint">Empty.</p>
              ) : (
                <pre>{readable(attempt.response_body)}</pre>
              )}
            </>
          )}
        </div>
      </div>
    </details>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const { session } = useSession();
  const may = useMay();
  const tz = session.timezone;
  const webhook = useLoad(
    () => api<{ webhook: Webhook }>('GET', `/webhook/${id}`).then((a) => a.webhook),
    [id],
  );
  const [start, setStart] = useState(0);
  const log = useLoad(
    () => api<AttemptPage>('GET', `/webhook/${id}/deliveries`, { query: { start, length: pageLength } }),
    [id, start],
  );
  const [draft, setDraft] = useState<WebhookDraft | null>(null);
  const [missingUrl, setMissingUrl] = useState<string | undefined>();
  const [notice, setNotice] = useState('');
  /** The test delivery the log waits for, and how many more times it looks. */
  const [awaiting, setAwaiting] = useState<{ deliveryId: string; left: number } | null>(null);

  useEffect(() => {
    if (webhook.data && !draft) {
      const { type, url, signature } = webhook.data;
      setDraft({ type, url, signature });
    }
  }, [webhook.data]);

  // After a test event, read the log again until its first attempt shows (the dispatcher sends it within a
  // moment), then stop.
  useEffect(() => {
    if (!awaiting) return;
    if (log.data?.deliveries.some((a) => a.delivery_id === awaiting.deliveryId) || awaiting.left <= 0) {
      setAwaiting(null);
      void webhook.reload();
      return;
    }
    const timer = setTimeout(() => {
      setAwaiting({ ...awaiting, left: awaiting.left - 1 });
      void log.reload();
    }, testPollMs);
    return () => clearTimeout(timer);
  }, [awaiting, log.data]);

  const save = useAction(async () => {
    if (!draft) return;
    const answer = await api<{ webhook: Webhook }>('PUT', `/webhook/${id}`, {
      body: { webhook: { type: draft.type, url: draft.url.trim(), signature: draft.signature } },
    });
    setNotice('Changes saved.');
    const { type, url, signature } = answer.webhook;
    setDraft({ type, url, signature });
    await webhook.reload();
  });
  const setStatus = useAction(async (status: 'live' | 'paused') => {
    await api('PUT', `/webhook/${id}/status`, { body: { webhook: { status } } });
    setNotice(
      status === 'paused'
        ? 'Paused: nothing is sent to this webhook until you resume it.'
        : 'Live again: deliveries held while it was paused are sent now.',
    );
    await webhook.reload();
  });
  const test = useAction(async () => {
    const answer = await api<{ test: { delivery_id: string } }>('POST', `/webhook/${id}/test`);
    setNotice('Test event queued: its attempt appears in the log below.');
    if (start !== 0) setStart(0);
    setAwaiting({ deliveryId: answer.test.delivery_id, left: testPollTimes });
  });

  if (webhook.error) {
    return (
      <section>
        <PageTitle>Webhook {id}</PageTitle>
        <ErrorNotice error={webhook.error} />
        <p>
          <a {...linkTo('/webhooks')}>Back to the webhooks</a>
        </p>
      </section>
    );
  }
  if (!webhook.data || !draft) return <Loading what="Loading the webhook" />;
  const w = webhook.data;
  const live = w.status === 'live';

  return (
    <section>
      <p class="account-breadcrumb">
        <a {...linkTo('/webhooks')}>Webhooks</a>
      </p>
      <PageTitle
        actions={
          <>
            {may('POST /webhook/:id/test') && (
              <button
                type="button"
                disabled={!live || test.pending}
                title={live ? undefined : 'Resume the webhook to send it a test'}
                onClick={() => {
                  setNotice('');
                  void test.act();
                }}
              >
                {test.pending ? 'Sending…' : 'Send a test event'}
              </button>
            )}
            {may('PUT /webhook/:id/status') && (
              <button
                type="button"
                class="secondary"
                disabled={setStatus.pending}
                onClick={() => {
                  setNotice('');
                  void setStatus.act(live ? 'paused' : 'live');
                }}
              >
                {live ? 'Pause' : 'Resume'}
              </button>
            )}
          </>
        }
      >
        Webhook {w.webhook_id}
      </PageTitle>
      <p class="webhook-summary">
        {typeLabel(w.type)} · <span class={`state state-${w.status}`}>{w.status}</span> · last answer{' '}
        <span class={`state ${answerTone(w.last_http_code)}`}>{lastAnswer(w.last_http_code)}</span>
      </p>
      {!live && (
        <Notice kind="info">
          This webhook is paused: new events are not sent to it, and its pending deliveries wait until you
          resume it.
        </Notice>
      )}
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorNotice error={setStatus.error} />
      <ErrorNotice error={test.error} />

      <h2>Attempt log</h2>
      {awaiting && (
        <p class="hint" aria-live="polite">
          Waiting for the test event's attempt…
        </p>
      )}
      {log.error ? (
        <ErrorNotice error={log.error} />
      ) : !log.data ? (
        <Loading what="Loading the attempt log" />
      ) : log.data.deliveries.length === 0 ? (
        <p class="empty">No attempts yet. Send a test event to see one.</p>
      ) : (
        <>
          <div class="table-wrap">
            <table class="account-table webhook-log">
              <caption class="account-hidden">Attempts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Event</th>
                  <th scope="col" class="num">
                    Attempt
                  </th>
                  <th scope="col">HTTP code</th>
                  <th scope="col" class="num">
                    Latency
                  </th>
                  <th scope="col">Error</th>
                  <th scope="col">Next attempt</th>
                </tr>
              </thead>
              {log.data.deliveries.map((a) => (
                <tbody key={a.attempt_id} class="webhook-attempt">
                  <tr>
                    <td data-label="Time">{formatDate(a.date, tz)}</td>
                    <td data-label="Event">
                      {a.event_type}
                      {a.event_id === null ? (
                        <span class="hint"> (test)</span>
                      ) : (
                        <span class="hint"> #{a.event_id}</span>
                      )}
                    </td>
                    <td data-label="Attempt" class="num">
                      {formatNumber(a.attempt)}
                    </td>
                    <td data-label="HTTP code">
                      <span class={`state ${answerTone(a.http_code ?? '0')}`}>{a.http_code ?? 'none'}</span>
                    </td>
                    <td data-label="Latency" class="num">
                      {formatNumber(a.latency_ms)} ms
                    </td>
                    <td data-label="Error">{a.error ?? '—'}</td>
                    <td data-label="Next attempt">{a.next_attempt ? formatDate(a.next_attempt, tz) : '—'}</td>
                  </tr>
                  <tr class="webhook-exchange-row">
                    <td colSpan={7}>
                      <AttemptExchange attempt={a} />
                    </td>
                  </tr>
                </tbody>
              ))}
            </table>
          </div>
          <Pager start={start} length={pageLength} total={log.data.totalRecords} onStart={setStart} />
        </>
      )}
      <button type="button" class="secondary" disabled={log.loading} onClick={() => void log.reload()}>
        Refresh the log
      </button>

      {may('PUT /webhook/:id') && (
        <form
          class="card account-form webhook-edit"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setNotice('');
            const missing = draft.url.trim() === '' ? 'Enter the URL Pigeon should call.' : undefined;
            setMissingUrl(missing);
            if (!missing) void save.act();
          }}
        >
          <h2>Settings</h2>
          <ErrorNotice error={formLevelError(save.error, webhookFields)} />
          <WebhookFields draft={draft} onDraft={setDraft} error={save.error} missingUrl={missingUrl} />
          <button type="submit" disabled={save.pending}>
            {save.pending ? 'Saving…' : 'Save changes'}
          </button>
        </form>
      )}
    </section>
  );
}
