# The configuration syntax (docs/configuration.md) under the real systemd and cron: one program
# reads /etc/rankings.conf under both, so a file using every accepted form hands the job the same
# arguments whether rankings.service or a run as user rankings (what cron's entry does) reads it,
# and a misspelt name stops both with 78, the same words, naming the line, before anything runs
# (cron's own firing of a misspelt file: 40-cron.sh).
# A stand-in for the installed rankings records its arguments, then runs the real one.
# Self-contained: /etc/rankings.conf and the job are put back as they were.

config_args=/var/lib/rankings/config-args
config_save() { in_container cp /etc/rankings.conf /root/rankings.conf.before-configuration; }
config_restore() {
    # Once, however often it is called (a check's own call, then its EXIT trap).
    in_container_sh 'test ! -e /root/rankings.conf.before-configuration || mv /root/rankings.conf.before-configuration /etc/rankings.conf'
    in_container_sh "rm -rf $config_args '/var/lib/rankings/config check' '/srv/config check'"
    rankings_put_back
    if in_container systemctl is-failed --quiet rankings.service; then
        in_container systemctl reset-failed rankings.service
    fi
}
config_record_arguments() {
    rankings_stand_in 'for arg; do printf "<%s>" "$arg"; done >>'"$config_args"'
echo >>'"$config_args"'
exec /usr/bin/rankings.real "$@"'
}
# The arguments recorded, the night's own --computed-at (its clock: no Firestore) as T.
config_recorded() { in_container sed -e 's/<--computed-at><[^>]*>/<--computed-at><T>/' "$config_args"; }

configuration_same_for_systemd_and_cron() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" "disabled"
    config_save
    trap config_restore EXIT
    config_record_arguments
    # Comments (indented too), blank lines with blanks, trailing blanks, quoted values with spaces
    # and parentheses, quoted-empty, a later line replacing an earlier one, no newline at the end.
    in_container_sh '
        install -d "/srv/config check/exports"
        install -m 0644 /mnt/share/rating_events.ndjson "/srv/config check/exports/"
        printf "%s\n" \
            "# A comment" \
            "   # an indented comment" \
            "	" \
            "RANKINGS_EXPORTS=\"/srv/config check/exports\"" \
            "RANKINGS_STATE_DIRECTORY=\"/var/lib/rankings/config check\"   " \
            "RANKINGS_MAX_DROP=7" \
            "RANKINGS_MAX_DROP=0.5" \
            "RANKINGS_MAX_REFUSED=2.5" \
            "RANKINGS_METRICS=\"\"" \
            "RANKINGS_FIRESTORE_DATABASE=\"(default)\"" >/etc/rankings.conf
        printf "RANKINGS_RETRIES=0\t" >>/etc/rankings.conf'
    local status=0 systemd cron state='/var/lib/rankings/config check'
    in_container systemctl start rankings.service || status=$?
    systemd=$(config_recorded)
    in_container rm -f "$config_args"
    in_container runuser -u rankings -- rankings-night run --config /etc/rankings.conf || status=$?
    cron=$(config_recorded)
    echo "systemd: $systemd"
    echo "cron:    $cron"
    expect "status" "$status" 0
    expect "arguments" "$cron" "$systemd"
    expect "arguments" "$systemd" "<aggregate><--quiet><--computed-at><T><--max-invalid><2.5%><--report><$state/.all_time.report.json><--stats><$state/.all_time.stats.ndjson><--output><$state/all_time.json><--max-drop><0.5></srv/config check/exports>"
    board_is "$state/all_time.json" "$share/all_time.json"
    config_restore
}
check "a configuration in every accepted form means the same under systemd and as cron's user" configuration_same_for_systemd_and_cron

# RANKINGS_MAX_DROPS for RANKINGS_MAX_DROP: 0.2 ran the job without the guard. The line is
# appended, so its number is the file's last.
refused='; nothing was run (see "The configuration file" in rankings(1))'
config_misspelt() {
    config_save
    # Put back however the check ends: a misspelt file left behind would refuse every later night.
    trap config_restore EXIT
    config_record_arguments
    in_container_sh "echo RANKINGS_MAX_DROPS=1 >>/etc/rankings.conf; rm -f $config_args"
}
config_misspelt_said() {
    echo "rankings-night: error: /etc/rankings.conf:$(in_container_sh 'wc -l </etc/rankings.conf'): unknown setting RANKINGS_MAX_DROPS (did you mean RANKINGS_MAX_DROP?)$refused"
}

misspelt_setting_refused_by_systemd_and_cron_alike() {
    config_misspelt
    local said status=0 history before
    said=$(config_misspelt_said)
    history=/var/lib/rankings/.rankings-nights.json
    before=$(in_container_sh "md5sum $history 2>/dev/null || echo none")
    in_container systemctl start rankings.service || status=$?
    local journal
    journal=$(journal_lines 'RANKINGS_MAX_DROPS' _SYSTEMD_INVOCATION_ID="$(in_container systemctl show -P InvocationID rankings.service)")
    echo "$journal"
    ((status != 0))
    expect "exit status (systemd)" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 78
    expect "said (systemd)" "$(grep -F 'RANKINGS_MAX_DROPS' <<<"$journal")" "$said"
    status=0
    in_container runuser -u rankings -- rankings-night run --config /etc/rankings.conf 2>"$share/misspelt.err" || status=$?
    cat -- "$share/misspelt.err"
    expect "exit status (as cron's user)" "$status" 78
    expect "said (as cron's user)" "$(cat -- "$share/misspelt.err")" "$said"
    in_container test ! -e "$config_args"
    expect "history" "$(in_container_sh "md5sum $history 2>/dev/null || echo none")" "$before"
    config_restore
}
check "RANKINGS_MAX_DROPS (misspelt): 78 under systemd and as cron's user, the same words naming the line, nothing run" \
    misspelt_setting_refused_by_systemd_and_cron_alike
