#!/bin/bash
# The Debian package under a real systemd and Debian's cron: boots Debian 12 with systemd-nspawn,
# installs the package in it, and checks what the operator's guide (docs/operators-guide.md)
# promises about the night (rankings.service and rankings.timer, the hourly cron entry).
#
#   sudo bash Tests/container/run.sh
#
# Needs root, the Debian archive (for debootstrap, once; the root file system is cached, see
# rootfs.sh), Google's Firestore emulator (gcloud, Java) with google-cloud-firestore in the
# virtual environment of Tests/firestore/venv.sh, for checks/60-firestore.sh and
# checks/92-upgrade-from-0.4.sh, promtool and node_exporter (the metrics, checks/15-prometheus.sh
# and 50-safetynet.sh), and this repository's git history (0.4.0's package, built for
# checks/92-upgrade-from-0.4.sh). Environment:
# RANKINGS_DEB=path tests that package instead of building one with jobs/package.sh;
# RANKINGS_CONTAINER_CACHE moves the cache; RANKINGS_CONTAINER_EVIDENCE=DIR keeps the journals
# of the Firestore chain there; RANKINGS_CONTAINER_ONLY="10 20 90" sources only the check files
# whose names start so (for work on some checks: those after an omitted one may need its state).
#
# The checks live in checks/*.sh, sourced in name order. Each file registers its checks with
#   check "what it proves" function_name
# and the functions run in that order, each in a subshell with `set -e`, so the first failing
# command fails the check; what it printed is shown under a failing check. Helpers:
#   in_container CMD...      run CMD as root inside the booted container
#   in_container_sh SCRIPT   run a shell script (a string) inside it
#   expect WHAT ACTUAL EXPECTED   fail unless ACTUAL equals EXPECTED
#   wait_until SECONDS CMD...     run CMD every second until it succeeds (a bound, not a timing
#                            assertion); CMD is run anew each time, so give it a function,
#                            not an expanded "$(...)"
#   set_config KEY VALUE     set KEY in the container's /etc/rankings.conf
#   journal_lines END ARGS...  the night's lines in the journal (journalctl -t rankings ARGS),
#                            once a line matches END ($night_end: the night's last line)
#   night_lines SINCE        the journal's lines of the last night started since Unix time SINCE
#   rankings_stand_in SCRIPT / rankings_put_back   a script in the installed job's place, and
#                            the job back
#   board_is FILE GOLDEN     fail unless the board FILE in the container is the host's GOLDEN,
#                            computed_at aside (the night stamps its own)
#   metric NAME              a series of the metrics file the checks set, labels included
#   $share / /mnt/share      a host directory the container sees; $deb_in_container the package in it
#   $repo                    this repository on the host
#   start_emulator / stop_emulator / emulator_running, $emulator, $venv   Google's Firestore
#                            emulator, a host process in the container's network namespace (see
#                            60-firestore.sh), started by the first check that needs it
# State carries from one check to the next (install, then configure, then run...).
#
# Prints `ok - ... (N s)` or `not ok - ...` per check and `N passed, M failed`; exits 1 on any
# failure.
# The container is always stopped and its copy of the root deleted, whatever happens.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
here=$repo/Tests/container

if ((EUID != 0)); then
    echo "Tests/container/run.sh must run as root (debootstrap, systemd-nspawn)" >&2
    exit 77
fi

missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
command -v nsenter >/dev/null || missing+=(util-linux)
command -v dpkg-deb >/dev/null || missing+=(dpkg)
command -v lintian >/dev/null || missing+=(lintian)
command -v groff >/dev/null || missing+=(groff-base)
if ((${#missing[@]})); then
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi
for tool in gcloud java promtool prometheus-node-exporter curl git; do
    if ! command -v "$tool" >/dev/null; then
        echo "Tests/container/run.sh: $tool is missing (Google's Firestore emulator needs gcloud and Java;" \
            "the metrics are read by promtool and node_exporter, over curl; 0.4.0's package is built from git)" >&2
        exit 2
    fi
done
pushd "$repo" >/dev/null
# shellcheck source=Tests/firestore/venv.sh
source Tests/firestore/venv.sh >&2
venv=$(realpath -- "$venv")
popd >/dev/null

# shellcheck source=Tests/container/rootfs.sh
source "$here/rootfs.sh"

work=$(mktemp -d /var/tmp/rankings-container.XXXXXX)
share=$work/share
machine=$work/machine
nspawn_pid=
leader=
check_pid=

stop_container() {
    if [[ -n $nspawn_pid ]] && kill -0 "$nspawn_pid" 2>/dev/null; then
        # SIGTERM asks nspawn for an orderly shutdown of the container's systemd.
        kill -TERM "$nspawn_pid" 2>/dev/null || true
        for _ in $(seq 40); do
            kill -0 "$nspawn_pid" 2>/dev/null || break
            sleep 0.5
        done
        # Killing the container's PID 1 ends every process in its namespace.
        if [[ -n $leader ]]; then
            kill -KILL "$leader" 2>/dev/null || true
        fi
        kill -KILL "$nspawn_pid" 2>/dev/null || true
        wait "$nspawn_pid" 2>/dev/null || true
    fi
    nspawn_pid=
}
# The container has a network namespace of its own (--private-network: its own loopback, none of
# the host's), so the emulator, a host process (the host's gcloud and Java), is started inside
# that namespace with nsenter: 127.0.0.1:$emulator_port in the container is the emulator, and
# no veth pair or address needs configuring. It is its own process group, killed whole; its id
# is kept in a file, since checks run in subshells and the cleanup must find it.
emulator_port=$((20000 + RANDOM % 20000))
# shellcheck disable=SC2034 # for the checks
emulator=127.0.0.1:$emulator_port
start_emulator() {
    stop_emulator
    local emulator_pid
    : >"$work/emulator.log"
    nsenter -t "$leader" -n -- setsid gcloud emulators firestore start --host-port="$emulator" \
        </dev/null >"$work/emulator.log" 2>&1 &
    emulator_pid=$!
    echo "$emulator_pid" >"$work/emulator.pid"
    for _ in $(seq 120); do
        grep -q 'Dev App Server is now running' "$work/emulator.log" && return 0
        kill -0 "$emulator_pid" 2>/dev/null || break
        sleep 0.5
    done
    cat -- "$work/emulator.log"
    return 1
}
emulator_running() { [[ -e $work/emulator.pid ]] && kill -0 -- "-$(cat -- "$work/emulator.pid")" 2>/dev/null; }
stop_emulator() {
    local emulator_pid
    emulator_pid=$(cat -- "$work/emulator.pid" 2>/dev/null) || true
    if [[ -n $emulator_pid ]]; then
        kill -CONT -- "-$emulator_pid" 2>/dev/null || true
        kill -TERM -- "-$emulator_pid" 2>/dev/null || true
        for _ in $(seq 40); do
            kill -0 -- "-$emulator_pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL -- "-$emulator_pid" 2>/dev/null || true
    fi
    rm -f -- "$work/emulator.pid"
}
# SIGSTOP: the emulator stops answering (connections are accepted by the kernel, then time out)
# but keeps its data, so a check can show afterwards that nothing was written to it.
freeze_emulator() { kill -STOP -- "-$(cat -- "$work/emulator.pid")"; }
thaw_emulator() { kill -CONT -- "-$(cat -- "$work/emulator.pid")"; }
# Google's client on the host, in the container's network namespace: Tests/firestore-loop/emulator.py.
emulator_client() { nsenter -t "$leader" -n -- "$venv/bin/python" "$repo/Tests/firestore-loop/emulator.py" "$emulator" "$@"; }

cleanup() {
    if [[ -n $check_pid ]]; then
        kill -TERM "$check_pid" 2>/dev/null || true
    fi
    stop_emulator
    stop_container
    rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
# A reader of our output that goes away must not kill us before the cleanup.
trap 'exit 141' PIPE

in_container() {
    nsenter -t "$leader" -a -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}
in_container_sh() { in_container /bin/sh -euc "$1"; }

expect() {
    local what=$1 actual=$2 expected=$3
    if [[ $actual != "$expected" ]]; then
        printf '%s: got %q, expected %q\n' "$what" "$actual" "$expected"
        return 1
    fi
}

wait_until() {
    local seconds=$1
    shift
    for _ in $(seq "$seconds"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "still false after ${seconds}s: $*"
    return 1
}

# journal_lines END ARGS...: the lines tagged rankings (the night's and its steps') that
# journalctl ARGS selects (a --since, an _SYSTEMD_INVOCATION_ID= of a failed unit: a unit that
# ended well is unloaded, its id with it), once one matches the extended regular expression END.
# journald reads a service's output as it comes, so right after `systemctl start` returns its
# last lines may not be there yet; 30 s is a bound, not a timing.
night_end='^rankings-night: (error: )?night (done|failed)'
journal_lines() {
    local end=$1
    shift
    for _ in $(seq 30); do
        in_container journalctl --no-pager -o cat -t rankings "$@" | grep -E "$end" >/dev/null && break
        sleep 1
    done
    in_container journalctl --no-pager -o cat -t rankings "$@"
}
# night_lines SINCE: the lines of the last night that started at or after the Unix time SINCE,
# from its "night starting" line on, once its last line is there (as journal_lines).
night_lines() {
    local lines=
    for _ in $(seq 30); do
        lines=$(in_container journalctl --no-pager -o cat -t rankings --since "@$1" |
            awk '/^rankings-night: night starting / { seen = 1; n = "" } seen { n = n $0 "\n" } END { printf "%s", n }')
        grep -E "$night_end" <<<"$lines" >/dev/null && break
        sleep 1
    done
    printf '%s\n' "$lines"
}

# set_config KEY VALUE: the line KEY=VALUE in /etc/rankings.conf, in place of KEY's line (or its
# commented one), else at its end; unset_config KEY: no KEY= line at all.
set_config() {
    in_container_sh "grep -q '^#\?$1=' /etc/rankings.conf || echo '$1=' >>/etc/rankings.conf"
    in_container sed -i -e "s|^#\?$1=.*|$1=$2|" /etc/rankings.conf
    in_container grep -qx "$1=$2" /etc/rankings.conf
}
unset_config() { in_container sed -i -e "/^$1=/d" /etc/rankings.conf; }

# rankings_stand_in SCRIPT: /usr/bin/rankings moved aside (to rankings.real) and a shell script of
# SCRIPT's lines in its place (the night runs the installed job: no setting names another);
# rankings_put_back: the real one back.
rankings_stand_in() {
    in_container_sh "test -e /usr/bin/rankings.real || mv /usr/bin/rankings /usr/bin/rankings.real"
    printf '#!/bin/sh\n%s\n' "$1" | in_container_sh 'cat >/usr/bin/rankings && chmod 0755 /usr/bin/rankings'
}
rankings_put_back() { in_container_sh "test ! -e /usr/bin/rankings.real || mv -f /usr/bin/rankings.real /usr/bin/rankings"; }

board_is() {
    diff <(in_container grep -v '^  "computed_at": ' "$1") <(grep -v '^  "computed_at": ' "$2")
}
# The metrics file the checks point RANKINGS_METRICS at.
metrics_file=/var/lib/prometheus/node-exporter/rankings.prom
metric() { in_container awk -v k="$1" '$1 == k { print $2 }' "$metrics_file"; }

# Nights with a Firestore project (60-firestore.sh, 92-upgrade-from-0.4.sh).
# ensure_emulator PROJECT VOTES: the emulator running, PROJECT seeded with VOTES (export lines).
ensure_emulator() {
    emulator_running || start_emulator
    expect "votes seeded" "$(emulator_client "$1" seed "$2")" "$(grep -c . "$2")"
}

# firestore_board_counts PROJECT VOTES: the board in the state directory is what `rankings
# aggregate` makes of VOTES at the board's own computed_at, and Firestore's weekly_rankings/all_time
# reads as it does, in the app's types.
firestore_board_counts() {
    local computed_at
    computed_at=$(in_container python3 -c 'import json; print(json.load(open("/var/lib/rankings/all_time.json"))["computed_at"])')
    cp -- "$2" "$share/truth-votes.ndjson"
    in_container rankings aggregate --quiet --computed-at "$computed_at" /mnt/share/truth-votes.ndjson >"$share/truth.json"
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/truth.json"
    emulator_client "$1" matches weekly_rankings all_time "$share/truth.json"
}
# firestore_vote PROJECT ID VOTES: emulator.py's one new Hilarious vote, and its export line
# appended to VOTES.
firestore_vote() {
    emulator_client "$1" vote rating_events "$2"
    printf '{"id": "%s", "joke_id": "LBcw2Dam9tSSPaIh0tG4", "rating": 5, "device_id": "container-device", "week_id": "2026-W48", "timestamp": {"_seconds": %s, "_nanoseconds": 0}}\n' \
        "$2" "$(date +%s)" >>"$3"
}
# The last night's fetch figures in the history: mode, documents read, in the snapshot.
firestore_fetched_figures() {
    in_container rankings-night status -n 1 --json |
        python3 -c 'import json, sys; f = json.load(sys.stdin)[-1]["fetch"]; print(f["mode"], f["documents_read"], f["snapshot_documents"])'
}

checks=()
check() { checks+=("$2:$1"); }

# --- the package and the container ---------------------------------------------------------

mkdir -p -- "$share"
if [[ -n ${RANKINGS_DEB:-} ]]; then
    cp -- "$RANKINGS_DEB" "$share/"
else
    echo "# building the package (jobs/package.sh)"
    "$repo/jobs/package.sh" "$share" >/dev/null 2>"$work/package.log" || {
        cat -- "$work/package.log" >&2
        exit 1
    }
fi
deb=$(ls -- "$share"/rankings_*.deb)
# shellcheck disable=SC2034 # for the checks
deb_in_container=/mnt/share/$(basename -- "$deb")
cp -- "$repo/sample-data/rating_events.ndjson" "$repo/sample-data/expected/all_time.json" "$share/"

rootfs=$(container_rootfs)
rootfs_copy "$rootfs" "$machine"

echo "# booting Debian $rootfs_suite with systemd-nspawn"
# No systemd as PID 1 on the host: --register=no --keep-unit. --private-network gives the
# container a network namespace of its own (its loopback, where the emulator listens); the
# unified hierarchy is what a stock host has.
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --boot --directory="$machine" \
    --machine="rankings-test-$$" --register=no --keep-unit --private-network \
    --console=read-only --bind="$share:/mnt/share" </dev/null >"$work/console.log" 2>&1 &
nspawn_pid=$!

# The container's PID 1 is the descendant of nspawn that is PID 1 in its own namespace, once it
# has become systemd.
find_leader() {
    local pid
    for pid in $(ps -e -o pid= -o ppid= | awk -v top="$nspawn_pid" '
        { parent[$1] = $2 } END { for (p in parent) { q = p; while (q in parent && q != top) q = parent[q]; if (q == top && p != top) print p } }'); do
        if [[ $(awk '/^NSpid:/ { print $NF }' "/proc/$pid/status" 2>/dev/null) == 1 &&
            $(cat "/proc/$pid/comm" 2>/dev/null) == systemd ]]; then
            printf '%s\n' "$pid"
            return 0
        fi
    done
    return 1
}
for _ in $(seq 120); do
    leader=$(find_leader) && break
    kill -0 "$nspawn_pid" 2>/dev/null || break
    sleep 0.5
done
if [[ -z $leader ]]; then
    echo "the container did not boot; its console said:" >&2
    cat -- "$work/console.log" >&2
    exit 1
fi
state=$(timeout 120 nsenter -t "$leader" -a -- systemctl is-system-running --wait 2>&1 || true)
echo "# booted: $state"

# --- the checks ----------------------------------------------------------------------------

for file in "$here"/checks/*.sh; do
    if [[ -n ${RANKINGS_CONTAINER_ONLY:-} && " $RANKINGS_CONTAINER_ONLY " != *" $(basename -- "$file" | cut -d- -f1) "* ]]; then
        continue
    fi
    # shellcheck source=/dev/null
    source "$file"
done

passed=0
failed=0
for entry in "${checks[@]}"; do
    function=${entry%%:*}
    description=${entry#*:}
    started=$SECONDS
    # In the background so that Ctrl-C or a TERM reaches our trap at once, during `wait`.
    (set -e; "$function") >"$work/check.log" 2>&1 </dev/null &
    check_pid=$!
    set +e
    wait "$check_pid"
    status=$?
    set -e
    check_pid=
    if ((status == 0)); then
        echo "ok - $description ($((SECONDS - started)) s)"
        passed=$((passed + 1))
    else
        echo "not ok - $description ($((SECONDS - started)) s)"
        sed 's/^/#   /' "$work/check.log"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed ($SECONDS s in all)"
((failed == 0))
