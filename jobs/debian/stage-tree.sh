#!/bin/bash
# Lays out the package's files under TREE, as they will be installed: what jobs/install.sh
# installs, with Debian's layout, plus the man page and the documentation made from docs/ and the
# documents Debian requires. jobs/package.sh packs the tree; Tests/docs/run.sh lays one out with
# a stand-in binary to check that the man page's FILES names every file in it.
#
#   jobs/debian/stage-tree.sh TREE BINARY VERSION DATE     (DATE: the man page's, YYYY-MM-DD)
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
if (($# != 4)); then
    echo "usage: $0 TREE BINARY VERSION DATE" >&2
    exit 64
fi
tree=$1 binary=$2 version=$3 date=$4
umask 022

# Debian bookworm's layout: units under /lib (its debhelper's place for them;
# /usr/lib comes with trixie), the cron entry commented out so that the
# package enables nothing before the operator configures it.
DESTDIR=$tree PREFIX=/usr SYSCONFDIR=/etc \
    UNITDIR=/lib/systemd/system SYSUSERSDIR=/usr/lib/sysusers.d TMPFILESDIR=/usr/lib/tmpfiles.d CRON_ACTIVE=no \
    RANKINGS_PREBUILT=$binary "$root/jobs/install.sh" >/dev/null
# Only configuration belongs under /etc in a package: a unit or sysusers file
# there would be a conffile the operator could not override the usual way.
for misplaced in "$tree/etc/systemd" "$tree/etc/sysusers.d" "$tree/etc/tmpfiles.d"; do
    if [[ -e $misplaced ]]; then
        echo "jobs/install.sh put files in ${misplaced#"$tree"}: give them \$unitdir, \$sysusersdir or \$tmpfilesdir in its table" >&2
        exit 70
    fi
done

install -d "$tree/usr/share/man/man1" "$tree/usr/share/doc/rankings"
python3 "$root/jobs/manpage.py" --version "$version" --date "$date" "$root" | gzip -9n >"$tree/usr/share/man/man1/rankings.1.gz"
# The page documents the night's command too: operators run it by hand, and rankings.service
# names its page.
ln -s rankings.1.gz "$tree/usr/share/man/man1/rankings-night.1.gz"
install -m 0644 "$root/jobs/debian/copyright" "$tree/usr/share/doc/rankings/copyright"
gzip -9n <"$root/jobs/debian/changelog" >"$tree/usr/share/doc/rankings/changelog.Debian.gz"
# The reference and the operator's guide, without their parts about the source
# tree; compressed over 4 KiB, as Debian's dh_compress does.
python3 "$root/jobs/manpage.py" --pages "$root" | while IFS= read -r page; do
    target=$tree/usr/share/doc/rankings/$(basename -- "$page")
    python3 "$root/jobs/manpage.py" --markdown "$page" >"$target"
    chmod 0644 "$target"
    if (($(stat -c %s "$target") > 4096)); then
        gzip -9n "$target"
    fi
done
