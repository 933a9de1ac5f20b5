# An upgrade from 0.3.0-1, the package of the last tree before the night was one program (built
# here from git, around the same binary), on a machine set up as 0.3's guide said: the
# configuration edited, the cron entry enabled, the monthly board added with 0.3's
# jobs/install-monthly.sh, and a drop-in giving rankings-fetch.service a path to write. dpkg keeps
# the edited conffiles (--force-confold, as unattended upgrades do); the new night reads 0.3's
# configuration, 0.3's kept entry still runs it, and the postinst names every leftover that would
# now do nothing, or the wrong thing, with what to do instead; done, it says nothing.
# Runs after the purge of 90-upgrade-remove-purge.sh.

upgrade_old_tree=$work/old-0.3

upgrade_build_old_package() {
    local deleted old binary
    # The commit that took 0.3's units away; its parent is 0.3's tree.
    deleted=$(git -C "$repo" log -1 --format=%H -- jobs/rankings-fetch.service)
    [[ -n $deleted ]] || { echo "no history of jobs/rankings-fetch.service in $repo (a shallow clone?)"; return 1; }
    old=$(git -C "$repo" rev-parse "$deleted~1")
    rm -rf -- "$upgrade_old_tree" && mkdir -p -- "$upgrade_old_tree/out" "$share/old-0.3"
    git -C "$repo" archive "$old" | tar -x -C "$upgrade_old_tree"
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/rankings >"$upgrade_old_tree/rankings"
    chmod 0755 "$upgrade_old_tree/rankings"
    # 0.3's package around today's binary: its version is 0.3's changelog's, not the binary's.
    sed -i 's/^upstream_version=.*/upstream_version=0.3.0/' "$upgrade_old_tree/jobs/package.sh"
    RANKINGS_PREBUILT=$upgrade_old_tree/rankings "$upgrade_old_tree/jobs/package.sh" "$share/old-0.3" >/dev/null 2>"$work/old-package.log" || {
        cat -- "$work/old-package.log"
        return 1
    }
    cp -r -- "$upgrade_old_tree/jobs" "$upgrade_old_tree/cron" "$share/old-0.3/"
    ls -- "$share"/old-0.3/rankings_*.deb
}

upgrade_from_03() {
    upgrade_build_old_package
    local old_deb
    old_deb=/mnt/share/old-0.3/$(basename -- "$(ls -- "$share"/old-0.3/rankings_*.deb)")
    in_container apt-get install -y --no-install-recommends "$old_deb" >/dev/null
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" disabled
    expect "0.3's units" "$(in_container_sh 'ls /lib/systemd/system | grep ^rankings')" "rankings-fetch.service
rankings-publish.service
rankings.service
rankings.timer"
    in_container_sh '
        install -d -m 0755 /srv/rankings/exports
        install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings/exports/
        sed -i "s|^RANKINGS_FLAGS=.*|RANKINGS_FLAGS=\"--max-drop 1 --computed-at 2026-02-18T05:00:00Z\"|" /etc/rankings.conf
        sed -i "s|^#\(0 0 \* \* \* rankings \)|\1|" /etc/cron.d/rankings
        PREFIX=/usr LIBEXECDIR=/usr/libexec /mnt/share/old-0.3/jobs/install-monthly.sh >/dev/null
        mkdir -p /etc/systemd/system/rankings-fetch.service.d
        printf "[Service]\nReadWritePaths=/srv/rankings/exports\n" >/etc/systemd/system/rankings-fetch.service.d/override.conf
        systemctl daemon-reload'
    in_container grep -qx '0 0 \* \* \* rankings /usr/libexec/rankings-cron /etc/rankings.conf' /etc/cron.d/rankings
    in_container test -e /etc/systemd/system/rankings.service.d/monthly.conf

    in_container apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confdef \
        -o Dpkg::Options::=--force-confold /mnt/share/upgrade.deb >"$share/upgrade.out" 2>&1
    cat -- "$share/upgrade.out"
    expect "version" "$(in_container dpkg-query -W -f '${Version}' rankings)" "$(dpkg-deb -f "$deb" Version)+upgrade1"
    expect "units" "$(in_container_sh 'ls /lib/systemd/system | grep ^rankings')" "rankings.service
rankings.timer"
    expect "0.3's Python files" "$(in_container_sh 'ls /usr/libexec | grep "^rankings_" || true')" ""
    expect "the shim" "$(in_container readlink /usr/libexec/rankings-cron)" ../lib/rankings/rankings-cron
    # dpkg kept both edited conffiles.
    in_container grep -q '^RANKINGS_FLAGS="--max-drop 1 --computed-at 2026-02-18T05:00:00Z"$' /etc/rankings.conf
    in_container test -e /etc/cron.d/rankings.dpkg-dist
    local said
    for said in \
        'rankings: WARNING: /etc/systemd/system/rankings-fetch.service.d/ changes a unit that is gone' \
        'rankings:   sudo rm -r /etc/systemd/system/rankings-fetch.service.d' \
        'rankings: WARNING: /etc/systemd/system/rankings-publish.service.d/ changes a unit that is gone' \
        'rankings: WARNING: /etc/systemd/system/rankings.service.d/monthly.conf' \
        'rankings: WARNING: 0.3'"'"'s monthly board files are still here' \
        'rankings:   sudo rm -f /etc/rankings-monthly.conf /etc/cron.d/rankings-monthly' \
        'rankings: WARNING: /etc/cron.d/rankings is 0.3'"'"'s' \
        'rankings:   sudo mv /etc/cron.d/rankings.dpkg-dist /etc/cron.d/rankings'; do
        grep -qF -- "$said" "$share/upgrade.out" || { echo "not said: $said"; return 1; }
    done

    # 0.3's kept entry runs the new night with 0.3's configuration, as cron would.
    local since
    since=$(in_container date +%s)
    in_container rm -f /var/lib/rankings/all_time.json
    in_container runuser -u rankings -- /usr/libexec/rankings-cron /etc/rankings.conf </dev/null
    journal_lines "$night_end" --since "@$since"
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"

    # What the warnings say to do; then installing again says nothing, and the night runs.
    in_container_sh '
        rm -r /etc/systemd/system/rankings-fetch.service.d /etc/systemd/system/rankings-publish.service.d
        rm /etc/systemd/system/rankings.service.d/monthly.conf
        rm -f /etc/rankings-monthly.conf /etc/cron.d/rankings-monthly
        mv /etc/cron.d/rankings.dpkg-dist /etc/cron.d/rankings
        echo RANKINGS_MONTHLY=yes >>/etc/rankings.conf
        systemctl daemon-reload'
    in_container apt-get install -y --reinstall --no-install-recommends /mnt/share/upgrade.deb >"$share/upgrade.out" 2>&1
    if grep -F 'WARNING' "$share/upgrade.out"; then return 1; fi
    in_container systemctl start rankings.service
    in_container cat /var/lib/rankings/all_time.json | cmp - "$share/all_time.json"
    in_container test -s /var/lib/rankings/monthly.json
}
check "upgrade from 0.3.0-1: the edited configuration and cron entry kept and working; every 0.3 leftover named with what to do" \
    upgrade_from_03

upgrade_cleanup() {
    in_container apt-get purge -y rankings >/dev/null
    rm -rf -- "$upgrade_old_tree" "$share/old-0.3"
}
check "upgrade from 0.3.0-1: purged again" upgrade_cleanup
