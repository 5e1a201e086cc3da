// What `pigeon --help` and a usage error print: every command of the CLI (main.ts) with its arguments.
export const usage = `usage: pigeon <command>

  serve                                   start the server (API, short links, workers per ROLE)
  migrate                                 apply pending database migrations
  config check                            check the environment and the connectors file without starting
                                          anything: one JSON line per check; exit 1 listing every error
  account create --email E --password P [--credits N] [--parent ID] [--unlimited]
  account list                            one JSON line per account
  account show ID                         one account: state, credits, postpaid, who locked it, sub-accounts,
                                          its effective limits
  account lock ID                         its tokens, credentials and console answer -1, its queued
                                          messages wait; only 'account unlock' lifts it
  account unlock ID                       lifts the operator's lock (or a parent's); held messages go
  account postpaid ID --limit N | --off   postpaid: sends and lookups may take the balance down to -N;
                                          --off: prepaid again (the balance never below zero)
  account limits ID [--daily N] [--monthly N] [--rps N] [--parts-per-second N] [--countries FR,BE|all]
                                          the account's own limits (its sub-accounts inherit them): messages
                                          per day and per month, API requests per second (all its tokens),
                                          SMS parts per second (paced), the countries it may send to; N 0 for
                                          none, or inherit; without a flag, its effective limits and whose
  account limits ID --clear               it inherits every limit again (its parent's, else the instance's)
  credits add ACCOUNT_ID N [--price AMOUNT [--currency CODE]]
                                          with --price, a purchase: the credits and their invoice
  prices set [--account ID] FILE.csv      the price list of an account (its sub-accounts inherit it) or,
                                          without --account, the instance's default: one line
                                          country_or_prefix,credits each (FR,2 or 3367,3 or *,1), whole
                                          credits per SMS part; it replaces the list it names
  prices show [--account ID]              the account's own list and the prices it pays (or the instance's)
  prices clear [--account ID]             the account inherits again (its parent's, the instance's list)
  token create ACCOUNT_ID --name NAME
  token list --account ID                 one JSON line per token of the account (never its secret)
  token revoke TOKEN_ID                   deletes the token: it stops working within a second
  user add ACCOUNT_ID EMAIL --role ROLE   a user of the account (owner, admin, sender, developer or viewer),
                                          invited: prints its one-time link to set a password (72 h), and
                                          e-mails it too when SMTP_URL is set
  user list --account ID                  one JSON line per user of the account
  user remove USER_ID                     its console sessions lose every right at once; the account's
                                          last owner stays
  user reset-password USER_ID [--clear-2fa]
                                          prints a new one-time link to set the user's password (its
                                          sessions end when the link is used); --clear-2fa also turns
                                          its two-factor off (a lost phone)
  smpp-user create --account ID --system-id NAME --password PASS [--tps N] [--max-binds N] [--allow-ip A,B]
                                          SMPP credentials of an account, for the SMPP server
                                          (SMPP_SERVER_PORT); the password is at most 8 characters
  smpp-user list [--account ID]           one JSON line per SMPP user
  smpp-user delete SYSTEM_ID              its binds are refused from then on
  messages TICKET                         one JSON line per message of a campaign
  simulate mo --from NUMBER --text TEXT [--to SHORTCODE] [--connector NAME]
                                          a reply from a handset, as the carrier would deliver it
                                          (through connector NAME: it goes to the account that last
                                          wrote to the number through that connector)
  erase NUMBER [--account ID]             erase a phone number (GDPR) from every account's data, or one
                                          account's; prints what it removed
  connectors [--json]                     each connector of the running delivery processes: binds, state,
                                          window in use, parts per second, last error
  move --to postgres://…[?schema=NAME]    copy everything of the SQLite DATABASE_URL into an empty PostgreSQL
                                          database (migrated first), then check it: one JSON line per table,
                                          one for the ledger, one verdict; exit 1 on any difference. Stop
                                          the server first.
  operator grant|revoke ACCOUNT_ID         the account's tokens may (or no longer) call /operator/*
  operator list                           one JSON line per operator account
  sender list [--state pending|approved|refused]
                                          one JSON line per sender ID request, oldest first
  sender approve|refuse ID [--reason R]   decide a request (SENDER_APPROVAL=required: only approved senders send)
  rule list [--account ID]                one JSON line per content rule
  rule add --kind domain|word|pattern --value V --action refuse|hold [--account ID]
                                          a content rule for every account, or one account and its sub-accounts
  rule delete ID
  moderation list                         one JSON line per campaign held for moderation, oldest first
  moderation approve|refuse TICKET [--reason R]
                                          approved: its messages go out; refused: cancelled, credits refunded
  backup FILE                             a consistent copy of the SQLite DATABASE_URL, safe while the
                                          server runs (PostgreSQL: pg_dump, see docs/operations.md)

Configuration comes from the environment; see .env.example.`;
