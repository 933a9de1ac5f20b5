# Sourced by Tests/container/run.sh: the safety net under the container's real systemd —
# RANKINGS_METRICS written into node_exporter's textfile directory by the sandboxed job, the
# guard refusing a shrunken export, and rankings-publish.service started by OnSuccess= only,
# with network, retried, and left failed in `systemctl --failed` when the hook keeps failing.
#
# Self-contained: installs the package if an earlier check has not, and sets every key it needs.

safetynet_hook_dir=/srv/rankings-hook

safetynet_setup() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    # What Debian's prometheus-node-exporter leaves: the textfile directory, root's, 0755. The
    # ACL comes from the package's tmpfiles.d entry, as at the next boot.
    in_container_sh '
        install -d -m 0755 /var/lib/prometheus/node-exporter
        systemd-tmpfiles --create rankings.conf
        install -d -o rankings -g rankings -m 0755 /srv/rankings/exports '"$safetynet_hook_dir"'
        cp /mnt/share/rating_events.ndjson /srv/rankings/exports/
        chmod 0644 /srv/rankings/exports/rating_events.ndjson
        rm -f /var/lib/rankings/all_time.json /var/lib/prometheus/node-exporter/rankings.prom
        # The hook records its argument, the document it was given, and its network namespace.
        cat >/usr/local/bin/rankings-test-hook <<"EOF"
#!/bin/sh
dir=/srv/rankings-hook
printf "%s %s %s\n" "$1" "$(head -c 40 "$1" | head -n 1)" "$(readlink /proc/self/ns/net)" >>"$dir/calls"
[ -e "$dir/fail" ] && exit 3
exit 0
EOF
        chmod 0755 /usr/local/bin/rankings-test-hook
        rm -f '"$safetynet_hook_dir"'/calls '"$safetynet_hook_dir"'/fail'
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    set_config RANKINGS_OUTPUT /var/lib/rankings/all_time.json
    set_config RANKINGS_FLAGS '"--max-drop 1"'
    set_config RANKINGS_METRICS /var/lib/prometheus/node-exporter/rankings.prom
    set_config RANKINGS_PUBLISH /usr/local/bin/rankings-test-hook
    in_container systemctl reset-failed rankings.service rankings-publish.service 2>/dev/null || true
}
check "safety net: set up exports, node_exporter's directory and a recording hook" safetynet_setup

safetynet_metric() { in_container awk -v k="$1" '$1 == k { print $2 }' /var/lib/prometheus/node-exporter/rankings.prom; }
safetynet_calls() { in_container_sh "cat $safetynet_hook_dir/calls 2>/dev/null | wc -l"; }
safetynet_calls_are() { test "$(safetynet_calls)" = "$1"; }
safetynet_publish_failed() { test "$(in_container systemctl is-failed rankings-publish.service)" = failed; }
safetynet_publish_done() {
    [[ $(in_container systemctl show -P ActiveState rankings-publish.service) =~ ^(inactive|failed)$ ]]
}

safetynet_metrics_and_hook_after_success() {
    in_container systemctl start rankings.service
    expect "metrics owner" "$(in_container stat -c %U /var/lib/prometheus/node-exporter/rankings.prom)" rankings
    expect "exit status metric" "$(safetynet_metric rankings_last_run_exit_status)" 0
    expect "hilarious events" "$(safetynet_metric 'rankings_last_run_events{kind="hilarious"}')" 2712
    wait_until 60 safetynet_calls_are 1
    wait_until 60 safetynet_publish_done
    expect "publish result" "$(in_container systemctl show -P Result rankings-publish.service)" success
    local call
    call=$(in_container cat "$safetynet_hook_dir/calls")
    expect "hook argument and document" "${call% *}" '/var/lib/rankings/all_time.json {'
    # The hook runs in the machine's network namespace; the job has its own (PrivateNetwork=yes).
    expect "hook network namespace" "${call##* }" "$(in_container readlink /proc/1/ns/net)"
}
check "systemd: a successful run writes the metrics as user rankings and publishes once, with network" \
    safetynet_metrics_and_hook_after_success

safetynet_guard_refuses() {
    local success before
    success=$(safetynet_metric rankings_last_success_timestamp_seconds)
    before=$(in_container md5sum /var/lib/rankings/all_time.json)
    in_container_sh 'head -n 2500 /mnt/share/rating_events.ndjson >/srv/rankings/exports/rating_events.ndjson'
    if in_container systemctl start rankings.service; then
        echo "the run over a truncated export succeeded"
        return 1
    fi
    expect "exit status" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 65
    expect "document kept" "$(in_container md5sum /var/lib/rankings/all_time.json)" "$before"
    expect "exit status metric" "$(safetynet_metric rankings_last_run_exit_status)" 65
    expect "last success carried over" "$(safetynet_metric rankings_last_success_timestamp_seconds)" "$success"
    in_container journalctl -u rankings.service --no-pager | grep -F 'the new document has 2434 ratings'
    expect "hook calls" "$(safetynet_calls)" 1
    # 65 is not retried: the unit is failed at once, and the publish unit never started again.
    expect "job state" "$(in_container systemctl is-failed rankings.service)" failed
    in_container cp /mnt/share/rating_events.ndjson /srv/rankings/exports/rating_events.ndjson
    in_container systemctl reset-failed rankings.service
}
check "systemd: a truncated export is refused (65), the document kept, nothing published" safetynet_guard_refuses

safetynet_failing_hook() {
    # Retries 1 s apart instead of 5 min, for the test only; the earlier successful start must
    # not count against the start limit.
    # (reset-failed also clears that count; a unit already unloaded has none to clear).
    in_container systemctl reset-failed rankings-publish.service 2>/dev/null || true
    in_container_sh 'mkdir -p /run/systemd/system/rankings-publish.service.d
        printf "[Service]\nRestartSec=1s\n" >/run/systemd/system/rankings-publish.service.d/fast.conf
        systemctl daemon-reload
        touch '"$safetynet_hook_dir"'/fail'
    in_container systemctl start rankings.service
    wait_until 120 safetynet_publish_failed
    expect "hook tries" "$(safetynet_calls)" 5
    in_container systemctl --failed --plain --no-legend | grep -q '^rankings-publish.service'
    expect "job itself" "$(in_container systemctl show -P Result rankings.service)" success
    in_container_sh 'rm -rf /run/systemd/system/rankings-publish.service.d '"$safetynet_hook_dir"'/fail
        systemctl daemon-reload
        systemctl reset-failed rankings-publish.service || true'
}
check "systemd: a failing hook is retried 3 times, then shows in systemctl --failed" safetynet_failing_hook

safetynet_empty_settings() {
    set_config RANKINGS_METRICS ''
    set_config RANKINGS_PUBLISH ''
    in_container rm -f /var/lib/prometheus/node-exporter/rankings.prom
    in_container systemctl start rankings.service
    expect "metrics file" "$(in_container_sh 'ls /var/lib/prometheus/node-exporter | wc -l')" 0
    wait_until 60 safetynet_publish_done
    expect "publish skipped, not failed" "$(in_container systemctl is-failed rankings-publish.service)" inactive
    expect "hook calls" "$(safetynet_calls)" 5
}
check "systemd: empty RANKINGS_METRICS and RANKINGS_PUBLISH write and run nothing" safetynet_empty_settings
