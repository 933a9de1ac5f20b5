# Debian's cron runs a copy of the shipped entry that fires every minute. Debian's cron ignores
# CRON_TZ, so nothing here depends on it.

cron_entry_runs_as_rankings() {
    in_container systemctl is-active cron
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" "disabled"
    in_container rm -f /var/lib/rankings/all_time.json
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    set_config RANKINGS_LOG_FILE /var/lib/rankings/cron.log
    in_container_sh "sed 's/^#0 0 \* \* \* /* * * * * /' /etc/cron.d/rankings >/etc/cron.d/rankings-every-minute"
    local fired=0
    wait_until 150 in_container test -e /var/lib/rankings/all_time.json || fired=1
    in_container rm -f /etc/cron.d/rankings-every-minute
    # Let a run that has started finish before anything else touches the files.
    wait_until 60 in_container_sh 'test ! -e /var/lib/rankings/.rankings.lock || flock -n /var/lib/rankings/.rankings.lock true'
    in_container cat /var/lib/rankings/cron.log || true
    ((fired == 0))
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    expect "document owner" "$(in_container stat -c %U /var/lib/rankings/all_time.json)" "rankings"
    in_container grep -q 'done: wrote /var/lib/rankings/all_time.json' /var/lib/rankings/cron.log
    in_container journalctl --no-pager -t CRON | grep -q '(rankings) CMD (/usr/libexec/rankings-cron /etc/rankings.conf)'
}
check "the cron entry (a copy firing every minute) runs as rankings and writes the document" cron_entry_runs_as_rankings
