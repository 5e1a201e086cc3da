// Placeholder until this page is written (issue 11, in progress).
export function CampaignsPage() {
  return <h1>CampaignsPage</h1>;
}
