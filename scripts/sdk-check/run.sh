#!/usr/bin/env bash
# Manual check: the official SMSFactor Java and PHP SDKs, unmodified, against a local Pigeon
# (docs/development.md, "The SMSFactor SDKs"). Copy this folder outside the repository, put the SDKs' sources
# in java/ (smsfactor/smsfactor-java-sdk) and php/ (smsfactor/smsfactor-php-sdk) beside it and these files in
# driver/, and run it; Pigeon's checkout is $PIGEON (default /work/main). The SDKs never enter the repository.
set -euo pipefail
cd "$(dirname "$0")"
PIGEON=${PIGEON:-/work/main}
PORT=${PORT:-18080}; LINK_PORT=${LINK_PORT:-18081}
DB=${DB:-/tmp/sdk-check.db}
CP=$(printf '/usr/share/java/%s.jar:' google-http-client google-http-client-gson gson httpclient httpcore commons-logging \
  commons-codec opencensus-api opencensus-contrib-http-util grpc-context guava)

# 1. compile the SDK (as published) and the driver
rm -rf build && mkdir -p build/sdk build/driver
javac -nowarn -d build/sdk -cp "$CP" $(find java/src/main/java -name '*.java')
javac -nowarn -d build/driver -cp "build/sdk:$CP" driver/SdkCheck.java

# 2. a Pigeon on a fresh database, with one account (credits, and a purchase so that an invoice exists)
rm -f "$DB" "$DB-wal" "$DB-shm"
(cd "$PIGEON" && PORT=$PORT LINK_PORT=$LINK_PORT LINK_BASE_URL=http://127.0.0.1:$LINK_PORT DATABASE_URL=$DB \
  exec setsid npm start > /tmp/sdk-check-server.log 2>&1) &
SERVER=$!   # setsid made it the leader of its own process group: stop the whole group at the end
trap 'kill -TERM -- -$SERVER 2>/dev/null || true' EXIT
for i in $(seq 60); do curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && break; sleep 1; done
TOKEN=$(cd "$PIGEON" && DATABASE_URL=$DB npx pigeon account create --email sdk@example.com --password 'change me please' \
  --credits 1000 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).token))')
(cd "$PIGEON" && DATABASE_URL=$DB npx pigeon credits add 1 100 --price 12.50 > /dev/null)

# 3. the two SDKs
echo "### Java SDK"
java -cp "build/driver:build/sdk:$CP" SdkCheck "http://127.0.0.1:$PORT" "$TOKEN" java-trace.log | tee java-result.txt
echo "### PHP SDK"
php driver/sdk_check.php "http://127.0.0.1:$PORT" "$TOKEN" | tee php-result.txt
