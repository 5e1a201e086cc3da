// The blacklist or the NPAI list of the account: numbers every send leaves out. Numbers are added by hand
// (POST /blacklist, /npai) and removed one at a time (DELETE …/contact/:id) so they can be sent to again.
import { useState } from 'preact/hooks';
import type { NumberEntryView } from '../../../src/campaigns/lists.schemas.ts';
import { api, errorText } from '../api.ts';
import { formatDate, formatNumber } from '../format.ts';
import { linkTo } from '../router.ts';
import { useMay, useSession } from '../session.ts';
import { numbersOf } from './csv-file.tsx';
import { ErrorNotice, Field, Loading, Notice, Pager, useAction, useLoad } from './ui.tsx';

type Which = 'blacklist' | 'npai';

type Entry = NumberEntryView;

const pageLength = 50;
const titles: Record<Which, { name: string; why: string }> = {
  blacklist: {
    name: 'Blacklist',
    why: 'Numbers that asked not to be written to (a STOP reply adds them) or that you added.',
  },
  npai: {
    name: 'NPAI',
    why: 'Numbers that do not exist (“n’habite pas à l’adresse indiquée”), from receipts or added by you.',
  },
};

/** The API routes that change each list, as the permission table names them (the session's `routes`). */
const routes: Record<Which, { add: string; remove: string }> = {
  blacklist: { add: 'POST /blacklist', remove: 'DELETE /blacklist/contact/:id' },
  npai: { add: 'POST /npai', remove: 'DELETE /npai/contact/:id' },
};

export function NumberListSection({ which }: { which: Which }) {
  const { session } = useSession();
  const may = useMay();
  const { name, why } = titles[which];
  const [start, setStart] = useState(0);
  const [numbers, setNumbers] = useState('');
  const [notice, setNotice] = useState('');
  const [formError, setFormError] = useState('');
  const entries = useLoad(
    () =>
      api<{ list: Entry[]; totalRecords: number }>('GET', `/${which}`, {
        query: { start, length: pageLength },
      }),
    [which, start],
  );
  const add = useAction(async () => {
    const given = numbersOf(numbers);
    if (given.length === 0) {
      setFormError('Type or paste at least one number.');
      return;
    }
    const answer = await api<{ added_contacts: number; invalid: number }>('POST', `/${which}`, {
      body: { [which]: { contacts: { gsm: given.map((value) => ({ value })) } } },
    });
    setNumbers('');
    const already = given.length - answer.added_contacts - answer.invalid;
    const said = [
      `${formatNumber(answer.added_contacts)} added to the ${name}`,
      answer.invalid > 0 ? `${formatNumber(answer.invalid)} invalid` : '',
      already > 0 ? `${formatNumber(already)} already there` : '',
    ].filter(Boolean);
    setNotice(`${said.join(', ')}.`);
    await entries.reload();
  });
  const remove = useAction(async (entry: Entry) => {
    await api('DELETE', `/${which}/contact/${entry.id}`);
    setNotice(`${entry.destination} removed from the ${name}: it can be sent to again.`);
    await entries.reload();
  });
  const headingId = `${which}-title`;
  const data = entries.data;

  return (
    <section class="card number-list" aria-labelledby={headingId}>
      <h2 id={headingId}>{name}</h2>
      <p class="hint">{why}</p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorNotice error={remove.error} />
      {may(routes[which].add) && (
        <form
          class="number-add"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            setNotice('');
            void add.act();
          }}
        >
          <Field
            label={`Numbers to add to the ${name}`}
            error={formError || (add.error ? errorText(add.error) : undefined)}
            hint="One a line, or separated by commas; country code first."
          >
            {(id, describedBy) => (
              <textarea
                id={id}
                rows={2}
                value={numbers}
                aria-describedby={describedBy}
                aria-invalid={formError || add.error ? 'true' : undefined}
                onInput={(e) => {
                  setNumbers((e.target as HTMLTextAreaElement).value);
                  setFormError('');
                  add.setError(undefined);
                }}
              />
            )}
          </Field>
          <button type="submit" disabled={add.pending}>
            {add.pending ? 'Adding…' : `Add to the ${name}`}
          </button>
        </form>
      )}

      {entries.error ? (
        <ErrorNotice error={entries.error} />
      ) : !data ? (
        <Loading />
      ) : data.list.length === 0 ? (
        <p class="empty">The {name} is empty.</p>
      ) : (
        <>
          <p class="counter">
            {formatNumber(data.totalRecords)} number{data.totalRecords === 1 ? '' : 's'}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Added</th>
                  <th scope="col">Campaign</th>
                  <th scope="col">Fields</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.list.map((e) => {
                  const fields = [e.info1, e.info2, e.info3, e.info4].filter(Boolean).join(', ');
                  return (
                    <tr key={e.id}>
                      <td class="mono">{e.destination}</td>
                      <td>{formatDate(e.date, session.timezone)}</td>
                      <td>
                        {e.campaign_id ? (
                          <a {...linkTo(`/campaigns/${e.campaign_id}`)}>{e.campaign_id}</a>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td>{fields || '—'}</td>
                      <td class="row-actions">
                        {may(routes[which].remove) && (
                          <button
                            type="button"
                            class="secondary"
                            aria-label={`Remove ${e.destination} from the ${name}`}
                            disabled={remove.pending}
                            onClick={() => void remove.act(e)}
                          >
                            Remove
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pager start={start} length={pageLength} total={data.totalRecords} onStart={setStart} />
        </>
      )}
    </section>
  );
}
