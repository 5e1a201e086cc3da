// Placeholder until this page is written (issue 11, in progress).
export function ListPage({ id }: { id: string }) {
  return <h1>ListPage</h1>;
}
