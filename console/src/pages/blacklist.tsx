// Placeholder until this page is written (issue 11, in progress).
export function BlacklistPage() {
  return <h1>BlacklistPage</h1>;
}
