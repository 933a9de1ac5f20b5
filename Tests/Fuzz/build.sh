#!/usr/bin/env bash
# Builds every fuzz target into one program, .build-fuzz/fuzz-all, and links .build-fuzz/NAME to
# it for each file Tests/Fuzz/Targets/NAME.swift: run as NAME, the program is that target. One
# optimised whole-module compile of the library (every source, found afresh, so new files join
# in), the references and the targets, with libFuzzer and AddressSanitizer, instead of one per
# target: ten compiles took about 11 minutes of CPU, a third of a fresh CI run's time.
#
# Each target keeps its own `@_cdecl("LLVMFuzzerTestOneInput")` entry, so its file reads as a
# libFuzzer target of its own; the copy compiled here names that entry rk_fuzz_NAME (a
# `#sourceLocation` keeps diagnostics and traces on the original file), and a generated
# LLVMFuzzerInitialize picks the entry by the name the program was run as.
# usage: Tests/Fuzz/build.sh [NAME...]   (the names are checked; everything is built)
# FUZZ_OPTIMIZE: the compile's optimisation, default -O (campaigns). .ci/run's smoke run builds
# with -Onone: a third of the CPU, a sixth of the executions a second, in a run of seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build-fuzz
mkdir -p "$out/gen"
swiftc=${SWIFTC:-swiftc}
optimize=${FUZZ_OPTIMIZE:--O}
[[ $optimize == -O || $optimize == -Onone ]] || { echo "build.sh: FUZZ_OPTIMIZE is -O or -Onone, not $optimize" >&2; exit 64; }
command -v "$swiftc" >/dev/null || swiftc=/opt/swift/usr/bin/swiftc
mapfile -t names < <(cd Tests/Fuzz/Targets && ls *.swift | sed 's/\.swift$//')
for name in "$@"; do
    [[ -f Tests/Fuzz/Targets/$name.swift ]] || { echo "build.sh: no target $name in Tests/Fuzz/Targets" >&2; exit 64; }
done
mapfile -t library < <(find Sources/RankingsKit -name '*.swift' | LC_ALL=C sort)
# Our C target (the SIMD kernels, ISA-L's loader), compiled with the same sanitizers.
mapfile -t csources < <(find Sources/CKernels -name '*.c' | LC_ALL=C sort)
mapfile -t cheaders < <(find Sources/CKernels -name "*.h" -o -name "*.modulemap" | LC_ALL=C sort)
inputs=("${library[@]}" "${csources[@]}" "${cheaders[@]}" Tests/Fuzz/Reference/*.swift Tests/Fuzz/Targets/*.swift "$0")
program=$out/fuzz-all
link_targets() {
    for name in "${names[@]}"; do ln -sfn fuzz-all "$out/$name"; done
}
# Up to date: built after every input changed, from the same list of files, as optimised.
list=$out/fuzz-all.inputs
if [ -x "$program" ] && [ -z "$(find "${inputs[@]}" -newer "$program" | head -1)" ] \
    && printf '%s\n' "${inputs[@]}" "$optimize" | cmp -s - "$list"; then
    link_targets
    exit 0
fi

rm -f "$out"/gen/*.swift
{
    echo '// Made by Tests/Fuzz/build.sh: every target, chosen by the name the program runs as.'
    echo '#include <stdint.h>'
    echo '#include <stdio.h>'
    echo '#include <stdlib.h>'
    echo '#include <string.h>'
    for name in "${names[@]}"; do echo "int rk_fuzz_$name(const uint8_t *data, intptr_t size);"; done
    echo 'static const struct { const char *name; int (*entry)(const uint8_t *, intptr_t); } targets[] = {'
    for name in "${names[@]}"; do echo "    {\"$name\", rk_fuzz_$name},"; done
    echo '};'
    echo 'static int (*chosen)(const uint8_t *, intptr_t);'
    echo 'int LLVMFuzzerInitialize(int *argc, char ***argv) {'
    echo '    (void)argc;'
    echo '    const char *self = strrchr((*argv)[0], (int)'"'/'"');'
    echo '    self = self ? self + 1 : (*argv)[0];'
    echo '    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {'
    echo '        if (strcmp(self, targets[i].name) == 0) { chosen = targets[i].entry; return 0; }'
    echo '    }'
    echo '    fprintf(stderr, "%s: not the name of a fuzz target: run .build-fuzz/NAME for NAME in Tests/Fuzz/Targets\n", self);'
    echo '    exit(2);'
    echo '}'
    echo 'int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return chosen(data, (intptr_t)size); }'
} >"$out/gen/dispatch.c"
for name in "${names[@]}"; do
    target=Tests/Fuzz/Targets/$name.swift
    if (($(grep -c '^@_cdecl("LLVMFuzzerTestOneInput")$' "$target") != 1)); then
        echo "build.sh: $target must have exactly one line @_cdecl(\"LLVMFuzzerTestOneInput\") before its entry function" >&2
        exit 65
    fi
    { echo "#sourceLocation(file: \"$target\", line: 1)"
      sed -e '/^@_cdecl("LLVMFuzzerTestOneInput")$/{' -e "s//@_cdecl(\"rk_fuzz_$name\")/" -e 'n' \
          -e "s/func [A-Za-z_][A-Za-z0-9_]*(/func rk_fuzz_$name(/" -e '}' "$target"
    } >"$out/gen/$name.target.swift"
done

clang=$(dirname "$(command -v "$swiftc")")/clang
objects=()
for c in "${csources[@]}" "$out/gen/dispatch.c"; do
    object="$out/gen/$(basename "$c" .c).o"
    nice "$clang" -c -O2 -g -fsanitize=address,fuzzer-no-link -Werror -I Sources/CKernels/include "$c" -o "$object"
    objects+=("$object")
done
nice "$swiftc" -sanitize=fuzzer,address -parse-as-library "$optimize" -swift-version 6 -warnings-as-errors \
    -num-threads "$(nproc)" -module-name FuzzTargets -use-ld=lld -I Sources/CZlib -I Sources/CLinux -lz \
    -I Sources/CKernels/include "${objects[@]}" "${library[@]}" Tests/Fuzz/Reference/*.swift "$out"/gen/*.target.swift \
    -o "$program"
printf '%s\n' "${inputs[@]}" "$optimize" >"$list"
link_targets
