#!/usr/bin/env bash
# Proves that a production install works: a copy of the checkout (without node_modules, data, dist or .git) in a
# scratch directory, `npm ci --omit=dev` (no dev dependency installed), then `npm start` on free ports with a
# temporary SQLite file. It waits until GET /health and GET /ready both answer 200 (a /health that answers
# anything else fails at once), checks the console is served, stops the server with SIGTERM and requires a
# clean exit (code 0). Run from anywhere; CI runs it after the tests (.ci/run).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/pigeon-production-install.XXXXXX")"
log="$scratch/server.log"
server_pid=""

cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL -- "-$server_pid" 2>/dev/null || kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

fail() {
  echo "check-production-install: $*" >&2
  if [[ -f "$log" ]]; then
    echo "--- server output ---" >&2
    tail -n 50 "$log" >&2
  fi
  exit 1
}

echo "check-production-install: copying the checkout to $scratch/app"
mkdir -p "$scratch/app"
tar -C "$root" \
  --exclude=./node_modules --exclude=./data --exclude=./dist --exclude=./.git \
  -cf - . | tar -C "$scratch/app" -xf -
cd "$scratch/app"

echo "check-production-install: npm ci --omit=dev"
npm ci --omit=dev --no-audit --no-fund
if [[ -d node_modules/vitest || -d node_modules/typescript ]]; then
  fail "npm ci --omit=dev installed dev dependencies"
fi

# Free ports, asked of the kernel (port 0) and released at once for the server to take.
free_port() {
  node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });"
}
api_port="$(free_port)"
link_port="$(free_port)"

echo "check-production-install: npm start (API on 127.0.0.1:$api_port, links on $link_port)"
# In its own process group, so that cleanup can end whatever is left of it after a failure.
set -m
HOST=127.0.0.1 PORT="$api_port" LINK_PORT="$link_port" \
  DATABASE_URL="$scratch/data/pigeon.db" LOG_LEVEL=info \
  npm start >"$log" 2>&1 &
server_pid=$!
set +m

# The server is up once GET /health answers 200 and ready once GET /ready does (the database answers, every
# migration is applied, the delivery and webhooks processes answer). Nothing else is sent. The probe exits 0
# when both answer 200, 1 while the server is not listening yet or /ready is not 200 yet (it may wait for the
# other processes to start), and 2 at once when /health answers anything but 200: a broken /health fails.
probe='
const base = `http://127.0.0.1:${process.argv[1]}`;
const get = (path) => fetch(base + path, { signal: AbortSignal.timeout(2000) });
(async () => {
  let health;
  try {
    health = await get("/health");
  } catch {
    process.exit(1);
  }
  if (health.status !== 200) {
    console.log(`GET /health: HTTP ${health.status} ${(await health.text()).slice(0, 200)}`);
    process.exit(2);
  }
  const ready = await get("/ready");
  const text = (await ready.text()).slice(0, 300);
  console.log(`GET /health: HTTP 200, GET /ready: HTTP ${ready.status} ${text}`);
  process.exit(ready.status === 200 ? 0 : 1);
})().catch(() => process.exit(1));
'
deadline=$((SECONDS + 180))
answer=""
until answer="$(node -e "$probe" "$api_port" 2>/dev/null)"; do
  code=$?
  [[ "$code" -ne 2 ]] || fail "GET /health must answer 200: $answer"
  kill -0 "$server_pid" 2>/dev/null || fail "npm start exited before /health and /ready answered 200"
  ((SECONDS < deadline)) || fail "GET /health and GET /ready did not both answer 200 within 180 s (last: ${answer:-no answer})"
  sleep 0.5
done
echo "check-production-install: the server is up and ready ($answer)"

# The console was built by npm start with the production dependencies only: its page and script are served.
console_probe='
const base = `http://127.0.0.1:${process.argv[1]}`;
(async () => {
  const page = await fetch(base + "/console");
  const html = await page.text();
  if (page.status !== 200 || !html.includes("/console/assets/app.js")) throw new Error("no console page");
  const script = await fetch(base + "/console/assets/app.js");
  if (script.status !== 200 || (await script.text()).length < 1000) throw new Error("no console script");
})().catch((e) => { console.error(e.message); process.exit(1); });
'
node -e "$console_probe" "$api_port" || fail "the console is not served at /console"
echo "check-production-install: the console is served at /console"

kill -TERM "$server_pid"
set +e
wait "$server_pid"
code=$?
set -e
server_pid=""
[[ "$code" -eq 0 ]] || fail "npm start exited with code $code after SIGTERM (expected 0)"
echo "check-production-install: stopped by SIGTERM with exit code 0: production install OK"
