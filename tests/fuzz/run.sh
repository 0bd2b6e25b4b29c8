#!/usr/bin/env bash
# Schema-driven fuzzing of every JSON route with schemathesis (PyPI) against
# the release binary:
#
#   1. a venv with the pinned schemathesis (tests/fuzz/requirements.txt);
#   2. `cargo build --release`, then `credencial demo` on a fresh database
#      with a known JWT secret, on its own port;
#   3. credentials: ana's access token (pair), an OAuth2 access token with
#      every scope and openid (the real authorization-code flow of the demo
#      client demo-host, played with curl; it also reads /oauth/userinfo/ and
#      the discovery document), demo-host's secret for /oauth/token/,
#      /oauth/revoke/ and /oauth/introspect/ (clientSecretBasic),
#      and demo-host's user-management API token (`credencial client update
#      --rotate-api-token`, its last line) for /usuarios/;
#   4. schemathesis reads the description the server serves
#      (/api/openapi.json) and runs every phase (examples, coverage, fuzzing,
#      stateful) with the checks not_a_server_error, status_code_conformance,
#      content_type_conformance, response_schema_conformance and
#      response_headers_conformance; its strings may hold NUL and any
#      Unicode text (--generation-allow-x00 true, --generation-codec utf-8:
#      schemathesis 4's defaults, pinned here so that a change of default
#      cannot take them away);
#   5. fails unless schemathesis passed, made at least FUZZ_MIN_REQUESTS
#      requests, and sent a NUL and non-ASCII text in some of them (counted
#      in the report: %00 or \u0000, and percent-encoded, escaped or raw
#      characters past U+007F); prints the counts. The server is stopped and
#      the database dropped on exit.
#
# Loopback only, bounded in time (FUZZ_MAX_TIME per run of schemathesis).
# Usage: bash tests/fuzz/run.sh
# Knobs: FUZZ_PORT (18300), FUZZ_MAX_EXAMPLES (60 per operation and phase),
#        FUZZ_MAX_TIME (150 s), FUZZ_MIN_REQUESTS (1000), FUZZ_SEED (random),
#        FUZZ_CHECKS (the five above, comma-separated), FUZZ_SKIP_BUILD (set:
#        reuse target/release/credencial), FUZZ_BIN (a credencial binary to
#        use instead, no build: CI passes the debug one its tests built)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

PORT=${FUZZ_PORT:-18300}
BASE="http://127.0.0.1:${PORT}"
MAX_EXAMPLES=${FUZZ_MAX_EXAMPLES:-60}
MAX_TIME=${FUZZ_MAX_TIME:-150}
MIN_REQUESTS=${FUZZ_MIN_REQUESTS:-1000}
CHECKS=${FUZZ_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance}
TARGET=${CARGO_TARGET_DIR:-target}
OUT="${TARGET}/fuzz"
VENV="${TARGET}/fuzz-venv"
DB="credencial_fuzz_$$"
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/${DB}"
log() { printf '[fuzz %s] %s\n' "$(date +%T)" "$*" >&2; }
mkdir -p "$OUT"

# 1. schemathesis, pinned, in a venv of our own
if ! cmp -s tests/fuzz/requirements.txt "${VENV}/requirements.txt" 2>/dev/null; then
    log "installing schemathesis into ${VENV}"
    rm -rf "$VENV"
    if ! python3 -m venv --help >/dev/null 2>&1; then
        log "installing python3-venv"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$VENV"
    "${VENV}/bin/pip" install --quiet --disable-pip-version-check -r tests/fuzz/requirements.txt
    cp tests/fuzz/requirements.txt "${VENV}/requirements.txt"
fi
VENV_ABS=$(cd "$VENV" && pwd)
"${VENV_ABS}/bin/schemathesis" --version

# 2. the release binary (or FUZZ_BIN) on a fresh database
if [ -n "${FUZZ_BIN:-}" ]; then
    BIN=$(realpath "$FUZZ_BIN")
else
    [ -n "${FUZZ_SKIP_BUILD:-}" ] || cargo build --release --locked --bin credencial
    BIN=$(realpath "${TARGET}/release/credencial")
fi
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
# Few PBKDF2 iterations: the fuzzer sends hundreds of logins, and a wrong
# password costs the full hashing work. Access tokens live an hour so that
# the credentials outlast the run. No per-address brute-force limit: every
# request comes from 127.0.0.1, and after its first 20 wrong logins the
# fuzzer would meet nothing but 429 at pair (the per-username limit stays on,
# so 429 is still fuzzed for the usernames it repeats; failed client secrets
# count per address only and go unlimited here).
SERVICE_JWT_SECRET=$SECRET SERVICE_BIND="127.0.0.1:${PORT}" SERVICE_PASSWORD_ITERATIONS=1000 \
    SERVICE_ACCESS_TOKEN_LIFETIME_SECS=3600 SERVICE_LOGIN_THROTTLE_ADDRESS_FAILURES=0 RUST_LOG=warn \
    "$BIN" demo >"${OUT}/server.log" 2>&1 &
SERVER=$!
cleanup() {
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS \"${DB}\" WITH (FORCE)" >/dev/null || true
}
trap cleanup EXIT
wait_until_serving "$BASE" "$SERVER" "${OUT}/server.log" 60 || exit 1

# 3. credentials
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
ACCESS=$(curl -fsS -X POST "${BASE}/api/token/pair/" -H 'Content-Type: application/json' \
    -d '{"username": "ana", "password": "ana-demo-2026"}' | json_field access)
# The authorization-code flow as the README plays it: login form, consent, code, exchange.
JAR=$(mktemp)
REDIRECT="${BASE}/auth/callback/"
SCOPES="openid dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp"
P=(-d response_type=code -d client_id=demo-host --data-urlencode "redirect_uri=${REDIRECT}"
    --data-urlencode "scope=${SCOPES}" -d state=fuzz)
csrf() { sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p'; }
T=$(curl -fsS -G -c "$JAR" -b "$JAR" "${BASE}/oauth/authorize/" "${P[@]}" | csrf)
curl -fsS -o /dev/null -c "$JAR" -b "$JAR" "${BASE}/oauth/authorize/" "${P[@]}" -d action=login \
    -d "csrf_token=${T}" -d username=ana -d password=ana-demo-2026
T=$(curl -fsS -G -c "$JAR" -b "$JAR" "${BASE}/oauth/authorize/" "${P[@]}" | csrf)
LOCATION=$(curl -sS -o /dev/null -w '%{redirect_url}' -b "$JAR" "${BASE}/oauth/authorize/" "${P[@]}" \
    -d action=approve -d "csrf_token=${T}")
rm -f "$JAR"
CODE=$(python3 -c 'import sys, urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query)["code"][0])' "$LOCATION")
OAUTH=$(curl -fsS -u demo-host:demo-host-secret "${BASE}/oauth/token/" -d grant_type=authorization_code \
    -d "code=${CODE}" --data-urlencode "redirect_uri=${REDIRECT}" | json_field access_token)
curl -fsS -X POST "${BASE}/api/perfil/dados/" -H "Authorization: Bearer ${OAUTH}" | python3 -c '
import json, sys
p = json.load(sys.stdin)
assert "receita_federal" in p and "cursos_cdp" in p, sorted(p)'
# The same token reads userinfo (OpenID Connect is on in the demo).
curl -fsS "${BASE}/oauth/userinfo/" -H "Authorization: Bearer ${OAUTH}" | python3 -c '
import json, sys
u = json.load(sys.stdin)
assert u["sub"] and u["preferred_username"] == "ana", u'
curl -fsS "${BASE}/.well-known/openid-configuration" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["userinfo_endpoint"].endswith("/oauth/userinfo/"), d'
# An API token of demo-host for the user-management API, as the README gives
# it (the CLI prints it as the last line of standard output; its log lines go
# to standard error).
API_TOKEN=$("$BIN" client update --client-id demo-host --rotate-api-token \
    --api-permissions users:read,users:create | tail -n 1)
curl -fsS -o /dev/null -H "Authorization: Token ${API_TOKEN}" "${BASE}/usuarios/?cpfs=52998224725"
log "credentials ready: pair access token, OAuth2 access token with every scope and openid, demo-host secret, API token"

# 4. schemathesis, with the credentials per security scheme of the description
cat >"${OUT}/schemathesis.toml" <<EOF
[auth.openapi.accessToken]
bearer = "${ACCESS}"
[auth.openapi.oauth2]
bearer = "${OAUTH}"
[auth.openapi.apiToken]
api_key = "Token ${API_TOKEN}"
[auth.openapi.clientSecretBasic]
username = "demo-host"
password = "demo-host-secret"
EOF
rm -f "${OUT}/report.har"
SEED=${FUZZ_SEED:-$RANDOM}
log "schemathesis: seed ${SEED}, at most ${MAX_EXAMPLES} examples per operation and phase, ${MAX_TIME} s"
status=0
# Run from ${OUT}: schemathesis keeps its cache (.schemathesis/) in the working directory.
OUT_ABS=$(cd "$OUT" && pwd)
(cd "$OUT" && timeout $((MAX_TIME + 120)) "${VENV_ABS}/bin/schemathesis" --config-file schemathesis.toml --no-color run \
    "${BASE}/api/openapi.json" --url "$BASE" \
    --checks "$CHECKS" \
    --max-examples "$MAX_EXAMPLES" --max-time "$MAX_TIME" --seed "$SEED" --workers 2 \
    --generation-allow-x00 true --generation-codec utf-8 \
    --request-timeout 10 --report har --report-har-path "${OUT_ABS}/report.har" \
    --suppress-health-check all --warnings off) || status=$?

# 5. the verdict
read -r REQUESTS FIVE NUL NON_ASCII < <(python3 - "${OUT}/report.har" <<'PY'
import collections, json, re, sys, urllib.parse
entries = json.load(open(sys.argv[1]))["log"]["entries"]
answers = collections.Counter()
# A NUL as a request carries it: percent-encoded (URL, form), escaped (JSON) or raw.
NUL = re.compile(r"%00|\\u0000|\x00")
# Text past U+007F: percent-encoded bytes of UTF-8, JSON escapes, or raw.
NON_ASCII = re.compile(r"%[89A-Fa-f][0-9A-Fa-f]|\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})[0-9a-fA-F]|[^\x00-\x7f]")
nul = non_ascii = 0
for e in entries:
    route = urllib.parse.urlsplit(e["request"]["url"]).path
    answers[(route, e["request"]["method"], e["response"]["status"])] += 1
    sent = e["request"]["url"] + ((e["request"].get("postData") or {}).get("text") or "")
    nul += bool(NUL.search(sent))
    non_ascii += bool(NON_ASCII.search(sent))
for (route, method, status), n in sorted(answers.items()):
    print(f"  {method:7} {route:28} {status}  {n}", file=sys.stderr)
print(len(entries), sum(n for (_, _, status), n in answers.items() if status >= 500), nul, non_ascii)
PY
)
log "requests made: ${REQUESTS} (with a NUL: ${NUL}; with non-ASCII text: ${NON_ASCII}); 5xx answers: ${FIVE}; schemathesis exit status: ${status}"
if grep -q 'panicked' "${OUT}/server.log"; then
    log "the server panicked:"; grep -A5 panicked "${OUT}/server.log" >&2; status=1
fi
[ "$REQUESTS" -ge "$MIN_REQUESTS" ] || { log "fewer than ${MIN_REQUESTS} requests"; status=1; }
[ "$NUL" -gt 0 ] || { log "no request carried a NUL"; status=1; }
[ "$NON_ASCII" -gt 0 ] || { log "no request carried non-ASCII text"; status=1; }
[ "$FIVE" -eq 0 ] || status=1
if [ "$status" -ne 0 ]; then
    echo "fuzz: 0 passed, 1 failed"
    exit 1
fi
echo "fuzz: 1 passed, 0 failed"
