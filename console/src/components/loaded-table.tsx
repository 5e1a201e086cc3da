// A table of what a page loaded: its error, its loading line, its empty line, or its rows under their headings
// (the last heading may be empty: a column of actions, named for screen readers only).
import type { ComponentChildren } from 'preact';
import { ErrorNotice, type Loaded, Loading } from './ui.tsx';

export function LoadedTable<T>({
  loaded,
  loading,
  empty,
  caption,
  headings,
  row,
}: {
  loaded: Loaded<T[]>;
  /** What is loading, said while it does ("Loading your sender IDs"). */
  loading: string;
  empty: ComponentChildren;
  caption: string;
  headings: string[];
  row: (item: T) => ComponentChildren;
}) {
  if (loaded.error) return <ErrorNotice error={loaded.error} />;
  if (!loaded.data) return <Loading what={loading} />;
  if (loaded.data.length === 0) return <p class="empty">{empty}</p>;
  return (
    <div class="table-wrap">
      <table class="account-table">
        <caption class="account-hidden">{caption}</caption>
        <thead>
          <tr>
            {headings.map((h) => (
              <th key={h} scope="col">
                {h === '' ? <span class="account-hidden">Actions</span> : h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{loaded.data.map(row)}</tbody>
      </table>
    </div>
  );
}
