# Metrics on a host with Debian's node_exporter or Prometheus server: their postinsts make the user
# prometheus and give it /var/lib/prometheus (chown), while node-exporter/ in it stays root's,
# 0755, as their packages ship it (prometheus-node-exporter 1.5.0-1 and prometheus 2.42.0 in
# Debian 12). systemd-tmpfiles refuses the package's ACL line there; `apt install` must say so
# and how to do it instead, and that way (the metrics in /var/lib/rankings, the job's and the
# night's, linked in) must work under the real systemd. Self-contained: it puts the configuration
# and /var/lib/prometheus back as it found them, for the checks after it.

prometheus_layout() {
    in_container_sh '
        cp /etc/rankings.conf /root/rankings.conf.before-prometheus
        getent passwd prometheus >/dev/null ||
            useradd --system --user-group --home-dir /var/lib/prometheus --no-create-home \
                --shell /bin/false prometheus
        install -d -m 0755 /var/lib/prometheus/node-exporter
        chown prometheus:prometheus /var/lib/prometheus'
    expect "owner of /var/lib/prometheus" "$(in_container stat -c %U /var/lib/prometheus)" prometheus
    expect "owner of node-exporter/" "$(in_container stat -c %U /var/lib/prometheus/node-exporter)" root
    local status=0
    in_container systemd-tmpfiles --create rankings.conf >"$share/tmpfiles.out" 2>&1 || status=$?
    cat -- "$share/tmpfiles.out"
    expect "systemd-tmpfiles --create rankings.conf" "$status" 73
    grep -q 'nsafe path transition' "$share/tmpfiles.out"
    expect "user rankings may write node-exporter/" \
        "$(in_container runuser -u rankings -- test -w /var/lib/prometheus/node-exporter && echo yes || echo no)" no
}
check "prometheus: Debian's layout refuses the ACL (systemd-tmpfiles exits 73)" prometheus_layout

prometheus_install_warns() {
    in_container apt-get install -y --reinstall --no-install-recommends "$deb_in_container" >"$share/apt.out" 2>&1
    cat -- "$share/apt.out"
    grep -qF 'rankings: WARNING: user rankings cannot write metrics into /var/lib/prometheus/node-exporter.' "$share/apt.out"
    grep -qF 'sudo ln -s /var/lib/rankings/rankings.prom /var/lib/rankings/rankings-night.prom /var/lib/prometheus/node-exporter/' "$share/apt.out"
    grep -qF 'sudo ln -s /var/lib/rankings/rankings-fetch.prom /var/lib/prometheus/node-exporter/' "$share/apt.out"
    grep -qF 'RANKINGS_METRICS=/var/lib/rankings/rankings.prom' "$share/apt.out"
}
check "prometheus: apt install says the metrics cannot be written there, and what to do" prometheus_install_warns

prometheus_metrics_through_links() {
    # What the warning and "Monitoring" say to do, then one run under the real systemd.
    in_container_sh '
        ln -s /var/lib/rankings/rankings.prom /var/lib/rankings/rankings-night.prom /var/lib/prometheus/node-exporter/
        install -d -m 0755 /srv/rankings-prometheus
        install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings-prometheus/'
    set_config RANKINGS_EXPORTS /srv/rankings-prometheus
    set_config RANKINGS_METRICS /var/lib/rankings/rankings.prom
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
    in_container systemctl start rankings.service
    expect "exit status" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 0
    expect "metrics through the link" \
        "$(in_container awk '$1 == "rankings_last_run_exit_status" { print $2 }' /var/lib/prometheus/node-exporter/rankings.prom)" 0
    expect "the night's through its link" \
        "$(in_container awk '$1 == "rankings_night_last_run_exit_status" { print $2 }' /var/lib/prometheus/node-exporter/rankings-night.prom)" 0
    local file
    for file in rankings.prom rankings-night.prom; do
        expect "owner of $file" "$(in_container stat -c %U "/var/lib/rankings/$file")" rankings
        expect "$file is still a link" "$(in_container stat -c %F "/var/lib/prometheus/node-exporter/$file")" "symbolic link"
        # node_exporter runs as prometheus: it must be able to read the file.
        in_container runuser -u prometheus -- cat "/var/lib/prometheus/node-exporter/$file" >/dev/null
    done
    # With the link made, installing again says nothing about metrics.
    in_container apt-get install -y --reinstall --no-install-recommends "$deb_in_container" >"$share/apt.out" 2>&1
    if grep -F 'WARNING' "$share/apt.out"; then return 1; fi
}
check "prometheus: metrics kept in /var/lib/rankings and linked in are written and readable" prometheus_metrics_through_links

prometheus_restore() {
    in_container_sh '
        rm -rf /var/lib/prometheus /srv/rankings-prometheus /var/lib/rankings/rankings.prom /var/lib/rankings/rankings-night.prom \
            /var/lib/rankings/all_time.json /var/lib/rankings/.rankings-nights.json
        userdel prometheus
        cp /root/rankings.conf.before-prometheus /etc/rankings.conf
        rm -f /root/rankings.conf.before-prometheus'
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
}
check "prometheus: the layout and the configuration put back for the checks after" prometheus_restore
