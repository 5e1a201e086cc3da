// Placeholder until this page is written (issue 11, in progress).
export function DashboardPage() {
  return <h1>DashboardPage</h1>;
}
