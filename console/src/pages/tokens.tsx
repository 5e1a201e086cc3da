// Placeholder until this page is written (issue 11, in progress).
export function TokensPage() {
  return <h1>TokensPage</h1>;
}
