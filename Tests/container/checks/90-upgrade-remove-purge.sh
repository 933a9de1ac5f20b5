# The package's life after install: an upgrade, a remove, a purge.

upgrade_keeps_edited_config() {
    local before unpacked=$work/unpacked
    # The operator's own edit, whatever earlier checks left in the file.
    set_config RANKINGS_MAX_DROP 2.5
    before=$(in_container md5sum /etc/rankings.conf)
    in_container systemctl enable --now rankings.timer
    # The same package with a higher version, as the next release would be.
    dpkg-deb --raw-extract "$deb" "$unpacked"
    sed -i 's/^Version: .*/&+upgrade1/' "$unpacked/DEBIAN/control"
    dpkg-deb -Znone --root-owner-group --build "$unpacked" "$share/upgrade.deb" >/dev/null
    rm -rf -- "$unpacked"
    in_container apt-get install -y --no-install-recommends /mnt/share/upgrade.deb
    expect "version" "$(in_container dpkg-query -W -f '${Version}' rankings)" "$(dpkg-deb -f "$deb" Version)+upgrade1"
    expect "configuration" "$(in_container md5sum /etc/rankings.conf)" "$before"
    in_container grep -qx 'RANKINGS_MAX_DROP=2.5' /etc/rankings.conf
    expect "timer enabled after the upgrade" "$(in_container systemctl is-enabled rankings.timer)" "enabled"
}
check "an upgrade keeps the edited /etc/rankings.conf (and an enabled timer)" upgrade_keeps_edited_config

remove_stops_and_disables_timer() {
    expect "timer active before" "$(in_container systemctl is-active rankings.timer)" "active"
    in_container apt-get remove -y rankings
    expect "timer active after" "$(in_container systemctl is-active rankings.timer || true)" "inactive"
    # Not there, not even as a link to nothing (test -e follows links): a link left behind
    # would enable the timer again when the package is installed again.
    in_container test ! -e /etc/systemd/system/timers.target.wants/rankings.timer
    in_container test ! -L /etc/systemd/system/timers.target.wants/rankings.timer
    expect "timer enabled after the remove" "$(in_container systemctl is-enabled rankings.timer 2>&1 || true)" \
        "Failed to get unit file state for rankings.timer: No such file or directory"
    in_container test ! -e /usr/bin/rankings
    in_container test -e /etc/rankings.conf
}
check "removing stops and disables the timer and keeps the configuration" remove_stops_and_disables_timer

purge_keeps_only_documents() {
    local document fetched
    document=$(in_container md5sum /var/lib/rankings/all_time.json)
    fetched=$(in_container_sh 'ls -A /var/lib/rankings/firestore')
    in_container test -e /var/lib/rankings/.rankings-nights.json
    in_container apt-get purge -y rankings
    local status
    status=$(in_container dpkg-query -W -f '${db:Status-Status}' rankings 2>/dev/null || echo not-installed)
    expect "package status" "$status" "not-installed"
    local path
    for path in $(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./\(.*[^/]\)$|/\1|p'); do
        if in_container test -e "$path" -o -L "$path"; then
            echo "left behind: $path"
            return 1
        fi
    done
    in_container test ! -e /var/lib/rankings/.rankings.lock
    # The night's history is state, not a document: of no use without the package.
    in_container test ! -e /var/lib/rankings/.rankings-nights.json
    in_container test ! -e /var/lib/systemd/timers/stamp-rankings.timer
    expect "document" "$(in_container md5sum /var/lib/rankings/all_time.json)" "$document"
    expect "the fetched nights" "$(in_container_sh 'ls -A /var/lib/rankings/firestore')" "$fetched"
}
check "purging removes the configuration, the lock and the night's history, and everything else but the boards and the fetched nights" \
    purge_keeps_only_documents
