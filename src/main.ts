// The `pigeon` command: serve, migrate, and the operator's commands, all on the server's DATABASE_URL.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { usage } from './cli-usage.ts';
import { type Config, ConfigError, durationMs, loadConfig } from './config.ts';
import { checkConfiguration } from './config-check.ts';
import { connectorStatusJson, connectorStatusTable } from './delivery/connector-status.ts';
import { loadRoutingTable } from './delivery/routing/connectors-file.ts';
import { createDeps, createLogger, type Deps } from './deps.ts';
import { startRuntime } from './runtime.ts';
import { ApiError } from './shared/errors.ts';
import { idIn } from './shared/ids.ts';
import { BackupRefused, backupSqlite } from './store/backup.ts';
import { MoveRefused, moveToPostgres } from './store/move.ts';
import { type ReadyMessage, supervise, supervisedVariable } from './supervisor.ts';

class UsageError extends Error {}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

/** Writes to stdout, waiting when the pipe is full. */
function writeOut(chunk: string): Promise<void> {
  if (chunk === '' || process.stdout.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => process.stdout.once('drain', () => resolve()));
}

/** Writes pages of rows keyed by id, one JSON line each, asking for the next page after the last id. */
async function writePages(page: (after: number) => Promise<{ id: string }[]>): Promise<void> {
  for (let after = 0; ; ) {
    const rows = await page(after);
    if (rows.length === 0) return;
    await writeOut(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    after = Number(rows[rows.length - 1].id);
  }
}

function needId(value: string | undefined, what: string): number {
  const id = idIn(value);
  if (id === undefined) throw new UsageError(`${what} must be a positive integer, got "${value ?? ''}"`);
  return id;
}

function needInt(value: string | undefined, what: string): number {
  if (value === undefined || !/^-?\d+$/.test(value)) throw new UsageError(`${what} must be an integer`);
  return Number(value);
}

async function withDeps<T>(config: Config, run: (deps: Deps) => Promise<T>): Promise<T> {
  // The operator's commands: what they change is written in the audit log as the CLI's.
  const deps = await createDeps({ ...config, LOG_LEVEL: 'warn' }, { processActor: 'cli' });
  try {
    return await run(deps);
  } finally {
    await deps.close();
  }
}

async function serve(config: Config): Promise<void> {
  const supervised = process.env[supervisedVariable] === '1' && process.send !== undefined;
  if (config.ROLE === 'all' && config.PROCESSES === 'per-role' && !supervised) {
    // A bad connectors file stops the start here, every error named, before any process is started.
    loadRoutingTable(config);
    return supervise(config, createLogger(config));
  }
  const deps = await createDeps(config, supervised ? { supervisor: process } : {});
  // Its /metrics and /ready (the API process's) then answer for every process of the server.
  if (supervised) deps.ops.superviseThrough(process);
  const running = await startRuntime(deps);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'shutting down');
    // A step that cannot finish (a receiver that never answers, a wedged SMSC) must not keep the process
    // from exiting: past the deadline it exits non-zero, naming what was still running (the database is
    // closed last, so it is still open then).
    const timeoutMs = durationMs(config.SHUTDOWN_TIMEOUT);
    setTimeout(() => {
      const unfinished = [...running.unfinished(), 'database'];
      deps.logger.error(
        { unfinished, timeoutMs },
        'shutdown did not finish within SHUTDOWN_TIMEOUT; exiting with steps still running',
      );
      process.exit(1);
    }, timeoutMs);
    await running.stop();
    await deps.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  if (supervised) {
    // The supervisor is gone (killed, say): this process stops too rather than serve unsupervised. It may have
    // gone while this process was starting, before this handler was set.
    process.once('disconnect', () => void shutdown('disconnect'));
    if (!process.connected) return shutdown('disconnect');
    process.send!({
      pigeon: 'ready',
      apiUrl: running.apiUrl,
      linkUrl: running.linkUrl,
      metricsUrl: running.metricsUrl,
    } satisfies ReadyMessage);
  }
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      credits: { type: 'string' },
      parent: { type: 'string' },
      unlimited: { type: 'boolean' },
      name: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      text: { type: 'string' },
      connector: { type: 'string' },
      price: { type: 'string' },
      currency: { type: 'string' },
      account: { type: 'string' },
      role: { type: 'string' },
      'system-id': { type: 'string' },
      tps: { type: 'string' },
      'max-binds': { type: 'string' },
      'allow-ip': { type: 'string' },
      json: { type: 'boolean' },
      limit: { type: 'string' },
      off: { type: 'boolean' },
      state: { type: 'string' },
      reason: { type: 'string' },
      kind: { type: 'string' },
      value: { type: 'string' },
      action: { type: 'string' },
      'clear-2fa': { type: 'boolean' },
      daily: { type: 'string' },
      monthly: { type: 'string' },
      rps: { type: 'string' },
      'parts-per-second': { type: 'string' },
      countries: { type: 'string' },
      clear: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, sub, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  if (command === 'config') {
    if (sub !== 'check' || rest.length > 0) throw new UsageError('unknown config command; try: config check');
    const lines = checkConfiguration();
    for (const line of lines) print(line);
    const errors = lines.flatMap((line) => ('errors' in line ? line.errors : []));
    if (errors.length > 0) {
      process.stderr.write(
        `pigeon: the configuration has ${errors.length} error${errors.length === 1 ? '' : 's'}:\n  ${errors.join('\n  ')}\n`,
      );
      process.exitCode = 1;
    }
    return;
  }
  const config = loadConfig();
  switch (`${command} ${sub ?? ''}`.trim().split(' ')[0]) {
    case 'serve':
      return serve(config);
    case 'migrate':
      return withDeps(config, async () => print({ migrated: true }));
    case 'account': {
      if (sub === 'list') {
        if (rest.length > 0) throw new UsageError(`account list takes no argument, got "${rest.join(' ')}"`);
        return withDeps(config, async (deps) => {
          for await (const account of deps.services.accounts.operatorList())
            await writeOut(`${JSON.stringify(account)}\n`);
        });
      }
      if (sub === 'show' || sub === 'lock' || sub === 'unlock') {
        const accountId = needId(rest[0], 'ID');
        if (rest.length > 1)
          throw new UsageError(`account ${sub} takes one ID, got also "${rest.slice(1).join(' ')}"`);
        const answer = await withDeps<object>(config, async (deps) => {
          const { accounts, limits } = deps.services;
          if (sub === 'show')
            return {
              ...(await accounts.operatorShow(accountId)),
              limits: (await limits.show('cli', accountId)).limits,
            };
          return sub === 'lock' ? accounts.operatorLock(accountId) : accounts.operatorUnlock(accountId);
        });
        return print(answer);
      }
      if (sub === 'postpaid') {
        const accountId = needId(rest[0], 'ID');
        if (rest.length > 1)
          throw new UsageError(`account postpaid takes one ID, got also "${rest.slice(1).join(' ')}"`);
        if ((values.limit === undefined) === (values.off !== true))
          throw new UsageError('account postpaid needs --limit N (credits below zero) or --off');
        const limit = values.off ? null : needInt(values.limit, '--limit');
        return print(await withDeps(config, (deps) => deps.services.credits.setPostpaid(accountId, limit)));
      }
      if (sub === 'limits') {
        const accountId = needId(rest[0], 'ID');
        if (rest.length > 1)
          throw new UsageError(`account limits takes one ID, got also "${rest.slice(1).join(' ')}"`);
        const { daily, monthly, rps, countries } = values;
        const given = {
          daily_messages: daily,
          monthly_messages: monthly,
          requests_per_second: rps,
          countries,
        };
        const input = { ...given, parts_per_second: values['parts-per-second'] };
        const changing = Object.values(input).some((v) => v !== undefined);
        if (values.clear && changing)
          throw new UsageError('account limits takes --clear alone, or the limits to set');
        return print(
          await withDeps<object>(config, (deps) => {
            const { limits } = deps.services;
            if (values.clear) return limits.clear('cli', accountId);
            return changing ? limits.set('cli', accountId, input) : limits.show('cli', accountId);
          }),
        );
      }
      if (sub !== 'create')
        throw new UsageError(
          'unknown account command; try: account create, list, show, lock, unlock, postpaid or limits',
        );
      if (!values.email || !values.password)
        throw new UsageError('account create needs --email and --password');
      const created = await withDeps(config, (deps) =>
        deps.services.accounts.createAccount({
          email: values.email!,
          password: values.password!,
          credits: values.credits === undefined ? 0 : needInt(values.credits, '--credits'),
          parentId: values.parent === undefined ? undefined : needId(values.parent, '--parent'),
          unlimited: values.unlimited ?? false,
        }),
      );
      return print(created);
    }
    case 'credits': {
      if (sub !== 'add') throw new UsageError('unknown credits command; try: credits add ACCOUNT_ID N');
      const accountId = needId(rest[0], 'ACCOUNT_ID');
      const amount = needInt(rest[1], 'N');
      if (values.price === undefined) {
        if (values.currency !== undefined)
          throw ApiError.data('--currency is the currency of --price: give both');
        const credits = await withDeps(config, (deps) => deps.services.credits.addCredits(accountId, amount));
        return print({ account_id: String(accountId), credits });
      }
      const { price, currency } = values;
      const bought = await withDeps(config, (deps) =>
        deps.services.invoices.purchase(accountId, amount, { price, currency }),
      );
      return print({ account_id: String(accountId), ...bought });
    }
    case 'prices': {
      const accountId = values.account === undefined ? undefined : needId(values.account, '--account');
      const prices = (deps: Deps) => deps.services.prices;
      if (sub === 'set') {
        if (rest.length !== 1)
          throw new UsageError('prices set takes one FILE.csv (country_or_prefix,credits lines)');
        let csv: string;
        try {
          csv = readFileSync(rest[0], 'utf8');
        } catch (error) {
          throw new UsageError(`cannot read ${rest[0]}: ${(error as Error).message}`);
        }
        return print(await withDeps(config, (deps) => prices(deps).set(accountId, csv)));
      }
      if (sub !== 'show' && sub !== 'clear')
        throw new UsageError(
          'unknown prices command; try: prices set [--account ID] FILE.csv, prices show or prices clear',
        );
      if (rest.length > 0) throw new UsageError(`prices ${sub} takes --account ID, got "${rest.join(' ')}"`);
      return print(
        await withDeps<object>(config, (deps) =>
          sub === 'show' ? prices(deps).show(accountId) : prices(deps).clear(accountId),
        ),
      );
    }
    case 'token': {
      if (sub === 'list') {
        if (rest.length > 0) throw new UsageError(`token list takes --account ID, got "${rest.join(' ')}"`);
        const accountId = needId(values.account, '--account');
        const tokens = await withDeps(config, (deps) => deps.services.tokens.operatorList(accountId));
        return writeOut(tokens.map((t) => `${JSON.stringify(t)}\n`).join(''));
      }
      if (sub === 'revoke') {
        const tokenId = needId(rest[0], 'TOKEN_ID');
        if (rest.length > 1)
          throw new UsageError(`token revoke takes one TOKEN_ID, got also "${rest.slice(1).join(' ')}"`);
        return print(await withDeps(config, (deps) => deps.services.tokens.operatorRevoke(tokenId)));
      }
      if (sub !== 'create')
        throw new UsageError(
          'unknown token command; try: token create ACCOUNT_ID --name NAME, token list --account ID or token revoke TOKEN_ID',
        );
      const accountId = needId(rest[0], 'ACCOUNT_ID');
      if (!values.name) throw new UsageError('token create needs --name');
      const { token, token_id } = await withDeps(config, (deps) =>
        deps.services.tokens.createTokenForCli(accountId, values.name!),
      );
      return print({ token_id, token });
    }
    case 'user': {
      const users = (deps: Deps) => deps.services.users;
      if (sub === 'add') {
        const accountId = needId(rest[0], 'ACCOUNT_ID');
        if (!rest[1] || rest.length > 2) throw new UsageError('user add takes ACCOUNT_ID EMAIL --role ROLE');
        if (!values.role)
          throw new UsageError('user add needs --role (owner, admin, sender, developer or viewer)');
        const email = rest[1];
        const role = values.role;
        return print(await withDeps(config, (deps) => users(deps).operatorAdd(accountId, email, role)));
      }
      if (sub === 'list') {
        if (rest.length > 0) throw new UsageError(`user list takes --account ID, got "${rest.join(' ')}"`);
        const accountId = needId(values.account, '--account');
        const listed = await withDeps(config, (deps) => users(deps).operatorList(accountId));
        return writeOut(listed.map((u) => `${JSON.stringify(u)}\n`).join(''));
      }
      if (sub === 'remove' || sub === 'reset-password') {
        const userId = needId(rest[0], 'USER_ID');
        if (rest.length > 1)
          throw new UsageError(`user ${sub} takes one USER_ID, got also "${rest.slice(1).join(' ')}"`);
        return print(
          await withDeps<object>(config, async (deps) => {
            if (sub === 'remove') return users(deps).operatorRemove(userId);
            const reset = await users(deps).operatorResetPassword(userId);
            if (!values['clear-2fa']) return reset;
            await deps.services.recovery.operatorClearTwoFactor(userId);
            return { ...reset, two_factor_cleared: true };
          }),
        );
      }
      throw new UsageError('unknown user command; try: user add, list, remove or reset-password');
    }
    case 'smpp-user': {
      if (sub === 'create') {
        if (!values.account || !values['system-id'] || values.password === undefined)
          throw new UsageError('smpp-user create needs --account, --system-id and --password');
        const accountId = needId(values.account, '--account');
        const created = await withDeps(config, (deps) =>
          deps.services.smppUsers.createForAccount(accountId, {
            system_id: values['system-id'],
            password: values.password,
            tps: values.tps,
            max_binds: values['max-binds'],
            allowed_ips: values['allow-ip'],
          }),
        );
        return print(created);
      }
      if (sub === 'list') {
        const accountId = values.account === undefined ? undefined : needId(values.account, '--account');
        const users = await withDeps(config, (deps) => deps.services.smppUsers.list(accountId));
        return writeOut(users.map((u) => `${JSON.stringify(u)}\n`).join(''));
      }
      if (sub === 'delete') {
        if (!rest[0]) throw new UsageError('smpp-user delete needs a SYSTEM_ID');
        const deleted = await withDeps(config, (deps) => deps.services.smppUsers.deleteAny(rest[0]));
        return print({ deleted: deleted });
      }
      throw new UsageError('unknown smpp-user command; try: smpp-user create, list or delete');
    }
    case 'messages': {
      if (!sub) throw new UsageError('messages needs a TICKET');
      return withDeps(config, async (deps) => {
        // Messages are read a page at a time and written as they come, so a 100k campaign is never held whole.
        let lines = '';
        let count = 0;
        for await (const m of deps.services.campaignPages.operatorMessages(sub)) {
          const { recipient, gsmsmsid, text, parts, state, connector, route } = m;
          // The route and connector that carried it, once it was sent (CONNECTORS_FILE names).
          const carried = connector === null ? {} : { route, connector };
          lines += `${JSON.stringify({ recipient, gsmsmsid, text, parts, state, ...carried })}\n`;
          if (++count % 1000 === 0) {
            await writeOut(lines);
            lines = '';
          }
        }
        await writeOut(lines);
      });
    }
    case 'connectors': {
      if (sub) throw new UsageError(`connectors takes no argument, got "${sub}"`);
      const rows = await withDeps(config, (deps) => deps.services.connectors.connectorStatus());
      const now = Date.now();
      if (values.json)
        return writeOut(rows.map((r) => `${JSON.stringify(connectorStatusJson(r, now))}\n`).join(''));
      if (rows.length === 0) {
        process.stderr.write(
          'pigeon: no connector status: no delivery process (serve with ROLE all, worker or delivery) runs on this database\n',
        );
        return;
      }
      return writeOut(`${connectorStatusTable(rows, now)}\n`);
    }
    case 'move': {
      if (sub) throw new UsageError(`move takes no argument, got "${sub}"; the target goes in --to`);
      if (!values.to)
        throw new UsageError('move needs --to postgres://user@host:5432/database[?schema=name]');
      const ok = await moveToPostgres(config.DATABASE_URL, values.to, { report: print });
      if (!ok) process.exitCode = 1;
      return;
    }
    case 'backup': {
      if (!sub) throw new UsageError('backup needs a FILE to write the copy to');
      if (rest.length > 0) throw new UsageError(`backup takes one FILE, got also "${rest.join(' ')}"`);
      return print(await backupSqlite(config.DATABASE_URL, sub));
    }
    case 'erase': {
      if (!sub) throw new UsageError('erase needs a NUMBER');
      if (rest.length > 0) throw new UsageError(`erase takes one NUMBER, got also "${rest.join(' ')}"`);
      const accountId = values.account === undefined ? undefined : needId(values.account, '--account');
      const report = await withDeps(config, (deps) => deps.services.erase.eraseForOperator(sub, accountId));
      return print(report);
    }
    case 'simulate': {
      if (sub !== 'mo')
        throw new UsageError('unknown simulate command; try: simulate mo --from NUMBER --text TEXT');
      if (!values.from || values.text === undefined)
        throw new UsageError('simulate mo needs --from and --text');
      const from = values.from;
      if (!/^\+?\d{6,15}$/.test(from))
        throw new UsageError('--from must be a number, digits with the country code first');
      const recorded = await withDeps(config, (deps) =>
        deps.services.replies.recordInbound({
          from,
          to: values.to ?? 'SIMULATOR',
          text: values.text!,
          connector: values.connector,
        }),
      );
      if (!recorded)
        throw new ApiError(-5, `no account has written to ${from}: the reply has nobody to go to`);
      return print({
        type: recorded.type,
        account_id: String(recorded.accountId),
        from: from.replace(/^\+/, ''),
        text: recorded.text,
        // START and HELP are MO replies that did something more: say what.
        ...(recorded.keyword && { keyword: recorded.keyword }),
        ...(recorded.answered !== undefined && { answered: recorded.answered }),
      });
    }
    case 'operator': {
      if (sub === 'list')
        return withDeps(config, async (deps) => {
          for (const o of await deps.services.moderation.operatorAccounts('cli')) print(o);
        });
      if (sub !== 'grant' && sub !== 'revoke')
        throw new UsageError('unknown operator command; try: operator grant, revoke or list');
      const accountId = needId(rest[0], 'ACCOUNT_ID');
      return print(
        await withDeps(config, (deps) => {
          const { moderation } = deps.services;
          return sub === 'grant'
            ? moderation.grantOperator('cli', accountId)
            : moderation.revokeOperator('cli', accountId);
        }),
      );
    }
    case 'sender': {
      if (sub === 'list')
        return withDeps(config, (deps) =>
          writePages((after) => deps.services.moderation.operatorSenders('cli', values.state, after)),
        );
      if (sub !== 'approve' && sub !== 'refuse')
        throw new UsageError('unknown sender command; try: sender list, approve or refuse');
      if (!rest[0]) throw new UsageError(`sender ${sub} needs the request's ID`);
      return print(
        await withDeps(config, (deps) => {
          const { moderation } = deps.services;
          return sub === 'approve'
            ? moderation.approveSender('cli', rest[0])
            : moderation.refuseSender('cli', rest[0], values.reason);
        }),
      );
    }
    case 'rule': {
      if (sub === 'list')
        return withDeps(config, async (deps) => {
          for (const r of await deps.services.moderation.operatorRules('cli', values.account)) print(r);
        });
      if (sub === 'add')
        return print(
          await withDeps(config, (deps) =>
            deps.services.moderation.addRule('cli', {
              account_id: values.account,
              kind: values.kind,
              value: values.value,
              action: values.action,
            }),
          ),
        );
      if (sub === 'delete') {
        if (!rest[0]) throw new UsageError('rule delete needs the rule ID');
        return print(await withDeps(config, (deps) => deps.services.moderation.deleteRule('cli', rest[0])));
      }
      throw new UsageError('unknown rule command; try: rule list, add or delete');
    }
    case 'moderation': {
      if (sub === 'list')
        return withDeps(config, (deps) =>
          writePages((after) => deps.services.moderation.heldCampaigns('cli', after)),
        );
      if (sub !== 'approve' && sub !== 'refuse')
        throw new UsageError('unknown moderation command; try: moderation list, approve or refuse');
      if (!rest[0]) throw new UsageError(`moderation ${sub} needs the campaign's TICKET`);
      return print(
        await withDeps(config, (deps) => {
          const { moderation } = deps.services;
          return sub === 'approve'
            ? moderation.approveCampaign('cli', rest[0])
            : moderation.refuseCampaign('cli', rest[0], values.reason);
        }),
      );
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) process.stderr.write(`pigeon: ${error.message}\n\n${usage}\n`);
  else if (error instanceof ConfigError) process.stderr.write(`pigeon: ${error.message}\n`);
  else if (error instanceof ApiError) process.stderr.write(`pigeon: ${error.details}\n`);
  else if (error instanceof MoveRefused || error instanceof BackupRefused)
    process.stderr.write(`pigeon: ${error.message}\n`);
  else if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`pigeon: ${error.message}\n\n${usage}\n`);
  } else process.stderr.write(`pigeon: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = error instanceof UsageError || error instanceof TypeError ? 2 : 1;
  // A server that failed to start may hold what keeps a process alive (a listening socket, its supervisor's
  // channel): it exits now, with the error above as its last word.
  if (process.argv[2] === 'serve') process.exit();
});
