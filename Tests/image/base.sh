# shellcheck shell=bash
# Sourced by run.sh. Provides `image_base`: the reference of a local Debian bookworm base image
# for jobs/image.sh's BASE=, since no registry is reachable from the test machine. It stands in
# for debian:bookworm-slim: debootstrap's minbase, with dpkg told to leave out documentation,
# manuals and translations as the slim images do (so what the image adds is measured as it would
# be on the real base), imported with `podman import`.
#
# Made once and cached the way Tests/container/rootfs.sh caches its root: under a lock (flock),
# in a file whose name carries a hash of everything that shapes it (suite, mirror, base_format,
# bumped when this file changes how the root is made), so a stale base is never reused. The tar
# is kept, so a machine whose podman storage was reset imports it again without debootstrap.

# shellcheck source=Tests/container/rootfs.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../container/rootfs.sh"    # for debian_mirror and its suite

base_format=2
base_cache=${RANKINGS_IMAGE_CACHE:-/var/cache/rankings-image}

# What debian:bookworm-slim's dpkg keeps out of every package installed on it.
slim_excludes() {
    local kept
    for kept in doc man info groff lintian linda locale; do
        printf 'path-exclude /usr/share/%s/*\n' "$kept"
    done
    printf 'path-include /usr/share/doc/*/copyright\npath-include /usr/share/locale/locale.alias\n'
}

image_base() {
    local mirror key tar tag lock tree
    mirror=$(debian_mirror)
    key=$(printf '%s\n' "$rootfs_suite" "$mirror" "$base_format" "$(slim_excludes)" | sha256sum | cut -c1-16)
    tar=$base_cache/$rootfs_suite-minbase-$key.tar
    tag=localhost/rankings-test-base:$rootfs_suite-$key
    mkdir -p -- "$base_cache"
    exec {lock}>>"$base_cache/.lock"
    flock "$lock"
    if [[ ! -e $tar ]]; then
        echo "# building the $rootfs_suite minbase root for the image's base (debootstrap from $mirror)" >&2
        tree=$base_cache/$rootfs_suite-minbase-$key.tmp
        rm -rf -- "$tree"
        nice debootstrap --variant=minbase "$rootfs_suite" "$tree" "$mirror" >"$base_cache/debootstrap.log" 2>&1 || {
            tail -n 20 "$base_cache/debootstrap.log" >&2
            exec {lock}>&-
            return 1
        }
        mkdir -p -- "$tree/etc/dpkg/dpkg.cfg.d"
        slim_excludes >"$tree/etc/dpkg/dpkg.cfg.d/slim"
        # What the excludes keep out of packages installed later, taken out of those already there.
        (cd "$tree/usr/share" && find doc man info groff lintian linda locale -mindepth 1 \
            ! -name copyright ! -name locale.alias ! -type d -delete 2>/dev/null) || true
        # The slim image's sources: the release, its updates and its security fixes.
        printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: %s\n\n' \
            "$mirror" "$rootfs_suite" "$rootfs_suite" /usr/share/keyrings/debian-archive-keyring.gpg \
            >"$tree/etc/apt/sources.list.d/debian.sources"
        printf 'Types: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: %s\n' \
            http://deb.debian.org/debian-security "$rootfs_suite" /usr/share/keyrings/debian-archive-keyring.gpg \
            >>"$tree/etc/apt/sources.list.d/debian.sources"
        rm -f -- "$tree/etc/apt/sources.list"
        # debootstrap leaves the packages it installed in apt's cache; an image base holds none.
        rm -rf -- "$tree"/var/lib/apt/lists/* "$tree"/var/cache/apt/*.bin "$tree"/var/cache/apt/archives/*.deb \
            "$tree"/var/log/*.log
        tar --numeric-owner --xattrs -C "$tree" -cf "$tar.tmp" .
        mv -- "$tar.tmp" "$tar"
        rm -rf -- "$tree"
        # Bases made by an older key are stale; keep only this one.
        find "$base_cache" -maxdepth 1 -name "$rootfs_suite-minbase-*.tar" ! -path "$tar" -delete
    fi
    if ! podman image exists "$tag"; then
        podman import --quiet --change 'CMD ["/bin/bash"]' "$tar" "$tag" >/dev/null || {
            exec {lock}>&-
            return 1
        }
    fi
    exec {lock}>&-
    printf '%s\n' "$tag"
}
