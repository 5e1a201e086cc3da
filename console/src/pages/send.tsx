// Send: a text with its live counter, recipients pasted, read from a CSV file or taken from lists, and a
// simulation that prices the send before anything is charged. Numbers go to POST /send, lists to
// POST /send/lists, each with its /simulate twin.
import './send.css';
import { useMemo, useState } from 'preact/hooks';
import type { CampaignResultView } from '../../../src/campaigns/campaigns.schemas.ts';
import type { ListSummaryView } from '../../../src/campaigns/lists.schemas.ts';
import { countMarkers, type Pushtype, shortMarker, stopMarker } from '../../../src/campaigns/message-text.ts';
import type { AccountPricesView } from '../../../src/prices/prices.schemas.ts';
import { ApiFailure, api, errorText, fieldOfError } from '../api.ts';
import { countMessage } from '../components/count-message.ts';
import { CsvFileField, contactsOf, numbersOf } from '../components/csv-file.tsx';
import { SendCounter } from '../components/send-counter.tsx';
import { SendResult } from '../components/send-result.tsx';
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
import { formatDate, formatNumber } from '../format.ts';
import { linkTo, navigate, useLocation } from '../router.ts';
import { useSession } from '../session.ts';

type Target = 'numbers' | 'lists';
type FormField = 'text' | 'links' | 'sender' | 'delay' | 'pushtype' | 'unicode' | 'recipients';

/** The form field an API error is about, to show it there; the rest go above the buttons. */
function fieldOf(error: unknown): FormField | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  if (error.status === -4) return 'delay';
  // A marker count mismatch names the text and the links: the links are what is missing.
  if (/sms\.message\.links\b/.test(error.details)) return 'links';
  const named = /sms\.message\.(text|sender|delay|pushtype|unicode)\b/.exec(error.details);
  if (named) return named[1] as FormField;
  if (/sms\.(recipients|lists)\b|\blist\b/.test(error.details)) return 'recipients';
  return fieldOfError(error, ['links', 'text', 'sender', 'delay']) as FormField | undefined;
}

/** `2026-11-23T14:05` (a datetime-local value) as the API's `Y-m-d H:i:s`. */
const apiDelay = (local: string) => {
  const [date, time] = local.split('T');
  return `${date} ${time.length === 5 ? `${time}:00` : time}`;
};

export function SendPage() {
  const state = useSession();
  const { session } = state;
  const { query } = useLocation();
  const preselected = query.get('list');

  const [text, setText] = useState('');
  const [pushtype, setPushtype] = useState<Pushtype>('alert');
  const [unicode, setUnicode] = useState(false);
  const [sender, setSender] = useState('');
  const [delay, setDelay] = useState('');
  const [links, setLinks] = useState<string[]>([]);
  const [target, setTarget] = useState<Target>(preselected ? 'lists' : 'numbers');
  const [pasted, setPasted] = useState('');
  const [file, setFile] = useState<{ name: string; numbers: string[]; column: string } | null>(null);
  const [chosen, setChosen] = useState<string[]>(preselected ? [preselected] : []);
  const [simulated, setSimulated] = useState<{ key: string; result: CampaignResultView } | null>(null);
  const [localError, setLocalError] = useState<{ field: FormField; message: string; index?: number } | null>(
    null,
  );

  const lists = useLoad(() => api<{ lists: ListSummaryView[] }>('GET', '/lists').then((a) => a.lists), []);
  // What one part costs the account shown, per destination: the counter prices with it.
  const prices = useLoad(() => api<AccountPricesView>('GET', '/account/prices'), [session.account_id]);

  const markers = countMarkers(text);
  const numbers = useMemo(() => [...numbersOf(pasted), ...(file?.numbers ?? [])], [pasted, file]);
  const listRecipients = (lists.data ?? [])
    .filter((l) => chosen.includes(l.id))
    .reduce((sum, l) => sum + l.count, 0);
  const recipients = target === 'numbers' ? numbers.length : listRecipients;
  const counted = countMessage({
    text,
    pushtype,
    unicode,
    recipients,
    withFields: target === 'lists',
    session,
    prices: prices.data ?? null,
  });

  const message = {
    text,
    pushtype,
    ...(sender.trim() ? { sender: sender.trim() } : {}),
    ...(delay ? { delay: apiDelay(delay) } : {}),
    ...(unicode ? { unicode: '1' } : {}),
    ...(markers > 0 ? { links: Array.from({ length: markers }, (_, k) => (links[k] ?? '').trim()) } : {}),
  };
  const request =
    target === 'numbers'
      ? {
          path: '/send',
          body: { sms: { message, recipients: { gsm: numbers.map((value) => ({ value })) } } },
        }
      : { path: '/send/lists', body: { sms: { message, lists: chosen.map((value) => ({ value })) } } };
  // A simulation stands for the inputs it was made with; any change hides it.
  const requestKey = JSON.stringify(request);

  /** Catches in the page what the server would refuse (no recipients, a link left empty) next to its field. */
  const checkForm = () => {
    const emptyLink = Array.from({ length: markers }, (_, k) => links[k] ?? '').findIndex((l) => !l.trim());
    if (emptyLink >= 0) {
      setLocalError({
        field: 'links',
        message: `Give the URL of short link ${emptyLink + 1}: each ${shortMarker} in the text needs one.`,
        index: emptyLink,
      });
      return false;
    }
    if (recipients > 0) return true;
    setLocalError({
      field: 'recipients',
      message:
        target === 'numbers'
          ? 'Add at least one number: paste it, or choose a CSV file.'
          : 'Choose at least one list that has contacts.',
    });
    return false;
  };

  const simulate = useAction(async () => {
    const result = await api<CampaignResultView>('POST', `${request.path}/simulate`, { body: request.body });
    setSimulated({ key: requestKey, result });
  });
  const send = useAction(async () => {
    const result = await api<CampaignResultView>('POST', request.path, { body: request.body });
    await state.refresh();
    navigate(`/campaigns/${result.ticket}`);
  });
  const pending = simulate.pending || send.pending;
  const error = send.error ?? simulate.error;
  const errorField = localError?.field ?? fieldOf(error);
  const errorFor = (field: FormField) =>
    errorField === field ? (localError?.message ?? errorText(error)) : undefined;
  const clearErrors = () => {
    setLocalError(null);
    simulate.setError(undefined);
    send.setError(undefined);
  };
  const edit =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      clearErrors();
    };

  const run = (action: typeof simulate) => {
    clearErrors();
    if (checkForm()) void action.act();
  };

  const nowLocal = formatDate(Date.now(), session.timezone).replace(' ', 'T');
  const result = simulated?.key === requestKey ? simulated.result : null;

  return (
    <section class="send-page">
      <PageTitle>Send a campaign</PageTitle>
      <form
        class="send-form"
        onSubmit={(event) => {
          event.preventDefault();
          run(send);
        }}
        noValidate
      >
        <div class="card" key="message">
          <h2>Message</h2>
          <Field
            label="Text"
            error={errorFor('text')}
            hint={
              <>
                <code>{shortMarker}</code> places a short link, counted per recipient.
                {pushtype === 'marketing' && (
                  <>
                    {' '}
                    The opt-out mention “{session.stop_mention}” is added at the end, or where{' '}
                    <code>{stopMarker}</code> stands.
                  </>
                )}
                {target === 'lists' && (
                  <>
                    {' '}
                    <code>[info1]</code>…<code>[info4]</code> are replaced by each contact’s fields.
                  </>
                )}
              </>
            }
          >
            {(id, describedBy) => (
              <textarea
                id={id}
                value={text}
                rows={5}
                aria-invalid={errorFor('text') ? 'true' : undefined}
                aria-describedby={describedBy}
                onInput={(e) => edit(setText)((e.target as HTMLTextAreaElement).value)}
              />
            )}
          </Field>
          <SendCounter counted={counted} />
          <div class="actions send-insert">
            <button
              type="button"
              class="secondary"
              onClick={() => edit(setText)(`${text}${text && !/\s$/.test(text) ? ' ' : ''}${shortMarker}`)}
            >
              Add a short link
            </button>
          </div>
          {Array.from({ length: markers }, (_, k) => (
            <TextField
              key={k}
              label={markers === 1 ? 'Short link URL' : `Short link ${k + 1} URL`}
              type="url"
              inputMode="url"
              placeholder="https://example.com/offer"
              value={links[k] ?? ''}
              error={k === (localError?.index ?? 0) ? errorFor('links') : undefined}
              onValue={edit((value: string) => {
                const next = links.slice();
                while (next.length <= k) next.push('');
                next[k] = value;
                setLinks(next);
              })}
            />
          ))}

          <fieldset class="send-choice">
            <legend class="label">Type</legend>
            {(
              [
                ['alert', 'Alert', 'any time, no opt-out mention'],
                ['marketing', 'Marketing', 'sent in the allowed hours, with the opt-out mention'],
              ] as const
            ).map(([value, label, hint]) => (
              <label key={value} class="choice">
                <input
                  type="radio"
                  name="pushtype"
                  value={value}
                  checked={pushtype === value}
                  onChange={() => edit(setPushtype)(value)}
                />
                <span>
                  {label} <span class="hint">({hint})</span>
                </span>
              </label>
            ))}
          </fieldset>
          <label class="choice">
            <input
              type="checkbox"
              checked={unicode}
              onChange={(e) => edit(setUnicode)((e.target as HTMLInputElement).checked)}
            />
            <span>Send as Unicode (UCS-2) even when GSM-7 would do</span>
          </label>
          {errorFor('unicode') && <p class="field-error">{errorFor('unicode')}</p>}
          {errorFor('pushtype') && <p class="field-error">{errorFor('pushtype')}</p>}

          <div class="send-row">
            <TextField
              label="Sender"
              value={sender}
              onValue={edit(setSender)}
              maxLength={15}
              autoComplete="off"
              error={errorFor('sender')}
              hint="3 to 11 letters or digits with a letter, or up to 15 digits; empty for the default"
            />
            <Field label={`Send at (${session.timezone})`} error={errorFor('delay')} hint="Empty sends now.">
              {(id, describedBy) => (
                <input
                  id={id}
                  type="datetime-local"
                  value={delay}
                  min={nowLocal}
                  aria-invalid={errorFor('delay') ? 'true' : undefined}
                  aria-describedby={describedBy}
                  onInput={(e) => edit(setDelay)((e.target as HTMLInputElement).value)}
                />
              )}
            </Field>
          </div>
        </div>

        <div class="card" key="recipients">
          <h2>Recipients</h2>
          <fieldset class="send-choice">
            <legend class="label">Send to</legend>
            <label class="choice">
              <input
                type="radio"
                name="target"
                checked={target === 'numbers'}
                onChange={() => edit(setTarget)('numbers')}
              />
              <span>Pasted numbers or a CSV file</span>
            </label>
            <label class="choice">
              <input
                type="radio"
                name="target"
                checked={target === 'lists'}
                onChange={() => edit(setTarget)('lists')}
              />
              <span>Contact lists</span>
            </label>
          </fieldset>

          {target === 'numbers' ? (
            <>
              <Field
                label="Numbers"
                error={errorFor('recipients')}
                hint="One a line, or separated by commas; country code first (33612345678)."
              >
                {(id, describedBy) => (
                  <textarea
                    id={id}
                    value={pasted}
                    rows={4}
                    aria-invalid={errorFor('recipients') ? 'true' : undefined}
                    aria-describedby={describedBy}
                    onInput={(e) => edit(setPasted)((e.target as HTMLTextAreaElement).value)}
                  />
                )}
              </Field>
              <CsvFileField
                label="Numbers from a CSV file"
                hint="The column named number, phone, destination or gsm, else the first column."
                onRows={(rows, name) => {
                  const { contacts, header } = contactsOf(rows);
                  const numberColumn = header
                    ? (header.find((h) =>
                        ['number', 'phone', 'destination', 'gsm', 'mobile', 'value'].includes(
                          h.toLowerCase(),
                        ),
                      ) ?? header[0])
                    : 'first column';
                  setFile({
                    name,
                    numbers: contacts.map((c) => c.value).filter((v) => v !== ''),
                    column: numberColumn,
                  });
                  clearErrors();
                }}
              />
              {file && (
                <div class="send-file">
                  <span>
                    {file.name}: {formatNumber(file.numbers.length)} numbers (column “{file.column}”)
                  </span>
                  <button type="button" class="secondary" onClick={() => edit(setFile)(null)}>
                    Remove the file
                  </button>
                </div>
              )}
            </>
          ) : lists.error ? (
            <ErrorNotice error={lists.error} />
          ) : !lists.data ? (
            <Loading what="Loading your lists" />
          ) : lists.data.length === 0 ? (
            <p class="empty">
              No lists yet. <a {...linkTo('/lists')}>Create one</a>.
            </p>
          ) : (
            <fieldset
              class="send-lists"
              aria-describedby={errorFor('recipients') ? 'send-lists-error' : undefined}
            >
              <legend class="label">Lists to send to</legend>
              {lists.data.map((l) => (
                <label key={l.id} class="choice">
                  <input
                    type="checkbox"
                    checked={chosen.includes(l.id)}
                    onChange={(e) =>
                      edit(setChosen)(
                        (e.target as HTMLInputElement).checked
                          ? [...chosen, l.id]
                          : chosen.filter((c) => c !== l.id),
                      )
                    }
                  />
                  <span>
                    {l.name} <span class="hint">({formatNumber(l.count)} contacts)</span>
                  </span>
                </label>
              ))}
              {errorFor('recipients') && (
                <p class="field-error" id="send-lists-error" role="alert">
                  {errorFor('recipients')}
                </p>
              )}
            </fieldset>
          )}
        </div>

        {error && !errorField ? <ErrorNotice error={error} /> : null}
        {result && (
          <>
            <SendResult result={result} title="Simulation: nothing was charged" />
            {result.sent === 0 && (
              <Notice kind="info">Every recipient is filtered out: this send would send nothing.</Notice>
            )}
          </>
        )}
        <div class="actions send-actions">
          <button type="button" class="secondary" disabled={pending} onClick={() => run(simulate)}>
            {simulate.pending ? 'Simulating…' : 'Simulate'}
          </button>
          <button type="submit" disabled={pending}>
            {send.pending ? 'Sending…' : 'Send'}
          </button>
        </div>
      </form>
    </section>
  );
}
