// Sender IDs: the ones the account asked for and what the operator decided (GET /sender), and asking for a new
// one (POST /sender). Where SENDER_APPROVAL is required, a send names only an approved one (or its parent's).
import './account.css';
import { useState } from 'preact/hooks';
import type { SenderIdView } from '../../../src/moderation/moderation.schemas.ts';
import { api } from '../api.ts';
import { errorFor, formLevelError } from '../components/account-parts.tsx';
import { LoadedTable } from '../components/loaded-table.tsx';
import { ErrorNotice, Notice, PageTitle, TextField, useAction, useLoad } from '../components/ui.tsx';
import { formatDate } from '../format.ts';
import { useSession } from '../session.ts';

const stateText: Record<SenderIdView['state'], string> = {
  pending: 'awaiting the operator',
  approved: 'approved',
  refused: 'refused',
};

export function SendersPage() {
  const { session } = useSession();
  const senders = useLoad(
    () => api<{ senders: SenderIdView[] }>('GET', '/sender').then((a) => a.senders),
    [],
  );
  const [sender, setSender] = useState('');
  const [note, setNote] = useState('');
  const [notice, setNotice] = useState('');
  const ask = useAction(async () => {
    const answer = await api<{ sender: SenderIdView }>('POST', '/sender', {
      body: { sender: { sender: sender.trim(), ...(note.trim() ? { note: note.trim() } : {}) } },
    });
    setNotice(`Sender ID “${answer.sender.sender}” asked for: the operator will approve or refuse it.`);
    setSender('');
    setNote('');
    await senders.reload();
  });
  const fields = ['sender.sender', 'sender.note'];
  const formError = formLevelError(ask.error, fields);

  return (
    <section>
      <PageTitle>Sender IDs</PageTitle>
      <p class="account-intro">
        The name or number your messages come from. The operator may require its approval before you send from
        it; a sub-account may also send from its parent's approved sender IDs.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <LoadedTable
        loaded={senders}
        loading="Loading your sender IDs"
        empty="No sender ID asked for yet: ask for one below."
        caption="Your sender IDs"
        headings={['Sender ID', 'State', 'Asked', 'Note']}
        row={(s) => (
          <tr key={s.id}>
            <td data-label="Sender ID">
              <strong class="mono">{s.sender}</strong>
            </td>
            <td data-label="State">
              <span class={`state state-${s.state}`}>{stateText[s.state]}</span>
              {s.reason && <span class="hint"> {s.reason}</span>}
            </td>
            <td data-label="Asked">{formatDate(s.created_at, session.timezone)}</td>
            <td data-label="Note">{s.note}</td>
          </tr>
        )}
      />
      <form
        class="card account-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setNotice('');
          void ask.act();
        }}
      >
        <h2>Ask for a sender ID</h2>
        <ErrorNotice error={formError} />
        <TextField
          label="Sender ID"
          value={sender}
          onValue={setSender}
          maxLength={15}
          hint="3 to 11 letters or digits with at least one letter, or up to 15 digits."
          error={errorFor(ask.error, fields, 'sender.sender')}
        />
        <TextField
          label="What it is for (optional)"
          value={note}
          onValue={setNote}
          maxLength={500}
          hint="Told to the operator: your brand, your use."
          error={errorFor(ask.error, fields, 'sender.note')}
        />
        <button type="submit" disabled={ask.pending}>
          {ask.pending ? 'Asking…' : 'Ask for it'}
        </button>
      </form>
    </section>
  );
}
