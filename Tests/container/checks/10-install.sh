# Installing: apt takes the package offline (its dependencies are already in the root), makes
# the user and the state directory, and enables nothing; the programs 0.5 removed are not there.

installs_with_apt() {
    in_container apt-get install -y --no-install-recommends "$deb_in_container"
    expect "package status" "$(in_container dpkg-query -W -f '${Status}' rankings)" "install ok installed"
    # The binary's version is the package's (jobs/package.sh refuses any other).
    local version
    version=$(dpkg-deb -f "$deb" Version)
    expect "rankings --version" "$(in_container rankings --version | head -n 1)" "rankings ${version%-*}"
    # The night's command, through its link, with the machine's python3 (the package's Depends).
    in_container rankings-night --help | grep '(default /etc/rankings.conf)' >/dev/null
    local gone
    for gone in /usr/libexec/rankings-fetch-firestore /usr/libexec/rankings-publish-firestore /usr/libexec/rankings-cron \
        /usr/lib/rankings/rankings-fetch-firestore /usr/lib/rankings/rankings-publish-firestore /usr/lib/rankings/rankings-cron \
        /usr/share/man/man1/rankings-fetch-firestore.1.gz /usr/share/man/man1/rankings-publish-firestore.1.gz \
        /usr/share/man/man1/rankings-cron.1.gz; do
        if in_container test -e "$gone" -o -L "$gone"; then
            echo "removed at 0.5, yet installed: $gone"
            return 1
        fi
    done
}
check "apt installs the package; rankings (its version) and rankings-night run; 0.4's other programs are gone" installs_with_apt

creates_user_and_state_directory() {
    in_container getent passwd rankings
    expect "owner of /var/lib/rankings" "$(in_container stat -c %U:%G /var/lib/rankings)" "rankings:rankings"
    expect "service known to systemd" "$(in_container systemctl show -P LoadState rankings.service)" "loaded"
    expect "the one service" "$(in_container_sh 'ls /lib/systemd/system | grep ^rankings')" "rankings.service
rankings.timer"
}
check "installing creates the user rankings and /var/lib/rankings, and systemd sees the one service and its timer" \
    creates_user_and_state_directory

enables_nothing() {
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" "disabled"
    expect "timer active?" "$(in_container systemctl is-active rankings.timer || true)" "inactive"
    # cron's own view: no active line runs the night.
    expect "active cron lines" "$(in_container grep -c '^[^#].*rankings-night' /etc/cron.d/rankings || true)" "0"
    in_container grep -qx '#0 \* \* \* \* rankings /usr/bin/rankings-night cron --config /etc/rankings.conf' /etc/cron.d/rankings
    # The shipped file sets nothing (every setting commented), so a night cannot start before the
    # operator names Firestore or the exports; `settings` says which.
    expect "settings set in the shipped file" "$(in_container grep -cE '^[A-Z]' /etc/rankings.conf || true)" 0
    local status=0
    in_container rankings-night settings 2>"$share/settings.err" || status=$?
    cat -- "$share/settings.err"
    expect "rankings-night settings on the shipped file" "$status" 78
    grep -qF 'RANKINGS_EXPORTS is not set' "$share/settings.err"
}
check "installing enables nothing: the timer disabled, the hourly cron line commented out, no setting set (78 until one is)" \
    enables_nothing
