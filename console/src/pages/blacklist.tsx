// Blacklist and NPAI: the two lists of numbers every send of the account leaves out, each with its own
// paging, a form to add numbers, and a way to take a number off so it can be sent to again.
import './lists.css';
import { NumberListSection } from '../components/list-numbers.tsx';
import { PageTitle } from '../components/ui.tsx';

export function BlacklistPage() {
  return (
    <section class="lists-page">
      <PageTitle>Blacklist and NPAI</PageTitle>
      <p class="hint page-intro">
        Sends count the numbers found here as blacklisted or NPAI and charge nothing for them.
      </p>
      <NumberListSection which="blacklist" />
      <NumberListSection which="npai" />
    </section>
  );
}
