#!/usr/bin/env bash
# The Debian package as an operator meets it, in a throwaway root: an overlay of this machine's /
# (writes go to a temporary directory) entered with chroot. Builds two versions of the package from
# the debug binary (scripts/package), installs the first with dpkg, checks files, owners, modes and
# the conffile, runs the unit's ExecStart as the unit's user against a simulated cluster until
# /api/v1/health answers, starts a slow reassignment, upgrades to the second package over it and
# shows the move finishing with no throttle left; a downgrade onto a newer database refuses to
# start; then remove and purge, each leaving what it should.
#
# Needs root (mount, chroot, dpkg) and target/debug/ballast (cargo build -p ballast).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

if [ "$(id -u)" != 0 ]; then
  echo "tests/package/test.sh: needs root (overlay mount, chroot, dpkg)" >&2
  exit 1
fi
bin="$repo/target/debug/ballast"
[ -x "$bin" ] || { echo "tests/package/test.sh: build target/debug/ballast first" >&2; exit 1; }

work=$(mktemp -d /tmp/ballast-package-test.XXXXXX)
root="$work/root"
sim_pid=""
svc_pid=""
log="$work/service.log"

step() { echo "package test: $*"; }
fail() {
  echo "package test FAILED: $*" >&2
  [ -f "$log" ] && { echo "--- service log (last 40 lines)" >&2; tail -n 40 "$log" >&2; }
  exit 1
}
cleanup() {
  set +e
  [ -n "$svc_pid" ] && kill -KILL -- -"$svc_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
  # whatever the service left running inside the root
  for p in $(pgrep -f /usr/bin/ballast); do
    [ "$(readlink "/proc/$p/root")" = "$root" ] && kill -KILL "$p" 2>/dev/null
  done
  sleep 0.2
  if [ "$root" != / ]; then
    for m in "$root/run" "$root/dev" "$root/proc" "$root"; do
      mountpoint -q "$m" && umount -l "$m"
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

in_root() { chroot "$root" "$@"; }
as_service() { chroot --userspec=ballast:ballast "$root" "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {'d': d}))" "$1"; }
api() { curl -sS --max-time 30 "$@"; }

# ---- two packages, the second "newer" (same code: what matters is that dpkg upgrades)
base=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
v1="${base}+pkgtest1"
v2="${base}+pkgtest2"
for v in "$v1" "$v2"; do
  BALLAST_PACKAGE_PROFILE=debug BALLAST_PACKAGE_VERSION="$v" BALLAST_PACKAGE_OUT="$work" \
    scripts/package >/dev/null
done
deb1="$work/ballast_${v1}_amd64.deb"
deb2="$work/ballast_${v2}_amd64.deb"
[ -f "$deb1" ] && [ -f "$deb2" ] || fail "scripts/package made no .deb"
step "built $(basename "$deb1") and $(basename "$deb2")"
# (read whole first: `grep -q` leaving early would end the writer with SIGPIPE under pipefail)
info=$(dpkg-deb --info "$deb1")
grep -q "Depends: libc6 (>= " <<<"$info" || fail "control has no libc6 dependency"

command -v lintian >/dev/null || fail "lintian is not installed (apt-get install lintian)"
lintian --fail-on error,warning --tag-display-limit 0 "$deb1" > "$work/lintian.txt" 2>&1 \
  || { cat "$work/lintian.txt" >&2; fail "lintian"; }
grep -E '^[EW]: ' "$work/lintian.txt" && fail "lintian warnings"
step "lintian: no errors or warnings"

# ---- the throwaway root: an overlay of / (nothing reaches the real system). Where mounting is
# not permitted, BALLAST_PACKAGE_TEST_ON_HOST=1 (set by .ci/run, whose machine is thrown away
# after the run) installs on this machine itself instead.
mkdir -p "$work/upper" "$work/overlay-work" "$root"
if mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$root" 2>"$work/mount.err"; then
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/run"   # no /run/systemd/system: the maintainer scripts skip systemctl
  step "throwaway root: an overlay of / at $root"
elif [ "${BALLAST_PACKAGE_TEST_ON_HOST:-}" = 1 ]; then
  root=/
  [ -d /run/systemd/system ] && fail "systemd runs here: the host fallback is for throwaway machines only"
  step "overlay not permitted ($(cat "$work/mount.err")); installing on this throwaway machine"
else
  fail "cannot mount an overlay ($(cat "$work/mount.err")); on a throwaway machine set BALLAST_PACKAGE_TEST_ON_HOST=1"
fi
if in_root dpkg -s ballast >/dev/null 2>&1 || in_root getent passwd ballast >/dev/null; then
  fail "the machine already has a ballast package or user; run on a clean machine"
fi
cp "$deb1" "$deb2" "$root/tmp/"

# ---- install
in_root dpkg -i "/tmp/$(basename "$deb1")" >/dev/null || fail "dpkg -i $v1"
[ "$(in_root dpkg-query -W -f='${Status} ${Version}' ballast)" = "install ok installed $v1" ] \
  || fail "not installed"
mode() { in_root stat -c '%a %U:%G' "$1"; }
expect_mode() { [ "$(mode "$1")" = "$2" ] || fail "$1: $(mode "$1"), expected $2"; }
expect_mode /usr/bin/ballast "755 root:root"
expect_mode /lib/systemd/system/ballast.service "644 root:root"
expect_mode /lib/systemd/system/ballast-agent.service "644 root:root"
expect_mode /etc/ballast/agent.env "600 root:root"
in_root grep -q '^#BALLAST_AGENT_RESTART_COMMAND=' /etc/ballast/agent.env \
  || fail "agent.env does not list the agent's settings"
expect_mode /etc/ballast "750 root:ballast"
expect_mode /etc/ballast/ballast.env "640 root:ballast"
expect_mode /var/lib/ballast "750 ballast:ballast"
for f in README.md deploy.md database.md rolling-restarts.md copyright changelog.gz third-party-notices.txt.gz; do
  in_root test -f "/usr/share/doc/ballast/$f" || fail "missing /usr/share/doc/ballast/$f"
done
in_root test -f /usr/share/man/man1/ballast.1.gz || fail "no man page"
expect_mode /usr/share/ballast/prometheus/ballast-alerts.yml "644 root:root"
expect_mode /usr/share/ballast/grafana/ballast-dashboard.json "644 root:root"
in_root sh -c 'zcat /usr/share/man/man1/ballast.1.gz | grep -q BALLAST_KAFKA_BOOTSTRAP_SERVERS' \
  || fail "the man page does not list the settings"
in_root sh -c 'zcat /usr/share/doc/ballast/third-party-notices.txt.gz | grep -q "^tokio "' \
  || fail "the notices do not list tokio"
[ "$(in_root dpkg-query -W -f='${Conffiles}' ballast | awk '{print $1}' | sort | tr '\n' ' ')" \
  = "/etc/ballast/agent.env /etc/ballast/ballast.env " ] \
  || fail "ballast.env and agent.env are not the conffiles"
in_root getent passwd ballast | grep -q ':/var/lib/ballast:' || fail "user ballast's home"
in_root grep -qx 'BALLAST_DATA_DIR=/var/lib/ballast' /etc/ballast/ballast.env \
  || fail "the packaged configuration does not point at /var/lib/ballast"
version_out=$(in_root ballast --version)
grep -q "commit" <<<"$version_out" || fail "ballast --version names no commit"
if in_root systemd-analyze verify /lib/systemd/system/ballast.service \
    /lib/systemd/system/ballast-agent.service > "$work/verify.txt" 2>&1; then
  step "systemd-analyze verify accepts the units"
else
  cat "$work/verify.txt" >&2
  fail "systemd-analyze verify"
fi
step "installed $v1: files, owners, modes, conffile, user, unit"

# ---- a simulated cluster with one large partition to move slowly
cat > "$work/snapshot.json" <<'EOF'
{"format": "ballast.snapshot/v1", "takenAt": "2026-11-25T00:00:00Z",
 "brokers": [{"id": 1, "rack": null, "state": "alive"}, {"id": 2, "rack": null, "state": "alive"},
             {"id": 3, "rack": null, "state": "alive"}],
 "partitions": [
   {"topic": "orders", "partition": 0, "replicas": [1, 2], "leader": 1, "sizeBytes": 40000000},
   {"topic": "orders", "partition": 1, "replicas": [2, 3], "leader": 2, "sizeBytes": 1000000}]}
EOF
control_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" sim --snapshot "$work/snapshot.json" --base-port 0 --control-port "$control_port" \
  > "$work/sim.out" 2> "$work/sim.err" &
sim_pid=$!
for _ in $(seq 100); do grep -q '^bootstrap=' "$work/sim.out" && break; sleep 0.1; done
bootstrap=$(sed -n 's/^bootstrap=//p' "$work/sim.out")
[ -n "$bootstrap" ] || fail "the simulated cluster did not start: $(cat "$work/sim.err")"
truth() { api "http://127.0.0.1:$control_port/truth"; }

# ---- the operator's configuration (an edited conffile, which upgrades must keep)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
license=$("$bin" license issue --key crates/license/keys/dev.pem --sub package-test --lic test --days 1)
cat >> "$root/etc/ballast/ballast.env" <<EOF

# ---- added by the operator
BALLAST_KAFKA_BOOTSTRAP_SERVERS=$bootstrap
PORT=$port
LICENSE_STRING=$license
BALLAST_THROTTLE_RATE_MB=1
BALLAST_SAMPLE_INTERVAL=1s
BALLAST_EXECUTOR_INTERVAL=200ms
BALLAST_HEAL_DRY_RUN=true
EOF
base_url="http://127.0.0.1:$port"

unit=$(in_root cat /lib/systemd/system/ballast.service)
exec_start=$(sed -n 's/^ExecStart=//p' <<<"$unit")
user=$(sed -n 's/^User=//p' <<<"$unit")
workdir=$(sed -n 's/^WorkingDirectory=//p' <<<"$unit")
[ "$user" = ballast ] || fail "the unit runs as $user"

# Starts the unit's ExecStart as its user (what systemd does), stdout and stderr to a file (the
# journal would get the same lines).
start_service() {
  setsid chroot --userspec="$user:$user" "$root" /usr/bin/env -i PATH=/usr/bin:/bin \
    /bin/sh -c "cd $workdir && exec $exec_start" >> "$log" 2>&1 &
  svc_pid=$!
  for _ in $(seq 300); do
    [ "$(api -o /dev/null -w '%{http_code}' "$base_url/api/v1/health" 2>/dev/null)" = 200 ] && return 0
    kill -0 "$svc_pid" 2>/dev/null || fail "the service exited"
    sleep 0.2
  done
  fail "/api/v1/health did not answer"
}
# Stops it as systemd does: SIGTERM to the supervisor (KillMode=mixed), then waits.
stop_service() {
  kill -TERM "$svc_pid"
  for _ in $(seq 150); do kill -0 "$svc_pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$svc_pid" 2>/dev/null && fail "the service did not stop on SIGTERM"
  svc_pid=""
}

start_service
step "the unit's ExecStart runs as $user; /api/v1/health answers"
grep -q $'\e' "$log" && fail "log lines carry terminal colour codes though stdout is a file"
status_out=$(as_service ballast status --config /etc/ballast/ballast.env)
grep -q observer <<<"$status_out" || fail "ballast status --config /etc/ballast/ballast.env"
as_service sqlite3 -readonly /var/lib/ballast/ballast.db 'select count(*) from processes' >/dev/null \
  || fail "read-only sqlite3 as the service user"

# ---- a slow reassignment: 40 MB at 1 MB/s
for _ in $(seq 150); do
  [ "$(api -o /dev/null -w '%{http_code}' "$base_url/api/v1/ready")" = 200 ] && break
  sleep 0.2
done
started=$(api -X POST -H 'content-type: application/json' -d '{"replicas": [3, 2]}' \
  "$base_url/api/v1/topics/orders/partitions/0/redistribute")
operation=$(json "d['data']['operationId']" <<<"$started") || fail "no reassignment: $started"
for _ in $(seq 100); do
  state=$(api "$base_url/api/v1/reassignments/$operation" | json "d['data']['state']")
  [ "$state" = Active ] && break
  sleep 0.2
done
[ "$state" = Active ] || fail "the reassignment is $state, not Active"
throttled=$(truth | json "len(d['throttles']['brokers'])")
[ "$throttled" -gt 0 ] || fail "no broker throttle while the move runs"
step "reassignment $operation running, $throttled brokers throttled"

# ---- upgrade while it runs: stop (as systemd's try-restart), dpkg -i, start
stop_service
in_root dpkg -i "/tmp/$(basename "$deb2")" >/dev/null || fail "dpkg -i $v2"
[ "$(in_root dpkg-query -W -f='${Version}' ballast)" = "$v2" ] || fail "not upgraded"
in_root grep -q "^BALLAST_KAFKA_BOOTSTRAP_SERVERS=$bootstrap" /etc/ballast/ballast.env \
  || fail "the upgrade replaced the edited configuration"
expect_mode /etc/ballast/ballast.env "640 root:ballast"
start_service
state=$(api "$base_url/api/v1/reassignments/$operation" | json "d['data']['state']")
[ "$state" = Active ] || fail "after the upgrade the reassignment is $state, not still Active"
for _ in $(seq 600); do
  state=$(api "$base_url/api/v1/reassignments/$operation" | json "d['data']['state']")
  [ "$state" = Completed ] && break
  case "$state" in Failed|Cancelled) fail "the reassignment ended $state";; esac
  sleep 0.2
done
[ "$state" = Completed ] || fail "the reassignment is $state after the upgrade"
for _ in $(seq 100); do
  left=$(truth | json "len(d['throttles']['brokers']) + len(d['throttles']['topics'])")
  [ "$left" = 0 ] && break
  sleep 0.2
done
[ "$left" = 0 ] || fail "throttles left behind: $(truth | json "d['throttles']")"
step "upgraded to $v2 mid-move: the move finished, no throttle left"

# ---- a downgrade onto a database a newer version migrated refuses to start
stop_service
as_service sqlite3 /var/lib/ballast/ballast.db 'PRAGMA user_version = 999' \
  || fail "could not simulate a newer schema"
in_root dpkg -i "/tmp/$(basename "$deb1")" >/dev/null 2>&1 || fail "dpkg -i $v1 (downgrade)"
set +e
out=$(chroot --userspec=ballast:ballast "$root" /usr/bin/env -i PATH=/usr/bin:/bin \
  /bin/sh -c "cd $workdir && timeout 20 $exec_start" 2>&1)
code=$?
set -e
[ "$code" != 0 ] && [ "$code" != 124 ] || fail "an older ballast started on a newer database (exit $code)"
grep -qi "newer" <<<"$out" || fail "no clear message on a downgrade: $out"
step "a downgrade refuses to start: $(grep -i newer <<<"$out" | head -n1)"

# ---- remove keeps data and configuration; purge deletes them
in_root dpkg -r ballast >/dev/null || fail "dpkg -r"
in_root test ! -e /usr/bin/ballast || fail "remove left the binary"
in_root test -f /var/lib/ballast/ballast.db || fail "remove deleted the database"
in_root test -f /etc/ballast/ballast.env || fail "remove deleted the configuration"
in_root dpkg -P ballast >/dev/null || fail "dpkg -P"
in_root test ! -e /var/lib/ballast || fail "purge left /var/lib/ballast"
in_root test ! -e /etc/ballast || fail "purge left /etc/ballast"
step "remove kept /var/lib/ballast and /etc/ballast; purge deleted both"
echo "package test: ok"
