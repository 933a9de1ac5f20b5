# Sourced by Tests/container/run.sh: the night with a Firestore project against Google's emulator
# (a host process in the container's network namespace, see run.sh), under the real systemd: one
# start of rankings.service fetches, aggregates, proves and publishes; the next night reads only
# the new vote and builds on the first; with Firestore out of reach the night fails 69 at the
# fetch, and neither the fetched nights nor the board nor Firestore's copy changes.
#
# The emulator is seeded with the sample's first 500 votes (the proof asks two COUNTs a joke,
# which the emulator answers by reading every vote: the whole sample's would take minutes), and
# a board is held to what `rankings aggregate` makes of the same votes at the board's own
# computed_at, Firestore's readTime. The emulator keeps running for 92-upgrade-from-0.4.sh.
#
# Self-contained: installs the package if an earlier check has not, and sets every key it needs.
# RANKINGS_CONTAINER_EVIDENCE=DIR keeps the journals of the nights.

firestore_project=demo-rankings-container
firestore_fetched=/var/lib/rankings/firestore
# The votes the emulator holds, as export lines: what the board must count.
firestore_votes=$share/firestore-votes.ndjson

firestore_setup() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    in_container_sh '
        # mkdir, not install -d: a chmod of the existing directory would narrow its ACL mask.
        mkdir -p '"${metrics_file%/*}"'
        systemd-tmpfiles --create rankings.conf
        rm -rf /var/lib/rankings/all_time.json /var/lib/rankings/.rankings-nights.json '"$firestore_fetched"' \
            '"${metrics_file%/*}"'/*.prom'
    unset_config RANKINGS_EXPORTS
    set_config RANKINGS_FIRESTORE_PROJECT "$firestore_project"
    set_config FIRESTORE_EMULATOR_HOST "$emulator"
    set_config RANKINGS_METRICS "$metrics_file"
    in_container systemctl reset-failed 2>/dev/null || true
    head -n 500 -- "$repo/sample-data/rating_events.ndjson" >"$firestore_votes"
    ensure_emulator "$firestore_project" "$firestore_votes"
}
check "firestore: the emulator seeded with the sample's first 500 votes, the package configured for it" firestore_setup

firestore_show() { emulator_client "$firestore_project" show weekly_rankings all_time; }
firestore_update_time() { firestore_show | awk -F'"' '$2 == "update_time" { print $4 }'; }
firestore_state() { in_container systemctl show -P "$1" rankings.service; }
firestore_steps() {
    local step
    for step in fetch aggregate prove publish; do
        printf '%s=%s/%s ' "$step" "$(metric "rankings_night_step_exit_status{step=\"$step\"}")" \
            "$(metric "rankings_night_step_tries{step=\"$step\"}")"
    done
}
# The lines of the night started since $night_since, as `journalctl -t rankings` shows them.
firestore_journal() { night_lines "$night_since"; }
# What the night said of its steps, in order: "fetch:try fetch:done aggregate:try ...".
firestore_step_words() {
    sed -n 's/^rankings-night: \(error: \)\?\(fetch\|aggregate\|prove\|publish\): \(try\|done\|failed\).*/\2:\3/p' | tr '\n' ' '
}
firestore_reset() {
    if in_container systemctl is-failed --quiet rankings.service; then
        in_container systemctl reset-failed rankings.service
    fi
}
firestore_evidence() {
    if [[ -n ${RANKINGS_CONTAINER_EVIDENCE:-} ]]; then
        mkdir -p -- "$RANKINGS_CONTAINER_EVIDENCE"
        cat >"$RANKINGS_CONTAINER_EVIDENCE/$1"
    else
        cat >/dev/null
    fi
}
firestore_systemd_night() {
    local night_since log
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service
    expect "result" "$(firestore_state Result)" success
    expect "fetched (mode, read, in the snapshot)" "$(firestore_fetched_figures)" "full 500 500"
    expect "fetched folder owner" "$(in_container stat -c %U "$firestore_fetched/current/")" rankings
    firestore_board_counts "$firestore_project" "$firestore_votes"
    # Firestore's readTime is the board's clock: its computed_at is the snapshot's, to the ms.
    expect "computed_at" "$(in_container python3 -c 'import json; print(json.load(open("/var/lib/rankings/all_time.json"))["computed_at"][:23])')" \
        "$(in_container rankings-night status -n 1 --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[-1]["fetch"]["read_time"][:23])')"
    expect "steps (status/tries)" "$(firestore_steps)" "fetch=0/1 aggregate=0/1 prove=0/1 publish=0/1 "
    expect "proven (metric)" "$(metric rankings_night_boards_proven)" 1
    expect "full (metric)" "$(metric rankings_fetch_full)" 1
    # journalctl -t rankings: the night's lines, in order, every step's as the night's.
    log=$(firestore_journal)
    echo "$log"
    expect "the night's steps" "$(firestore_step_words <<<"$log")" \
        "fetch:try fetch:done aggregate:try aggregate:done prove:try prove:done publish:try publish:done "
    grep -q '^rankings-night: night starting (systemd; ' <<<"$log"
    grep -q '^rankings-night: fetch: rest: ' <<<"$log"
    grep -q '^rankings-night: aggregate: all_time: 500 votes ' <<<"$log"
    grep -q '^rankings-night: prove: all_time: the board is proven ' <<<"$log"
    grep -q "^rankings-night: publish: wrote projects/$firestore_project/databases/(default)/documents/weekly_rankings/all_time " <<<"$log"
    grep -q '^rankings-night: night done: the boards are written and published ' <<<"$log"
    # Every line is the night's: no other program's name, no warning.
    expect "lines of another program" "$(grep -v '^rankings-night: ' <<<"$log" || true)" ""
    expect "warnings and errors" "$(grep -E '^rankings-night: (warning|error): ' <<<"$log" || true)" ""
    firestore_journal | firestore_evidence systemd-night.journal
}
check "systemd: one start fetches, aggregates, proves, publishes (journalctl -t rankings); weekly_rankings/all_time counts the votes" \
    firestore_systemd_night

firestore_incremental_night() {
    # A second night after one new vote: only the votes stamped since the last night, less the
    # margin, are read (the new one), laid over the first night's snapshot, and proven.
    local updated
    updated=$(firestore_update_time)
    firestore_vote "$firestore_project" zz-container-vote "$firestore_votes"
    in_container systemctl start rankings.service
    expect "result" "$(firestore_state Result)" success
    expect "fetched (mode, read, in the snapshot)" "$(firestore_fetched_figures)" "incremental 1 501"
    expect "documents read (metric)" "$(metric rankings_fetch_documents_read)" 1
    expect "full (metric)" "$(metric rankings_fetch_full)" 0
    expect "proven (metric)" "$(metric rankings_night_boards_proven)" 1
    in_container rankings-night status -n 1 | grep -F 'tonight: incremental read at '
    firestore_board_counts "$firestore_project" "$firestore_votes"
    [[ $(firestore_update_time) != "$updated" ]]
}
check "systemd: a second night reads only the new vote (incremental), proves and publishes the board of every vote" \
    firestore_incremental_night

# Firestore out of reach (nothing listens where FIRESTORE_EMULATOR_HOST points): the fetch's calls
# are refused, the night fails 69 on its one try (RANKINGS_RETRIES=0: another would come 5
# minutes later), and says so where an operator and an alert look.
firestore_unreachable() {
    local current board updated night_success status=0 night_since log
    current=$(in_container readlink "$firestore_fetched/current")
    board=$(in_container sha256sum /var/lib/rankings/all_time.json)
    updated=$(firestore_update_time)
    night_success=$(metric rankings_night_last_success_timestamp_seconds)
    set_config FIRESTORE_EMULATOR_HOST 127.0.0.1:9
    set_config RANKINGS_RETRIES 0
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service || status=$?
    set_config FIRESTORE_EMULATOR_HOST "$emulator"
    unset_config RANKINGS_RETRIES
    ((status != 0))
    expect "exit status" "$(firestore_state ExecMainStatus)" 69
    # What an operator sees first: the failure, not the last good night.
    expect "systemctl status" "$(in_container systemctl status --no-pager rankings.service | sed -n 's/^ *Active: \([a-z]*\).*/\1/p')" failed
    in_container systemctl --failed --plain --no-legend | grep '^rankings.service ' >/dev/null
    expect "current" "$(in_container readlink "$firestore_fetched/current")" "$current"
    expect "no partial folder" "$(in_container_sh "ls -A $firestore_fetched | grep '^\.partial-' || true")" ""
    expect "board" "$(in_container sha256sum /var/lib/rankings/all_time.json)" "$board"
    expect "Firestore's copy (update time)" "$(firestore_update_time)" "$updated"
    expect "the night's exit status" "$(metric rankings_night_last_run_exit_status)" 69
    expect "the night's last success" "$(metric rankings_night_last_success_timestamp_seconds)" "$night_success"
    expect "steps (status/tries)" "$(firestore_steps)" "fetch=69/1 aggregate=-1/0 prove=-1/0 publish=-1/0 "
    log=$(firestore_journal)
    echo "$log"
    expect "the night's steps" "$(firestore_step_words <<<"$log")" "fetch:try fetch:failed "
    grep -q '^rankings-night: error: fetch: failed with status 69 (unavailable) on try 1; no tries left$' <<<"$log"
    firestore_journal | firestore_evidence systemd-unreachable.journal
    firestore_reset
}
check "systemd: Firestore out of reach: 69 at the fetch (systemctl status, the metrics); current, board, Firestore untouched" \
    firestore_unreachable

firestore_teardown() {
    unset_config RANKINGS_FIRESTORE_PROJECT
    unset_config FIRESTORE_EMULATOR_HOST
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    in_container systemctl reset-failed 2>/dev/null || true
}
check "firestore: the project unset again, the night back on the exports" firestore_teardown
