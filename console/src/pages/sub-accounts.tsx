// Placeholder until this page is written (issue 11, in progress).
export function SubAccountsPage() {
  return <h1>SubAccountsPage</h1>;
}
