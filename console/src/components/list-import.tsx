// Contacts into a list, pasted or from a CSV file (number, info1…info4, header optional), sent in chunks of
// 500 per POST /list so a large file shows its progress and a failure stops at a known place: the first
// chunk creates the list (unless one is given), the next ones add to it by listId.
import { useState } from 'preact/hooks';
import type { SavedListView } from '../../../src/campaigns/lists.schemas.ts';
import { api, errorText } from '../api.ts';
import { formatNumber } from '../format.ts';
import { type ContactRow, CsvFileField, contactsOf, parseCsv } from './csv-file.tsx';
import { Field, Notice, TextField } from './ui.tsx';

export const importChunk = 500;

type SaveAnswer = SavedListView;

interface Progress {
  listId: string | null;
  sent: number;
  total: number;
  added: number;
  invalid: number;
  duplicates: number;
  finished: boolean;
  error: string;
}

export function ListImport({
  listId,
  onImported,
}: {
  /** The list to add to; without it, the first chunk creates a list named by the form. */
  listId?: string;
  /** Told once the list holds new contacts (after the last chunk, or the one that failed). */
  onImported: (listId: string) => void;
}) {
  const [name, setName] = useState('');
  const [pasted, setPasted] = useState('');
  const [file, setFile] = useState<{ name: string; contacts: ContactRow[]; header: string[] | null } | null>(
    null,
  );
  const [progress, setProgress] = useState<Progress | null>(null);
  const [formError, setFormError] = useState('');
  const running = progress !== null && !progress.finished;

  const contacts = [
    ...(pasted.trim() ? contactsOf(parseCsv(pasted)).contacts : []),
    ...(file?.contacts ?? []),
  ];

  async function run() {
    if (contacts.length === 0) {
      setFormError('Paste contacts or choose a CSV file first.');
      return;
    }
    setFormError('');
    const state: Progress = {
      listId: listId ?? null,
      sent: 0,
      total: contacts.length,
      added: 0,
      invalid: 0,
      duplicates: 0,
      finished: false,
      error: '',
    };
    setProgress({ ...state });
    for (let at = 0; at < contacts.length; at += importChunk) {
      const chunk = contacts.slice(at, at + importChunk);
      try {
        const answer = await api<SaveAnswer>('POST', '/list', {
          body: {
            list: {
              ...(state.listId ? { listId: state.listId } : name.trim() ? { name: name.trim() } : {}),
              contacts: { gsm: chunk },
            },
          },
        });
        state.listId = String(answer.id);
        state.added += answer.contacts;
        state.invalid += answer.invalid;
        state.duplicates += answer.duplicates;
        state.sent = at + chunk.length;
      } catch (e) {
        state.error =
          state.sent === 0
            ? errorText(e)
            : `Stopped after ${formatNumber(state.sent)} of ${formatNumber(state.total)} contacts: ${errorText(e)}`;
        break;
      } finally {
        setProgress({ ...state });
      }
    }
    state.finished = true;
    setProgress({ ...state });
    if (state.listId && state.added > 0) onImported(state.listId);
    if (!state.error) {
      setPasted('');
      setFile(null);
      setName('');
    }
  }

  const percent = progress ? Math.round((progress.sent / Math.max(progress.total, 1)) * 100) : 0;
  return (
    <form
      class="list-import"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (!running) void run();
      }}
    >
      {!listId && (
        <TextField
          label="List name"
          value={name}
          onValue={setName}
          maxLength={100}
          hint="Empty names the list after its creation date."
        />
      )}
      <Field
        label="Contacts"
        error={formError}
        hint="One a line: the number (country code first), then up to four fields info1…info4, separated by commas."
      >
        {(id, describedBy) => (
          <textarea
            id={id}
            rows={4}
            value={pasted}
            disabled={running}
            aria-invalid={formError ? 'true' : undefined}
            aria-describedby={describedBy}
            placeholder="33612345678,Alice,Paris"
            onInput={(e) => {
              setPasted((e.target as HTMLTextAreaElement).value);
              setFormError('');
            }}
          />
        )}
      </Field>
      <CsvFileField
        label="Contacts from a CSV file"
        hint="Columns number, info1…info4; a header row is optional."
        disabled={running}
        onRows={(rows, fileName) => {
          const read = contactsOf(rows);
          setFile({ name: fileName, ...read });
          setFormError('');
        }}
      />
      {file && (
        <div class="list-file">
          <span>
            {file.name}: {formatNumber(file.contacts.length)} contacts
            {file.header ? ` (header: ${file.header.join(', ')})` : ' (no header)'}
          </span>
          <button type="button" class="secondary" disabled={running} onClick={() => setFile(null)}>
            Remove the file
          </button>
        </div>
      )}
      <div class="actions">
        <button type="submit" disabled={running}>
          {running
            ? 'Importing…'
            : contacts.length === 0
              ? listId
                ? 'Add the contacts'
                : 'Create the list'
              : `${listId ? 'Add' : 'Create the list with'} ${formatNumber(contacts.length)} contact${contacts.length === 1 ? '' : 's'}`}
        </button>
      </div>
      {progress && (
        <div class="list-progress" data-testid="import-progress">
          <div
            class="progress"
            role="progressbar"
            aria-label="Import progress"
            aria-valuemin={0}
            aria-valuemax={progress.total}
            aria-valuenow={progress.sent}
            aria-valuetext={`${progress.sent} of ${progress.total} contacts`}
          >
            <span style={{ width: `${percent}%` }} />
          </div>
          <p class="counter" aria-live="polite">
            {formatNumber(progress.sent)} of {formatNumber(progress.total)} sent · added{' '}
            <strong data-testid="import-added">{formatNumber(progress.added)}</strong> · invalid{' '}
            <strong data-testid="import-invalid">{formatNumber(progress.invalid)}</strong> · duplicates{' '}
            <strong data-testid="import-duplicates">{formatNumber(progress.duplicates)}</strong>
          </p>
          {progress.error && <Notice kind="error">{progress.error}</Notice>}
          {progress.finished && !progress.error && (
            <Notice kind="success">Imported: {formatNumber(progress.added)} contacts added.</Notice>
          )}
        </div>
      )}
    </form>
  );
}
