#!/usr/bin/env bash
# kill -9 and SIGTERM at several moments of samples, train and classify (each over the
# complete outputs of an earlier run), then a rerun: after every kill the outputs that exist
# are complete files (GeoDL, GDAL and OGR read them whole), SIGTERM ends with exit code 5;
# after every rerun no temporary file is left. The moments are fractions of an
# uninterrupted run's time, measured first, so that they fall in every stage on any machine.
# Usage: faults.sh GEODL WORKDIR
set -euo pipefail
geodl=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
cd "$work"
"$geodl" make-scene scene --size 512 --seed 4 > /dev/null

# Every final file in FOLDER reads as complete.
complete() {
  local f
  while IFS= read -r f; do
    case "$f" in
      *.tmp-*) ;;  # a killed run's temporary: the rerun must remove it
      *.pt|*.hdf5) "$geodl" info "$f" > /dev/null 2>&1 || { echo "damaged after $2: $f"; exit 1; } ;;
      *.tif) gdalinfo -checksum "$f" > /dev/null 2>&1 || { echo "damaged after $2: $f"; exit 1; } ;;
      *.gpkg) ogrinfo -al -so "$f" > /dev/null 2>&1 || { echo "damaged after $2: $f"; exit 1; } ;;
    esac
  done < <(find "$1" -type f)
}
no_temporaries() {
  if find "$1" -name '*.tmp-*' | grep -q .; then echo "temporary files left after $2:"; find "$1" -name '*.tmp-*'; exit 1; fi
}

# How long `geodl` takes to reach main() (loading LibTorch): a signal before then finds no
# handler, and nothing has been written; the moments are counted from there.
start=$(date +%s%N); "$geodl" --version > /dev/null; end=$(date +%s%N)
startup_ms=$(( (end - start) / 1000000 ))
kills=0
# fault JOB FOLDER COMMAND...: an uninterrupted run, then kills at three moments with both
# signals, each followed by a rerun.
fault() {
  local job=$1 folder=$2; shift 2
  local start end
  start=$(date +%s%N); "$@" > "$work/$job-whole.log" 2>&1; end=$(date +%s%N)
  local whole_ms=$(( (end - start) / 1000000 ))
  for fraction in 15 50 85; do
    for signal in KILL TERM; do
      "$@" > "$work/$job-$signal-$fraction.log" 2>&1 &
      local pid=$!
      sleep "$(awk "BEGIN { print ($startup_ms + ($whole_ms - $startup_ms) * $fraction / 100) / 1000 }")"
      kill -"$signal" $pid 2>/dev/null || true
      set +e; wait $pid; local code=$?; set -e
      kills=$((kills + 1))
      if [ $signal = TERM ] && [ $code != 5 ] && [ $code != 0 ]; then
        echo "$job: exit code $code after SIGTERM at $fraction%, expected 5"; tail -3 "$work/$job-$signal-$fraction.log"; exit 1
      fi
      complete "$folder" "$job, $signal at $fraction%"
      "$@" > "$work/$job-rerun.log" 2>&1 || { echo "$job: the rerun after $signal failed"; tail -3 "$work/$job-rerun.log"; exit 1; }
      no_temporaries "$folder" "$job's rerun after $signal at $fraction%"
      complete "$folder" "$job's rerun"
    done
  done
  echo "$job: an uninterrupted run takes $whole_ms ms (startup $startup_ms ms); killed at 15, 50 and 85% with SIGKILL and SIGTERM: complete files only, none left after the reruns"
}

cd scene
fault samples samples "$geodl" -q samples config.yaml --samples-size 64 --samples-dist 16
fault train model "$geodl" -q train config.yaml --samples-size 64 --epochs 2 --batch-size 4 --threads 2 \
  --num-trn-samples 16 --num-val-samples 8
fault classify classified "$geodl" -q classify config.yaml --window 64 --threads 2 --probabilities --polygons --cog
echo "faults: $kills kills, each followed by a rerun; no damaged file, no temporary left"
