// One list: its contacts a page at a time (GET /list/:id with the API's `search`), each editable and
// removable, contacts added from pasted text or a CSV file, duplicates removed, and NPAI numbers cleared.
import './lists.css';
import { useState } from 'preact/hooks';
import type { ListContactView, ListPageView } from '../../../src/campaigns/lists.schemas.ts';
import { ApiFailure, api, errorText } from '../api.ts';
import { ListImport } from '../components/list-import.tsx';
import {
  ErrorNotice,
  Loading,
  Notice,
  Pager,
  PageTitle,
  TextField,
  useAction,
  useLoad,
} from '../components/ui.tsx';
import { formatNumber } from '../format.ts';
import { linkTo } from '../router.ts';
import { useMay } from '../session.ts';

type Contact = ListContactView;

type ListAnswer = ListPageView;

const pageLength = 50;
const infoKeys = ['info1', 'info2', 'info3', 'info4'] as const;

function ContactEditor({
  contact,
  onSaved,
  onCancel,
}: {
  contact: Contact;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const [fields, setFields] = useState<Omit<Contact, 'id'>>({ ...contact });
  const save = useAction(async () => {
    await api('PUT', `/list/contact/${contact.id}`, { body: { contact: fields } });
    onSaved();
  });
  const error = save.error;
  const details = error instanceof ApiFailure ? error.details : '';
  const fieldError = (name: string) =>
    new RegExp(`contact\\.${name}\\b`).test(details) ? errorText(error) : undefined;
  const general = error && !/contact\.(destination|info[1-4])\b/.test(details);
  return (
    <form
      class="card contact-editor"
      aria-labelledby="contact-editor-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save.act();
      }}
    >
      <h2 id="contact-editor-title">Edit contact {contact.destination}</h2>
      <div class="contact-fields">
        <TextField
          label="Number"
          value={fields.destination}
          inputMode="tel"
          error={fieldError('destination')}
          onValue={(destination) => setFields({ ...fields, destination })}
        />
        {infoKeys.map((key) => (
          <TextField
            key={key}
            label={key}
            value={fields[key]}
            maxLength={255}
            error={fieldError(key)}
            onValue={(value) => setFields({ ...fields, [key]: value })}
          />
        ))}
      </div>
      {general && <ErrorNotice error={error} />}
      <div class="actions">
        <button type="submit" disabled={save.pending}>
          {save.pending ? 'Saving…' : 'Save the contact'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ListPage({ id }: { id: string }) {
  const may = useMay();
  const [start, setStart] = useState(0);
  const [search, setSearch] = useState('');
  const [searchInput, setSearchInput] = useState('');
  const [editing, setEditing] = useState<Contact | null>(null);
  const [notice, setNotice] = useState('');
  const page = useLoad(
    () =>
      api<ListAnswer>('GET', `/list/${encodeURIComponent(id)}`, {
        query: { start, length: pageLength, search },
      }),
    [id, start, search],
  );

  const change = useAction(async (run: () => Promise<string>) => {
    setNotice('');
    const said = await run();
    setNotice(said);
    await page.reload();
  });

  const data = page.data;
  if (page.error && !data) {
    return (
      <section>
        <PageTitle>List</PageTitle>
        <ErrorNotice error={page.error} />
        <p>
          <a {...linkTo('/lists')}>Back to the lists</a>
        </p>
      </section>
    );
  }
  if (!data) return <Loading what="Loading the list" />;

  return (
    <section class="lists-page">
      <p class="breadcrumb">
        <a {...linkTo('/lists')}>Lists</a>
      </p>
      <PageTitle
        actions={
          <>
            {may('POST /send/lists') && (
              <a class="button-link" {...linkTo(`/send?list=${id}`)}>
                Send to this list
              </a>
            )}
            {may('PUT /list/deduplicate/:id') && (
              <button
                type="button"
                class="secondary"
                disabled={change.pending}
                onClick={() =>
                  void change.act(async () => {
                    const a = await api<{ removed: number }>('PUT', `/list/deduplicate/${id}`);
                    return `Deduplicated: ${formatNumber(a.removed)} duplicate contact${a.removed === 1 ? '' : 's'} removed.`;
                  })
                }
              >
                Remove duplicates
              </button>
            )}
            {may('PUT /list/:id/npai/clear') && (
              <button
                type="button"
                class="secondary"
                disabled={change.pending}
                onClick={() =>
                  void change.act(async () => {
                    const a = await api<{ removed: number }>('PUT', `/list/${id}/npai/clear`);
                    return `NPAI numbers cleared: ${formatNumber(a.removed)} contact${a.removed === 1 ? '' : 's'} removed.`;
                  })
                }
              >
                Clear NPAI numbers
              </button>
            )}
          </>
        }
      >
        {data.name}
      </PageTitle>
      <p class="hint">
        {formatNumber(data.contacts)} contact{data.contacts === 1 ? '' : 's'}
        {search && `, ${formatNumber(data.totalDisplayRecords)} matching “${search}”`}
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorNotice error={change.error ?? page.error} />

      {editing && (
        <ContactEditor
          key={editing.id}
          contact={editing}
          onCancel={() => setEditing(null)}
          onSaved={() => {
            setNotice(`Contact ${editing.destination} saved.`);
            setEditing(null);
            void page.reload();
          }}
        />
      )}

      <form
        class="inline-form list-search"
        onSubmit={(event) => {
          event.preventDefault();
          setStart(0);
          setSearch(searchInput.trim());
        }}
      >
        <TextField
          label="Search (part of a number or of a field)"
          type="search"
          value={searchInput}
          onValue={setSearchInput}
        />
        <button type="submit">Search</button>
        {search && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setSearchInput('');
              setSearch('');
              setStart(0);
            }}
          >
            Show all
          </button>
        )}
      </form>

      {data.list.length === 0 ? (
        <p class="empty">{search ? 'No contact matches.' : 'This list has no contacts yet.'}</p>
      ) : (
        <div class="table-wrap" key="contacts">
          <table class="contacts-table">
            <thead>
              <tr>
                <th scope="col">Number</th>
                {infoKeys.map((k) => (
                  <th key={k} scope="col">
                    {k}
                  </th>
                ))}
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.list.map((c) => (
                <tr key={c.id}>
                  <td class="mono">{c.destination}</td>
                  {infoKeys.map((k) => (
                    <td key={k}>{c[k]}</td>
                  ))}
                  <td class="row-actions">
                    {may('PUT /list/contact/:id') && (
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Edit ${c.destination}`}
                        onClick={() => {
                          setNotice('');
                          setEditing(c);
                        }}
                      >
                        Edit
                      </button>
                    )}
                    {may('DELETE /list/contact/:id') && (
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Remove ${c.destination}`}
                        disabled={change.pending}
                        onClick={() =>
                          void change.act(async () => {
                            await api('DELETE', `/list/contact/${c.id}`);
                            if (editing?.id === c.id) setEditing(null);
                            return `Contact ${c.destination} removed.`;
                          })
                        }
                      >
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager start={start} length={pageLength} total={data.totalDisplayRecords} onStart={setStart} />

      {/* Keyed: rows appearing or going above must not take this card's place (and the import's state). */}
      {may('POST /list') && (
        <div class="card" key="add-contacts">
          <h2>Add contacts</h2>
          <ListImport
            listId={id}
            onImported={() => {
              setNotice('');
              void page.reload();
            }}
          />
        </div>
      )}
    </section>
  );
}
