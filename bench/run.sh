#!/usr/bin/env bash
# The speed benchmark behind the figures in bench/README.md.
#
# Builds the release binary that ships (jobs/build-binary.sh: the Swift runtime
# linked in, stripped), makes deterministic exports under bench/data/
# (git-ignored, reused when present), installs the other tools it compares
# against, then times every tool on the same input, alternating tools within
# each round so that a slow moment of the machine does not land on one tool.
# Every tool's answer is checked against bench/reference.py before any
# number is printed: a fast wrong answer is not a result.
#
# Usage: bench/run.sh [--size 1G] [--runs 5] [--jq-runs 1] [--shards 8]
#                     [--threads 2] [--seed 1] [--big] [--no-reference]
#                     [--scratch-path DIR] [--no-build] [--without-rankings]
#                     [--binary PATH] [--baseline PATH] [--baseline-ref REF]
#                     [--small-files N] [--typed-events N[,N...]] [--typed-only]
#                     [--levels LEVEL[,LEVEL...]]
#
# --scratch-path DIR times a plain `swift build -c release` in DIR instead;
# --binary times that rankings without building one; --baseline adds rows for
# a second rankings (an earlier version, say) on the plain input, checked and
# timed in the same rounds. --baseline-ref REF builds that commit's shipped
# binary (jobs/build-binary.sh in a temporary git worktree, cached under
# bench/data/) and uses it as the baseline. The whole table of BENCHMARKS.md:
#
#   bench/run.sh --runs 5 --jq-runs 1 --baseline-ref 81d61ed
#
# --typed-events (default 1000000; 0 for none) adds, for each count, the same
# events as typed Firestore Document lines as the fetch hook writes them
# (generate.py --typed) and as flat NDJSON, through rankings and DuckDB;
# --typed-only times those rows alone.
#
# --levels (say portable,avx2,avx512) times the CPU levels instead (RANKINGS_CPU):
# the plain export and each --typed-events count of typed lines through the same
# binary at each level, at --threads and (plain) at 1, with the --baseline at 1
# thread, DuckDB and `wc -l`, then each level against the first, the floor and
# DuckDB. BENCHMARKS.md's levels table:
#
#   bench/run.sh --levels avx512,avx2,portable --runs 5 --baseline-ref 81d61ed
#
# Every row is timed in wall seconds and in CPU seconds (user + sys), which a
# busy machine disturbs far less.
set -euo pipefail

size=1G runs=5 jq_runs=1 shards=8 threads=2 seed=1
big=no reference=yes scratch= build=yes with_rankings=yes binary= baseline= baseline_ref=
small_files=2000 typed_events=1000000 typed_only=no levels=
computed_at=2026-01-01T00:00:00Z

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jq-runs) jq_runs=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --big) big=yes; shift ;;
    --no-reference) reference=no; shift ;;
    --scratch-path) scratch=$2; shift 2 ;;
    --no-build) build=no; shift ;;
    --binary) binary=$2; build=no; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --baseline-ref) baseline_ref=$2; shift 2 ;;
    --small-files) small_files=$2; shift 2 ;;
    --typed-events) typed_events=$2; shift 2 ;;
    --typed-only) typed_only=yes; shift ;;
    --levels) levels=$2; shift 2 ;;
    # For trying the harness while the Swift tool does not build.
    --without-rankings) with_rankings=no; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown option $1" >&2; usage 64 >&2 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
bench=$root/bench
data=$bench/data
mkdir -p "$data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log() { printf '== %s\n' "$*" >&2; }

# ---- tools -----------------------------------------------------------------
apt_updated=no
apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  if [ $apt_updated = no ]; then $sudo apt-get update -q >&2; apt_updated=yes; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@" >&2
}
command -v jq >/dev/null || apt_install jq
command -v node >/dev/null || apt_install nodejs
# GNU time, not the shell keyword: it reports the peak RSS.
[ -x /usr/bin/time ] || apt_install time
# igzip (Debian's isal): the floor for gzip inputs, ISA-L's own command-line inflater.
command -v igzip >/dev/null || apt_install isal
venv=$data/venv
if ! "$venv/bin/python" -c 'import duckdb' 2>/dev/null; then
  python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
  "$venv/bin/pip" install -q duckdb >&2
fi

if [ -n "$binary" ]; then
  rankings=$binary
elif [ -n "$scratch" ]; then
  rankings=$root/$scratch/release/rankings
  if [ $with_rankings = yes ] && [ $build = yes ]; then
    log "building rankings (release, scratch path $scratch)"
    (cd "$root" && swift build -c release --scratch-path "$scratch" >&2)
  fi
else
  rankings=$root/.build-release/self-contained/rankings
  if [ $with_rankings = yes ] && [ $build = yes ]; then
    log "building rankings (self-contained release, jobs/build-binary.sh)"
    "$root/jobs/build-binary.sh" > /dev/null
  fi
fi

if [ -n "$baseline_ref" ]; then
  sha=$(git -C "$root" rev-parse --short=12 "$baseline_ref^{commit}")
  baseline=$data/baseline-$sha/rankings
  if [ ! -x "$baseline" ]; then
    log "building the baseline $baseline_ref ($sha) with its jobs/build-binary.sh"
    tree=$data/baseline-$sha.src
    rm -rf "$tree" && mkdir -p "$tree"
    git -C "$root" archive "$sha" | tar -x -C "$tree"
    built=$("$tree/jobs/build-binary.sh")
    mkdir -p "$(dirname "$baseline")" && cp "$built" "$baseline"
    rm -rf "$tree"
  fi
fi

# ---- the contenders' table ---------------------------------------------------
# Parallel arrays, one entry per timed command. check=byte compares the
# output with the expected document (the plain file's, or the row's own);
# check=agree allows other tie orders; check=none is for floors and for
# changed semantics (dedupe). A row's input size and expected document are
# row_size and row_expected when set, else the main export's.
groups=() labels=() commands=() counts=() checks=() notes=() sizes=() expects=()
add() {  # GROUP LABEL RUNS CHECK NOTE COMMAND
  groups+=("$1") labels+=("$2") counts+=("$3") checks+=("$4") notes+=("$5") commands+=("$6")
  sizes+=("${row_size:-}") expects+=("${row_expected:-}")
}
q() { printf '%q' "$1"; }
# --levels: rankings on FILE at each level, at each of THREADS (the first without a label of its own).
add_levels() {  # GROUP FILE THREADS...
  local group=$1 file=$2 level t
  shift 2
  for t in "$@"; do
    for level in ${levels//,/ }; do
      add "$group" "rankings aggregate$([ "$t" = "$1" ] || echo " --threads $t"), RANKINGS_CPU=$level" "$runs" byte \
        "$([ "$t" = "$1" ] && echo "--threads $t")" \
        "env RANKINGS_CPU=$level $(q "$rankings") aggregate -q --threads $t --computed-at $computed_at $(q "$file")"
    done
  done
}
duck="$(q "$venv/bin/python") $(q "$bench/duckdb_top.py") --threads $threads"

# ---- data ------------------------------------------------------------------
# Named by size and seed: the generator is deterministic, so a file that
# exists is the file this command would make.
make_export() {  # SIZE -> path
  local file=$data/events-$1-seed$seed.ndjson
  if [ ! -s "$file" ]; then
    log "generating $file"
    python3 "$bench/generate.py" --bytes "$1" --seed "$seed" -o "$file.part" >&2
    mv "$file.part" "$file"
  fi
  printf '%s\n' "$file"
}
if [ $typed_only = no ]; then
plain=$(make_export "$size")
bytes=$(stat -c %s "$plain")
if [ -z "$levels" ]; then
if [ ! -s "$plain.gz" ]; then
  log "compressing $plain.gz"
  gzip -6 -c "$plain" > "$plain.gz.part" && mv "$plain.gz.part" "$plain.gz"
fi
shard_dir=$plain.shards-$shards
if [ ! -d "$shard_dir" ]; then
  log "splitting into $shards gzip shards in $shard_dir"
  mkdir -p "$shard_dir.part"
  split -n "l/$shards" -d -a 3 --additional-suffix=.ndjson "$plain" "$shard_dir.part/part-"
  ls "$shard_dir.part"/*.ndjson | xargs -P "$(nproc)" -n 1 gzip -6
  mv "$shard_dir.part" "$shard_dir"
fi
shard_files=("$shard_dir"/*.ndjson.gz)
# gzip -1, what a nightly export job that wants speed writes: inflating it is
# the larger share of the work, so it shows the inflater most.
if [ ! -s "$plain.1.gz" ]; then
  log "compressing $plain.1.gz (gzip -1)"
  gzip -1 -c "$plain" > "$plain.1.gz.part" && mv "$plain.1.gz.part" "$plain.1.gz"
fi
# Many small files: the first 100 MB in $small_files pieces (per-file costs).
small_src=$(make_export 100M)
small_dir=$small_src.small-$small_files
if [ ! -d "$small_dir" ]; then
  log "splitting $small_src into $small_files files in $small_dir"
  mkdir -p "$small_dir.part"
  split -n "l/$small_files" -d -a 5 --additional-suffix=.ndjson "$small_src" "$small_dir.part/part-"
  mv "$small_dir.part" "$small_dir"
fi
small_bytes=$(stat -c %s "$small_src")
fi  # levels

# ---- what the answers must be ------------------------------------------------
expected=$work/expected.json
ours_plain="$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$plain")"
if [ $with_rankings = yes ]; then
  bash -c "$ours_plain" > "$work/ours.json"
fi
if [ $reference = yes ]; then
  log "computing the expected document with bench/reference.py"
  pretty=()
  # The reference prints whichever layout the tool prints, so the check can
  # be byte for byte.
  # (The pretty layout starts with "{\n"; $(...) drops the newline.)
  if [ $with_rankings = yes ] && [ "$(head -c 2 "$work/ours.json")" = "{" ]; then pretty=(--pretty); fi
  python3 "$bench/reference.py" "${pretty[@]}" --computed-at "$computed_at" "$plain" > "$expected"
  if [ $with_rankings = yes ]; then
    cmp "$expected" "$work/ours.json" >&2 || { echo "run.sh: rankings differs from reference.py" >&2; exit 1; }
    log "rankings output is byte-identical to reference.py"
  fi
elif [ $with_rankings = yes ]; then
  cp "$work/ours.json" "$expected"
else
  echo "run.sh: --no-reference needs rankings to say what is right" >&2; exit 64
fi

# ---- the contenders ----------------------------------------------------------
plain_label="NDJSON $size"
if [ -n "$levels" ]; then
  add_levels "$plain_label" "$plain" "$threads" $([ "$threads" = 1 ] || echo 1)
  if [ -n "$baseline" ]; then
    add "$plain_label" "baseline rankings aggregate --threads 1" "$runs" byte "$(q "$baseline")" \
      "$(q "$baseline") aggregate -q --threads 1 --computed-at $computed_at $(q "$plain")"
  fi
  add "$plain_label" "DuckDB read_ndjson" "$runs" agree \
    "duckdb $("$venv/bin/python" -c 'import duckdb; print(duckdb.__version__)'), $threads threads" "$duck $(q "$plain")"
  add "$plain_label" "wc -l (floor)" "$runs" none "" "wc -l $(q "$plain")"
else
shards_q=$(for f in "${shard_files[@]}"; do printf '%q ' "$f"; done)
node_cf="node $(q "$bench/cloud-function.js")"
if [ $with_rankings = yes ]; then
  add "$plain_label" "rankings aggregate" "$runs" byte "--threads $threads" "$ours_plain"
  add "$plain_label" "rankings aggregate --threads 1" "$runs" byte "" \
    "$(q "$rankings") aggregate -q --threads 1 --computed-at $computed_at $(q "$plain")"
  if [ -n "$baseline" ]; then
    add "$plain_label" "baseline rankings aggregate" "$runs" byte "--threads $threads; $(q "$baseline")" \
      "$(q "$baseline") aggregate -q --threads $threads --computed-at $computed_at $(q "$plain")"
    add "$plain_label" "baseline rankings aggregate --threads 1" "$runs" byte "" \
      "$(q "$baseline") aggregate -q --threads 1 --computed-at $computed_at $(q "$plain")"
  fi
  # What the SIMD kernels contribute: the same binary with none.
  add "$plain_label" "rankings aggregate --threads 1, RANKINGS_CPU=portable" "$runs" byte "no SIMD kernel" \
    "env RANKINGS_CPU=portable $(q "$rankings") aggregate -q --threads 1 --computed-at $computed_at $(q "$plain")"
  add "$plain_label" "rankings aggregate < stdin" "$runs" byte "a pipe: read ahead on a second thread" \
    "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at - < $(q "$plain")"
  add "$plain_label" "rankings aggregate --stats" "$runs" byte "" \
    "$(q "$rankings") aggregate -q --threads $threads --stats $(q "$work/stats.ndjson") --computed-at $computed_at $(q "$plain")"
  if [ -n "$baseline" ]; then
    add "$plain_label" "baseline rankings aggregate < stdin" "$runs" byte "" \
      "$(q "$baseline") aggregate -q --threads $threads --computed-at $computed_at - < $(q "$plain")"
    add "$plain_label" "baseline rankings aggregate --stats" "$runs" byte "" \
      "$(q "$baseline") aggregate -q --threads $threads --stats $(q "$work/stats-baseline.ndjson") --computed-at $computed_at $(q "$plain")"
  fi
  # --dedupe device arrives later; a binary that does not know it says 64.
  set +e
  "$rankings" aggregate -q --dedupe device --computed-at "$computed_at" "$bench/../sample-data/rating_events.ndjson" >/dev/null 2>&1
  dedupe_status=$?
  set -e
  if [ $dedupe_status = 0 ]; then
    add "$plain_label" "rankings aggregate --dedupe device" "$runs" none "other semantics: not compared" \
      "$(q "$rankings") aggregate -q --dedupe device --threads $threads --computed-at $computed_at $(q "$plain")"
    if [ -n "$baseline" ]; then
      add "$plain_label" "baseline rankings aggregate --dedupe device" "$runs" none "" \
        "$(q "$baseline") aggregate -q --dedupe device --threads $threads --computed-at $computed_at $(q "$plain")"
    fi
  else
    add "$plain_label" "rankings aggregate --dedupe device" 0 none "skipped: exit $dedupe_status" ":"
  fi
fi
add "$plain_label" "node cloud-function.js" "$runs" agree "Node $(node --version)" "$node_cf $(q "$plain")"
add "$plain_label" "DuckDB read_ndjson" "$runs" agree \
  "duckdb $("$venv/bin/python" -c 'import duckdb; print(duckdb.__version__)'), $threads threads" "$duck $(q "$plain")"
add "$plain_label" "jq" "$jq_runs" agree "$(jq --version)" "jq -n -c -f $(q "$bench/tally.jq") $(q "$plain")"
add "$plain_label" "wc -l (floor)" "$runs" none "" "wc -l $(q "$plain")"

gz_label="gzip $size"
if [ $with_rankings = yes ]; then
  add "$gz_label" "rankings aggregate" "$runs" byte "--threads $threads" \
    "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$plain.gz")"
fi
add "$gz_label" "node cloud-function.js" "$runs" agree "" "$node_cf $(q "$plain.gz")"
add "$gz_label" "DuckDB read_ndjson" "$runs" agree "" "$duck $(q "$plain.gz")"
add "$gz_label" "gzip -dc (floor)" "$runs" none "" "gzip -dc $(q "$plain.gz")"

gz1_label="gzip -1 $size"
if [ $with_rankings = yes ]; then
  add "$gz1_label" "rankings aggregate" "$runs" byte "--threads $threads; $("$rankings" --version | sed -n 's/^gzip: //p')" \
    "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$plain.1.gz")"
  add "$gz1_label" "rankings aggregate, RANKINGS_INFLATE=zlib" "$runs" byte "zlib's inflate" \
    "env RANKINGS_INFLATE=zlib $(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$plain.1.gz")"
  if [ -n "$baseline" ]; then
    add "$gz1_label" "baseline rankings aggregate" "$runs" byte "" \
      "$(q "$baseline") aggregate -q --threads $threads --computed-at $computed_at $(q "$plain.1.gz")"
  fi
fi
add "$gz1_label" "igzip -dc (floor)" "$runs" none "$(igzip --version 2>&1 | head -n 1)" "igzip -dc $(q "$plain.1.gz")"
add "$gz1_label" "gzip -dc" "$runs" none "" "gzip -dc $(q "$plain.1.gz")"

sh_label="$shards gzip shards"
if [ $with_rankings = yes ]; then
  add "$sh_label" "rankings aggregate" "$runs" byte "--threads $threads" \
    "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $shards_q"
fi
add "$sh_label" "DuckDB read_ndjson" "$runs" agree "" "$duck $shards_q"
add "$sh_label" "gzip -dc (floor, 1 core)" "$runs" none "" "gzip -dc $shards_q"

small_label="$small_files small files"
if [ $with_rankings = yes ]; then
  add "$small_label" "rankings aggregate" "$runs" none "100M in $small_files files" \
    "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$small_dir")"
  if [ -n "$baseline" ]; then
    add "$small_label" "baseline rankings aggregate" "$runs" none "" \
      "$(q "$baseline") aggregate -q --threads $threads --computed-at $computed_at $(q "$small_dir")"
  fi
fi
for i in "${!groups[@]}"; do
  if [ "${groups[$i]}" = "$small_label" ]; then sizes[$i]=$small_bytes; fi
done
fi  # levels
fi  # typed_only

# ---- typed lines -----------------------------------------------------------------
# The same events as typed Firestore Document lines, as the nightly fetch hook
# writes them (generate.py --typed), and as flat NDJSON: both must give
# reference.py's document of the flat file.
typed_files=()
make_events() {  # N [--typed] -> path
  local file=$data/events-$1-seed$seed${2:+.typed}.ndjson
  if [ ! -s "$file" ]; then
    log "generating $file"
    python3 "$bench/generate.py" --events "$1" --seed "$seed" ${2:+--typed} -o "$file.part" >&2
    mv "$file.part" "$file"
  fi
  printf '%s\n' "$file"
}
for n in ${typed_events//,/ }; do
  [ "$n" -gt 0 ] || continue
  flat=$(make_events "$n") typed=$(make_events "$n" --typed)
  typed_files+=("$flat" "$typed")
  row_expected=$work/expected-$n.json
  # Indented, as the binary writes its document by default.
  python3 "$bench/reference.py" --pretty --computed-at "$computed_at" "$flat" > "$row_expected"
  label="$(awk -v n="$n" 'BEGIN { printf(n % 1000000 ? "%d k" : "%d M", n % 1000000 ? n / 1000 : n / 1000000) }') events, typed lines and flat"
  row_size=$(stat -c %s "$typed")
  if [ -n "$levels" ]; then
    label="${label%, typed lines and flat}, typed lines"
    add_levels "$label" "$typed" "$threads"
    add "$label" "DuckDB read_ndjson" "$runs" agree "$threads threads, nested struct columns" "$duck --typed $(q "$typed")"
    add "$label" "wc -l (floor)" "$runs" none "" "wc -l $(q "$typed")"
    row_size= row_expected=
    continue
  fi
  if [ $with_rankings = yes ]; then
    add "$label" "rankings aggregate, typed lines" "$runs" byte "--threads $threads; as the fetch hook writes them" \
      "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$typed")"
    add "$label" "rankings aggregate --threads 1, typed lines" "$runs" byte "" \
      "$(q "$rankings") aggregate -q --threads 1 --computed-at $computed_at $(q "$typed")"
  fi
  add "$label" "DuckDB read_ndjson, typed lines" "$runs" agree "$threads threads, nested struct columns" "$duck --typed $(q "$typed")"
  row_size=$(stat -c %s "$flat")
  if [ $with_rankings = yes ]; then
    add "$label" "rankings aggregate, flat NDJSON" "$runs" byte "--threads $threads" \
      "$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$flat")"
    add "$label" "rankings aggregate --threads 1, flat NDJSON" "$runs" byte "" \
      "$(q "$rankings") aggregate -q --threads 1 --computed-at $computed_at $(q "$flat")"
  fi
  add "$label" "DuckDB read_ndjson, flat NDJSON" "$runs" agree "$threads threads" "$duck $(q "$flat")"
  row_size= row_expected=
done

# ---- timing ------------------------------------------------------------------
results=$work/results.tsv
: > "$results"
measure() {  # INDEX: run once, append one TSV record
  local i=$1 out=$work/out-$1.json start end
  # What is not checked goes nowhere: a floor (`igzip -dc`) that wrote its gigabyte to a
  # file would be timed writing it too, and look slower than it inflates.
  [ "${checks[$i]}" = none ] && out=/dev/null
  start=$(date +%s.%N)
  # exec: GNU time measures the tool itself, not a shell waiting for it.
  /usr/bin/time -f '%M %U %S' -o "$work/rss" bash -c "exec ${commands[$i]}" > "$out"
  end=$(date +%s.%N)
  read -r rss user sys < <(tail -n 1 "$work/rss")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${groups[$i]}" "${labels[$i]}" "${sizes[$i]:-$bytes}" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')" \
    "$rss" "${notes[$i]}" "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" >> "$results"
}
check() {  # INDEX: the first run's answer must be right
  local i=$1 out=$work/out-$1.json expected=${expects[$i]:-$expected}
  case ${checks[$i]} in
    byte) cmp -s "$out" "$expected" || { echo "run.sh: ${groups[$i]} / ${labels[$i]}: output differs from the expected document" >&2; exit 1; } ;;
    agree) python3 "$bench/agree.py" "$expected" "$out" || { echo "run.sh: ${groups[$i]} / ${labels[$i]} disagrees" >&2; exit 1; } ;;
  esac
}

log "warming the page cache"
if [ $typed_only = no ] && [ -n "$levels" ]; then
  cat "$plain" > /dev/null
elif [ $typed_only = no ]; then
  cat "$plain" "$plain.gz" "$plain.1.gz" "${shard_files[@]}" "$small_dir"/* > /dev/null
fi
cat "${typed_files[@]}" /dev/null > /dev/null
for ((round = 1; round <= runs || round <= jq_runs; round++)); do
  log "round $round"
  for i in "${!commands[@]}"; do
    if [ "${counts[$i]}" = 0 ]; then
      if [ $round = 1 ]; then
        printf '%s\t%s\t%s\t-\t0\t%s\t-\n' "${groups[$i]}" "${labels[$i]}" "$bytes" "${notes[$i]}" >> "$results"
      fi
      continue
    fi
    [ "$round" -le "${counts[$i]}" ] || continue
    measure "$i"
    if [ $round = 1 ]; then check "$i"; fi
  done
done

if [ $big = yes ] && [ $with_rankings = yes ] && [ $typed_only = no ]; then
  big_file=$(make_export 4G)
  log "memory check on $big_file"
  big_bytes=$(stat -c %s "$big_file")
  cat "$big_file" > /dev/null
  groups+=("NDJSON 4G") labels+=("rankings aggregate") notes+=("memory check, 1 run")
  commands+=("$(q "$rankings") aggregate -q --threads $threads --computed-at $computed_at $(q "$big_file")")
  bytes=$big_bytes measure $((${#commands[@]} - 1))
fi

echo
[ $typed_only = yes ] || echo "Input: $plain ($bytes bytes, seed $seed); $runs runs per tool unless noted;"
echo "$(nproc) cores; every answer checked against bench/reference.py."
echo
python3 "$bench/table.py" ${levels:+--levels} "$results"
