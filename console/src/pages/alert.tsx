// Placeholder until this page is written (issue 11, in progress).
export function AlertPage() {
  return <h1>AlertPage</h1>;
}
