# Sourced by Tests/container/run.sh: the safety net under the container's real systemd: the
# night's one metrics file (RANKINGS_METRICS) written into node_exporter's textfile directory by
# the sandboxed night through the package's ACL (and read by the real promtool), the guard
# refusing a shrunken export (65, the board and the last success kept), and the drop accepted
# once by hand as the operator's guide says, the guard back the night after.
#
# Self-contained: installs the package if an earlier check has not, and sets every key it needs.

safetynet_textfiles=${metrics_file%/*}

safetynet_setup() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    # What Debian's prometheus-node-exporter leaves: the textfile directory, root's, 0755. The
    # ACL comes from the package's tmpfiles.d entry, as at the next boot.
    in_container_sh '
        install -d -m 0755 '"$safetynet_textfiles"'
        systemd-tmpfiles --create rankings.conf
        install -d -m 0755 /srv/rankings/exports
        install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/exports/
        rm -f /var/lib/rankings/all_time.json '"$safetynet_textfiles"'/*.prom'
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    set_config RANKINGS_METRICS "$metrics_file"
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
}
check "safety net: set up exports and node_exporter's directory" safetynet_setup

safetynet_steps() {
    local step
    for step in fetch aggregate prove publish; do
        printf '%s=%s/%s ' "$step" "$(metric "rankings_night_step_exit_status{step=\"$step\"}")" \
            "$(metric "rankings_night_step_tries{step=\"$step\"}")"
    done
}

safetynet_metrics_after_success() {
    in_container systemctl start rankings.service
    expect "owner of the metrics file" "$(in_container stat -c %U "$metrics_file")" rankings
    expect "files in node_exporter's directory" "$(in_container ls "$safetynet_textfiles")" rankings.prom
    # node_exporter's own parser's rules, by the real promtool on the host.
    in_container cat "$metrics_file" | promtool check metrics
    expect "the night's exit status" "$(metric rankings_night_last_run_exit_status)" 0
    expect "steps (status/tries): no Firestore, so the job alone" "$(safetynet_steps)" \
        "fetch=-1/0 aggregate=0/1 prove=-1/0 publish=-1/0 "
    expect "refused votes" "$(metric 'rankings_night_refused_votes{board="all_time"}')" 0
    [[ -n $(metric rankings_night_last_success_timestamp_seconds) ]]
}
check "systemd: a good night writes the one metrics file as user rankings through the ACL (promtool reads it)" \
    safetynet_metrics_after_success

safetynet_guard_refuses() {
    local night_success before since
    night_success=$(metric rankings_night_last_success_timestamp_seconds)
    before=$(in_container md5sum /var/lib/rankings/all_time.json)
    in_container_sh 'head -n 2500 /mnt/share/rating_events.ndjson >/srv/rankings/exports/rating_events.ndjson'
    since=$(in_container date +%s)
    if in_container systemctl start rankings.service; then
        echo "the night over a truncated export succeeded"
        return 1
    fi
    expect "exit status" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 65
    expect "board kept" "$(in_container md5sum /var/lib/rankings/all_time.json)" "$before"
    expect "the night's exit status" "$(metric rankings_night_last_run_exit_status)" 65
    expect "the night's last success" "$(metric rankings_night_last_success_timestamp_seconds)" "$night_success"
    # 65 is not tried again.
    expect "steps (status/tries)" "$(safetynet_steps)" "fetch=-1/0 aggregate=65/1 prove=-1/0 publish=-1/0 "
    night_lines "$since" | grep -F 'the new document has 2434 ratings'
    expect "state" "$(in_container systemctl is-failed rankings.service)" failed
    in_container systemctl reset-failed rankings.service
}
check "systemd: a truncated export is refused (65), the board and the last success kept" safetynet_guard_refuses

# "Accepting a drop": the operator runs the night once by hand with the guard at 100 %; the next
# night has it back at RANKINGS_MAX_DROP's 1 %.
safetynet_drop_accepted_once() {
    local before status=0
    before=$(in_container md5sum /var/lib/rankings/all_time.json)
    in_container runuser -u rankings -- rankings-night run -- --max-drop 100
    [[ $(in_container md5sum /var/lib/rankings/all_time.json) != "$before" ]]
    expect "the night's exit status" "$(metric rankings_night_last_run_exit_status)" 0
    in_container_sh 'head -n 1000 /mnt/share/rating_events.ndjson >/srv/rankings/exports/rating_events.ndjson'
    in_container systemctl start rankings.service || status=$?
    in_container install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/exports/
    expect "the next night (the guard back)" "$status/$(in_container systemctl show -P ExecMainStatus rankings.service)" "1/65"
    in_container systemctl reset-failed rankings.service
}
check "the drop accepted once by hand (rankings-night run -- --max-drop 100), the guard back the night after" \
    safetynet_drop_accepted_once

safetynet_empty_metrics() {
    unset_config RANKINGS_METRICS
    in_container_sh "rm -f $safetynet_textfiles/*.prom"
    in_container systemctl start rankings.service
    expect "metrics files" "$(in_container_sh "ls $safetynet_textfiles | wc -l")" 0
}
check "systemd: RANKINGS_METRICS unset writes no metrics" safetynet_empty_metrics
