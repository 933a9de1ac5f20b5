# The night under the real systemd, sandbox and all: rankings.service runs `rankings-night run`,
# which makes its own tries inside one start. The sample export goes where the checks point
# RANKINGS_EXPORTS (no Firestore project: the night's source is the exports), and the board is
# sample-data/expected/all_time.json's, its computed_at aside (the night stamps its own).

service_state() { in_container systemctl show -P "$1" rankings.service; }
# Clears the failed state a failed night leaves (a unit that is not loaded has none).
reset_service() {
    if in_container systemctl is-failed --quiet rankings.service; then
        in_container systemctl reset-failed rankings.service
    fi
}
# The journal's lines of the night started since $night_since (SyslogIdentifier=rankings).
night_journal() { night_lines "$night_since"; }
# systemctl status's "Active:" line: what an operator sees first.
service_active_line() { in_container systemctl status --no-pager rankings.service | sed -n 's/^ *Active: \([a-z]*\).*/\1/p'; }
board=/var/lib/rankings/all_time.json
# `rankings-night status --json`'s last night, FIELD of it (a Python expression on `n`).
last_night() { in_container rankings-night status -n 1 --json | python3 -c "import json, sys; n = json.load(sys.stdin)[-1]; print($1)"; }

configure_sample_export() {
    in_container install -d -m 0755 /srv/rankings/exports
    in_container install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/exports/
    set_config RANKINGS_EXPORTS /srv/rankings/exports
}

writes_sample_board() {
    configure_sample_export
    in_container systemctl start rankings.service
    board_is "$board" "$share/all_time.json"
    expect "board owner" "$(in_container stat -c %U "$board")" "rankings"
    expect "exit status" "$(service_state ExecMainStatus)" "0"
    expect "the night's steps" "$(last_night '" ".join(k + "=" + str(v["status"]) for k, v in n["steps"].items() if v)')" "aggregate=0"
    expect "scheduler" "$(last_night 'n["scheduler"]')" systemd
}
check "the service writes the sample's board (the golden, as user rankings) from RANKINGS_EXPORTS" writes_sample_board

# 0.3's unit had StartLimitBurst=4 in 2 h for its retries, which counted manual starts too: a
# fifth start was refused ("start of the service was attempted too often") until reset-failed,
# and a night of the timer with it. The night makes its own tries now, so there is no limit.
seventh_start_still_runs() {
    local try
    for try in 1 2 3 4 5 6 7; do
        in_container systemctl start rankings.service || { echo "start $try failed"; return 1; }
        expect "result of start $try" "$(service_state Result)" "success"
    done
    expect "nights in the history" "$(in_container rankings-night status -n 60 --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" 8
    expect "failed units" "$(in_container systemctl --failed --plain --no-legend)" ""
    board_is "$board" "$share/all_time.json"
}
check "7 starts in a row all run: no start limit, nothing in systemctl --failed" seventh_start_still_runs

many_export_files() {
    # The sample cut into 2,000 files: more than the 1,024 open files systemd gives a service
    # by default, the same events, so the same golden board (issue 17, item 2).
    in_container install -d -m 0755 /srv/rankings/many
    in_container_sh 'cd /srv/rankings/many && split -n l/2000 -d -a 4 --additional-suffix=.ndjson /srv/rankings/exports/rating_events.ndjson part-'
    expect "files" "$(in_container_sh 'ls /srv/rankings/many | wc -l')" "2000"
    set_config RANKINGS_EXPORTS /srv/rankings/many
    local started=0
    in_container systemctl start rankings.service || started=$?
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    in_container rm -r /srv/rankings/many
    expect "systemctl start" "$started" "0"
    expect "exit status" "$(service_state ExecMainStatus)" "0"
    board_is "$board" "$share/all_time.json"
    expect "LimitNOFILE" "$(service_state LimitNOFILE)" "65536"
}
check "2,000 export files: the golden board under the unit's sandbox" many_export_files

# The unit has the network (the fetch, the proof and the publish need it); the night runs the job
# itself in a network namespace of its own (isolate.py: a user and a network namespace,
# RestrictNamespaces=user net). The installed rankings, moved aside for one night, is run by a
# stand-in that records its namespace first.
the_job_runs_without_the_network() {
    rankings_stand_in 'readlink /proc/self/ns/net >/var/lib/rankings/job-network
exec /usr/bin/rankings.real "$@"'
    local started=0 night_since
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service || started=$?
    rankings_put_back
    night_journal
    expect "systemctl start" "$started" 0
    board_is "$board" "$share/all_time.json"
    if night_journal | grep -F 'the job runs with the network'; then
        return 1
    fi
    local namespace
    namespace=$(in_container head -n 1 /var/lib/rankings/job-network)
    echo "the job's: $namespace; PID 1's: $(in_container readlink /proc/1/ns/net)"
    [[ $namespace == net:* && $namespace != "$(in_container readlink /proc/1/ns/net)" ]]
    in_container rm -f /var/lib/rankings/job-network
}
check "the job runs in a network namespace of its own, not the machine's (PID 1's)" the_job_runs_without_the_network

# A malformed vote never stops the night: it is left out of the board, named at WARNING in the
# journal, and counted; past RANKINGS_MAX_REFUSED percent of the votes (1) the export is
# corrupt: 65 on the first try, the board as it was.
malformed_votes() {
    reset_service
    local night_since
    in_container_sh 'printf "{\"joke_id\": \"x\", \"rating\": 5\n" >/srv/rankings/exports/zz-bad.ndjson'
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service
    night_journal
    expect "the one vote's warning" "$(in_container journalctl --no-pager -o cat -t rankings -p warning --since "@$night_since" |
        grep -c '^rankings-night: warning: aggregate: all_time: left out /srv/rankings/exports/zz-bad.ndjson:1: ')" 1
    expect "left out" "$(last_night 'n["refused"]')" "{'all_time': 1}"
    board_is "$board" "$share/all_time.json"
    # 60 bad lines beside 5,000 votes: over 1 %.
    in_container_sh 'for n in $(seq 60); do printf "{\"joke_id\": \"x\", \"rating\": 5\n"; done >/srv/rankings/exports/zz-bad.ndjson'
    night_since=$(in_container date +%s)
    if in_container systemctl start rankings.service; then
        echo "the start succeeded"
        return 1
    fi
    in_container rm /srv/rankings/exports/zz-bad.ndjson
    expect "state" "$(service_state ActiveState)/$(service_state Result)" "failed/exit-code"
    expect "exit status" "$(service_state ExecMainStatus)" "65"
    expect "tries" "$(night_journal | grep -c '^rankings-night: aggregate: try ')" 1
    night_journal | grep 'aggregate: failed with status 65 (data) on try 1, which another try cannot change$' >/dev/null
    board_is "$board" "$share/all_time.json"
    reset_service
}
check "a malformed vote is left out and named (WARNING); past 1 % of the votes 65, not tried again, the board kept" \
    malformed_votes

# A missing export may come back: the night says it tries again in 5 minutes (a constant), and
# `systemctl stop` in that pause stops the night at once: 143, stopped by SIGTERM in the history,
# the failed state, the board as it was.
stopped_while_waiting_to_try_again() {
    reset_service
    set_config RANKINGS_EXPORTS /srv/rankings/missing
    local night_since
    night_since=$(in_container date +%s)
    in_container systemctl start --no-block rankings.service
    waiting() {
        in_container journalctl --no-pager -o cat -t rankings --since "@$night_since" |
            grep -q '^rankings-night: warning: aggregate: failed with status 66 (no input) on try 1; trying again in 300s$'
    }
    wait_until 60 waiting
    in_container systemctl stop rankings.service
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    night_journal
    expect "exit status" "$(service_state ExecMainStatus)" 143
    expect "systemctl status" "$(service_active_line)" failed
    expect "the history" "$(last_night 'n["status"], n.get("stopped_by")')" "143 SIGTERM"
    expect "tries" "$(night_journal | grep -c '^rankings: error: cannot read /srv/rankings/missing')" 1
    board_is "$board" "$share/all_time.json"
    reset_service
}
check "a missing export is tried again after 300 s; systemctl stop meanwhile ends the night at once (143, failed, the history)" \
    stopped_while_waiting_to_try_again

# Root running the night by hand where rankings owns the state: turned away (64) before it makes
# anything, naming the user to run it as.
root_is_turned_away() {
    local before status=0
    before=$(in_container ls -A /var/lib/rankings)
    in_container rankings-night run 2>"$share/root.err" || status=$?
    cat -- "$share/root.err"
    expect "root's exit status" "$status" 64
    grep -q "running as root, but /var/lib/rankings belongs to rankings" "$share/root.err"
    expect "after root's try" "$(in_container ls -A /var/lib/rankings)" "$before"
}
check "root running the night by hand is turned away (64) before it makes anything" root_is_turned_away
