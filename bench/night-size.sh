#!/bin/bash
# What a night costs at size against the Firestore simulator: full nights at 1 M and 10 M votes at
# 1, 4, 8 and 16 streams, an incremental night and the merge, the job on the snapshot (see
# night-size.py; about 90 minutes at the defaults, most of it one stream over 10 M votes).
#
#   bench/night-size.sh [--documents 1000000,10000000] [--streams 1,4,8,16] [--rate 4000]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x /usr/bin/time ]] || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q time >&2; }
swift build -c release --product rankings >&2
exec python3 bench/night-size.py "$(realpath .build/release/rankings)" "$@"
