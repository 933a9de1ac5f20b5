# shellcheck shell=bash
# Sourced by the test scripts that need what a fresh machine may lack: the one way they install
# Debian packages and make Python virtual environments. Nothing here skips: what cannot be
# installed is an error. Everything these print goes to stderr (python_venv prints its answer on
# stdout), so they work inside $(...).
#
#   install_missing NEED=PACKAGE...    installs each PACKAGE whose NEED is missing: a command on
#                                      PATH, or a path (one with a /) that must exist
#   install_packages PACKAGE...        apt-get update, then installs them without recommends
#   test_cache                         prints where the virtual environments live
#   python_venv DIR CHECK PIP_ARGS...  prints DIR/bin/python once the Python code CHECK passes in
#                                      it, after making DIR afresh with `pip install PIP_ARGS`
#                                      when it does not

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

# $RANKINGS_TEST_CACHE, else /var/cache/rankings-tests when writable (root, as in CI), else
# .build-firestore in the checkout (git-ignored).
test_cache() {
    if [[ -n ${RANKINGS_TEST_CACHE:-} ]]; then
        echo "$RANKINGS_TEST_CACHE"
    elif mkdir -p /var/cache/rankings-tests 2>/dev/null && [[ -w /var/cache/rankings-tests ]]; then
        echo /var/cache/rankings-tests
    else
        mkdir -p .build-firestore && echo "$PWD/.build-firestore"
    fi
}

python_venv() {
    local dir=$1 check=$2
    shift 2
    if [[ -x $dir/bin/python ]] && "$dir/bin/python" -c "$check" 2>/dev/null; then
        echo "$dir/bin/python"
        return
    fi
    install_missing python3=python3 || return
    # Debian splits venv (with ensurepip) out of python3.
    python3 -c 'import ensurepip, venv' 2>/dev/null || install_packages python3-venv || return
    echo "installing $* into $dir" >&2
    rm -rf -- "$dir"
    mkdir -p -- "$(dirname -- "$dir")"
    python3 -m venv "$dir" >&2 &&
        "$dir/bin/pip" install --quiet --disable-pip-version-check --no-input "$@" >&2 || return
    "$dir/bin/python" -c "$check" >&2 || { echo "$dir does not pass its check after installing $*" >&2; return 2; }
    echo "$dir/bin/python"
}
