// Users and roles (the owner's): the account's users (GET /users), an invitation by e-mail with a role
// (POST /users, which e-mails the one-time link), a role changed (PUT /users/:id) and a user removed
// (DELETE /users/:id) after a confirmation. The API's refusals (no SMTP, the last owner) are shown in its words.
import './account.css';
import { useState } from 'preact/hooks';
import { type Role, roles } from '../../../src/shared/auth-context.ts';
import { permissions, roleGrants } from '../../../src/users/permissions.ts';
import type { UserView } from '../../../src/users/users.schemas.ts';
import { api } from '../api.ts';
import { ConfirmButton, errorFor, formLevelError } from '../components/account-parts.tsx';
import {
  ErrorNotice,
  Loading,
  Notice,
  PageTitle,
  Select,
  SelectField,
  TextField,
  useAction,
  useLoad,
} from '../components/ui.tsx';
import { formatDate } from '../format.ts';
import { useSession } from '../session.ts';

/** What a role may do, from the server's own table (src/users/permissions.ts): its permissions, or everything. */
function roleMeaning(role: Role): string {
  const grants = roleGrants[role];
  return grants.size === permissions.length
    ? 'everything'
    : permissions.filter((p) => grants.has(p)).join(', ');
}

const roleOptions = roles.map((r) => ({ value: r, label: `${r}: ${roleMeaning(r)}` }));

export function UsersPage() {
  const { session, refresh } = useSession();
  const users = useLoad(() => api<{ users: UserView[] }>('GET', '/users').then((a) => a.users), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('viewer');
  const [missing, setMissing] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState('');

  const invite = useAction(async () => {
    const answer = await api<{ user: UserView & { invitation_expires_at: string } }>('POST', '/users', {
      body: { user: { email: email.trim(), role } },
    });
    setNotice(
      `Invitation e-mailed to ${answer.user.email} as ${answer.user.role}: its link works once, until ${formatDate(answer.user.invitation_expires_at, session.timezone)}.`,
    );
    setEmail('');
    await users.reload();
  });
  const changeRole = useAction(async (user: UserView, next: string) => {
    await api('PUT', `/users/${user.id}`, { body: { user: { role: next } } });
    setNotice(`${user.email} is now ${next}.`);
    await users.reload();
    // One's own role changed: the page's controls follow it.
    if (user.email === session.email) await refresh();
  });
  const remove = useAction(async (user: UserView) => {
    await api('DELETE', `/users/${user.id}`);
    setNotice(`${user.email} was removed: its sessions no longer open anything.`);
    await users.reload();
  });

  const fields = ['email', 'role'];
  const formError = formLevelError(invite.error, fields);

  return (
    <section>
      <PageTitle>Users and roles</PageTitle>
      <p class="account-intro">
        The people who sign in to this account, each with a role. Invite someone by e-mail: the link in the
        e-mail sets their password. A role change or a removal takes effect at their next request.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorNotice error={changeRole.error ?? remove.error} />

      {users.error ? (
        <ErrorNotice error={users.error} />
      ) : !users.data ? (
        <Loading what="Loading the users" />
      ) : (
        <div class="table-wrap">
          <table class="account-table">
            <caption class="account-hidden">The account's users</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="account-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <tr key={u.id}>
                  <td data-label="E-mail">
                    <strong>{u.email}</strong>
                    {u.email === session.email && <span class="hint"> (you)</span>}
                  </td>
                  <td data-label="Role">
                    <Select
                      label={`Role of ${u.email}`}
                      options={roleOptions}
                      value={u.role}
                      disabled={changeRole.pending}
                      onValue={(next) => void changeRole.act(u, next)}
                    />
                  </td>
                  <td data-label="State">
                    <span class={`state state-${u.state === 'active' ? 'live' : 'expired'}`}>{u.state}</span>
                  </td>
                  <td data-label="Created">{formatDate(u.created_at, session.timezone)}</td>
                  <td class="account-row-actions">
                    <ConfirmButton
                      label="Remove"
                      ariaLabel={`Remove ${u.email}`}
                      question={<>Remove {u.email}? They can no longer sign in.</>}
                      confirmLabel="Yes, remove"
                      pending={remove.pending}
                      onConfirm={() => remove.act(u)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <form
        class="card account-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setNotice('');
          changeRole.setError(undefined);
          remove.setError(undefined);
          const why = email.trim() === '' ? 'Enter the e-mail address to send the invitation to.' : undefined;
          setMissing(why);
          if (!why) void invite.act();
        }}
      >
        <h2>Invite a user</h2>
        <ErrorNotice error={formError} />
        <TextField
          label="E-mail"
          type="email"
          autoComplete="off"
          value={email}
          onValue={setEmail}
          error={missing ?? errorFor(invite.error, fields, 'email')}
        />
        <SelectField
          label="Role"
          options={roleOptions}
          value={role}
          onValue={setRole}
          error={errorFor(invite.error, fields, 'role')}
        />
        <button type="submit" disabled={invite.pending}>
          {invite.pending ? 'Inviting…' : 'Send the invitation'}
        </button>
      </form>
    </section>
  );
}
