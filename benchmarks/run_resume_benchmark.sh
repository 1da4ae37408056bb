#!/usr/bin/env bash
# Resume (issue 29, item 2), side by side in one run on a generated SIZE x SIZE scene (default
# 4000), unetsmall, window 256, on one process of 2 threads writing a GeoTIFF and on 2 ranks
# of 1 thread writing a VRT in place:
#  - what keeping the journal costs an uninterrupted run: its wall time against BASE_GEODL's
#    when given (a GeoDL built from an earlier commit: without the journal, or with an older
#    one; each uninterrupted run of this build is followed by one of the base, the medians of 3
#    compared), and the seconds the journal's writes took (in the writing thread, beside the
#    model), of both;
#  - a new job's fixed cost, what every resume pays again: a 256 x 256 crop classified (the
#    median of 3 runs);
#  - a whole job killed with SIGKILL at 30, 60 and 90% of an uninterrupted run (the median of
#    3), then resumed: the time lost (killed run + resume - uninterrupted) against the time of
#    one block per rank (the uninterrupted run's seconds x ranks / blocks), and the outputs
#    compared byte for byte with the uninterrupted run's. The loss is split into the work in
#    flight at the kill (per rank, the time since its newest block's mark or the newest part of
#    the block after it, averaged over the ranks) and the restart (the rest). Each point is
#    killed and resumed REPEATS times (default 3), then its median loss is printed.
#    This machine's speed drifts by a block or more between runs a minute apart, so with
#    PAIRED=1 each kill also runs an uninterrupted job just before it, and its loss is given
#    against that run too (the median of those losses printed as well): the same quantity, with
#    the drift between the two runs only.
# LAYOUTS picks the setups (default "one two"; "one-vrt": one process writing a VRT in place).
# Usage: [REPEATS=N] [PAIRED=1] [LAYOUTS=...] benchmarks/run_resume_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt] [BASE_GEODL]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
source "$(dirname "$(realpath "$0")")/speed_model.sh"
build=$(realpath "${1:?usage: run_resume_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt] [BASE_GEODL]}")
size=${2:-4000}
base=${4:-}
repeats=${REPEATS:-3}
paired=${PAIRED:-0}
bench_work bench-resume
cd "$work"
echo "== $(nproc) cores, $cpu; unetsmall, window 256, overlap 25%, batch 4; ${size} x ${size} scene"
model=$(speed_model "$geodl" "${3:-}")
"$geodl" make-scene scene --size "$size" --seed 7 > /dev/null
args=(classify --model "$model" --input scene/scene_trn.tif --window 256 --overlap 25 --batch-size 4 --probabilities)
now() { date +%s.%N; }
seconds() { echo "$2 - $1" | bc; }
# layout NAME: the flags and the output of one process (one: .tif, one-vrt: .vrt) or 2 ranks
# (two: .vrt)
layout() {
  case $1 in
    one) flags=(--threads 2) ext=tif ranks=1 ;;
    one-vrt) flags=(--threads 2) ext=vrt ranks=1 ;;
    two) flags=(--threads 1 --nproc 2) ext=vrt ranks=2 ;;
    *) echo "unknown layout '$1' (one, one-vrt, two)"; exit 1 ;;
  esac
}
same() {  # same A B: every file of folder A in B, byte for byte
  local f
  for f in $(cd "$1" && find . -type f ! -name '*.gpkg' | sort); do cmp -s "$1/$f" "$2/$f" || { echo "DIFFERS: $2/$f"; return 1; }; done
}

median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
# journal_runs OUT: the runs of consecutive blocks marked in OUT's class journal, a line each:
# FIRST LAST NEWEST_MARK_TIME CARRY PART_WINDOWS PART_TIME (CARRY: 1 when the run's last block
# kept the blend's carry, without which the resume computes the row of windows above again;
# PART_WINDOWS and PART_TIME: the windows and the time of the newest part of the block after
# it, 0 0 without one). A first run's ranks compute contiguous bands from different blocks, so
# there is one run per rank that marked a block.
journal_runs() {
  local dir
  dir=$(find "$1" -maxdepth 1 -name '.*.partial' -type d | sort | head -1)
  [ -n "$dir" ] || return 0
  { find "$dir" -maxdepth 1 -name 'block-*.json' -printf 'mark %f %T@\n'
    find "$dir" -maxdepth 1 -name 'block-*.part-*' -printf 'part %f %T@\n'; } |
    sed 's/ block-\([0-9]*\)\.json/ \1 0/; s/ block-\([0-9]*\)\.part-\([0-9]*\)/ \1 \2/' | sort -k2,2n -k3,3n |
    awk -v dir="$dir" '
      function flush() { printf "%d %d %s %d %d %s\n", first, last, newest,
                                system(sprintf("test -f %s/block-%06d.carry", dir, last)) == 0,
                                (last + 1) in part_w ? part_w[last + 1] : 0, (last + 1) in part_t ? part_t[last + 1] : 0 }
      $1 == "part" { part_w[$2 + 0] = $3 + 0; part_t[$2 + 0] = $4; next }
      { n = $2 + 0; if (marks && n != last + 1) flush(); if (!marks || n != last + 1) { first = n; newest = 0 }
        if ($4 + 0 > newest + 0) newest = $4; last = n; ++marks }
      END { if (marks) flush() }'
}
# in_flight_per_rank RUNS KILLED_AT KILLED: from journal_runs' lines, the seconds from each rank's
# newest mark or part to the kill, averaged over the ranks (a rank without a mark: the whole run).
in_flight_per_rank() {
  echo "$1" | awk -v at="$2" -v killed="$3" -v ranks="$ranks" '
    NF { sum += at - ($6 + 0 > $3 + 0 ? $6 : $3); ++n } END { for (; n < ranks; ++n) sum += killed; printf "%.3f\n", sum / ranks }'
}
# marked_runs RUNS BLOCKS: journal_runs' lines in words ("0-12 with its carry and 16 windows of
# 13 in parts, 16-27 no carry"; the last of BLOCKS has none to keep: "16-30, the last").
marked_runs() {
  echo "$1" | awk -v last="$(( $2 - 1 ))" '
    NF { printf "%s%d-%d%s", (n++ ? ", " : ""), $1, $2, ($2 == last ? ", the last" : $4 ? " with its carry" : " no carry")
         if ($5 > 0) printf " and %d windows of %d in parts", $5, $2 + 1 }
    END { if (!n) printf "none" }'
}
gdal_translate -q -srcwin 0 0 256 256 scene/scene_trn.tif crop.tif

for name in ${LAYOUTS:-one two}; do
  layout $name
  fixed=()
  for i in 1 2 3; do
    start=$(now); "$geodl" -q "${args[@]/scene\/scene_trn.tif/crop.tif}" "${flags[@]}" --output "crop-$name/c.$ext" --overwrite \
      > /dev/null 2>&1; fixed+=("$(seconds "$start" "$(now)")")
  done
  echo "$name ($ranks rank(s)): a 256 x 256 crop classified in $(median "${fixed[@]}") s (runs: ${fixed[*]})"
  # Uninterrupted (the median of 3): this build, each run followed by the base build's when given.
  runs=() base_runs=()
  for i in 1 2 3; do
    rm -rf "$name-ref"
    start=$(now); "$geodl" "${args[@]}" "${flags[@]}" --output "$name-ref/c.$ext" > "$name-ref.log" 2>&1; end=$(now)
    runs+=("$(seconds "$start" "$end")")
    if [ -n "$base" ]; then
      rm -rf "$name-base"
      start=$(now); "$base" "${args[@]}" "${flags[@]}" --output "$name-base/c.$ext" > "$name-base.log" 2>&1; end=$(now)
      base_runs+=("$(seconds "$start" "$end")")
    fi
  done
  ref=$(median "${runs[@]}")
  blocks=$(grep -o "journal for resume: [0-9]* blocks written in [0-9.]* s" "$name-ref.log")
  n=$(echo "$blocks" | cut -d' ' -f4) journal_s=$(echo "$blocks" | cut -d' ' -f8)
  line="$name ($ranks rank(s), .$ext): uninterrupted $(printf %.2f "$ref") s (runs: ${runs[*]}), $n blocks; the journal's writes $journal_s s"
  if [ -n "$base" ]; then
    b=$(median "${base_runs[@]}")
    base_journal=$(grep -o "journal for resume: [0-9]* blocks written in [0-9.]* s" "$name-base.log" | cut -d' ' -f8 || true)
    line="$line; the base build $(printf %.2f "$b") s (runs: ${base_runs[*]}; its journal's writes ${base_journal:-none} s): $(echo "scale=1; 100 * ($ref - $b) / $b" | bc)%"
  fi
  echo "$line"
  block=$(echo "scale=3; $ref * $ranks / $n" | bc)
  for fraction in 30 60 90; do
    losses=() paired_losses=()
    for repeat in $(seq "$repeats"); do
      out=$name-$fraction
      rm -rf "$out"
      pair=""
      if [ "$paired" = 1 ]; then
        rm -rf "$name-pair"
        start=$(now); "$geodl" "${args[@]}" "${flags[@]}" --output "$name-pair/c.$ext" > "$name-pair.log" 2>&1
        pair=$(seconds "$start" "$(now)")
      fi
      start=$(now)
      "$geodl" "${args[@]}" "${flags[@]}" --output "$out/c.$ext" > "$out.log" 2>&1 &
      pid=$!
      sleep "$(echo "$ref * $fraction / 100" | bc -l)"
      children=$(pgrep -P $pid || true)
      kill -KILL $children $pid 2>/dev/null || true
      wait $pid 2>/dev/null || true
      killed_at=$(now)
      killed=$(seconds "$start" "$killed_at")
      for p in $children; do while kill -0 "$p" 2>/dev/null; do sleep 0.02; done; done
      journal=$(journal_runs "$out")
      in_flight=$(in_flight_per_rank "$journal" "$killed_at" "$killed")
      marked=$(marked_runs "$journal" "$n")
      start=$(now)
      "$geodl" "${args[@]}" "${flags[@]}" --output "$out/c.$ext" --resume > "$out-resumed.log" 2>&1
      resumed=$(seconds "$start" "$(now)")
      finished=$(grep -o "resuming: [0-9]* of [0-9]*" "$out-resumed.log" || echo "resuming: 0 of $n")
      lost=$(echo "$killed + $resumed - $ref" | bc)
      losses+=("$(echo "$lost / $block" | bc -l)")
      identical=identical
      same "$name-ref" "$out" > /dev/null || identical="NOT IDENTICAL"
      split=$(printf ' (in flight at the kill %.2f s per rank, restart %.2f s)' "$in_flight" "$(echo "$lost - $in_flight" | bc)")
      against=""
      if [ -n "$pair" ]; then
        paired_lost=$(echo "$killed + $resumed - $pair" | bc)
        paired_losses+=("$(echo "$paired_lost / $block" | bc -l)")
        against=$(printf '; against the uninterrupted run just before (%.2f s): %.2f s (restart %.2f s) = %.2f blocks per rank' \
          "$pair" "$paired_lost" "$(echo "$paired_lost - $in_flight" | bc)" "$(echo "$paired_lost / $block" | bc -l)")
      fi
      printf '%s killed at %d%% (%.1f s): %s blocks finished (%s); resumed in %.2f s; time lost %.2f s%s = %.2f blocks per rank (one block per rank: %.2f s)%s; outputs %s\n' \
        "$name" "$fraction" "$killed" "${finished#resuming: }" "$marked" "$resumed" "$lost" "$split" "$(echo "$lost / $block" | bc -l)" "$block" "$against" "$identical"
    done
    printf '%s killed at %d%%: the median loss of %d runs, %.2f blocks per rank (runs: %s)\n' "$name" "$fraction" \
      "$repeats" "$(median "${losses[@]}")" \
      "$(printf '%.2f ' "${losses[@]}")"
    [ "$paired" = 1 ] && printf '%s killed at %d%%: against the run just before each, the median loss %.2f blocks per rank (runs: %s)\n' \
      "$name" "$fraction" "$(median "${paired_losses[@]}")" "$(printf '%.2f ' "${paired_losses[@]}")"
  done
done
