# shellcheck shell=bash
# Sourced by the Firestore suites' run.sh (Tests/firestore-steps, -loop, -night) in the checkout's
# root: `firestore_suite NAME RANKINGS` checks what every one of them needs (the rankings
# executable, gcloud and Java for Google's emulator), makes the virtual environment holding
# Google's client (Tests/firestore/venv.sh: sets `venv`) and exports TEST_RANKINGS, the job's
# absolute path. Exits 2, naming the suite, when something is missing.
firestore_suite() {
    local name=$1 rankings=$2 tool
    if [[ ! -x $rankings ]]; then
        echo "Tests/$name/run.sh: no rankings executable at $rankings (run swift build first)" >&2
        exit 2
    fi
    for tool in gcloud java; do
        if ! command -v "$tool" >/dev/null; then
            echo "Tests/$name/run.sh: $tool is missing (Google's Firestore emulator needs gcloud and Java)" >&2
            exit 2
        fi
    done
    # shellcheck source=Tests/firestore/venv.sh
    source Tests/firestore/venv.sh
    export TEST_RANKINGS
    TEST_RANKINGS=$(realpath -- "$rankings")
}
