# Installing: apt takes the package offline (its dependencies are already in the root), makes
# the user and the state directory, and enables nothing.

installs_with_apt() {
    in_container apt-get install -y --no-install-recommends "$deb_in_container"
    expect "package status" "$(in_container dpkg-query -W -f '${Status}' rankings)" "install ok installed"
    in_container rankings --version
    # The night's commands, through their links, with the machine's python3 (the package's Depends).
    in_container rankings-night --help | grep '(default /etc/rankings.conf)' >/dev/null
    in_container /usr/libexec/rankings-fetch-firestore --help >/dev/null
    in_container /usr/libexec/rankings-publish-firestore --help >/dev/null
    in_container /usr/libexec/rankings-cron --help >/dev/null
}
check "apt installs the package; rankings and the night's commands run" installs_with_apt

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
}
check "installing enables nothing: the timer is disabled and the hourly cron line commented out" enables_nothing
