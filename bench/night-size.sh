#!/bin/bash
# What a night costs at size against the Firestore simulator: full nights at 1 M and 10 M votes at
# 1, 4, 8 and 16 streams, seven incremental nights of 1 % changed on the first (the second a whole
# `rankings-night run` with the board's proof), the bytes each wrote and the disk the kept nights
# hold, the job on the snapshot (see night-size.py; about 95 minutes at the defaults, most of it
# one stream over 10 M votes: --skip-one-stream leaves it out).
#
#   bench/night-size.sh [--binary PATH] [--documents 1000000,10000000] [--streams 1,4,8,16]
#                       [--skip-one-stream] [--rate 4000] [--kept-nights 7] [--changed 1] [--no-whole-night]
#
# --binary PATH: measure with that `rankings` instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x /usr/bin/time ]] || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q time >&2; }
if [[ ${1:-} == --binary ]]; then
    binary=$(realpath "$2")
    shift 2
else
    swift build -c release --product rankings >&2
    binary=$(realpath .build/release/rankings)
fi
exec python3 bench/night-size.py "$binary" "$@"
