# The configuration syntax (docs/configuration.md) under the real systemd and cron: one program
# reads /etc/rankings.conf under both, so a file using every accepted form hands the job and the
# publish the same arguments whether rankings.service or a run as user rankings (what cron's
# entry does) reads it, and a misspelt name stops both with 78, the same words, naming the line,
# before anything runs. A program that records its arguments stands in for rankings and the
# publish. Self-contained: /etc/rankings.conf is put back as it was.

config_args=/var/lib/rankings/config-args
config_save() { in_container cp /etc/rankings.conf /root/rankings.conf.before-configuration; }
config_restore() {
    # Once, however often it is called (a check's own call, then its EXIT trap).
    in_container_sh 'test ! -e /root/rankings.conf.before-configuration || mv /root/rankings.conf.before-configuration /etc/rankings.conf'
    in_container_sh "rm -rf $config_args '/var/lib/rankings/config check'"
    if in_container systemctl is-failed --quiet rankings.service; then
        in_container systemctl reset-failed rankings.service
    fi
}
# The arguments recorded, the night's own --computed-at (the night's start) as T.
# The night's try of the job's flags on no input (its last word "-") comes first, before the fetch.
config_recorded() { in_container sed -e 's/<--computed-at><[^>]*>/<--computed-at><T>/' -e 's/<--output><\/tmp\/rankings-flags[^>]*>/<--output><SCRATCH>/' "$config_args"; }

configuration_same_for_systemd_and_cron() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" "disabled"
    config_save
    in_container_sh '
        install -d "/srv/config check/exports"
        install -d -o rankings -g rankings "/var/lib/rankings/config check"
        cat >/usr/local/bin/rankings-print-args <<"EOF"
#!/bin/sh
for arg; do printf "<%s>" "$arg"; done >>'"$config_args"'
echo >>'"$config_args"'
EOF
        chmod 0755 /usr/local/bin/rankings-print-args
        printf "%s\n" \
            "# A comment" \
            "   # an indented comment" \
            "	" \
            "RANKINGS_EXPORTS=\"/srv/config check/exports\"" \
            "RANKINGS_OUTPUT=\"/var/lib/rankings/config check/all time.json\"   " \
            "RANKINGS_FLAGS=--quiet" \
            "RANKINGS_FLAGS=\"--max-invalid  5   --time-zone=Etc/GMT+5 --label=a,b@c%d_e.f/g:h\"" \
            "RANKINGS_METRICS=" \
            "RANKINGS_PUBLISH=\"/usr/local/bin/rankings-print-args  --project jokes-app --database (default)\"" \
            "RANKINGS_RETRY_PAUSE_SECONDS=0" >/etc/rankings.conf
        printf "RANKINGS_BIN=/usr/local/bin/rankings-print-args\t" >>/etc/rankings.conf'
    local status=0 systemd cron
    in_container systemctl start rankings.service || status=$?
    systemd=$(config_recorded)
    in_container rm -f "$config_args"
    in_container runuser -u rankings -- rankings-night run --config /etc/rankings.conf || status=$?
    cron=$(config_recorded)
    config_restore
    echo "systemd: $systemd"
    echo "cron:    $cron"
    expect "status" "$status" 0
    expect "arguments" "$cron" "$systemd"
    expect "arguments" "$systemd" "<aggregate><--quiet><--allow-empty><--max-invalid><5><--time-zone=Etc/GMT+5><--label=a,b@c%d_e.f/g:h><--metrics><><--output><SCRATCH><->
<aggregate><--computed-at><T><--max-invalid><5><--time-zone=Etc/GMT+5><--label=a,b@c%d_e.f/g:h><--output></var/lib/rankings/config check/all time.json></srv/config check/exports>
<--project><jokes-app><--database><(default)></var/lib/rankings/config check/all time.json>"
}
check "a configuration in every accepted form means the same under systemd and as cron's user" configuration_same_for_systemd_and_cron

# RANKINGS_FLAG for RANKINGS_FLAGS: 0.2 ran the job without the guard. The line is appended, so
# its number is the file's last.
# How every refusal of the file ends.
refused='; nothing was run (see "The configuration file" in rankings(1))'
config_misspelt() {
    config_save
    # Put back however the check ends: a misspelt file left behind would refuse every later night.
    trap config_restore EXIT
    in_container_sh "echo RANKINGS_BIN=/usr/local/bin/rankings-print-args >>/etc/rankings.conf
        echo 'RANKINGS_FLAG=\"--max-drop 1\"' >>/etc/rankings.conf
        rm -f $config_args"
}

misspelt_setting_refused_by_systemd_and_cron_alike() {
    config_misspelt
    local line said status=0 history before
    line=$(in_container_sh 'wc -l </etc/rankings.conf')
    said="rankings-night: /etc/rankings.conf:$line: unknown setting RANKINGS_FLAG (did you mean RANKINGS_FLAGS?)$refused"
    history=/var/lib/rankings/.rankings-nights.json
    before=$(in_container_sh "md5sum $history 2>/dev/null || echo none")
    in_container systemctl start rankings.service || status=$?
    local journal
    journal=$(journal_lines 'RANKINGS_FLAG' _SYSTEMD_INVOCATION_ID="$(in_container systemctl show -P InvocationID rankings.service)")
    echo "$journal"
    ((status != 0))
    expect "exit status (systemd)" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 78
    expect "said (systemd)" "$(grep -F 'RANKINGS_FLAG' <<<"$journal")" "$said"
    status=0
    in_container runuser -u rankings -- rankings-night run --config /etc/rankings.conf 2>"$share/misspelt.err" || status=$?
    cat -- "$share/misspelt.err"
    expect "exit status (as cron's user)" "$status" 78
    expect "said (as cron's user)" "$(cat -- "$share/misspelt.err")" "$said"
    in_container test ! -e "$config_args"
    expect "history" "$(in_container_sh "md5sum $history 2>/dev/null || echo none")" "$before"
    config_restore
}
check "RANKINGS_FLAG (misspelt): 78 under systemd and as cron's user, the same words naming the line, nothing run" \
    misspelt_setting_refused_by_systemd_and_cron_alike

# Under cron the night's lines go to syslog (tag rankings); a refused setting must too. Cron mails
# a command's output to its user (rankings, whom nobody reads) or, with no mail transport, as
# here, discards it: the line would be nowhere, and every night would end the same way.
misspelt_setting_under_cron_is_in_the_journal() {
    config_misspelt
    local line since fired=0
    line=$(in_container_sh 'wc -l </etc/rankings.conf')
    since=$(in_container date +%s)
    cron_every_minute
    wait_until 150 cron_fired 1 || fired=1
    cron_stop_every_minute
    config_restore
    ((fired == 0))
    in_container journalctl --no-pager -t CRON -t rankings --since "@$since" || true
    expect "exit status (cron)" "$(cron_status 1)" 78
    journal_lines 'RANKINGS_FLAG' --since "@$since" |
        grep -xF "rankings-night: /etc/rankings.conf:$line: unknown setting RANKINGS_FLAG (did you mean RANKINGS_FLAGS?)$refused" >/dev/null
}
check "cron: the entry refusing a misspelt setting (78) says so in the journal (journalctl -t rankings)" \
    misspelt_setting_under_cron_is_in_the_journal
