#!/bin/bash
# Adds the monthly board (`--since -30d`, written to /var/lib/rankings/monthly.json)
# to an installation made by jobs/install.sh; `uninstall` takes it away again.
#
#   sudo jobs/install-monthly.sh                      after jobs/install.sh
#   sudo jobs/install-monthly.sh uninstall [--purge]  --purge also drops an edited config
#
# PREFIX, SYSCONFDIR, BINDIR, LIBEXECDIR and DESTDIR as for jobs/install.sh. Installed files:
#   $SYSCONFDIR/systemd/system/rankings.service.d/monthly.conf  second run of the systemd job
#   $SYSCONFDIR/cron.d/rankings-monthly                          second cron line
#   $SYSCONFDIR/rankings-monthly.conf                            its settings, for cron
#   $SYSCONFDIR/systemd/system/rankings-publish.service.d/monthly.conf  publishes it too
set -euo pipefail

# shellcheck source=jobs/file-table.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/file-table.sh"
config=$sysconfdir/rankings-monthly.conf

files=(
    "cron/rankings-monthly.conf        $config 0644"
    "jobs/rankings-monthly.service.conf $sysconfdir/systemd/system/rankings.service.d/monthly.conf 0644"
    "cron/rankings-monthly              $sysconfdir/cron.d/rankings-monthly 0644"
    "jobs/rankings-monthly-publish.conf $sysconfdir/systemd/system/rankings-publish.service.d/monthly.conf 0644"
)

reload() {
    if systemd_running; then systemctl daemon-reload; fi
}

install_all() {
    install_files
    reload
}

uninstall_all() {
    uninstall_files "${1:-}"
    rmdir -- "$destdir$sysconfdir/systemd/system/rankings.service.d" \
        "$destdir$sysconfdir/systemd/system/rankings-publish.service.d" 2>/dev/null || true
    reload
}

case ${1:-install} in
    install) install_all ;;
    uninstall) uninstall_all "${2:-}" ;;
    *)
        echo "usage: $0 [install | uninstall [--purge]]" >&2
        exit 64
        ;;
esac
