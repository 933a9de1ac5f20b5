# shellcheck shell=bash
# Sourced by the test scripts that need what a fresh machine may lack: the one way they install
# Debian packages. Nothing here skips: what cannot be installed is an error. Everything these
# print goes to stderr, so they work inside $(...).
#
#   install_missing NEED=PACKAGE...    installs each PACKAGE whose NEED is missing: a command on
#                                      PATH, or a path (one with a /) that must exist
#   install_packages PACKAGE...        apt-get update, then installs them without recommends

install_packages() {
    # Some packages' maintainer scripts start their daemon (prometheus, node_exporter): a test
    # machine runs only what its tests start. An existing policy is the machine's own and stays.
    local own_policy= status
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
    fi
    apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >&2
    status=$?
    [[ -z $own_policy ]] || rm -f /usr/sbin/policy-rc.d
    return "$status"
}

need_met() {
    if [[ $1 == */* ]]; then [[ -e $1 ]]; else command -v "$1" >/dev/null; fi
}

install_missing() {
    local pair packages=()
    for pair in "$@"; do
        need_met "${pair%%=*}" || packages+=("${pair#*=}")
    done
    ((${#packages[@]})) || return 0
    install_packages "${packages[@]}" || return
    for pair in "$@"; do
        need_met "${pair%%=*}" || { echo "${pair%%=*} is still missing after installing ${pair#*=}" >&2; return 2; }
    done
}
