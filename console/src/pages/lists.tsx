// Placeholder until this page is written (issue 11, in progress).
export function ListsPage() {
  return <h1>ListsPage</h1>;
}
