// Placeholder until this page is written (issue 11, in progress).
export function WebhookPage({ id }: { id: string }) {
  return <h1>WebhookPage</h1>;
}
