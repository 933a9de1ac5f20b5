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
#   RANKINGS_WITHOUT_ISAL=1
#                        package a binary built without ISA-L's header (zlib only); without
#                        it a build or RANKINGS_PREBUILT binary that lacks ISA-L is refused (69)
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
# The package Recommends libisal2; a binary that cannot use it would make that a lie.
if [[ ${RANKINGS_WITHOUT_ISAL:-} != 1 ]] && "$binary" --version | grep -q 'built without ISA-L'; then
    echo "jobs/package.sh: $binary was built without ISA-L's header (its --version says so):" \
        "install libisal-dev and build again, or set RANKINGS_WITHOUT_ISAL=1 for a zlib-only package" >&2
    exit 69
fi
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

release_date=$(date -u -d "$(dpkg-parsechangelog -l "$root/jobs/debian/changelog" -S Date)" +%F)
"$root/jobs/debian/stage-tree.sh" "$tree" "$binary" "$upstream_version" "$release_date"

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
