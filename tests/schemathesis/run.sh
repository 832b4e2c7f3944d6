#!/usr/bin/env bash
# schemathesis (PyPI: `st`) against `ballast demo`, every check, twice: authentication off, and
# on with a write-scoped personal access token. Then the cluster-state check
# (cluster_state.py): nothing changed on the cluster by a rejected request. docs/schemathesis.md.
#
# One worker: with two, hypothesis parses lambda sources in two threads at once and CPython
# 3.11 before 3.11.8 (this machine has 3.11.7) fails with "SystemError: AST constructor recursion
# depth mismatch" (cpython gh-106905: a race in ast construction between threads; an error of the tool,
# reported as schemathesis's exit 1; it failed two CI runs).
#
# Every check schemathesis has runs (its default; schemathesis.toml here turns one off for the
# operations it lists, each with its reason). Bounded for 2 cores: BALLAST_ST_MAX_TIME seconds per
# run (default 100), BALLAST_ST_EXAMPLES examples per operation (default 15). Logs (schemathesis's
# report, the demo's log) stay in BALLAST_ST_LOGS (default target/schemathesis). Without `st` it
# says what it skipped and succeeds.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tests/schemathesis

if ! command -v st >/dev/null 2>&1; then
  echo "tests/schemathesis: SKIPPED: schemathesis is not installed (python3 -m pip install schemathesis); the OpenAPI conformance runs (auth off, auth on) did not run" >&2
  exit 0
fi
bin=${BALLAST_BIN:-${CARGO_TARGET_DIR:-target}/debug/ballast}
if [ ! -x "$bin" ]; then
  cargo build -p ballast --locked
fi
max_time=${BALLAST_ST_MAX_TIME:-100}
examples=${BALLAST_ST_EXAMPLES:-15}
work=$(mktemp -d)
logs=${BALLAST_ST_LOGS:-${CARGO_TARGET_DIR:-target}/schemathesis}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
demo_pid=
cleanup() {
  if [ -n "$demo_pid" ]; then kill "$demo_pid" 2>/dev/null || true; wait "$demo_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# run_one NAME [ENV=VALUE...]: a fresh demo (its own data directory), schemathesis, the check.
run_one() {
  local name=$1; shift
  local port dir url status=0
  port=$(free_port)
  dir="$work/$name"
  mkdir -p "$dir"
  env TMPDIR="$dir" "$@" "$bin" demo --port "$port" >"$dir/demo.log" 2>&1 &
  demo_pid=$!
  url="http://127.0.0.1:$port"
  if ! python3 "$here/cluster_state.py" wait "$url"; then
    tail -20 "$dir/demo.log" >&2
    return 1
  fi
  local headers=()
  unset BALLAST_TOKEN
  if [ "$name" = auth-on ]; then
    # `ballast token` loads the configuration, which names a cluster; it does not connect.
    BALLAST_TOKEN=$(env "$@" BALLAST_DATA_DIR="$dir/ballast-demo-$port" \
      BALLAST_KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:9 "$bin" token create \
      --user schemathesis --name schemathesis --scope write --expires-in 1d 2>>"$dir/token.log")
    export BALLAST_TOKEN
    headers=(-H "Authorization: Bearer $BALLAST_TOKEN")
    # Without the token the API answers 401: authentication is really on.
    code=$(python3 -c 'import sys,urllib.request,urllib.error
try: urllib.request.urlopen(sys.argv[1]); print(200)
except urllib.error.HTTPError as e: print(e.code)' "$url/api/v1/topics/orders/config")
    if [ "$code" != 401 ]; then
      echo "tests/schemathesis: auth-on: a request without the token answered $code, not 401" >&2
      return 1
    fi
  fi
  python3 "$here/cluster_state.py" snapshot "$url" >"$dir/before.json"
  # The description itself needs the credentials when authentication is on: read it first.
  python3 "$here/cluster_state.py" document "$url" >"$dir/openapi.json"
  local started=$SECONDS
  (cd "$here" && st run "$dir/openapi.json" --url "$url" \
      --max-examples "$examples" --max-time "$max_time" --workers 1 \
      --generation-database none --no-color --seed 27 "${headers[@]}" \
      "${EXCLUDE[@]}") >"$dir/st.log" 2>&1 || status=$?
  echo "tests/schemathesis: $name: st ran $((SECONDS - started)) s, exit $status" >&2
  if [ $status -ne 0 ]; then
    # Everything from schemathesis's first report section (failures, errors, warnings, summary)
    # to the end: the CI log is all a reader of a failed run has.
    sed -n '/^==* [A-Z][A-Z ]* ==*$/,$p' "$dir/st.log" | head -300 >&2
  fi
  python3 "$here/cluster_state.py" check "$url" "$dir/before.json" || status=1
  kill "$demo_pid" 2>/dev/null || true
  wait "$demo_pid" 2>/dev/null || true
  demo_pid=
  cp "$dir/st.log" "$logs/$name.st.log"
  cp "$dir/demo.log" "$logs/$name.demo.log"
  return $status
}

# With authentication on, revoking a token ends the run's own credentials (the token routes'
# refusals are covered with authentication off); everything else runs in both.
failed=()
EXCLUDE=()
# Authentication off as `ballast run` has it by default (the demo's own default is anonymous access
# beside two demo tokens, AUTH_ANONYMOUS: tests/e2e/mcp.rs covers it).
run_one auth-off AUTH_PAT_ENABLED=false || failed+=(auth-off)
secret=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
EXCLUDE=(--exclude-path-regex '^/api/v1/tokens/')
run_one auth-on AUTH_PAT_ENABLED=true AUTH_PAT_HASH_SECRET="$secret" || failed+=(auth-on)
if [ ${#failed[@]} -gt 0 ]; then
  echo "tests/schemathesis: FAILED: ${failed[*]} (logs in $logs)" >&2
  exit 1
fi
echo "tests/schemathesis: schemathesis found nothing, auth off and on; no rejected request changed the cluster (logs in $logs)" >&2
