# An upgrade from 0.4.0-1, built here from git (the release commit's jobs/ and cron/, with the
# pages its man page is made of, around today's binary), on a machine set up as 0.4's docs said:
# firestore.md's minimal configuration against the emulator, with the guard's flags and the
# metrics, two of 0.4's nights run under the real systemd. dpkg keeps the edited conffile
# (--force-confold, as an unattended upgrade does); the next start of rankings.service runs 0.4's
# configuration with its one WARNING, builds on 0.4's kept nights (incremental), proves and
# publishes. A 0.4 file that chose a removed mode is 78 before anything runs, and 0.4's shipped
# file edited only in RANKINGS_EXPORTS runs its night from the exports. Runs after the purge of
# 90-upgrade-remove-purge.sh, on a state directory made afresh.

upgrade_release=25dad9c     # "Version 0.4.0"
upgrade_old_tree=$work/old-0.4
upgrade_project=demo-rankings-upgrade
upgrade_votes=$share/upgrade-votes.ndjson
upgrade_show() { emulator_client "$upgrade_project" show weekly_rankings all_time; }
upgrade_update_time() { upgrade_show | awk -F'"' '$2 == "update_time" { print $4 }'; }
upgrade_state() { in_container systemctl show -P "$1" rankings.service; }

upgrade_build_old_package() {
    git -C "$repo" cat-file -e "$upgrade_release^{commit}" 2>/dev/null ||
        { echo "no commit $upgrade_release (0.4.0's release) in $repo: a shallow clone?"; return 1; }
    rm -rf -- "$upgrade_old_tree" && mkdir -p -- "$upgrade_old_tree" "$share/old-0.4"
    git -C "$repo" archive "$upgrade_release" jobs cron docs README.md | tar -x -C "$upgrade_old_tree"
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/rankings >"$upgrade_old_tree/rankings"
    chmod 0755 "$upgrade_old_tree/rankings"
    # 0.4's package around today's binary: its version is 0.4's changelog's, not the binary's.
    sed -i 's/^upstream_version=.*/upstream_version=0.4.0/' "$upgrade_old_tree/jobs/package.sh"
    RANKINGS_PREBUILT=$upgrade_old_tree/rankings "$upgrade_old_tree/jobs/package.sh" "$share/old-0.4" >/dev/null 2>"$work/old-package.log" || {
        cat -- "$work/old-package.log"
        return 1
    }
    ls -- "$share"/old-0.4/rankings_0.4.0-1_*.deb
}

upgrade_04_nights() {
    upgrade_build_old_package
    local old_deb
    old_deb=/mnt/share/old-0.4/$(basename -- "$(ls -- "$share"/old-0.4/rankings_*.deb)")
    # A machine that never ran rankings: nothing of the checks before in the state directory.
    in_container rm -rf /var/lib/rankings
    in_container apt-get install -y --no-install-recommends "$old_deb" >/dev/null
    expect "version" "$(in_container dpkg-query -W -f '${Version}' rankings)" 0.4.0-1
    in_container cp /etc/rankings.conf /root/rankings.conf.0.4-shipped
    # firestore.md's "A minimal configuration" (0.4's), the guard at 2 %, the metrics, the emulator.
    set_config RANKINGS_FETCH '"/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore"'
    set_config RANKINGS_EXPORTS /var/lib/rankings/firestore/current
    set_config RANKINGS_PUBLISH /usr/libexec/rankings-publish-firestore
    set_config RANKINGS_FIRESTORE_PROJECT "$upgrade_project"
    set_config RANKINGS_FLAGS '"--max-drop 2"'
    set_config RANKINGS_METRICS "$metrics_file"
    set_config FIRESTORE_EMULATOR_HOST "$emulator"
    in_container_sh "mkdir -p ${metrics_file%/*} && systemd-tmpfiles --create rankings.conf && rm -f ${metrics_file%/*}/*.prom"
    head -n 500 -- "$repo/sample-data/rating_events.ndjson" >"$upgrade_votes"
    ensure_emulator "$upgrade_project" "$upgrade_votes"
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
    in_container systemctl start rankings.service
    firestore_vote "$upgrade_project" zz-upgrade-0.4 "$upgrade_votes"
    in_container systemctl start rankings.service
    expect "0.4's kept nights" "$(in_container_sh 'ls /var/lib/rankings/firestore | grep -c "^2"')" 2
    expect "0.4's metrics files" "$(in_container ls "${metrics_file%/*}")" "rankings-fetch.prom
rankings-night.prom
rankings.prom"
    firestore_board_counts "$upgrade_project" "$upgrade_votes"
}
check "0.4.0-1 (from git, around today's binary) configured as its docs said: two nights under systemd, published" \
    upgrade_04_nights

upgrade_to_05() {
    local before updated night_since log warnings
    before=$(in_container md5sum /etc/rankings.conf)
    updated=$(upgrade_update_time)
    in_container apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold \
        "$deb_in_container" >"$share/upgrade.out" 2>&1
    cat -- "$share/upgrade.out"
    expect "version" "$(in_container dpkg-query -W -f '${Version}' rankings)" "$(dpkg-deb -f "$deb" Version)"
    # dpkg kept the edited conffile, and put 0.5's beside it.
    expect "configuration" "$(in_container md5sum /etc/rankings.conf)" "$before"
    in_container test -e /etc/rankings.conf.dpkg-dist
    expect "0.4's programs" "$(in_container_sh 'ls /usr/libexec /usr/lib/rankings | grep -E "rankings-(fetch|publish|cron)" || true')" ""
    if grep -F 'WARNING' "$share/upgrade.out"; then return 1; fi

    firestore_vote "$upgrade_project" zz-upgrade-0.5 "$upgrade_votes"
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service
    expect "result" "$(upgrade_state Result)" success
    log=$(night_lines "$night_since")
    echo "$log"
    # One WARNING, naming each 0.4 line with what to write instead.
    warnings=$(in_container journalctl --no-pager -o cat -t rankings -p warning --since "@$night_since")
    expect "warnings" "$(grep -c . <<<"$warnings")" 1
    local said
    for said in 'rankings-night: warning: /etc/rankings.conf holds settings of 0.4, read as before; write 0.5'"'"'s instead' \
        'RANKINGS_FETCH="/usr/libexec/rankings-fetch-firestore /var/lib/rankings/firestore": delete it' \
        'RANKINGS_PUBLISH=/usr/libexec/rankings-publish-firestore: delete it' \
        'RANKINGS_OUTPUT=/var/lib/rankings/all_time.json: delete it' \
        'RANKINGS_FLAGS="--max-drop 2": write RANKINGS_MAX_DROP=2 instead' \
        'RANKINGS_EXPORTS=/var/lib/rankings/firestore/current: delete it'; do
        grep -qF -- "$said" <<<"$warnings" || { echo "not said: $said"; return 1; }
    done
    # Built on 0.4's last kept night: the votes since it, less the margin (0.4's second night's
    # and tonight's), laid over its snapshot; proven, published.
    expect "fetched (mode, read, in the snapshot)" "$(firestore_fetched_figures)" "incremental 2 502"
    in_container rankings-night status -n 1 | grep -F 'tonight: incremental read at '
    expect "proven (metric)" "$(metric rankings_night_boards_proven)" 1
    expect "the night's exit status (metric)" "$(metric rankings_night_last_run_exit_status)" 0
    firestore_board_counts "$upgrade_project" "$upgrade_votes"
    [[ $(upgrade_update_time) != "$updated" ]]
    # The one metrics file: 0.4's two beside it removed, and said so.
    expect "metrics files" "$(in_container ls "${metrics_file%/*}")" rankings.prom
    grep -qF "rankings-night: metrics: removed ${metrics_file%/*}/rankings-fetch.prom: 0.4's" <<<"$log"
    # The guard is 0.4's --max-drop 2, carried over.
    in_container rankings-night settings 2>/dev/null | grep -qx 'RANKINGS_MAX_DROP=2    # /etc/rankings.conf:[0-9]*'
}
check "upgrade to 0.5 keeping 0.4's file: one WARNING, incremental on 0.4's kept nights, proven, weekly_rankings/all_time updated" \
    upgrade_to_05

upgrade_removed_mode_is_78() {
    local history current updated status=0 night_since line
    in_container cp /etc/rankings.conf /root/rankings.conf.0.4-edited
    in_container_sh 'echo RANKINGS_FIRESTORE_SINCE=-30d >>/etc/rankings.conf'
    line=$(in_container_sh 'wc -l </etc/rankings.conf')
    history=$(in_container md5sum /var/lib/rankings/.rankings-nights.json)
    current=$(in_container readlink /var/lib/rankings/firestore/current)
    updated=$(upgrade_update_time)
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service || status=$?
    in_container mv /root/rankings.conf.0.4-edited /etc/rankings.conf
    ((status != 0))
    expect "exit status" "$(upgrade_state ExecMainStatus)" 78
    journal_lines RANKINGS_FIRESTORE_SINCE --since "@$night_since" |
        grep -xF "rankings-night: error: /etc/rankings.conf:$line: RANKINGS_FIRESTORE_SINCE=-30d: a window night is gone: RANKINGS_MONTHLY=yes publishes the 30-day board from the nightly snapshot; delete the line; nothing was run (see \"Upgrading from 0.4\" in rankings(1))"
    expect "history" "$(in_container md5sum /var/lib/rankings/.rankings-nights.json)" "$history"
    expect "current" "$(in_container readlink /var/lib/rankings/firestore/current)" "$current"
    expect "Firestore's all_time (update time)" "$(upgrade_update_time)" "$updated"
    in_container systemctl reset-failed rankings.service
}
check "a 0.4 file with a removed mode (RANKINGS_FIRESTORE_SINCE) is 78 before anything runs; Firestore untouched" \
    upgrade_removed_mode_is_78

upgrade_shipped_04_file_on_exports() {
    local night_since warnings
    in_container cp /root/rankings.conf.0.4-shipped /etc/rankings.conf
    set_config RANKINGS_EXPORTS /srv/rankings/upgrade-exports
    in_container_sh 'install -d -m 0755 /srv/rankings/upgrade-exports && install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/upgrade-exports/'
    night_since=$(in_container date +%s)
    in_container systemctl start rankings.service
    warnings=$(in_container journalctl --no-pager -o cat -t rankings -p warning --since "@$night_since")
    echo "$warnings"
    expect "warnings" "$(grep -c . <<<"$warnings")" 1
    grep -qF 'RANKINGS_FLAGS="--max-drop 1": delete it' <<<"$warnings"
    board_is /var/lib/rankings/all_time.json "$share/all_time.json"
}
check "0.4's shipped file edited only in RANKINGS_EXPORTS: the exports night, with its WARNING" upgrade_shipped_04_file_on_exports

upgrade_cleanup() {
    in_container apt-get purge -y rankings >/dev/null
    in_container rm -rf /root/rankings.conf.0.4-shipped /srv/rankings/upgrade-exports
    rm -rf -- "$upgrade_old_tree" "$share/old-0.4"
}
check "upgrade from 0.4.0-1: purged again" upgrade_cleanup
