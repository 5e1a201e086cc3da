// A small router over the History API: paths under /console, links that do not reload the page.
import { useEffect, useState } from 'preact/hooks';

export const base = '/console';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** Goes to a console path (`/campaigns/12`), keeping the page. */
export function navigate(path: string, replace = false): void {
  const url = `${base}${path === '/' ? '' : path}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.scrollTo(0, 0);
  for (const l of listeners) l();
}

/** The current console path (`/`, `/campaigns/12`) and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => {
    const path = location.pathname.startsWith(base)
      ? location.pathname.slice(base.length)
      : location.pathname;
    return { path: path === '' ? '/' : path, query: new URLSearchParams(location.search) };
  };
  const [state, setState] = useState(read);
  useEffect(() => {
    const update = () => setState(read());
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return state;
}

/** Matches `/campaigns/:ticket` against a path; the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

/** Link props for an in-console anchor: a real href (open in a new tab works) and a click that stays. */
export function linkTo(path: string) {
  return {
    href: `${base}${path === '/' ? '' : path}`,
    onClick: (event: MouseEvent) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      navigate(path);
    },
  };
}
