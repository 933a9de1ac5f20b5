# Sourced by the scripts beside it: Google's Firestore emulator and the virtual environments
# the tests use, each made when missing (Tests/packages.sh, Tests/firestore/venv.sh). Nothing
# here skips: a missing component is an error.
#
#   firestore_venv      prints the python of a venv with google-cloud-firestore 2.34.1
#   leveldb_export_venv prints the python of a venv with leveldb-export (pins protobuf 3, so
#                       it cannot share the one above)
#   emulator_start DIR  starts the emulator on a free port in 20000-40000, logging into DIR;
#                       sets EMULATOR_HOST and EMULATOR_PGID; emulator_stop ends its group

# shellcheck source=Tests/packages.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../packages.sh"

firestore_venv() (
    # shellcheck source=Tests/firestore/venv.sh
    source "$(dirname -- "${BASH_SOURCE[0]}")/../firestore/venv.sh"
    echo "$venv/bin/python"
)

leveldb_export_venv() {
    python_venv "$(test_cache)/leveldb-export-venv" \
        'from importlib.metadata import version; import leveldb_export; assert version("leveldb-export") == "0.1.1"' \
        leveldb-export==0.1.1
}

emulator_start() {
    local log=$1/emulator.log
    if ! command -v gcloud >/dev/null || ! command -v java >/dev/null; then
        echo "the Firestore emulator needs gcloud and java (google-cloud-cli and its firestore emulator component, Java 17)" >&2
        return 1
    fi
    local port
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        port=$((20000 + RANDOM % 20000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
    done
    setsid gcloud emulators firestore start --host-port="127.0.0.1:$port" >"$log" 2>&1 &
    EMULATOR_PGID=$!
    EMULATOR_HOST=127.0.0.1:$port
    for _ in $(seq 1 120); do
        if grep -q "Dev App Server is now running" "$log"; then return 0; fi
        if ! kill -0 "$EMULATOR_PGID" 2>/dev/null; then break; fi
        sleep 1
    done
    echo "the Firestore emulator did not start; its log:" >&2
    cat "$log" >&2
    return 1
}

emulator_stop() {
    if [[ -n ${EMULATOR_PGID:-} ]]; then
        kill -- "-$EMULATOR_PGID" 2>/dev/null || true
        wait "$EMULATOR_PGID" 2>/dev/null || true
        EMULATOR_PGID=
    fi
}
