# Debian's cron runs a copy of the shipped entry that fires every minute (the shipped one fires
# at minute 0 of every hour), with the command's exit status appended to a file. Debian's cron
# ignores CRON_TZ, so the entry fires every hour and `rankings-night cron` decides: it runs the
# night in the first hour of New York's day, once, and does nothing in any other. The test
# cannot choose the hour: it reads the hour cron started the command in from cron's own log
# line, and checks exactly what that hour promises. Beside it, in the same minutes, the same
# entry with a copy of the configuration holding a misspelt setting: refused (78) at any hour,
# and said where cron's nights are logged.

cron_status_file=/var/lib/rankings/cron-status
cron_misspelt_status=/var/lib/rankings/cron-misspelt-status
cron_misspelt=/etc/rankings-misspelt.conf
# Starts the copies; their first firing comes within a minute.
cron_every_minute() {
    in_container rm -f "$cron_status_file" "$cron_misspelt_status"
    in_container_sh "cp /etc/rankings.conf $cron_misspelt && echo RANKINGS_MAX_DROPS=1 >>$cron_misspelt
        sed -n 's|^#0 \* \* \* \* \(rankings .*\)|* * * * * \1; echo \$? >>$cron_status_file|p' /etc/cron.d/rankings \
            >/etc/cron.d/rankings-every-minute
        sed -n 's|^#0 \* \* \* \* \(rankings .*\) --config /etc/rankings.conf|* * * * * \1 --config $cron_misspelt; echo \$? >>$cron_misspelt_status|p' \
            /etc/cron.d/rankings >>/etc/cron.d/rankings-every-minute"
    in_container grep -qx '\* \* \* \* \* rankings /usr/bin/rankings-night cron --config /etc/rankings.conf; echo \$? >>'"$cron_status_file" \
        /etc/cron.d/rankings-every-minute
    in_container grep -qx '\* \* \* \* \* rankings /usr/bin/rankings-night cron --config '"$cron_misspelt"'; echo \$? >>'"$cron_misspelt_status" \
        /etc/cron.d/rankings-every-minute
}
cron_stop_every_minute() { in_container rm -f /etc/cron.d/rankings-every-minute; }
cron_firings() { in_container_sh "test -e $cron_status_file && wc -l <$cron_status_file || echo 0"; }
cron_fired() { (($(cron_firings) >= $1)); }
# The exit status of firing N (1: the first).
cron_status() { in_container sed -n "$1p" "$cron_status_file"; }
# New York's hour when cron started the command of firing N, from cron's log line (Unix time).
cron_new_york_hour() {
    local started
    started=$(in_container journalctl --no-pager -t CRON -o short-unix --since "@$1" |
        grep -F '(rankings) CMD (/usr/bin/rankings-night cron --config /etc/rankings.conf;' | sed -n "$2{s/[. ].*//;p}")
    TZ=America/New_York date -d "@$started" +%H
}

cron_entry_runs_the_night_in_new_yorks_first_hour_only() {
    in_container systemctl is-active cron
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" "disabled"
    set_config RANKINGS_EXPORTS /srv/rankings/exports
    in_container rm -f /var/lib/rankings/all_time.json /var/lib/rankings/.rankings-nights.json /var/lib/rankings/.rankings.lock
    local since hour
    since=$(in_container date +%s)
    echo "$since" >"$work/cron-since"
    cron_every_minute
    local fired=0
    wait_until 150 cron_fired 1 || fired=1
    hour=$(cron_new_york_hour "$since" 1)
    if ((fired == 0)) && [[ $hour == 00 ]]; then
        # Once a day: the next minute's firing finds tonight's night in the history.
        wait_until 90 cron_fired 2 || fired=1
    fi
    cron_stop_every_minute
    ((fired == 0))
    echo "New York's hour at the first firing: $hour"
    in_container journalctl --no-pager -o cat -t rankings --since "@$since" || true
    expect "exit status" "$(cron_status 1)" 0
    if [[ $hour == 00 ]]; then
        board_is /var/lib/rankings/all_time.json "$share/all_time.json"
        expect "document owner" "$(in_container stat -c %U /var/lib/rankings/all_time.json)" "rankings"
        expect "second firing" "$(cron_status 2)" 0
        expect "nights run" "$(in_container python3 -c 'import json; print([n["scheduler"] for n in json.load(open("/var/lib/rankings/.rankings-nights.json"))])')" "['cron']"
        # Under cron the night logs to syslog, tagged rankings.
        journal_lines "$night_end" --since "@$since" | grep '^rankings-night: night starting (cron; ' >/dev/null
    else
        expect "files made outside New York's first hour" \
            "$(in_container_sh 'cd /var/lib/rankings && ls -A all_time.json .rankings-nights.json .rankings.lock 2>/dev/null || true')" ""
    fi
    in_container journalctl --no-pager -t CRON --since "@$since" | grep -F '(rankings) CMD (/usr/bin/rankings-night cron --config /etc/rankings.conf;' >/dev/null
}
check "cron: the entry fires as rankings; the night runs in New York's first hour only, once, and does nothing in others" \
    cron_entry_runs_the_night_in_new_yorks_first_hour_only

# Under cron the night's lines go to syslog (tag rankings); a refused setting must too. Cron mails
# a command's output to its user (rankings, whom nobody reads) or, with no mail transport, as
# here, discards it: the line would be nowhere, and every night would end the same way.
misspelt_setting_under_cron_is_in_the_journal() {
    local since line
    since=$(cat -- "$work/cron-since")
    misspelt_fired() { in_container test -s "$cron_misspelt_status"; }
    wait_until 30 misspelt_fired
    line=$(in_container_sh "wc -l <$cron_misspelt")
    in_container rm -f "$cron_misspelt"
    in_container journalctl --no-pager -t CRON -t rankings --since "@$since" || true
    expect "exit status (cron)" "$(in_container sed -n 1p "$cron_misspelt_status")" 78
    journal_lines 'RANKINGS_MAX_DROPS' --since "@$since" | grep -xF "rankings-night: error: $cron_misspelt:$line: unknown setting RANKINGS_MAX_DROPS (did you mean RANKINGS_MAX_DROP?); nothing was run (see \"The configuration file\" in rankings(1))" >/dev/null
}
check "cron: the entry refusing a misspelt setting (78) says so in the journal (journalctl -t rankings)" \
    misspelt_setting_under_cron_is_in_the_journal
