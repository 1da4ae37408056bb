#!/usr/bin/env bash
# A full disk, for real: each job writes to a small tmpfs that is full (or nearly, so that
# it fails in the middle of a file), or past the process's file-size limit, and must end
# with exit code 4 (qgis_process: 1, never
# a signal), a message naming the file and saying "no space left", no temporary file and
# no folder it created, and the previous complete outputs byte-identical.
# Needs root (mount); skipped with a message otherwise.
# Usage: disk_full.sh GEODL SCENE MODEL WORKDIR [PLUGIN_DIR]
set -euo pipefail
geodl=$1 scene=$(realpath "$2") model=$(realpath "$3") work=$4 plugin_dir=${5:-}
disk=$work/disk
umount "$disk" 2>/dev/null || true
rm -rf "$work" && mkdir -p "$disk"
if ! mount -t tmpfs -o size=1M tmpfs "$disk" 2>/dev/null; then
  echo "SKIPPED: cannot mount a tmpfs here (needs root): no disk-full check"
  exit 0
fi
trap 'umount "$disk" 2>/dev/null || true' EXIT
umount "$disk"

cases=0
fresh() {  # fresh SIZE: an empty tmpfs of that size at $disk
  umount "$disk" 2>/dev/null || true
  mount -t tmpfs -o size="$1" tmpfs "$disk"
}
fill() {  # fill KEEP_KIB: a filler file leaves about that much free
  local free; free=$(( $(stat -f -c '%a * %S' "$disk") ))
  local size=$(( free - $1 * 1024 ))
  [ $size -gt 0 ] && head -c $size /dev/zero > "$disk/.filler" 2>/dev/null || true
}
snapshot() { (cd "$disk" && find . -mindepth 1 | sort | while read -r f; do
  if [ -f "$f" ]; then echo "$f $(sha256sum < "$f" | cut -c1-16)"; else echo "$f/"; fi; done); }
# expect NAME CODE COMMAND...: the exit code, the message, no temporary file, and the disk
# as it was (unless changes=allowed: complete files a run wrote before the disk filled).
expect() {
  local name=$1 want=$2; shift 2
  local before; before=$(snapshot)
  set +e; "$@" > "$work/$name.log" 2>&1; local code=$?; set -e
  cases=$((cases + 1))
  [ "$code" = "$want" ] || { echo "$name: exit code $code, expected $want"; tail -5 "$work/$name.log"; exit 1; }
  grep -q "no space left on the device" "$work/$name.log" ||
    { echo "$name: the message does not say the disk is full:"; tail -5 "$work/$name.log"; exit 1; }
  local after; after=$(snapshot)
  # A classification that finished blocks before the disk filled keeps them for --resume
  # (complete files in its journal), and says so.
  if echo "$after" | grep -q '\.partial/'; then
    grep -q "run it again with the option resume" "$work/$name.log" ||
      { echo "$name: blocks kept without a word of resume:"; tail -3 "$work/$name.log"; exit 1; }
    after=$(echo "$after" | grep -v '\.partial/')
    rm -rf "$disk"/.*.partial
  fi
  if echo "$after" | grep -q '\.tmp-'; then echo "$name: temporary files left:"; echo "$after"; exit 1; fi
  if [ "${changes:-}" != allowed ] && [ "$before" != "$after" ]; then
    echo "$name: the disk changed:"; diff <(echo "$before") <(echo "$after") || true; exit 1
  fi
  echo "$name: exit $code, $(grep -o "cannot write [^:]*" "$work/$name.log" | head -1), no temporary file$(
    [ "${changes:-}" = allowed ] || echo ", the disk as before")"
}

# Samples: a full disk, then stores of an earlier run kept when the new ones do not fit.
samples=(-q samples "$scene/config.yaml" --samples-size 64)
fresh 64K; fill 0
expect samples_full 4 "$geodl" "${samples[@]}" --samples-dist 48 --data-path "$disk/data"
fresh 4M
"$geodl" "${samples[@]}" --samples-dist 64 --data-path "$disk" > /dev/null
fill 100
expect samples_midway 4 "$geodl" "${samples[@]}" --samples-dist 32 --data-path "$disk"

# Train: an earlier run's model, checkpoint, metrics and report kept.
train=(-q train "$scene/config.yaml" --samples-size 64 --epochs 1 --batch-size 4 --threads 2)
fresh 64M
"$geodl" "${train[@]}" --output-path "$disk/model" > /dev/null
fill 0
expect train_full 4 "$geodl" "${train[@]}" --output-path "$disk/model"
expect train_full_new_folder 4 "$geodl" "${train[@]}" --output-path "$disk/other/model"
rm "$disk/.filler"; fill 9000  # epoch 1's model fits, its checkpoint does not: the model stays
changes=allowed expect train_midway 4 "$geodl" "${train[@]}" --output-path "$disk/model2"
"$geodl" info "$disk/model2/model.pt" > /dev/null
[ "$(ls -A "$disk/model2")" = model.pt ] || { echo "train_midway left: $(ls -A "$disk/model2")"; exit 1; }

# Classify: an earlier run's class raster, probabilities and polygons kept.
classify=(-q classify --input "$scene/scene_val.tif" --model "$model" --window 64 --threads 2)
fresh 4M
"$geodl" "${classify[@]}" --output "$disk/c.tif" --probabilities --polygons > /dev/null
for keep in 0 20 60 200; do
  rm -f "$disk/.filler"; fill $keep
  expect "classify_free_${keep}k" 4 "$geodl" "${classify[@]}" --output "$disk/c.tif" --probabilities-float --polygons
done
rm -f "$disk/.filler"; fill 8
expect classify_cog 4 "$geodl" "${classify[@]}" --output "$disk/sub/c.tif" --cog --probabilities

# The same through qgis_process (the QGIS desktop runs the same code): an error, no crash.
if [ -n "$plugin_dir" ]; then
  home=$work/home
  mkdir -p "$home"
  export HOME=$home QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$home
  /usr/bin/python3 "$(dirname "$(realpath "$0")")/../../scripts/register-qgis-plugin.py" "$(realpath "$plugin_dir")" \
    "$home/.local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini"
  rm -f "$disk/.filler"; fill 20
  expect qgis_classify 1 qgis_process.bin run geodl:classify --INPUT="$scene/scene_val.tif" --MODEL="$model" \
    --WINDOW=64 --THREADS=2 --OUTPUT="$disk/c.tif" --PROBABILITIES="$disk/p.tif"
  fresh 16M; fill 0
  expect qgis_train 1 qgis_process.bin run geodl:train --TRAINING_STORE="$scene/samples/trn_samples.hdf5" \
    --VALIDATION_STORE="$scene/samples/val_samples.hdf5" --MODEL=1 --EPOCHS=1 --BATCH_SIZE=4 --THREADS=2 \
    --OUTPUT_MODEL="$disk/model/model.pt"
fi
# The process's file-size limit (ulimit -f): exit code 4 and the limit named, as a full disk
# (not SIGXFSZ, which killed the process with nothing said and its temporaries left).
limited=$work/limited
mkdir -p "$limited"
set +e
(ulimit -f 256; "$geodl" "${classify[@]}" --output "$limited/c.tif" --probabilities-float) > "$work/ulimit.log" 2>&1
code=$?
set -e
cases=$((cases + 1))
[ "$code" = 4 ] || { echo "ulimit -f: exit code $code, expected 4"; tail -5 "$work/ulimit.log"; exit 1; }
grep -q "ulimit -f" "$work/ulimit.log" || { echo "ulimit -f: the message does not name the limit:"; tail -5 "$work/ulimit.log"; exit 1; }
[ -z "$(ls -A "$limited" | grep -v '\.partial$')" ] || { echo "ulimit -f left: $(ls -A "$limited")"; exit 1; }
echo "ulimit_f: exit 4, $(grep -o "cannot write [^:]*" "$work/ulimit.log" | head -1), nothing left"
echo "disk full: $cases cases, each with its exit code and message, no temporary left, the previous outputs intact"
