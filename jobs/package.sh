#!/bin/bash
# Builds the Debian package of rankings and prints its path.
#
#   jobs/package.sh OUTDIR      writes OUTDIR/rankings_<version>_<arch>.deb
#
# The package's files are exactly what jobs/install.sh installs (it runs it
# with DESTDIR and Debian's layout), plus the man page and the documentation
# made from docs/ (jobs/manpage.py) and the documents Debian requires. Everything installed
# under /etc is a conffile, so an edited one survives upgrades and purge
# removes it. Control data and maintainer scripts live in jobs/debian/.
#
# Environment:
#   RANKINGS_PREBUILT=   package this binary instead of building one
#   DEBFULLNAME=, DEBEMAIL=
#                        the Maintainer, as Debian's tools take it (jobs/debian/maintainer)
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
if (($# != 1)); then
    echo "usage: $0 OUTDIR" >&2
    exit 64
fi
outdir=$1
umask 022

missing=()
command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi

binary=${RANKINGS_PREBUILT:-$("$root/jobs/build-binary.sh")}
upstream_version=$("$binary" --version | awk 'NR == 1 { print $2 }')
# The Debian revision comes from the changelog; its upstream part must be the
# binary's own version, so a release cannot ship under a stale changelog.
version=$(dpkg-parsechangelog -l "$root/jobs/debian/changelog" -S Version)
if [[ ${version%-*} != "$upstream_version" ]]; then
    echo "jobs/debian/changelog is at $version, but the binary says $upstream_version: add a changelog entry" >&2
    exit 65
fi
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
# debian/rankings is where dpkg-shlibdeps expects a package's tree.
tree=$work/debian/rankings

# Debian bookworm's layout: units under /lib (its debhelper's place for them;
# /usr/lib comes with trixie), the cron entry commented out so that the
# package enables nothing before the operator configures it.
DESTDIR=$tree PREFIX=/usr SYSCONFDIR=/etc LIBEXECDIR=/usr/libexec \
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
release_date=$(date -u -d "$(dpkg-parsechangelog -l "$root/jobs/debian/changelog" -S Date)" +%F)
python3 "$root/jobs/manpage.py" --version "$upstream_version" --date "$release_date" "$root" >"$work/rankings.1"
gzip -9n <"$work/rankings.1" >"$tree/usr/share/man/man1/rankings.1.gz"
# The page documents the cron wrapper too (operators run it by hand).
ln -s rankings.1.gz "$tree/usr/share/man/man1/rankings-cron.1.gz"
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

# dpkg-shlibdeps names the packages that provide the libraries the binary
# links (glibc, libstdc++, zlib...), with the versions it needs.
install -d "$tree/DEBIAN"
printf 'Source: rankings\n\nPackage: rankings\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/rankings/usr/bin/rankings | sed -n 's/^shlibs:Depends=//p')

(cd "$tree" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$tree/DEBIAN/md5sums"
for script in postinst prerm postrm; do
    install -m 0755 "$root/jobs/debian/$script" "$tree/DEBIAN/$script"
done
(cd "$tree" && find etc -type f | sed 's|^|/|' | sort) >"$tree/DEBIAN/conffiles"
installed_size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
# Escaped for sed's replacement: a name may hold "&" or "|".
maintainer=$("$root/jobs/debian/maintainer" | sed 's/[|&\\]/\\&/g')
sed -e "s|\${shlibs:Depends}|$depends|" -e "s|\${maintainer}|$maintainer|" "$root/jobs/debian/control" |
    awk -v version="$version" -v arch="$arch" -v size="$installed_size" '
        { print }
        /^Package:/ { print "Version: " version; print "Architecture: " arch; print "Installed-Size: " size }
    ' >"$tree/DEBIAN/control"

find "$tree" -type d -exec chmod 0755 {} +
mkdir -p -- "$outdir"
deb=$outdir/rankings_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$tree" "$deb" >&2
printf '%s\n' "$deb"
