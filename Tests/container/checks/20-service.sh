# The night under the real systemd, sandbox and all: rankings.service runs `rankings-night run`,
# which makes its own tries inside one start. The sample export goes where the shipped
# configuration looks, and --computed-at (through RANKINGS_FLAGS) makes the document comparable
# byte for byte with sample-data/expected/all_time.json.

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

configure_sample_export() {
    in_container install -d -m 0755 /srv/rankings/exports
    in_container install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/exports/
    set_config RANKINGS_FLAGS '"--computed-at 2026-02-18T05:00:00Z"'
    # Tries 1 s apart instead of 5 min, so the retry check does not wait 15 minutes.
    set_config RANKINGS_RETRY_PAUSE_SECONDS 1
    # The publish: a command that records its argument and its network namespace.
    in_container_sh '
        install -d -o rankings -g rankings /var/lib/rankings/hook
        cat >/usr/local/bin/rankings-record-publish <<"EOF"
#!/bin/sh
printf "%s %s\n" "$1" "$(readlink /proc/self/ns/net)" >>/var/lib/rankings/hook/calls
EOF
        chmod 0755 /usr/local/bin/rankings-record-publish'
    set_config RANKINGS_PUBLISH /usr/local/bin/rankings-record-publish
}

writes_sample_document() {
    configure_sample_export
    in_container systemctl start rankings.service
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    expect "document owner" "$(in_container stat -c %U /var/lib/rankings/all_time.json)" "rankings"
    expect "exit status" "$(service_state ExecMainStatus)" "0"
    expect "published" "$(in_container cut -d' ' -f1 /var/lib/rankings/hook/calls)" /var/lib/rankings/all_time.json
    # The publish has the machine's network (the job alone goes without: see below).
    expect "the publish's network" "$(in_container cut -d' ' -f2 /var/lib/rankings/hook/calls)" "$(in_container readlink /proc/1/ns/net)"
}
check "the service writes the sample document (the golden bytes, as user rankings) and publishes it" writes_sample_document

# 0.3's unit had StartLimitBurst=4 in 2 h for its retries, which counted manual starts too: a
# fifth start was refused ("start of the service was attempted too often") until reset-failed,
# and a night of the timer with it. The night makes its own tries now, so there is no limit.
seventh_start_still_runs() {
    local try
    in_container rm -f /var/lib/rankings/hook/calls
    for try in 1 2 3 4 5 6 7; do
        in_container systemctl start rankings.service || { echo "start $try failed"; return 1; }
        expect "result of start $try" "$(service_state Result)" "success"
    done
    expect "published" "$(in_container_sh 'wc -l </var/lib/rankings/hook/calls')" 7
    expect "failed units" "$(in_container systemctl --failed --plain --no-legend)" ""
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
}
check "7 starts in a row all run and publish: no start limit, nothing in systemctl --failed" seventh_start_still_runs

many_export_files() {
    # The sample cut into 2,000 files: more than the 1,024 open files systemd gives a service
    # by default, the same events, so the same golden document (issue 17, item 2).
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
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    expect "LimitNOFILE" "$(service_state LimitNOFILE)" "65536"
}
check "2,000 export files: the golden document under the unit's sandbox" many_export_files

# The unit has the network (the fetch and the publish need it); the night runs the job itself in
# a network namespace of its own (isolate.py: a user and a network namespace, RestrictNamespaces=
# user net). A stand-in for rankings records its namespace, then runs the real one.
the_job_runs_without_the_network() {
    in_container_sh '
        cat >/usr/local/bin/rankings-record-network <<"EOF"
#!/bin/sh
readlink /proc/self/ns/net >/var/lib/rankings/job-network
exec /usr/bin/rankings "$@"
EOF
        chmod 0755 /usr/local/bin/rankings-record-network'
    set_config RANKINGS_BIN /usr/local/bin/rankings-record-network
    local started=0 night_since
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service || started=$?
    in_container sed -i '/^RANKINGS_BIN=/d' /etc/rankings.conf
    night_journal
    in_container cat /var/lib/rankings/job-network
    expect "systemctl start" "$started" 0
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    if night_journal | grep -F 'the job runs with the network'; then
        return 1
    fi
    local namespace
    namespace=$(in_container head -n 1 /var/lib/rankings/job-network)
    [[ $namespace == net:* && $namespace != "$(in_container readlink /proc/1/ns/net)" ]]
    in_container rm -f /var/lib/rankings/job-network
}
check "the job runs in a network namespace of its own, not the machine's (PID 1's)" the_job_runs_without_the_network

malformed_export_is_not_retried() {
    reset_service
    in_container rm -f /var/lib/rankings/hook/calls
    in_container_sh 'printf "{\"joke_id\": \"x\", \"rating\": 5\n" >/srv/rankings/exports/zz-bad.ndjson'
    local night_since
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
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    in_container test ! -e /var/lib/rankings/hook/calls
    reset_service
}
check "a malformed export gives 65, no retry, nothing published, and the old document intact" malformed_export_is_not_retried

missing_export_is_retried_then_fails() {
    local status=0
    reset_service
    set_config RANKINGS_EXPORTS /srv/rankings/missing
    local night_since
    night_since=$(in_container date +%s)
    # One start: systemctl returns once the night's last try failed.
    in_container systemctl start rankings.service || status=$?
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    ((status != 0))
    expect "exit status" "$(service_state ExecMainStatus)" "66"
    # Each try logs the job's own message once; the path appears in no other check.
    expect "tries" "$(night_journal | grep -c '^rankings: error: cannot read /srv/rankings/missing')" "4"
    expect "pauses" "$(night_journal | grep -c 'aggregate: failed with status 66 (no input) on try [123]; trying again in 1s$')" 3
    in_container systemctl --failed --plain --no-legend | grep '^rankings.service ' >/dev/null
    expect "systemctl status" "$(service_active_line)" failed
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    reset_service
}
check "a missing export gives 66 after 3 more tries inside one start, then the failed state (systemctl status, --failed)" \
    missing_export_is_retried_then_fails
