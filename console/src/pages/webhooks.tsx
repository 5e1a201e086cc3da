// Placeholder until this page is written (issue 11, in progress).
export function WebhooksPage() {
  return <h1>WebhooksPage</h1>;
}
