// API tokens: the account's tokens (GET /token, never their secrets), a new one (POST /token) whose secret is
// shown this once, and revoking one (DELETE /token/:id) after a confirmation.
import './account.css';
import { useState } from 'preact/hooks';
import type { CreatedTokenView, TokenInfoView } from '../../../src/accounts/tokens.schemas.ts';
import { type TokenScope, tokenScopes } from '../../../src/shared/auth-context.ts';
import { scopeGrants } from '../../../src/users/permissions.ts';
import { api } from '../api.ts';
import { ConfirmButton, errorFor, formLevelError, SecretOnce } from '../components/account-parts.tsx';
import {
  ErrorNotice,
  Loading,
  Notice,
  PageTitle,
  SelectField,
  TextField,
  useAction,
  useLoad,
} from '../components/ui.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { useMay, useSession } from '../session.ts';

/** The token just created, with the name the form gave it (POST /token does not echo it). */
type Created = Pick<CreatedTokenView, 'token' | 'token_id'> & { name: string };

/** A duration in seconds as people say it: "90 days", "12 hours". */
function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return `${formatNumber(n)} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${formatNumber(seconds)} seconds`;
}

/**
 * The scopes the signed-in user may give a token: those whose every right is the user's (nobody creates a
 * token wider than itself), from the server's scope table and the session's permissions.
 */
function grantableScopes(own: readonly string[]): TokenScope[] {
  return tokenScopes.filter((scope) => [...scopeGrants[scope]].every((p) => own.includes(p)));
}

const scopeMeaning: Record<TokenScope, string> = {
  full: 'full: every right of the account (SMSFactor tokens)',
  send: 'send: sends, cancels and reads',
  read: 'read: reads only',
};

export function TokensPage() {
  const { session } = useSession();
  const may = useMay();
  const scopes = grantableScopes(session.permissions);
  const [scope, setScope] = useState<string>(scopes[0] ?? 'read');
  const tokens = useLoad(() => api<{ tokens: TokenInfoView[] }>('GET', '/token').then((a) => a.tokens), []);
  const [name, setName] = useState('');
  const [ttl, setTtl] = useState('');
  const [ips, setIps] = useState('');
  const [invalid, setInvalid] = useState<{ name?: string; ttl?: string }>({});
  const [created, setCreated] = useState<Created | null>(null);
  const [notice, setNotice] = useState('');

  const create = useAction(async () => {
    const allowed = ips
      .split(/[\s,]+/)
      .map((ip) => ip.trim())
      .filter(Boolean);
    const answer = await api<{ token: string; token_id: string }>('POST', '/token', {
      body: {
        token: {
          name: name.trim(),
          ...(ttl.trim() ? { ttl: Number(ttl.trim()) } : {}),
          ...(allowed.length > 0 ? { allowed_ips: allowed } : {}),
          scope,
        },
      },
    });
    setCreated({ token: answer.token, token_id: answer.token_id, name: name.trim() });
    setName('');
    setTtl('');
    setIps('');
    await tokens.reload();
  });
  const revoke = useAction(async (token: TokenInfoView) => {
    await api('DELETE', `/token/${token.api_token_id}`);
    if (created?.token_id === token.api_token_id) setCreated(null);
    setNotice(`Token “${token.name}” revoked: it no longer opens the API.`);
    await tokens.reload();
  });

  const fields = ['name', 'ttl', 'allowed_ips', 'scope'];
  const fieldError = (field: string) => errorFor(create.error, fields, field);
  const formError = formLevelError(create.error, fields);

  return (
    <section>
      <PageTitle>API tokens</PageTitle>
      <p class="account-intro">
        A token lets a program use Pigeon's API as this account: send it as{' '}
        <code>Authorization: Bearer &lt;token&gt;</code>. Revoke a token you no longer use.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      {created && (
        <SecretOnce label={`Token “${created.name}”`} value={created.token}>
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </SecretOnce>
      )}
      <ErrorNotice error={revoke.error} />

      {tokens.error ? (
        <ErrorNotice error={tokens.error} />
      ) : !tokens.data ? (
        <Loading what="Loading your tokens" />
      ) : tokens.data.length === 0 ? (
        <p class="empty">No tokens{may('POST /token') ? ': create one below' : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="account-table">
            <caption class="account-hidden">Your API tokens</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Allowed IPs</th>
                <th scope="col">Scope</th>
                <th scope="col">Active</th>
                <th scope="col">
                  <span class="account-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((t) => (
                <tr key={t.api_token_id}>
                  <td data-label="Name">
                    <strong>{t.name}</strong>
                  </td>
                  <td data-label="Created">{formatDate(t.created_at, session.timezone)}</td>
                  <td data-label="Expires">
                    {t.expired_at ? (
                      <>
                        {formatDate(t.expired_at, session.timezone)}
                        {t.ttl !== null && <span class="hint"> after {duration(t.ttl)}</span>}
                      </>
                    ) : (
                      'never'
                    )}
                  </td>
                  <td data-label="Last used">
                    {t.last_used_at ? formatDate(t.last_used_at, session.timezone) : 'never'}
                  </td>
                  <td data-label="Allowed IPs">
                    {t.allowed_ips.length === 0 ? (
                      'any'
                    ) : (
                      <span class="mono">{t.allowed_ips.join(', ')}</span>
                    )}
                  </td>
                  <td data-label="Scope">{t.scope}</td>
                  <td data-label="Active">
                    <span class={`state state-${t.is_active ? 'live' : 'expired'}`}>
                      {t.is_active ? 'active' : 'expired'}
                    </span>
                  </td>
                  <td class="account-row-actions">
                    {may('DELETE /token/:id') && (
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke ${t.name}`}
                        question={<>Revoke “{t.name}”? Programs using it will be refused.</>}
                        confirmLabel="Yes, revoke"
                        pending={revoke.pending}
                        onConfirm={() => revoke.act(t)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {may('POST /token') && (
        <form
          class="card account-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setNotice('');
            const next = {
              name:
                name.trim() === ''
                  ? 'Give the token a name, such as the program that will use it.'
                  : undefined,
              ttl:
                ttl.trim() !== '' && !/^\d+$/.test(ttl.trim())
                  ? 'Enter a whole number of seconds, or leave it empty for a token that does not expire.'
                  : undefined,
            };
            setInvalid(next);
            if (!next.name && !next.ttl) void create.act();
          }}
        >
          <h2>New token</h2>
          <ErrorNotice error={formError} />
          <TextField
            label="Name"
            value={name}
            onValue={setName}
            maxLength={255}
            error={invalid.name ?? fieldError('name')}
          />
          <TextField
            label="Lifetime in seconds (optional)"
            inputMode="numeric"
            value={ttl}
            onValue={setTtl}
            hint="Empty: the token does not expire. 86400 is a day, 7776000 ninety days."
            error={invalid.ttl ?? fieldError('ttl')}
          />
          <TextField
            label="Allowed IP addresses (optional)"
            value={ips}
            onValue={setIps}
            hint="IP addresses or CIDR blocks, separated by commas or spaces. Empty: any address."
            error={fieldError('allowed_ips')}
          />
          <SelectField
            label="Scope"
            options={scopes.map((s) => ({ value: s, label: scopeMeaning[s] }))}
            value={scope}
            onValue={setScope}
            hint="What programs holding the token may do. A token is never given more rights than your role has."
            error={fieldError('scope')}
          />
          <button type="submit" disabled={create.pending}>
            {create.pending ? 'Creating…' : 'Create token'}
          </button>
        </form>
      )}
    </section>
  );
}
