# Metrics on a host with Debian's node_exporter or Prometheus server: their postinsts make the user
# prometheus and give it /var/lib/prometheus (chown), while node-exporter/ in it stays root's,
# 0755, as their packages ship it (prometheus-node-exporter 1.5.0-1 and prometheus 2.42.0 in
# Debian 12). systemd-tmpfiles refuses the package's ACL line there; `apt install` must say so
# and how to do it instead, and that way (the night's one metrics file in /var/lib/rankings,
# linked in) must work under the real systemd, read by the real node_exporter (Debian's binary,
# run in the container as the user prometheus) and promtool. Self-contained: it puts the
# configuration and /var/lib/prometheus back as it found them, for the checks after it.

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
    local said
    for said in 'rankings: WARNING: user rankings cannot write metrics into /var/lib/prometheus/node-exporter.' \
        'rankings:   sudo ln -s /var/lib/rankings/rankings.prom /var/lib/prometheus/node-exporter/' \
        'rankings:   and in /etc/rankings.conf: RANKINGS_METRICS=/var/lib/rankings/rankings.prom'; do
        grep -qF -- "$said" "$share/apt.out" || { echo "not said: $said"; return 1; }
    done
    # 0.4's two other files are gone: nothing names them.
    if grep -E 'rankings-(night|fetch)\.prom' "$share/apt.out"; then return 1; fi
}
check "prometheus: apt install says the metrics cannot be written there, and what to do" prometheus_install_warns

# node_exporter's textfile collector alone, as the user prometheus, on a free loopback port of the
# container's; scraped from the host in the container's network namespace.
prometheus_scrape() {
    local port=$((20000 + RANDOM % 20000)) status=1
    in_container install -m 0755 /mnt/share/node-exporter /usr/local/bin/node-exporter
    in_container_sh "setpriv --reuid=prometheus --regid=prometheus --init-groups -- /usr/local/bin/node-exporter \
        --web.listen-address=127.0.0.1:$port --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory=/var/lib/prometheus/node-exporter >/run/node-exporter.log 2>&1 &
        echo \$! >/run/node-exporter.pid"
    for _ in $(seq 100); do
        if nsenter -t "$leader" -n -- curl -fsS "http://127.0.0.1:$port/metrics" -o "$share/scrape" 2>/dev/null; then
            status=0
            break
        fi
        sleep 0.1
    done
    in_container_sh 'kill "$(cat /run/node-exporter.pid)"; rm -f /run/node-exporter.pid'
    ((status == 0)) || { in_container cat /run/node-exporter.log; return 1; }
}

prometheus_metrics_through_links() {
    cp -- "$(command -v prometheus-node-exporter)" "$share/node-exporter"
    # What the warning and "Monitoring" say to do, then one night under the real systemd.
    in_container_sh '
        ln -s /var/lib/rankings/rankings.prom /var/lib/prometheus/node-exporter/
        install -d -m 0755 /srv/rankings-prometheus
        install -m 0644 /mnt/share/rating_events.ndjson /srv/rankings-prometheus/'
    set_config RANKINGS_EXPORTS /srv/rankings-prometheus
    set_config RANKINGS_METRICS /var/lib/rankings/rankings.prom
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
    in_container systemctl start rankings.service
    expect "exit status" "$(in_container systemctl show -P ExecMainStatus rankings.service)" 0
    local linked=/var/lib/prometheus/node-exporter/rankings.prom
    expect "owner of rankings.prom" "$(in_container stat -c %U /var/lib/rankings/rankings.prom)" rankings
    expect "still a link" "$(in_container stat -c %F "$linked")" "symbolic link"
    # node_exporter's own parser's rules, by the real promtool on the host.
    in_container cat "$linked" | promtool check metrics
    prometheus_scrape
    grep -qx 'node_textfile_scrape_error 0' "$share/scrape"
    grep -qx 'rankings_night_last_run_exit_status 0' "$share/scrape"
    # Every sample in the file is served with its value (node_exporter may spell a number
    # differently, 1.8e+09 for 1800000000, so they are compared as numbers).
    in_container cat "$linked" >"$share/rankings.prom"
    awk 'NR == FNR { if ($0 !~ /^#/ && NF == 2) want[$1] = $2; next }
         { got[$1] = $2 }
         END { for (k in want) if (!(k in got) || got[k] + 0 != want[k] + 0) { print "not served as written: " k; bad = 1 }
               exit bad + (length(want) < 20) }' "$share/rankings.prom" <(grep '^rankings_' "$share/scrape")
    # With the link made, installing again says nothing about metrics.
    in_container apt-get install -y --reinstall --no-install-recommends "$deb_in_container" >"$share/apt.out" 2>&1
    if grep -F 'WARNING' "$share/apt.out"; then return 1; fi
}
check "prometheus: the one metrics file, kept in /var/lib/rankings and linked in, is served by node_exporter as written" \
    prometheus_metrics_through_links

prometheus_restore() {
    in_container_sh '
        rm -rf /var/lib/prometheus /srv/rankings-prometheus /usr/local/bin/node-exporter /var/lib/rankings/rankings.prom \
            /var/lib/rankings/all_time.json /var/lib/rankings/.rankings-nights.json
        userdel prometheus
        cp /root/rankings.conf.before-prometheus /etc/rankings.conf
        rm -f /root/rankings.conf.before-prometheus'
    in_container systemctl reset-failed rankings.service 2>/dev/null || true
}
check "prometheus: the layout and the configuration put back for the checks after" prometheus_restore
