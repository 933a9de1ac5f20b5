# Sourced by Tests/container/run.sh: the safety net under the container's real systemd —
# RANKINGS_METRICS and the night's rankings-night.prom written into node_exporter's textfile
# directory by the sandboxed night (and read by the real promtool), the guard refusing a
# shrunken export, and the publish run only after the job succeeded, tried again, and the night
# failed (69, in systemctl status and in the metrics) when it keeps failing.
#
# Self-contained: installs the package if an earlier check has not, and sets every key it needs.

safetynet_hook_dir=/var/lib/rankings/safetynet-hook
safetynet_textfiles=/var/lib/prometheus/node-exporter

safetynet_setup() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    # What Debian's prometheus-node-exporter leaves: the textfile directory, root's, 0755. The
    # ACL comes from the package's tmpfiles.d entry, as at the next boot.
    in_container_sh '
        install -d -m 0755 '"$safetynet_textfiles"'
        systemd-tmpfiles --create rankings.conf
        install -d -o rankings -g rankings -m 0755 /srv/rankings/exports '"$safetynet_hook_dir"'
        cp /mnt/share/rating_events.ndjson /srv/rankings/exports/
        chmod 0644 /srv/rankings/exports/rating_events.ndjson
        rm -f /var/lib/rankings/all_time.json '"$safetynet_textfiles"'/*.prom
        # The publish records its argument and the document it was given, and fails while
        # "fail" is there.
        cat >/usr/local/bin/rankings-test-hook <<"EOF"
#!/bin/sh
dir='"$safetynet_hook_dir"'
printf "%s %s\n" "$1" "$(head -c 40 "$1" | head -n 1)" >>"$dir/calls"
[ -e "$dir/fail" ] && exit 3
exit 0
EOF
        chmod 0755 /usr/local/bin/rankings-test-hook
        rm -f '"$safetynet_hook_dir"'/calls '"$safetynet_hook_dir"'/fail'
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    set_config RANKINGS_OUTPUT /var/lib/rankings/all_time.json
    set_config RANKINGS_FLAGS '"--max-drop 1"'
    set_config RANKINGS_METRICS "$safetynet_textfiles/rankings.prom"
    set_config RANKINGS_PUBLISH /usr/local/bin/rankings-test-hook
    set_config RANKINGS_RETRY_PAUSE_SECONDS 1
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
}
check "safety net: set up exports, node_exporter's directory and a recording publish" safetynet_setup

# A series of FILE (in the textfile directory) by name, labels included.
safetynet_metric() { in_container awk -v k="$2" '$1 == k { print $2 }' "$safetynet_textfiles/$1"; }
safetynet_calls() { in_container_sh "cat $safetynet_hook_dir/calls 2>/dev/null | wc -l"; }
safetynet_steps() {
    local step
    for step in fetch aggregate publish; do
        printf '%s=%s/%s ' "$step" "$(safetynet_metric rankings-night.prom "rankings_night_step_exit_status{step=\"$step\"}")" \
            "$(safetynet_metric rankings-night.prom "rankings_night_step_tries{step=\"$step\"}")"
    done
}

safetynet_metrics_and_publish_after_success() {
    in_container systemctl start rankings.service
    local file
    for file in rankings.prom rankings-night.prom; do
        expect "owner of $file" "$(in_container stat -c %U "$safetynet_textfiles/$file")" rankings
        # node_exporter's own parser's rules, by the real promtool on the host.
        in_container cat "$safetynet_textfiles/$file" | promtool check metrics
    done
    expect "exit status metric" "$(safetynet_metric rankings.prom rankings_last_run_exit_status)" 0
    expect "hilarious events" "$(safetynet_metric rankings.prom 'rankings_last_run_events{kind="hilarious"}')" 2712
    expect "the night's exit status" "$(safetynet_metric rankings-night.prom rankings_night_last_run_exit_status)" 0
    expect "steps (status/tries)" "$(safetynet_steps)" "fetch=-1/0 aggregate=0/1 publish=0/1 "
    [[ -n $(safetynet_metric rankings-night.prom rankings_night_last_success_timestamp_seconds) ]]
    expect "publish calls" "$(safetynet_calls)" 1
    local call
    call=$(in_container cat "$safetynet_hook_dir/calls")
    expect "publish argument and document" "$call" '/var/lib/rankings/all_time.json {'
}
check "systemd: a good night writes both metrics files as user rankings (promtool reads them) and publishes once" \
    safetynet_metrics_and_publish_after_success

safetynet_guard_refuses() {
    local success night_success before
    success=$(safetynet_metric rankings.prom rankings_last_success_timestamp_seconds)
    night_success=$(safetynet_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)
    before=$(in_container md5sum /var/lib/rankings/all_time.json)
    in_container_sh 'head -n 2500 /mnt/share/rating_events.ndjson >/srv/rankings/exports/rating_events.ndjson'
    local since
    since=$(in_container date +%s)
    if in_container systemctl start rankings.service; then
        echo "the night over a truncated export succeeded"
        return 1
    fi
    in_container cp /mnt/share/rating_events.ndjson /srv/rankings/exports/rating_events.ndjson
    expect "exit status" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 65
    expect "document kept" "$(in_container md5sum /var/lib/rankings/all_time.json)" "$before"
    expect "exit status metric" "$(safetynet_metric rankings.prom rankings_last_run_exit_status)" 65
    expect "last success carried over" "$(safetynet_metric rankings.prom rankings_last_success_timestamp_seconds)" "$success"
    expect "the night's exit status" "$(safetynet_metric rankings-night.prom rankings_night_last_run_exit_status)" 65
    expect "the night's last success" "$(safetynet_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)" "$night_success"
    # 65 is not tried again, and nothing is published after it.
    expect "steps (status/tries)" "$(safetynet_steps)" "fetch=-1/0 aggregate=65/1 publish=-1/0 "
    night_lines "$since" | grep -F 'the new document has 2434 ratings'
    expect "publish calls" "$(safetynet_calls)" 1
    expect "state" "$(in_container systemctl is-failed rankings.service)" failed
    in_container systemctl reset-failed rankings.service
}
check "systemd: a truncated export is refused (65), the document and last successes kept, nothing published" \
    safetynet_guard_refuses

# Only the publish failing: the night is a failure (69), and says so where an operator and an
# alert look: systemctl status, and rankings-night.prom's exit status and last success.
safetynet_failing_publish() {
    local night_success
    night_success=$(safetynet_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)
    in_container touch "$safetynet_hook_dir/fail"
    local status=0
    in_container systemctl start rankings.service || status=$?
    in_container rm -f "$safetynet_hook_dir/fail"
    ((status != 0))
    expect "exit status" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 69
    expect "systemctl status" "$(in_container systemctl status --no-pager rankings.service | sed -n 's/^ *Active: \([a-z]*\).*/\1/p')" failed
    expect "publish calls" "$(safetynet_calls)" 5
    expect "the night's exit status" "$(safetynet_metric rankings-night.prom rankings_night_last_run_exit_status)" 69
    expect "the night's last success" "$(safetynet_metric rankings-night.prom rankings_night_last_success_timestamp_seconds)" "$night_success"
    expect "steps (status/tries)" "$(safetynet_steps)" "fetch=-1/0 aggregate=0/1 publish=3/4 "
    expect "the job's own exit status" "$(safetynet_metric rankings.prom rankings_last_run_exit_status)" 0
    in_container systemctl reset-failed rankings.service
}
check "systemd: a failing publish is tried 4 times; the night fails with 69 (systemctl status, rankings-night.prom)" \
    safetynet_failing_publish

safetynet_empty_settings() {
    set_config RANKINGS_METRICS ''
    set_config RANKINGS_PUBLISH ''
    in_container_sh "rm -f $safetynet_textfiles/*.prom"
    in_container systemctl start rankings.service
    expect "metrics files" "$(in_container_sh "ls $safetynet_textfiles | wc -l")" 0
    expect "publish calls" "$(safetynet_calls)" 5
    in_container_sh "rm -rf $safetynet_hook_dir"
}
check "systemd: empty RANKINGS_METRICS and RANKINGS_PUBLISH write and run nothing" safetynet_empty_settings
