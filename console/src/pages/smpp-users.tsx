// SMPP users: the credentials the account's SMPP clients bind with to Pigeon's SMPP server (GET /smpp/user,
// never their passwords), a new one (POST /smpp/user), and deleting one (DELETE /smpp/user/:system_id) after a
// confirmation.
import './account.css';
import { useState } from 'preact/hooks';
import type { SmppUserView } from '../../../src/smpp-server/smpp-users.schemas.ts';
import { api } from '../api.ts';
import { ConfirmButton, errorFor, formLevelError } from '../components/account-parts.tsx';
import { ErrorNotice, Loading, Notice, PageTitle, TextField, useAction, useLoad } from '../components/ui.tsx';
import { formatDate, formatNumber } from '../format.ts';
import { useMay, useSession } from '../session.ts';

export function SmppUsersPage() {
  const { session } = useSession();
  const may = useMay();
  const users = useLoad(
    () => api<{ smpp_users: SmppUserView[] }>('GET', '/smpp/user').then((a) => a.smpp_users),
    [],
  );
  const [systemId, setSystemId] = useState('');
  const [password, setPassword] = useState('');
  const [tps, setTps] = useState('');
  const [maxBinds, setMaxBinds] = useState('');
  const [ips, setIps] = useState('');
  const [notice, setNotice] = useState('');

  const create = useAction(async () => {
    const allowed = ips
      .split(/[\s,]+/)
      .map((ip) => ip.trim())
      .filter(Boolean);
    const answer = await api<{ smpp_user: SmppUserView }>('POST', '/smpp/user', {
      body: {
        smpp_user: {
          system_id: systemId.trim(),
          password,
          ...(tps.trim() ? { tps: Number(tps.trim()) } : {}),
          ...(maxBinds.trim() ? { max_binds: Number(maxBinds.trim()) } : {}),
          ...(allowed.length > 0 ? { allowed_ips: allowed } : {}),
        },
      },
    });
    setNotice(`SMPP user “${answer.smpp_user.system_id}” created: its clients can bind now.`);
    setSystemId('');
    setPassword('');
    setTps('');
    setMaxBinds('');
    setIps('');
    await users.reload();
  });
  const remove = useAction(async (user: SmppUserView) => {
    await api('DELETE', `/smpp/user/${encodeURIComponent(user.system_id)}`);
    setNotice(`SMPP user “${user.system_id}” deleted: its binds are refused from now on.`);
    await users.reload();
  });

  const fields = ['system_id', 'password', 'tps', 'max_binds', 'allowed_ips'];
  const fieldError = (field: string) => errorFor(create.error, fields, field);
  const formError = formLevelError(create.error, fields);

  return (
    <section>
      <PageTitle>SMPP users</PageTitle>
      <p class="account-intro">
        An SMPP client (Kannel, a gateway, your own system) binds to Pigeon's SMPP server with a system id and
        password of this account, and sends as this account: the same credits, filters and history as the API.
        SMPP limits passwords to 8 characters: restrict each user to its client's IP addresses.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorNotice error={remove.error} />

      {users.error ? (
        <ErrorNotice error={users.error} />
      ) : !users.data ? (
        <Loading what="Loading your SMPP users" />
      ) : users.data.length === 0 ? (
        <p class="empty">No SMPP users{may('POST /smpp/user') ? ': create one below' : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="account-table">
            <caption class="account-hidden">Your SMPP users</caption>
            <thead>
              <tr>
                <th scope="col">System id</th>
                <th scope="col">Created</th>
                <th scope="col">Submits per second</th>
                <th scope="col">Binds at most</th>
                <th scope="col">Allowed IPs</th>
                <th scope="col">
                  <span class="account-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <tr key={u.system_id}>
                  <td data-label="System id">
                    <strong class="mono">{u.system_id}</strong>
                  </td>
                  <td data-label="Created">{formatDate(u.created_at, session.timezone)}</td>
                  <td data-label="Submits per second">{u.tps === 0 ? 'no limit' : formatNumber(u.tps)}</td>
                  <td data-label="Binds at most">{formatNumber(u.max_binds)}</td>
                  <td data-label="Allowed IPs">
                    {u.allowed_ips.length === 0 ? (
                      'any'
                    ) : (
                      <span class="mono">{u.allowed_ips.join(', ')}</span>
                    )}
                  </td>
                  <td class="account-row-actions">
                    {may('DELETE /smpp/user/:system_id') && (
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete ${u.system_id}`}
                        question={<>Delete “{u.system_id}”? Its clients' binds will be refused.</>}
                        confirmLabel="Yes, delete"
                        pending={remove.pending}
                        onConfirm={() => remove.act(u)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {may('POST /smpp/user') && (
        <form
          class="card account-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setNotice('');
            void create.act();
          }}
        >
          <h2>New SMPP user</h2>
          <ErrorNotice error={formError} />
          <TextField
            label="System id"
            value={systemId}
            onValue={setSystemId}
            maxLength={15}
            hint="1 to 15 letters, digits or signs, no spaces; unique on this server."
            error={fieldError('system_id')}
          />
          <TextField
            label="Password"
            value={password}
            onValue={setPassword}
            maxLength={8}
            hint="At most 8 characters: SMPP's limit."
            error={fieldError('password')}
          />
          <TextField
            label="Submits per second (optional)"
            inputMode="numeric"
            value={tps}
            onValue={setTps}
            hint="Above it, submits are answered ESME_RTHROTTLED. Empty: 100; 0: no limit."
            error={fieldError('tps')}
          />
          <TextField
            label="Binds at most (optional)"
            inputMode="numeric"
            value={maxBinds}
            onValue={setMaxBinds}
            hint="Connections bound at once. Empty: 4."
            error={fieldError('max_binds')}
          />
          <TextField
            label="Allowed IP addresses (optional)"
            value={ips}
            onValue={setIps}
            hint="IP addresses or CIDR blocks, separated by commas or spaces. Empty: any address."
            error={fieldError('allowed_ips')}
          />
          <button type="submit" disabled={create.pending}>
            {create.pending ? 'Creating…' : 'Create SMPP user'}
          </button>
        </form>
      )}
    </section>
  );
}
