// Placeholder until this page is written (issue 11, in progress).
export function SendPage() {
  return <h1>SendPage</h1>;
}
