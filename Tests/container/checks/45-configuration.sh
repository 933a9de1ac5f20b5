# The configuration syntax (docs/configuration.md) under the real systemd: a file using every
# form the wrapper accepts, read by a service with EnvironmentFile= and by the installed wrapper,
# hands the job and the publish hook the same arguments. The service's command lines are the
# shipped units' own (the job's without its --metrics, which the wrapper leaves out when empty),
# with a program that records its arguments in place of rankings.

configuration_same_for_systemd_and_wrapper() {
    in_container_sh "dpkg -s rankings >/dev/null 2>&1 || dpkg -i $deb_in_container >/dev/null"
    expect "timer enabled?" "$(in_container systemctl is-enabled rankings.timer || true)" "disabled"
    in_container_sh '
        install -d "/srv/config check/exports"
        cat >/usr/local/bin/rankings-print-args <<"EOF"
#!/bin/sh
for arg; do printf "<%s>" "$arg"; done >>/srv/config-args
echo >>/srv/config-args
EOF
        chmod 0755 /usr/local/bin/rankings-print-args
        printf "%s\n" \
            "# A comment" \
            "   # an indented comment" \
            "	" \
            "RANKINGS_EXPORTS=\"/srv/config check/exports\"" \
            "RANKINGS_OUTPUT=\"/srv/config check/all time.json\"   " \
            "RANKINGS_FLAGS=--quiet" \
            "RANKINGS_FLAGS=\"--max-invalid  5   --time-zone=Etc/GMT+5 --label=a,b@c%d_e.f/g:h\"" \
            "RANKINGS_METRICS=" \
            "RANKINGS_PUBLISH=\"/usr/local/bin/rankings-print-args  --project jokes-app --database (default)\"" \
            "RANKINGS_LOG_FILE=/srv/config-check.log" \
            "RANKINGS_RETRY_PAUSE_SECONDS=0" >/srv/config-check.conf
        printf "RANKINGS_BIN=/usr/local/bin/rankings-print-args\t" >>/srv/config-check.conf
        {
            printf "[Service]\nType=oneshot\nEnvironmentFile=/srv/config-check.conf\n"
            grep "^ExecStart=" /lib/systemd/system/rankings.service |
                sed -e "s| --metrics \${RANKINGS_METRICS}||" -e "s|^ExecStart=/usr/bin/rankings |ExecStart=/usr/local/bin/rankings-print-args |"
            grep "^ExecStart=" /lib/systemd/system/rankings-publish.service
        } >/run/systemd/system/rankings-config-check.service
        cat /run/systemd/system/rankings-config-check.service
        systemctl daemon-reload
        rm -f /srv/config-args
        systemctl start rankings-config-check.service
        mv /srv/config-args /srv/config-args.systemd
        /usr/libexec/rankings-cron /srv/config-check.conf
        mv /srv/config-args /srv/config-args.wrapper
        rm /run/systemd/system/rankings-config-check.service
        systemctl daemon-reload'
    local systemd wrapper
    systemd=$(in_container cat /srv/config-args.systemd)
    wrapper=$(in_container cat /srv/config-args.wrapper)
    echo "systemd: $systemd"
    echo "wrapper: $wrapper"
    expect "arguments" "$wrapper" "$systemd"
    expect "arguments" "$systemd" "<aggregate><--max-invalid><5><--time-zone=Etc/GMT+5><--label=a,b@c%d_e.f/g:h><--output></srv/config check/all time.json></srv/config check/exports>
<--project><jokes-app><--database><(default)></srv/config check/all time.json>"
}
check "a configuration in every accepted form means the same to systemd and to the wrapper" configuration_same_for_systemd_and_wrapper
