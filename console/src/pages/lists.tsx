// Lists: the account's contact lists with their counts (GET /lists), a new list from pasted contacts or a CSV
// file, and deleting a list after a confirmation.
import './lists.css';
import { useState } from 'preact/hooks';
import type { ListSummaryView } from '../../../src/campaigns/lists.schemas.ts';
import { api } from '../api.ts';
import { ListImport } from '../components/list-import.tsx';
import { ErrorNotice, Loading, Notice, PageTitle, useAction, useLoad } from '../components/ui.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { linkTo } from '../router.ts';
import { useMay, useSession } from '../session.ts';

export type ListSummary = ListSummaryView;

export function ListsPage() {
  const { session } = useSession();
  const may = useMay();
  const lists = useLoad(() => api<{ lists: ListSummary[] }>('GET', '/lists').then((a) => a.lists), []);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const remove = useAction(async (list: ListSummary) => {
    await api('DELETE', `/list/${list.id}`);
    setConfirming(null);
    setNotice(`List “${list.name}” deleted.`);
    await lists.reload();
  });

  const createdList = lists.data?.find((l) => l.id === created);
  return (
    <section class="lists-page">
      <PageTitle>Lists</PageTitle>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorNotice error={remove.error} />
      {lists.error ? (
        <ErrorNotice error={lists.error} />
      ) : !lists.data ? (
        <Loading what="Loading your lists" />
      ) : lists.data.length === 0 ? (
        <p class="empty">No lists yet{may('POST /list') ? ': create one below' : ''}.</p>
      ) : (
        <div class="table-wrap" key="lists">
          <table class="lists-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col" class="num">
                  Contacts
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {lists.data.map((l) => (
                <tr key={l.id}>
                  <td>
                    <a {...linkTo(`/lists/${l.id}`)}>{l.name}</a>
                  </td>
                  <td>{formatDate(l.date, session.timezone)}</td>
                  <td class="num">{formatNumber(l.count)}</td>
                  <td class="row-actions">
                    {confirming === l.id ? (
                      <span class="confirm">
                        <span>
                          Delete “{l.name}” and its {formatNumber(l.count)} contacts?
                        </span>
                        <button
                          type="button"
                          class="danger"
                          disabled={remove.pending}
                          onClick={() => void remove.act(l)}
                        >
                          Yes, delete
                        </button>
                        <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                          Keep it
                        </button>
                      </span>
                    ) : (
                      <>
                        {may('POST /send/lists') && (
                          <a class="button-link" {...linkTo(`/send?list=${l.id}`)}>
                            Send
                          </a>
                        )}
                        {may('DELETE /list/:id') && (
                          <button
                            type="button"
                            class="secondary"
                            aria-label={`Delete ${l.name}`}
                            onClick={() => {
                              setNotice('');
                              setConfirming(l.id);
                            }}
                          >
                            Delete
                          </button>
                        )}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {/* Keyed: the table appearing above must not take this card's place (and the import's state). */}
      {may('POST /list') && (
        <div class="card" key="new-list">
          <h2>New list</h2>
          <ListImport
            onImported={(id) => {
              setNotice('');
              setCreated(id);
              void lists.reload();
            }}
          />
          {createdList && (
            <p>
              <a {...linkTo(`/lists/${createdList.id}`)}>Open “{createdList.name}”</a> (
              {formatNumber(createdList.count)} contacts)
            </p>
          )}
        </div>
      )}
    </section>
  );
}
