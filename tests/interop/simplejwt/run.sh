#!/usr/bin/env bash
# Interop with a real djangorestframework-simplejwt resource server: the
# SUAP-side Django API that shares credencial's HS256 secret must accept
# first-party tokens and never an OAuth2 token issued to a client
# application; credencial's verify must accept a token simplejwt minted.
#
#   1. a venv with the pinned Django, djangorestframework and
#      djangorestframework-simplejwt 5.5.1 (requirements.txt beside this
#      file); the Django project beside it (stock SIMPLE_JWT apart from
#      SIGNING_KEY = the shared secret; JWTAuthentication; GET /api/me/
#      authenticated; TokenRefreshView and TokenVerifyView at
#      /api/token/refresh/ and /api/token/verify/) on its own SQLite file,
#      served by gunicorn on loopback;
#   2. `cargo build --release` (or INTEROP_BIN), then `credencial demo` (SQLite in a temporary
#      directory, a known SERVICE_JWT_SECRET, so its OAuth2 tokens are signed
#      with the demo's OpenID Connect key): ana's pair from /api/token/pair/
#      and an OAuth2 access + refresh token of the demo client demo-host (the
#      authorization-code flow played with curl, as tests/fuzz/run.sh does);
#      the pair must keep simplejwt's shape (HS256; token_type, exp, iat,
#      jti, integer user_id), Django must accept the pair's access token at /api/me/ and its refresh
#      token at its TokenRefreshView, and refuse (401) the OAuth2 access token
#      at /api/me/ and the OAuth2 refresh token at TokenRefreshView;
#   3. `credencial serve` with HS256 and no OpenID Connect key (OAuth2 tokens
#      signed with the shared secret: only their token_type and typ keep them
#      out of simplejwt's lane), set up with the CLI (migrate, user create,
#      client create): the same acceptances and refusals;
#   4. against each of the two services: an access token minted by simplejwt
#      5.5.1 in the Django project (AccessToken.for_user, user_id a string)
#      passes credencial's /api/token/verify/ (200 {}); one whose user_id is
#      not a number is refused (401).
#
# The Django user with credencial's user id is created from the id in the
# pair's access token (simplejwt looks user_id up in Django's own table).
# Loopback only; every step is bounded in time; everything started is
# stopped on exit. Prints "simplejwt-interop: N passed, N failed".
# Usage: bash tests/interop/simplejwt/run.sh
# Knobs: INTEROP_PORT (18400; the demo on it, serve on +1, Django on +2),
#        INTEROP_SKIP_BUILD (set: reuse target/release/credencial),
#        INTEROP_BIN (a credencial binary to use instead; no build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

HERE=tests/interop/simplejwt
PORT=${INTEROP_PORT:-18400}
DEMO="http://127.0.0.1:${PORT}"
SERVE="http://127.0.0.1:$((PORT + 1))"
DJANGO="http://127.0.0.1:$((PORT + 2))"
TARGET=${CARGO_TARGET_DIR:-target}
OUT="${TARGET}/interop-simplejwt"
VENV="${TARGET}/interop-simplejwt-venv"
log() { printf '[simplejwt-interop %s] %s\n' "$(date +%T)" "$*" >&2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
PIDS=()
PASSED=0
FAILED=0
SUMMARY=
cleanup() {
    local status=$? pid
    if [ -z "$SUMMARY" ]; then
        # A setup step failed (set -e): still one verdict line.
        log "stopped by a failed step (exit status ${status}); logs in ${OUT}"
        echo "simplejwt-interop: ${PASSED} passed, $((FAILED + 1)) failed"
    fi
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
pass() { PASSED=$((PASSED + 1)); printf 'ok    %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL  %s\n' "$1"; shift; printf '      %s\n' "$@"; }

# 1. the resource server's packages, pinned, in a venv of our own
if ! cmp -s "${HERE}/requirements.txt" "${VENV}/requirements.txt" 2>/dev/null; then
    log "installing Django and djangorestframework-simplejwt into ${VENV}"
    rm -rf "$VENV"
    if ! python3 -m venv --help >/dev/null 2>&1; then
        log "installing python3-venv"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$VENV"
    timeout 600 "${VENV}/bin/pip" install --quiet --disable-pip-version-check -r "${HERE}/requirements.txt"
    cp "${HERE}/requirements.txt" "${VENV}/requirements.txt"
fi
PY="$(cd "$VENV" && pwd)/bin/python"

# The credencial binary.
if [ -n "${INTEROP_BIN:-}" ]; then
    BIN=$(realpath "$INTEROP_BIN")
else
    [ -n "${INTEROP_SKIP_BUILD:-}" ] || cargo build --release --locked --bin credencial
    BIN=$(realpath "${TARGET}/release/credencial")
fi

# One shared secret for both services and Django; few PBKDF2 iterations.
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
export SERVICE_JWT_SECRET=$SECRET SERVICE_PASSWORD_ITERATIONS=1000 RUST_LOG=warn
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
INTEROP_DJANGO_SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
export INTEROP_DJANGO_SECRET_KEY
export INTEROP_DJANGO_DB="${WORK}/django.sqlite3"
manage() { (cd "$HERE" && timeout 60 "$PY" manage.py "$@"); }
manage migrate --verbosity 0
(cd "$HERE" && exec "$PY" -m gunicorn --bind "127.0.0.1:$((PORT + 2))" --workers 1 --timeout 30 --no-control-socket \
    --access-logfile - resource_server.wsgi) >"${OUT}/django.log" 2>&1 &
PIDS+=($!)
DJANGO_PID=$!
deadline=$((SECONDS + 60))
until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "${DJANGO}/api/me/")" = 401 ]; do
    kill -0 "$DJANGO_PID" 2>/dev/null || { cat "${OUT}/django.log" >&2; log "Django exited"; exit 1; }
    ((SECONDS < deadline)) || { cat "${OUT}/django.log" >&2; log "Django does not answer 401 at /api/me/"; exit 1; }
    sleep 0.2
done
log "Django (simplejwt $("$PY" -c 'import importlib.metadata as m; print(m.version("djangorestframework-simplejwt"))')) serving on ${DJANGO}"

# --- helpers ---------------------------------------------------------------

json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
# jwt_json TOKEN header|payload: that part of a JWT, as compact JSON.
jwt_json() {
    python3 - "$1" "$2" <<'PY'
import base64, json, sys
token, part = sys.argv[1], sys.argv[2]
segment = token.split(".")[0 if part == "header" else 1]
print(json.dumps(json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))), sort_keys=True))
PY
}
# describe TOKEN: its header and claims, for a failure message.
describe() { printf 'header %s, claims %s' "$(jwt_json "$1" header)" "$(jwt_json "$1" payload)"; }
# http METHOD URL [curl args...]: sets STATUS and BODY.
http() {
    local method=$1 url=$2
    shift 2
    BODY=$(curl -sS --max-time 10 -X "$method" -w '\n%{http_code}' "$url" "$@") || BODY=$'\n000'
    STATUS=${BODY##*$'\n'}
    BODY=${BODY%$'\n'*}
}
django_me() { http GET "${DJANGO}/api/me/" -H "Authorization: Bearer $1"; }
django_refresh() {
    http POST "${DJANGO}/api/token/refresh/" -H 'Content-Type: application/json' -d "{\"refresh\": \"$1\"}"
}

# pair BASE USERNAME PASSWORD: sets PAIR_ACCESS, PAIR_REFRESH, USER_ID.
pair() {
    local answer
    answer=$(curl -fsS --max-time 30 -X POST "$1/api/token/pair/" -H 'Content-Type: application/json' \
        -d "{\"username\": \"$2\", \"password\": \"$3\"}")
    PAIR_ACCESS=$(printf '%s' "$answer" | json_field access)
    PAIR_REFRESH=$(printf '%s' "$answer" | json_field refresh)
    USER_ID=$(jwt_json "$PAIR_ACCESS" payload | json_field user_id)
}

# oauth2_tokens BASE CLIENT_ID CLIENT_SECRET REDIRECT_URI USERNAME PASSWORD:
# the authorization-code flow as a browser and the client play it (login
# form, consent, code, exchange); sets OAUTH_ACCESS and OAUTH_REFRESH.
oauth2_tokens() {
    local base=$1 client=$2 client_secret=$3 redirect=$4 username=$5 password=$6 jar t location code answer
    jar="${WORK}/cookies"
    local p=(-d response_type=code -d "client_id=${client}" --data-urlencode "redirect_uri=${redirect}"
        --data-urlencode "scope=dados_publicos" -d state=interop)
    csrf() { sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p'; }
    rm -f "$jar"
    t=$(curl -fsS --max-time 10 -G -c "$jar" -b "$jar" "${base}/oauth/authorize/" "${p[@]}" | csrf)
    curl -fsS --max-time 30 -o /dev/null -c "$jar" -b "$jar" "${base}/oauth/authorize/" "${p[@]}" -d action=login \
        -d "csrf_token=${t}" --data-urlencode "username=${username}" --data-urlencode "password=${password}"
    t=$(curl -fsS --max-time 10 -G -c "$jar" -b "$jar" "${base}/oauth/authorize/" "${p[@]}" | csrf)
    location=$(curl -sS --max-time 10 -o /dev/null -w '%{redirect_url}' -b "$jar" "${base}/oauth/authorize/" "${p[@]}" \
        -d action=approve -d "csrf_token=${t}")
    code=$(python3 -c 'import sys, urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query)["code"][0])' "$location")
    answer=$(curl -fsS --max-time 30 -u "${client}:${client_secret}" "${base}/oauth/token/" \
        -d grant_type=authorization_code -d "code=${code}" --data-urlencode "redirect_uri=${redirect}")
    OAUTH_ACCESS=$(printf '%s' "$answer" | json_field access_token)
    OAUTH_REFRESH=$(printf '%s' "$answer" | json_field refresh_token)
}

# lanes LABEL BASE USERNAME PASSWORD CLIENT_ID CLIENT_SECRET REDIRECT_URI:
# the acceptances and refusals at Django, for the service at BASE.
lanes() {
    local label=$1 base=$2
    pair "$base" "$3" "$4"
    oauth2_tokens "$base" "$5" "$6" "$7" "$3" "$4"
    manage interop_user "$USER_ID" >/dev/null
    log "${label}: $3 is user ${USER_ID}; pair and OAuth2 tokens of client $5 issued"

    # simplejwt's exact shape: HS256, these five claims, user_id an integer.
    if python3 - "$(jwt_json "$PAIR_ACCESS" header)" "$(jwt_json "$PAIR_ACCESS" payload)" \
        "$(jwt_json "$PAIR_REFRESH" payload)" <<'PY'; then
import json, sys
header, access, refresh = (json.loads(a) for a in sys.argv[1:])
shape = {"token_type", "exp", "iat", "jti", "user_id"}
# This service's own claims on a refresh token, read back by its refresh
# only (simplejwt ignores claims it does not know): the login's methods,
# when its family started, and the application password it was opened with.
private = {"amr", "orig_iat", "app_password"}
assert header["alg"] == "HS256", header
assert set(access) == shape and access["token_type"] == "access", access
assert shape <= set(refresh) <= shape | private and refresh["token_type"] == "refresh", refresh
for claims in (access, refresh):
    assert isinstance(claims["user_id"], int) and not isinstance(claims["user_id"], bool), claims
PY
        pass "${label}: the pair keeps simplejwt's shape (HS256; token_type, exp, iat, jti, integer user_id; the refresh token may add amr, orig_iat, app_password)"
    else
        fail "${label}: the pair must keep simplejwt's shape (HS256; token_type access/refresh, exp, iat, jti, integer user_id)" \
            "access: $(describe "$PAIR_ACCESS")" "refresh: $(describe "$PAIR_REFRESH")"
    fi
    django_me "$PAIR_ACCESS"
    if [ "$STATUS" = 200 ] && [ "$(printf '%s' "$BODY" | json_field user_id)" = "$USER_ID" ]; then
        pass "${label}: Django accepts the pair's access token at its authenticated view (user ${USER_ID})"
    else
        fail "${label}: Django must accept the pair's access token at its authenticated view (200, user ${USER_ID})" \
            "got ${STATUS} ${BODY}" "$(describe "$PAIR_ACCESS")"
    fi
    django_refresh "$PAIR_REFRESH"
    if [ "$STATUS" = 200 ] && printf '%s' "$BODY" | json_field access >/dev/null 2>&1; then
        pass "${label}: Django's TokenRefreshView accepts the pair's refresh token"
    else
        fail "${label}: Django's TokenRefreshView must accept the pair's refresh token (200 with an access token)" \
            "got ${STATUS} ${BODY}" "$(describe "$PAIR_REFRESH")"
    fi
    django_me "$OAUTH_ACCESS"
    if [ "$STATUS" = 401 ]; then
        pass "${label}: Django refuses the OAuth2 access token of client $5 at its authenticated view (401)"
    else
        fail "${label}: Django must refuse (401) the OAuth2 access token of client $5 at its authenticated view: it would take a grant to a third-party application for the person's login" \
            "got ${STATUS} ${BODY}" "$(describe "$OAUTH_ACCESS")"
    fi
    django_refresh "$OAUTH_REFRESH"
    if [ "$STATUS" = 401 ]; then
        pass "${label}: Django's TokenRefreshView refuses the OAuth2 refresh token of client $5 (401)"
    else
        fail "${label}: Django's TokenRefreshView must refuse (401) the OAuth2 refresh token of client $5: it would turn it into a first-party access token" \
            "got ${STATUS} ${BODY}" "$(describe "$OAUTH_REFRESH")"
    fi
}

# minted LABEL BASE: tokens simplejwt minted for USER_ID at credencial's verify.
minted() {
    local label=$1 base=$2 tokens
    tokens=$(manage mint_tokens "$USER_ID")
    local access refresh bad
    access=$(printf '%s' "$tokens" | json_field access)
    refresh=$(printf '%s' "$tokens" | json_field refresh)
    bad=$(printf '%s' "$tokens" | json_field access_bad_user_id)
    http POST "${base}/api/token/verify/" -H 'Content-Type: application/json' -d "{\"token\": \"${access}\"}"
    if [ "$STATUS" = 200 ] && [ "$BODY" = '{}' ]; then
        pass "${label}: credencial's verify accepts an access token simplejwt 5.5.1 minted (user_id \"${USER_ID}\", a string)"
    else
        fail "${label}: credencial's verify must accept (200 {}) an access token simplejwt 5.5.1 minted (user_id a string of digits)" \
            "got ${STATUS} ${BODY}" "$(describe "$access")"
    fi
    http POST "${base}/api/token/verify/" -H 'Content-Type: application/json' -d "{\"token\": \"${bad}\"}"
    if [ "$STATUS" = 401 ]; then
        pass "${label}: credencial's verify refuses a simplejwt-minted access token whose user_id is not a number (401)"
    else
        fail "${label}: credencial's verify must refuse (401) a simplejwt-minted access token whose user_id is \"${USER_ID}a\"" \
            "got ${STATUS} ${BODY}"
    fi
    # Not asserted: a refresh token simplejwt minted. Our verify accepts a
    # refresh token only while its record in our store is current (rotation,
    # revocation, logout), and credencial never recorded this one; whether
    # verify refuses it for that reason is our store's rule, not simplejwt
    # interop (simplejwt refreshes its own refresh tokens itself).
    http POST "${base}/api/token/verify/" -H 'Content-Type: application/json' -d "{\"token\": \"${refresh}\"}"
    log "${label}: (not asserted) a simplejwt-minted refresh token at credencial's verify: ${STATUS} ${BODY}"
}

# app_password LABEL BASE USERNAME PASSWORD: the account gets a second factor
# and an application password through the account pages (app_password.py,
# as a person would); the password alone no longer buys a pair, and the pair
# the application password buys (what a SUAP client of such an account
# uses) is accepted by simplejwt at its authenticated view and refresh view.
app_password() {
    local label=$1 base=$2 secret
    secret=$(python3 "${HERE}/app_password.py" "$base" "$3" "$4")
    http POST "${base}/api/token/pair/" -H 'Content-Type: application/json' \
        -d "{\"username\": \"$3\", \"password\": \"$4\"}"
    if [ "$STATUS" = 401 ] && [ "$(printf '%s' "$BODY" | json_field code)" = second_factor_required ]; then
        pass "${label}: with a second factor, the password alone buys no pair (401 second_factor_required)"
    else
        fail "${label}: with a second factor, the password alone must buy no pair (401 second_factor_required)" \
            "got ${STATUS} ${BODY}"
    fi
    pair "$base" "$3" "$secret"
    if python3 - "$(jwt_json "$PAIR_ACCESS" payload)" "$(jwt_json "$PAIR_REFRESH" payload)" <<'PY'; then
import json, sys
access, refresh = (json.loads(a) for a in sys.argv[1:])
assert set(access) == {"token_type", "exp", "iat", "jti", "user_id"}, access
assert isinstance(refresh.get("app_password"), int) and refresh.get("amr") == ["app"], refresh
PY
        pass "${label}: the application password's pair: the access token in simplejwt's shape, the refresh token naming it"
    else
        fail "${label}: the application password's pair must keep the access token's shape and name it in the refresh token" \
            "access: $(describe "$PAIR_ACCESS")" "refresh: $(describe "$PAIR_REFRESH")"
    fi
    django_me "$PAIR_ACCESS"
    if [ "$STATUS" = 200 ] && [ "$(printf '%s' "$BODY" | json_field user_id)" = "$USER_ID" ]; then
        pass "${label}: Django accepts the access token of a pair bought with an application password (user ${USER_ID})"
    else
        fail "${label}: Django must accept the access token of a pair bought with an application password (200, user ${USER_ID})" \
            "got ${STATUS} ${BODY}" "$(describe "$PAIR_ACCESS")"
    fi
    django_refresh "$PAIR_REFRESH"
    if [ "$STATUS" = 200 ] && printf '%s' "$BODY" | json_field access >/dev/null 2>&1; then
        pass "${label}: Django's TokenRefreshView accepts the refresh token of that pair"
    else
        fail "${label}: Django's TokenRefreshView must accept the refresh token of a pair bought with an application password" \
            "got ${STATUS} ${BODY}" "$(describe "$PAIR_REFRESH")"
    fi
}

# --- 2. credencial demo: OAuth2 tokens signed with the OpenID Connect key ---
(cd "$WORK" && exec env DATABASE_URL="sqlite://${WORK}/demo.db" SERVICE_BIND="127.0.0.1:${PORT}" \
    "$BIN" demo) >"${OUT}/demo.log" 2>&1 &
PIDS+=($!)
DEMO_PID=$!
wait_until_serving "$DEMO" "$DEMO_PID" "${OUT}/demo.log" 60 || exit 1
lanes demo "$DEMO" ana ana-demo-2026 demo-host demo-host-secret "${DEMO}/auth/callback/"
minted demo "$DEMO"
app_password demo "$DEMO" ana ana-demo-2026
kill "$DEMO_PID"
wait "$DEMO_PID" 2>/dev/null || true

# --- 3. credencial serve, HS256 and no OpenID Connect key --------------------
# serve needs an upstream; nothing here calls it (the consume routes are not used).
export DATABASE_URL="sqlite://${WORK}/serve.db"
"$BIN" migrate >"${OUT}/cli.log" 2>&1
printf '%s\n' 'interop-maria-2026' | "$BIN" user create --username maria --name 'Maria Interop' >>"${OUT}/cli.log" 2>&1
REDIRECT="http://127.0.0.1:9/callback"
CREATED=$("$BIN" client create --client-id interop-app --name 'Aplicação de interoperabilidade' \
    --redirect-uri "$REDIRECT" 2>>"${OUT}/cli.log")
# The secret is the last line of stdout (issue 22); binaries before it
# printed "client_secret: …" followed by a notice.
CLIENT_SECRET=$(printf '%s\n' "$CREATED" | sed -n 's/^client_secret: //p')
[ -n "$CLIENT_SECRET" ] || CLIENT_SECRET=$(printf '%s\n' "$CREATED" | tail -n 1)
[ -n "$CLIENT_SECRET" ] || { cat "${OUT}/cli.log" >&2; log "client create printed no client_secret"; exit 1; }
SERVICE_BIND="127.0.0.1:$((PORT + 1))" SERVICE_UPSTREAM_BASE_URL="http://127.0.0.1:9" \
    "$BIN" serve >"${OUT}/serve.log" 2>&1 &
PIDS+=($!)
SERVE_PID=$!
wait_until_serving "$SERVE" "$SERVE_PID" "${OUT}/serve.log" 60 || exit 1
lanes serve-hs256 "$SERVE" maria interop-maria-2026 interop-app "$CLIENT_SECRET" "$REDIRECT"
# The case this scenario exists for: OAuth2 tokens under the shared secret.
ALG=$(jwt_json "$OAUTH_ACCESS" header | json_field alg)
if [ "$ALG" = HS256 ]; then
    pass "serve-hs256: the OAuth2 access token is signed with HS256 (the shared secret), as this scenario assumes"
else
    fail "serve-hs256: serve without an OpenID Connect key should sign OAuth2 tokens with the HS256 secret" \
        "$(describe "$OAUTH_ACCESS")"
fi
minted serve-hs256 "$SERVE"

if grep -q 'panicked' "${OUT}/demo.log" "${OUT}/serve.log"; then
    fail "no panic in credencial's logs" "$(grep -h -A5 panicked "${OUT}/demo.log" "${OUT}/serve.log")"
fi
if grep -q 'Internal Server Error\|Traceback' "${OUT}/django.log"; then
    fail "no error in Django's log" "$(grep -A20 -m1 'Traceback\|Internal Server Error' "${OUT}/django.log")"
fi
SUMMARY="simplejwt-interop: ${PASSED} passed, ${FAILED} failed"
echo "$SUMMARY"
[ "$FAILED" -eq 0 ]
