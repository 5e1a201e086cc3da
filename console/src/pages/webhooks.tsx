// Webhooks: the account's subscriptions (GET /webhook) with their state and last answer, a new one (POST
// /webhook) whose signing secret is shown this once, pausing and resuming (PUT /webhook/:id/status), and
// deleting one (DELETE /webhook/:id) after a confirmation.
import './account.css';
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ConfirmButton, formLevelError, SecretOnce } from '../components/account-parts.tsx';
import { ErrorNotice, Loading, Notice, PageTitle, useAction, useLoad } from '../components/ui.tsx';
import {
  typeLabel,
  type Webhook,
  type WebhookDraft,
  WebhookFields,
  webhookFields,
} from '../components/webhook-form.tsx';
import { linkTo } from '../router.ts';
import { useMay } from '../session.ts';

/** A webhook's last HTTP code as words: 0 means no answer came. */
export function lastAnswer(code: string | null): string {
  if (code === null) return 'not called yet';
  if (code === '0') return 'no answer';
  return `HTTP ${code}`;
}

export const answerTone = (code: string | null) =>
  code === null ? '' : /^2\d\d$/.test(code) ? 'state-delivered' : 'state-failed';

export function WebhooksPage() {
  const may = useMay();
  const webhooks = useLoad(() => api<{ webhooks: Webhook[] }>('GET', '/webhook').then((a) => a.webhooks), []);
  const [draft, setDraft] = useState<WebhookDraft>({ type: 'DLR', url: '', signature: '' });
  const [missingUrl, setMissingUrl] = useState<string | undefined>();
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const [notice, setNotice] = useState('');

  const create = useAction(async () => {
    const answer = await api<{ webhook: Webhook & { secret: string } }>('POST', '/webhook', {
      body: {
        webhook: {
          type: draft.type,
          url: draft.url.trim(),
          ...(draft.signature ? { signature: draft.signature } : {}),
        },
      },
    });
    setCreated({ id: answer.webhook.webhook_id, secret: answer.webhook.secret });
    setDraft({ type: draft.type, url: '', signature: '' });
    await webhooks.reload();
  });
  const setStatus = useAction(async (webhook: Webhook, status: 'live' | 'paused') => {
    await api('PUT', `/webhook/${webhook.webhook_id}/status`, { body: { webhook: { status } } });
    setNotice(
      status === 'paused'
        ? `Webhook ${webhook.webhook_id} paused: nothing is sent to it until you resume it.`
        : `Webhook ${webhook.webhook_id} is live again.`,
    );
    await webhooks.reload();
  });
  const remove = useAction(async (webhook: Webhook) => {
    await api('DELETE', `/webhook/${webhook.webhook_id}`);
    if (created?.id === webhook.webhook_id) setCreated(null);
    setNotice(`Webhook ${webhook.webhook_id} deleted, with its attempt log.`);
    await webhooks.reload();
  });

  return (
    <section>
      <PageTitle>Webhooks</PageTitle>
      <p class="account-intro">
        Pigeon calls your URLs when something happens: a delivery receipt, a reply, a STOP, a click, a low
        balance. Each request is signed with the webhook's secret (Standard Webhooks headers).
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      {created && (
        <SecretOnce label={`Signing secret of webhook ${created.id}`} value={created.secret}>
          <a {...linkTo(`/webhooks/${created.id}`)}>Open the webhook</a>
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </SecretOnce>
      )}
      <ErrorNotice error={setStatus.error} />
      <ErrorNotice error={remove.error} />

      {webhooks.error ? (
        <ErrorNotice error={webhooks.error} />
      ) : !webhooks.data ? (
        <Loading what="Loading your webhooks" />
      ) : webhooks.data.length === 0 ? (
        <p class="empty">No webhooks yet{may('POST /webhook') ? ': add one below' : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="account-table">
            <caption class="account-hidden">Your webhooks</caption>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">URL</th>
                <th scope="col">Status</th>
                <th scope="col">Last answer</th>
                <th scope="col">
                  <span class="account-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {webhooks.data.map((w) => (
                <tr key={w.webhook_id}>
                  <td data-label="Type">{typeLabel(w.type)}</td>
                  <td data-label="URL" class="account-url">
                    <a {...linkTo(`/webhooks/${w.webhook_id}`)}>{w.url}</a>
                  </td>
                  <td data-label="Status">
                    <span class={`state state-${w.status}`}>{w.status}</span>
                  </td>
                  <td data-label="Last answer">
                    <span class={`state ${answerTone(w.last_http_code)}`}>
                      {lastAnswer(w.last_http_code)}
                    </span>
                  </td>
                  <td class="account-row-actions">
                    {may('PUT /webhook/:id/status') && (
                      <button
                        type="button"
                        class="secondary"
                        disabled={setStatus.pending}
                        aria-label={`${w.status === 'live' ? 'Pause' : 'Resume'} webhook ${w.webhook_id}`}
                        onClick={() => void setStatus.act(w, w.status === 'live' ? 'paused' : 'live')}
                      >
                        {w.status === 'live' ? 'Pause' : 'Resume'}
                      </button>
                    )}
                    {may('DELETE /webhook/:id') && (
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete webhook ${w.webhook_id}`}
                        question={<>Delete this webhook and its attempt log?</>}
                        confirmLabel="Yes, delete"
                        pending={remove.pending}
                        onConfirm={() => remove.act(w)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {may('POST /webhook') && (
        <form
          class="card account-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setNotice('');
            const missing = draft.url.trim() === '' ? 'Enter the URL Pigeon should call.' : undefined;
            setMissingUrl(missing);
            if (!missing) void create.act();
          }}
        >
          <h2>New webhook</h2>
          <ErrorNotice error={formLevelError(create.error, webhookFields)} />
          <WebhookFields draft={draft} onDraft={setDraft} error={create.error} missingUrl={missingUrl} />
          <button type="submit" disabled={create.pending}>
            {create.pending ? 'Adding…' : 'Add webhook'}
          </button>
        </form>
      )}
    </section>
  );
}
