#!/usr/bin/env bash
# Runs every libFuzzer target (test/fuzz) for SECONDS each (default 60):
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   scripts/fuzz.sh --list                    the targets, one per line
#
# TARGET: syn mlir pipeline idx checkpoint text plan ipu21 (the libFuzzer
# targets), diff and diff-train (the differential fuzzer, synpl-diff-fuzz:
# random L1 graphs, and one training step of random .syn classifiers,
# through the reference interpreter and the host, IPU and CUDA paths); all
# by default. The diff targets run from the normal tree (./build, built by
# scripts/build.sh), not the sanitizer tree: their seeds continue from
# build/fuzz/<target>/next-seed, and each failing program is reduced into
# build/fuzz/<target>/findings/ as a lit test candidate.
# Builds them in ./build-fuzz (SYNPL_FUZZ_BUILD_DIR; scripts/asan-tree.sh
# fuzz: clang, AddressSanitizer + UndefinedBehaviorSanitizer, coverage
# instrumentation of the whole project) the first time.
# Seeds: the examples and test inputs of each surface (MLIR and .syn files
# split at their `// -----` markers), small generated IDX and text files,
# the plan tables of compiled examples, the ipu21 program files of the
# tests' ipu21 graphs, and the committed regression inputs of
# test/fuzz/regressions/<target>/. The plan and ipu21 seeds are made by
# synplc and synpl-translate, built in the fuzz tree for those targets;
# SYNPL_FUZZ_SEED_TOOLS=DIR (the bin directory of another build, such as
# build/bin) takes both from DIR instead and builds neither. The corpus
# each run grows is kept in build-fuzz/fuzz/corpus/<target>; a crash, a
# sanitizer report or an input over 5 s is written to
# build-fuzz/fuzz/findings/<target>/ and makes the script exit non-zero.
# Prints the executions of each target (libFuzzer's
# stat::number_of_executed_units).
set -euo pipefail
all=(syn mlir pipeline idx checkpoint text plan ipu21 diff diff-train)
if [ "${1:-}" = --list ]; then
  printf '%s\n' "${all[@]}"
  exit 0
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

bash scripts/install-deps.sh
BUILD_DIR="${SYNPL_FUZZ_BUILD_DIR:-$root/build-fuzz}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
build=()
diff_status=0
declare -A ran
libfuzzer=()
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target '$t' (${all[*]})" >&2; exit 2; }
  if [ "$t" = diff ] || [ "$t" = diff-train ]; then
    # The differential fuzzer: the normal tree, a time budget, seeds that
    # continue where the last run stopped. Graphs lower under one tile
    # choice per batch in turn; every fourth batch (every third training
    # program) also runs on the CUDA interpreter.
    bash scripts/build.sh --target synpl-diff-fuzz >/dev/null
    dwork="$root/build/fuzz/$t"
    mkdir -p "$dwork/findings"
    first="$(cat "$dwork/next-seed" 2>/dev/null || echo 1000000)"
    flags=(--rotate-tiles --cuda-every=4)
    [ "$t" = diff-train ] && flags=(--kind=train --cuda-every=3)
    echo "== $t: ${seconds}s from seed $first"
    set +e
    "$root/build/bin/synpl-diff-fuzz" --seeds="$first:$((first + 100000000))" --time="$seconds" \
      --targets=host,ipu21,cuda "${flags[@]}" --reduce --out="$dwork/findings" \
      >"$dwork/$t.log" 2>&1
    status_t=$?
    set -e
    ran[$t]="$(grep -oE '^[0-9]+ (training )?programs' "$dwork/$t.log" | tail -1 | grep -oE '^[0-9]+' || echo 0)"
    echo $((first + ${ran[$t]})) >"$dwork/next-seed"
    if [ "$status_t" -ne 0 ]; then
      diff_status=1
      echo "fuzz.sh: $t found programs a target computes wrongly; see $dwork/$t.log and $dwork/findings" >&2
      grep -m5 '^seed [0-9]*: [a-z]' "$dwork/$t.log" >&2 || true
    fi
    continue
  fi
  libfuzzer+=("$t")
  build+=("synpl-fuzz-$t")
done
targets=("${libfuzzer[@]+"${libfuzzer[@]}"}")
if [ ${#targets[@]} -eq 0 ]; then
  echo
  printf '%-12s %14s\n' target programs
  for t in "${!ran[@]}"; do printf '%-12s %14s\n' "$t" "${ran[$t]}"; done
  exit $diff_status
fi
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "fuzz.sh: first building the fuzzing tree $BUILD_DIR (AddressSanitizer, UBSan and" \
       "coverage on every library: about 55 minutes on 2 cores, once; later runs reuse it)"
fi
bash scripts/asan-tree.sh "$BUILD_DIR" fuzz
# The plan target's seeds are compiled examples, the ipu21 target's
# translated graphs: they need synplc and synpl-translate too.
tools="${SYNPL_FUZZ_SEED_TOOLS:-$BUILD_DIR/bin}"
if [ -z "${SYNPL_FUZZ_SEED_TOOLS:-}" ]; then
  [[ " ${targets[*]} " == *" plan "* ]] && build+=(synplc)
  [[ " ${targets[*]} " == *" ipu21 "* ]] && build+=(synpl-translate)
fi
cmake --build "$BUILD_DIR" --target "${build[@]}"

work="$BUILD_DIR/fuzz"
seeds="$work/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
seed_tools=()
[ -x "$tools/synplc" ] && seed_tools+=(--synplc "$tools/synplc")
[ -x "$tools/synpl-translate" ] && seed_tools+=(--synpl-translate "$tools/synpl-translate")
python3 "$root/test/fuzz/make_seeds.py" "${seed_tools[@]}" "$root" "$seeds"

status=$diff_status
declare -A executed
for t in "${targets[@]}"; do
  bin="$BUILD_DIR/bin/synpl-fuzz-$t"
  [ -x "$bin" ] || { echo "fuzz.sh: no target '$t' (${all[*]})" >&2; exit 2; }
  corpus="$work/corpus/$t" findings="$work/findings/$t"
  mkdir -p "$corpus" "$findings"
  dirs=("$corpus" "$seeds/$t")
  [ -d "$root/test/fuzz/regressions/$t" ] && dirs+=("$root/test/fuzz/regressions/$t")
  dict=()
  [ -f "$seeds/$t.dict" ] && dict=(-dict="$seeds/$t.dict")
  max_len=65536
  [ "$t" = plan ] && max_len=131072 # a compiled plan's tables and strings
  log="$work/$t.log"
  echo "== $t: ${seconds}s"
  if ! ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0:allocator_may_return_null=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=4096 -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" "${dirs[@]}" \
        >"$log" 2>&1; then
    echo "fuzz.sh: $t found a crash, a sanitizer report or a slow input; see $log and $findings" >&2
    grep -m3 -E "ERROR|runtime error|SUMMARY|Timeout" "$log" >&2 || true
    status=1
  fi
  executed[$t]="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)"
done
echo
printf '%-12s %14s\n' target executions
total=0
for t in "${!ran[@]}"; do printf '%-12s %14s (programs)\n' "$t" "${ran[$t]}"; done
for t in "${targets[@]}"; do
  printf '%-12s %14s\n' "$t" "${executed[$t]}"
  total=$((total + ${executed[$t]:-0}))
done
printf '%-12s %14s\n' total "$total"
exit $status
