# The service under the real systemd, sandbox and all. The sample export goes where the shipped
# configuration looks, and --computed-at (through RANKINGS_FLAGS) makes the document comparable
# byte for byte with sample-data/expected/all_time.json.

configure_sample_export() {
    in_container install -d -m 0755 /srv/rankings/exports
    in_container install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/exports/
    set_config RANKINGS_FLAGS '"--computed-at 2026-02-18T05:00:00Z"'
    # Retries 1 s apart instead of 5 min, so the retry check does not wait 15 minutes.
    in_container install -d /etc/systemd/system/rankings.service.d
    in_container_sh 'printf "[Service]\nRestartSec=1s\n" >/etc/systemd/system/rankings.service.d/test.conf'
    in_container systemctl daemon-reload
}

service_state() { in_container systemctl show -P "$1" rankings.service; }
# True when the unit is in STATE as "ActiveState/SubState", e.g. failed/failed.
service_is() { test "$(service_state ActiveState)/$(service_state SubState)" = "$1"; }
# Clears the failed state and the start counter; a unit that is not loaded has neither.
reset_service() {
    if in_container systemctl is-failed --quiet rankings.service; then
        in_container systemctl reset-failed rankings.service
    fi
}

writes_sample_document() {
    configure_sample_export
    in_container systemctl start rankings.service
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    expect "document owner" "$(in_container stat -c %U /var/lib/rankings/all_time.json)" "rankings"
    expect "exit status" "$(service_state ExecMainStatus)" "0"
}
check "the service writes the sample document (the golden bytes, as user rankings)" writes_sample_document

manual_starts_succeed() {
    # StartLimitBurst=4 in 2 h counts manual starts too (systemd refuses a fifth: "start of the
    # service was attempted too often"); an operator clears it with reset-failed, as here. Unless
    # systemd has already unloaded the finished oneshot unit, and its count with it: then
    # reset-failed says "not loaded", and there is nothing to clear.
    for try in 1 2 3 4 5 6; do
        in_container systemctl reset-failed rankings.service 2>/dev/null || true
        in_container systemctl start rankings.service || { echo "start $try failed"; return 1; }
        expect "result of start $try" "$(service_state Result)" "success"
    done
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
}
check "6 manual starts in a row all succeed" manual_starts_succeed

many_export_files_and_no_network() {
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
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
    # And the sandbox as the real systemd loaded it: the job has no network at all.
    expect "PrivateNetwork" "$(service_state PrivateNetwork)" "yes"
    expect "LimitNOFILE" "$(service_state LimitNOFILE)" "65536"
}
check "2,000 export files in one night's folder: the golden document, under the unit's sandbox without network" \
    many_export_files_and_no_network

malformed_export_is_not_retried() {
    reset_service
    in_container_sh 'printf "{\"joke_id\": \"x\", \"rating\": 5\n" >/srv/rankings/exports/zz-bad.ndjson'
    if in_container systemctl start rankings.service; then
        echo "the start succeeded"
        return 1
    fi
    wait_until 60 service_is failed/failed
    expect "exit status" "$(service_state ExecMainStatus)" "65"
    expect "restarts" "$(service_state NRestarts)" "0"
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    in_container rm /srv/rankings/exports/zz-bad.ndjson
    reset_service
}
check "a malformed export gives 65, no retry, and the old document intact" malformed_export_is_not_retried

missing_export_is_retried_then_fails() {
    reset_service
    set_config RANKINGS_EXPORTS /srv/rankings/missing
    in_container systemctl start --no-block rankings.service
    # Between tries the unit is "activating (auto-restart)"; only the last failure is final.
    wait_until 90 service_is failed/failed
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    expect "exit status" "$(service_state ExecMainStatus)" "66"
    # Each try logs the job's own message once; the path appears in no other check.
    expect "tries" "$(in_container journalctl --no-pager -o cat -u rankings.service |
        grep -c '^rankings: error: cannot read /srv/rankings/missing')" "4"
    in_container systemctl --failed --plain --no-legend | grep -q '^rankings.service '
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    reset_service
}
check "a missing export gives 66, 3 retries, then the failed state (systemctl --failed)" missing_export_is_retried_then_fails
