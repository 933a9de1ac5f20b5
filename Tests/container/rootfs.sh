# shellcheck shell=bash
# Sourced by run.sh. Provides `container_rootfs`: the path of a Debian root file system with
# systemd and Debian's cron, built once with debootstrap and kept in a cache outside the repo,
# and `rootfs_copy` to copy it. Concurrent runs share the cache under a lock (flock).
#
# The cache directory's name carries a hash of everything that shapes the tree (suite, mirror,
# package list, and `rootfs_format`, bumped when this file changes how the tree is made), so a
# stale tree is never reused: it is rebuilt and the old one removed.

rootfs_suite=bookworm
# systemd as PID 1, Debian's cron, and the zone data the timer's calendar needs. The package's
# own dependencies (libc6, libstdc++6, zlib1g, passwd) are already part of minbase; python3 (the
# Firestore hooks) is not.
rootfs_include=systemd,systemd-sysv,dbus,cron,tzdata,python3
rootfs_format=1
rootfs_cache=${RANKINGS_CONTAINER_CACHE:-/var/cache/rankings-container}

# The Debian mirror this machine's apt already uses, so the test reaches the same archive.
debian_mirror() {
    local mirror
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
        /^$/ { if (uri != "" && suites ~ /(^| )'"$rootfs_suite"'( |$)/) { print uri; exit } uri = ""; suites = "" }
        /^URIs:/ { uri = $2 }
        /^Suites:/ { $1 = ""; suites = $0 }
        END { if (uri != "" && suites ~ /(^| )'"$rootfs_suite"'( |$)/) print uri }' | head -n 1)
    if [[ -z $mirror ]]; then
        mirror=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
            awk '$2 !~ /\[/ && $3 == "'"$rootfs_suite"'" { print $2; exit }')
    fi
    printf '%s\n' "${mirror:-http://deb.debian.org/debian}"
}

container_rootfs() {
    local mirror key dir rootfs_lock
    mirror=$(debian_mirror)
    key=$(printf '%s\n' "$rootfs_suite" "$mirror" "$rootfs_include" "$rootfs_format" | sha256sum | cut -c1-16)
    dir=$rootfs_cache/$rootfs_suite-$key
    mkdir -p -- "$rootfs_cache"
    # The cache is shared by every checkout on the machine: two runs at once
    # would debootstrap into the same $dir.tmp and delete each other's tree.
    # One builds while the others wait, then finds it complete. Copying a tree
    # takes the same lock shared (rootfs_copy), so no build removes it meanwhile.
    exec {rootfs_lock}>>"$rootfs_cache/.lock"
    if ! flock --nonblock "$rootfs_lock"; then
        echo "# waiting for another run to finish with $rootfs_cache" >&2
        flock "$rootfs_lock"
    fi
    if [[ ! -e $dir/.complete ]]; then
        echo "# building the $rootfs_suite root file system in $dir (debootstrap from $mirror)" >&2
        rm -rf -- "$dir.tmp"
        nice debootstrap --variant=minbase --include="$rootfs_include" "$rootfs_suite" "$dir.tmp" "$mirror" \
            >"$rootfs_cache/debootstrap.log" 2>&1 || {
            tail -n 20 "$rootfs_cache/debootstrap.log" >&2
            exec {rootfs_lock}>&-
            return 1
        }
        # A fixed machine id keeps every boot from a copy of the tree alike, and the zone
        # stays UTC so the timer check proves the zone comes from the timer, not the machine.
        printf 'rankings-test\n' >"$dir.tmp/etc/hostname"
        ln -sf /usr/share/zoneinfo/Etc/UTC "$dir.tmp/etc/localtime"
        rm -rf -- "$dir"
        mv -- "$dir.tmp" "$dir"
        touch -- "$dir/.complete"
        # Trees made by an older key are stale; keep only this one.
        find "$rootfs_cache" -mindepth 1 -maxdepth 1 -type d -name "$rootfs_suite-*" ! -path "$dir" \
            -exec rm -rf -- {} +
    fi
    exec {rootfs_lock}>&-
    printf '%s\n' "$dir"
}

# rootfs_copy TREE DEST: a copy of the cached TREE, made while no build can
# replace or delete it.
rootfs_copy() {
    flock --shared "$rootfs_cache/.lock" cp -a --reflink=auto -- "$1" "$2"
}
