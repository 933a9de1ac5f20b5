# shellcheck shell=bash
# Sourced in the checkout's root by the run.sh of the suites that need Google's emulator:
#   emulator_suite NAME [RANKINGS]   checks the rankings executable (when named), gcloud and Java
#                                    (Tests/simulator, Tests/image)
#   firestore_suite NAME RANKINGS    the same, then makes the virtual environment holding Google's
#                                    client (Tests/firestore/venv.sh: sets `venv`) and exports
#                                    TEST_RANKINGS, the job's absolute path (Tests/firestore-steps,
#                                    -loop, -night)
# Each exits 2, naming the suite, when something is missing.
emulator_suite() {
    local name=$1 rankings=${2:-} tool
    if [[ $# -gt 1 && ! -x $rankings ]]; then
        echo "Tests/$name/run.sh: no rankings executable at $rankings (run swift build first)" >&2
        exit 2
    fi
    for tool in gcloud java; do
        if ! command -v "$tool" >/dev/null; then
            echo "Tests/$name/run.sh: $tool is missing (Google's Firestore emulator needs gcloud and Java)" >&2
            exit 2
        fi
    done
}

firestore_suite() {
    emulator_suite "$1" "$2"
    # shellcheck source=Tests/firestore/venv.sh
    source Tests/firestore/venv.sh
    export TEST_RANKINGS
    TEST_RANKINGS=$(realpath -- "$2")
}
