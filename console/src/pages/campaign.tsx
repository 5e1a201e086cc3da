// Placeholder until this page is written (issue 11, in progress).
export function CampaignPage({ ticket }: { ticket: string }) {
  return <h1>CampaignPage</h1>;
}
