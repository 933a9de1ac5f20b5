#!/bin/bash
# Builds the self-contained `rankings` (jobs/build-binary.sh) and installs it with everything the daily
# run needs; `jobs/install.sh uninstall` takes it all away again.
#
#   sudo jobs/install.sh                     build, install under /usr/local and /etc
#   sudo jobs/install.sh uninstall [--purge] remove; --purge also drops an edited config
#
# Environment:
#   PREFIX=/usr/local    where the binary and the night's program go
#   SYSCONFDIR=/etc      where the configuration, units, cron and sysusers files go
#                        (systemd and cron look only under /etc, whatever PREFIX is)
#   BINDIR=$PREFIX/bin, PKGLIBDIR=$PREFIX/lib/rankings,
#   UNITDIR=$SYSCONFDIR/systemd/system, SYSUSERSDIR=$SYSCONFDIR/sysusers.d,
#   TMPFILESDIR=$SYSCONFDIR/tmpfiles.d
#                        finer control, for a distribution's layout (jobs/package.sh
#                        puts units, sysusers and tmpfiles under /lib and /usr/lib)
#   CRON_ACTIVE=yes      "no" installs the cron entry commented out, so cron runs
#                        nothing until the operator removes the "#" (the package's way)
#   DESTDIR=             staging root prepended to every path written; the paths
#                        written *into* the files leave it out. When set, nothing
#                        outside DESTDIR is touched (no user, no systemctl).
#   RANKINGS_PREBUILT=   an already built rankings to install instead of building
#
# Every installation path above (not DESTDIR) must be absolute and made of letters,
# digits and _ . / + , : - only: they are written into units, a crontab line and the
# configuration, which would read a space, "&", "%" or "$" differently. Anything else
# exits 64 before anything is built or changed.
#
# Installed files (the same list the tests check):
#   $BINDIR/rankings
#   $BINDIR/rankings-night                   -> $PKGLIBDIR/rankings-night
#   $PKGLIBDIR/ (default $PREFIX/lib/rankings): rankings-night and rankings_night/*.py
#   $SYSCONFDIR/rankings.conf
#   $UNITDIR/rankings.service
#   $UNITDIR/rankings.timer
#   $SYSCONFDIR/cron.d/rankings
#   $SYSUSERSDIR/rankings.conf
#   $TMPFILESDIR/rankings.conf
set -euo pipefail

# shellcheck source=jobs/file-table.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/file-table.sh"

# Source template, installed path, mode: every file both this script and
# jobs/package.sh ship (the package is this script's DESTDIR install, so a
# line added here is packaged too; whatever lands under /etc is a conffile).
# The configuration comes first so that uninstall can judge it before
# anything else is gone.
files=(
    "jobs/rankings.conf      $sysconfdir/rankings.conf        0644"
    "jobs/rankings.service   $unitdir/rankings.service        0644"
    "jobs/rankings.timer     $unitdir/rankings.timer          0644"
    "cron/rankings           $sysconfdir/cron.d/rankings      0644"
    "jobs/rankings.sysusers  $sysusersdir/rankings.conf       0644"
    "jobs/rankings.tmpfiles  $tmpfilesdir/rankings.conf       0644"
)
# The night's program and its package (Python's standard library only), then the command on
# PATH that leads to it.
files+=("jobs/night/rankings-night $pkglibdir/rankings-night 0755")
for module in "$root"/jobs/night/rankings_night/*.py; do
    files+=("jobs/night/rankings_night/${module##*/} $pkglibdir/rankings_night/${module##*/} 0644")
done
links=("$bindir/rankings-night $pkglibdir/rankings-night")
config=$sysconfdir/rankings.conf

build() {
    if [[ -n ${RANKINGS_PREBUILT:-} ]]; then
        printf '%s\n' "$RANKINGS_PREBUILT"
        return
    fi
    "$root/jobs/build-binary.sh"
}

install_all() {
    local binary
    binary=$(build)
    install -D -m 0755 "$binary" "$destdir$bindir/rankings"
    echo "installed $bindir/rankings"
    install_files
    if live; then
        create_account
    fi
    if systemd_running; then
        systemctl daemon-reload
    fi
}

# The job runs as the system user `rankings` under both schedulers, and cron
# (unlike systemd's StateDirectory=) needs the state directory made for it.
create_account() {
    if command -v systemd-sysusers >/dev/null; then
        systemd-sysusers "$sysusersdir/rankings.conf"
    elif ! getent passwd rankings >/dev/null; then
        useradd --system --user-group --home-dir /var/lib/rankings --no-create-home \
            --shell /usr/sbin/nologin rankings
    fi
    install -d -o rankings -g rankings -m 0755 /var/lib/rankings
    # Write access to node_exporter's textfile directory, if it is there.
    if command -v systemd-tmpfiles >/dev/null; then
        systemd-tmpfiles --create "$tmpfilesdir/rankings.conf" || true
    fi
}

uninstall_all() {
    local purge=${1:-}
    if systemd_running; then
        systemctl disable --now rankings.timer 2>/dev/null || true
    fi
    uninstall_files "$purge"
    if [[ -e $destdir$bindir/rankings ]]; then
        rm -f -- "$destdir$bindir/rankings"
        echo "removed $bindir/rankings"
    fi
    if systemd_running; then
        systemctl daemon-reload
    fi
    if live; then
        echo "left in place: the user rankings and /var/lib/rankings (the documents)"
    fi
}

case ${1:-install} in
    install) install_all ;;
    uninstall) uninstall_all "${2:-}" ;;
    *)
        echo "usage: $0 [install | uninstall [--purge]]" >&2
        exit 64
        ;;
esac
