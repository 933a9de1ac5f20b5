#!/bin/bash
# Adds the monthly board (`--since -30d`, written to /var/lib/rankings/monthly.json)
# to an installation made by jobs/install.sh; `uninstall` takes it away again.
#
#   sudo jobs/install-monthly.sh                      after jobs/install.sh
#   sudo jobs/install-monthly.sh uninstall [--purge]  --purge also drops an edited config
#
# PREFIX, SYSCONFDIR and DESTDIR as for jobs/install.sh. Installed files:
#   $SYSCONFDIR/systemd/system/rankings.service.d/monthly.conf  second run of the systemd job
#   $SYSCONFDIR/cron.d/rankings-monthly                          second cron line
#   $SYSCONFDIR/rankings-monthly.conf                            its settings, for cron
#   $SYSCONFDIR/systemd/system/rankings-publish.service.d/monthly.conf  publishes it too
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${PREFIX:-/usr/local}
sysconfdir=${SYSCONFDIR:-/etc}
destdir=${DESTDIR:-}
config=$sysconfdir/rankings-monthly.conf

files=(
    "cron/rankings-monthly.conf        $config"
    "jobs/rankings-monthly.service.conf $sysconfdir/systemd/system/rankings.service.d/monthly.conf"
    "cron/rankings-monthly              $sysconfdir/cron.d/rankings-monthly"
    "jobs/rankings-monthly-publish.conf $sysconfdir/systemd/system/rankings-publish.service.d/monthly.conf"
)

render() {
    sed -e "s|@BINDIR@|$prefix/bin|g" -e "s|@LIBEXECDIR@|$prefix/libexec|g" \
        -e "s|@SYSCONFDIR@|$sysconfdir|g" "$root/$1"
}

reload() {
    if [[ -z $destdir && -d /run/systemd/system ]]; then systemctl daemon-reload; fi
}

install_all() {
    local source target
    for entry in "${files[@]}"; do
        read -r source target <<<"$entry"
        if [[ $target == "$config" && -e $destdir$target ]]; then
            echo "kept existing $target"
            continue
        fi
        install -d -m 0755 "$(dirname -- "$destdir$target")"
        render "$source" >"$destdir$target.tmp"
        chmod 0644 "$destdir$target.tmp"
        mv -f "$destdir$target.tmp" "$destdir$target"
        echo "installed $target"
    done
    reload
}

uninstall_all() {
    local purge=${1:-} source target
    for entry in "${files[@]}"; do
        read -r source target <<<"$entry"
        [[ -e $destdir$target ]] || continue
        if [[ $target == "$config" && $purge != --purge ]] && ! render "$source" | cmp -s - "$destdir$target"; then
            echo "kept $target: it was edited (remove it yourself, or use --purge)"
            continue
        fi
        rm -f -- "$destdir$target"
        echo "removed $target"
    done
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
