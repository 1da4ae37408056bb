#!/usr/bin/env bash
# Resume (geodl classify --resume): a classification killed with SIGKILL or stopped with
# SIGTERM at 30, 60 and 90% of its run, on one process (GeoTIFF outputs) and on 2 ranks (VRT
# outputs written in place), then resumed: the outputs are byte for byte those of an
# uninterrupted run at the same threads, no block finished before the stop is computed again,
# and nothing of the journal is left; killed inside a block, the resume starts from the part
# of it kept. A lost rank (SIGKILL of rank 1 alone) resumes too. A
# resume with another option or another model is refused, naming it, with the journal kept;
# a run without --resume discards it.
# Usage: resume.sh GEODL MODEL WORKDIR
set -euo pipefail
geodl=$(realpath "$1") model=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
cd "$work"
fail() { echo "resume: $*"; exit 1; }

# A 1000 x 1000 raster at the model's pixel size (0.5 m): the model's scene, enlarged.
raster=$(dirname "$model")/../scene_val.tif
[ -f "$raster" ] || fail "no $raster"
gdal_translate -q -outsize 1000 1000 -r bilinear -a_ullr 500000 4000500 500500 4000000 "$raster" big.tif
# Windows of 128 px every 96: a GeoTIFF output's tiles are 96 rows high, those of its blocks in
# the journal, which are copied into it as they are (tests/cli/distributed_jobs.sh covers a step
# no tile height divides, whose blocks are decoded and compressed again).
classify=(classify --model "$model" --input big.tif --window 128 --overlap 25 --batch-size 4 --threads 1
          --probabilities --polygons)

start=$(date +%s%N); "$geodl" --version > /dev/null; end=$(date +%s%N)
startup_ms=$(( (end - start) / 1000000 ))

# Outputs of an uninterrupted run: the reference of each layout.
timed() { local s e; s=$(date +%s%N); "$@" > "$work/ref.log" 2>&1 || { cat "$work/ref.log"; fail "$* failed"; }; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
one_ms=$(timed "$geodl" -q "${classify[@]}" --output ref1/c.tif)
two_ms=$(timed "$geodl" -q "${classify[@]}" --output ref2/c.vrt --nproc 2)
echo "uninterrupted: one process ${one_ms} ms, 2 ranks ${two_ms} ms (startup ${startup_ms} ms)"
blocks=$(grep -o "wrote the VRT over the parts of [0-9]* blocks" ref.log | grep -o "[0-9]*" || true)
[ -n "$blocks" ] || { cat ref.log; fail "no block count"; }

# The same bytes as the reference: every file, the polygons by their features.
same_outputs() {
  local ref=$1 out=$2 what=$3 f
  for f in $(cd "$ref" && find . -type f ! -name '*.gpkg' | sort); do
    cmp -s "$ref/$f" "$out/$f" || fail "$what: $f differs from an uninterrupted run's"
  done
  [ "$(cd "$ref" && find . -type f | sort)" = "$(cd "$out" && find . -type f | sort)" ] ||
    { ls -laR "$out"; fail "$what: other files than an uninterrupted run's"; }
  [ "$(ogrinfo -al -q "$ref/c_polygons.gpkg" | md5sum)" = "$(ogrinfo -al -q "$out/c_polygons.gpkg" | md5sum)" ] ||
    fail "$what: the polygons differ"
  if find "$out" -name '*.partial' -o -name '*.tmp-*' | grep -q .; then find "$out"; fail "$what: leftovers"; fi
}

# gone PID...: waits until the processes are reaped (a killed rank's temporaries are removed
# by the next run only once its process is gone).
gone() {
  local p
  for p in "$@"; do
    for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  done
}

# kill_when COUNT GLOB LOG COMMAND...: runs COMMAND in the background (its output in LOG) and
# kills it with SIGKILL, launcher and ranks, once GLOB matches COUNT files (or after 20 s);
# returns once its ranks are reaped.
kill_when() {
  local count=$1 glob=$2 log=$3 pid ranks
  shift 3
  "$@" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1000); do
    [ "$(ls $glob 2>/dev/null | wc -l)" -ge "$count" ] && break
    sleep 0.02
  done
  ranks=$(pgrep -P $pid || true)
  pkill -KILL -P $pid 2>/dev/null || true; kill -KILL $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  gone $ranks
}

# at_progress PID KIND FOLDER FRACTION TOTAL: waits until the job's journal in FOLDER holds
# FRACTION% of its TOTAL blocks (KIND classify: the marks block-*.json) or windows (KIND
# samples: the windows the complete segments read), or the job has ended: the stops fall at
# those points of the work whatever the machine's speed and the ranks' start.
at_progress() {
  local pid=$1 kind=$2 folder=$3 fraction=$4 total=$5 done
  for _ in $(seq 1 3000); do
    kill -0 "$pid" 2>/dev/null || return 0
    if [ "$kind" = classify ]; then
      done=$( (find "$folder" -path '*.partial/block-*.json' 2>/dev/null || true) | wc -l)
    else
      done=$(/usr/bin/python3 -c "
import glob, struct, sys
n = 0
for f in glob.glob(sys.argv[1] + '/.samples.partial/seg-*'):
    with open(f, 'rb') as s:
        s.seek(-24, 2)
        windows, records, magic = struct.unpack('<QQQ', s.read(24))
        n += windows if magic == 0x31475345444f4547 else 0
print(n)" "$folder" 2>/dev/null || echo 0)
    fi
    [ $((done * 100)) -ge $((fraction * total)) ] && return 0
    sleep 0.02
  done
}

resumed=0 cases=0
# stop LAYOUT SIGNAL FRACTION: run, stop, resume, compare.
stop_and_resume() {
  local layout=$1 signal=$2 fraction=$3 out args
  if [ "$layout" = one ]; then out=one-$signal-$fraction args=(--output "one-$signal-$fraction/c.tif")
  else out=two-$signal-$fraction args=(--output "two-$signal-$fraction/c.vrt" --nproc 2); fi
  "$geodl" "${classify[@]}" "${args[@]}" > "$out.log" 2>&1 &
  local pid=$!
  at_progress $pid classify "$out" "$fraction" "$blocks"
  local ranks; ranks=$(pgrep -P $pid || true)
  case $signal in
    KILL) pkill -KILL -P $pid 2>/dev/null || true; kill -KILL $pid 2>/dev/null || true ;;  # the node is lost
    TERM) kill -TERM $pid 2>/dev/null || true ;;                                              # a time limit
    RANK) pkill -KILL -n -P $pid 2>/dev/null || true ;;                                       # rank 1 alone
  esac
  set +e; wait $pid; local code=$?; set -e
  if [ $signal = TERM ] && [ $code != 5 ] && [ $code != 0 ]; then cat "$out.log"; fail "exit $code after SIGTERM"; fi
  # Stopped by itself with finished blocks, it says how to resume.
  if [ $code = 5 ] && find "$out" -name 'block-*.json' | grep -q . && ! grep -q "run it again with the option resume" "$out.log"
  then cat "$out.log"; fail "$layout: no word of resume after $signal"; fi
  gone $ranks
  "$geodl" "${classify[@]}" "${args[@]}" --resume > "$out-resumed.log" 2>&1 ||
    { cat "$out-resumed.log"; fail "$layout: the resume after $signal at $fraction% failed"; }
  local line
  line=$(grep -o "resuming: [0-9]* of [0-9]* blocks" "$out-resumed.log" || true)
  [ -n "$line" ] && [ "$(echo "$line" | cut -d' ' -f2)" -gt 0 ] && resumed=$((resumed + 1))
  cases=$((cases + 1))
  if [ "$layout" = one ]; then same_outputs ref1 "$out" "$layout, $signal at $fraction%"
  else same_outputs ref2 "$out" "$layout, $signal at $fraction%"; fi
  echo "$layout, $signal at $fraction% (exit $code): ${line:-nothing to resume: the run had not begun or had finished}; resumed to the same bytes"
}

for layout in one two; do
  for signal in KILL TERM; do
    for fraction in 30 60 90; do stop_and_resume $layout $signal $fraction; done
  done
done
stop_and_resume two RANK 50
# A kill inside a block once a part of it is kept (block-K.part-W: the blend part way through
# its windows; here of block 2 to 4, after a block marked with its carry): the resume starts
# from the part, computing only the windows after it, to the same bytes.
for layout in one two; do
  if [ $layout = one ]; then out=part-one args=(--output part-one/c.tif) ref=ref1
  else out=part-two args=(--output part-two/c.vrt --nproc 2) ref=ref2; fi
  kill_when 1 "$out/.c.*.partial/block-00000[2-4].part-*" "$out.log" "$geodl" "${classify[@]}" "${args[@]}"
  "$geodl" "${classify[@]}" "${args[@]}" --resume > "$out-resumed.log" 2>&1 ||
    { cat "$out-resumed.log"; fail "$layout: the resume after a kill inside a block failed"; }
  line=$(grep -o "resuming: .* it had started" "$out-resumed.log") ||
    { cat "$out-resumed.log"; fail "$layout: the part kept before the kill was not resumed from"; }
  same_outputs $ref "$out" "$layout, killed inside a block"
  echo "$layout, killed inside a block: $line; resumed to the same bytes"
done
# Most stops fall between blocks: at least half of them had finished blocks to resume from.
[ $resumed -ge $((cases * 3 / 4)) ] || fail "only $resumed of $cases stops left finished blocks: the run is too short?"

# A job of many rasters (a folder of tiles) on 2 ranks, which take whole rasters, killed once
# 3 of 6 are done: the resume keeps those, resumes the ones begun from their blocks, and gives
# the uninterrupted job's files.
mkdir -p tiles
for i in 0 1 2 3 4 5; do gdal_translate -q -srcwin $((i * 120)) $((i * 50)) 400 400 big.tif "tiles/t$i.tif"; done
tiles=(classify --model "$model" --input tiles --window 96 --overlap 25 --batch-size 4 --threads 1 --probabilities --nproc 2)
"$geodl" -q "${tiles[@]}" --working-folder tiles-ref > tiles-ref.log 2>&1 || { cat tiles-ref.log; fail "tiles"; }
kill_when 3 'tiles-killed/*_inference.tif' tiles-killed.log "$geodl" "${tiles[@]}" --working-folder tiles-killed
# (A raster whose outputs were moved into place just before the kill, but not yet recorded, is
# classified again.)
done_before=$(ls tiles-killed/.classify-job.partial/raster-*.json | wc -l)
"$geodl" "${tiles[@]}" --working-folder tiles-killed --resume > tiles-resumed.log 2>&1 || { cat tiles-resumed.log; fail "tiles resume"; }
grep -q "resuming the job: $done_before of 6 rasters were classified before the stop" tiles-resumed.log ||
  { cat tiles-resumed.log; fail "the finished rasters were not kept"; }
[ "$(grep -c "was classified before the stop: kept" tiles-resumed.log)" = "$done_before" ] || fail "not $done_before kept"
for f in $(cd tiles-ref && ls -A); do cmp -s "tiles-ref/$f" "tiles-killed/$f" || fail "tiles: $f differs"; done
[ "$(ls -A tiles-ref)" = "$(ls -A tiles-killed)" ] || { ls -A tiles-killed; fail "tiles: leftovers"; }
echo "a folder of 6 tiles on 2 ranks, killed after $done_before: resumed to the uninterrupted job's files"
# Two jobs into one folder: one killed after 3 of its rasters; the other, run meanwhile from
# the start, keeps the first one's records (each job its own); the first then resumes them.
mkdir -p others
for i in 0 1; do gdal_translate -q -srcwin $((i * 300)) 500 300 300 big.tif "others/u$i.tif"; done
kill_when 3 'shared/.classify-job.partial/raster-*.json' shared-killed.log "$geodl" "${tiles[@]}" --working-folder shared
done_before=$(ls shared/.classify-job.partial/raster-*.json | wc -l)
[ "$done_before" -ge 3 ] || fail "two jobs: not 3 rasters before the kill"
"$geodl" -q classify --model "$model" --input others --window 96 --threads 1 --working-folder shared > others.log 2>&1 ||
  { cat others.log; fail "two jobs: the second job"; }
[ "$(ls shared/.classify-job.partial/raster-*.json | wc -l)" = "$done_before" ] ||
  { ls -la shared/.classify-job.partial; fail "two jobs: the second job changed the first one's records"; }
"$geodl" "${tiles[@]}" --working-folder shared --resume > shared-resumed.log 2>&1 || { cat shared-resumed.log; fail "two jobs: resume"; }
grep -q "resuming the job: $done_before of 6 rasters were classified before the stop" shared-resumed.log ||
  { cat shared-resumed.log; fail "two jobs: the first job's finished rasters were not kept"; }
for f in $(cd tiles-ref && ls -A); do cmp -s "tiles-ref/$f" "shared/$f" || fail "two jobs: $f differs"; done
[ ! -e shared/.classify-job.partial ] && ls shared/u0_inference.tif shared/u1_inference.tif > /dev/null ||
  { ls -la shared; fail "two jobs: leftovers, or the second job's outputs gone"; }
echo "two jobs of many rasters into one folder: each keeps its own records; the first resumed after the second ran"

# A resume that is not the stopped run: refused before anything is written, naming what
# differs, with the journal kept for the right resume.
kill_when 1 'changed/.c.tif.partial/block-*.json' changed.log "$geodl" "${classify[@]}" --output changed/c.tif
blocks=$(ls changed/.c.tif.partial/block-*.json | wc -l)
[ "$blocks" -gt 0 ] || fail "no block finished before the kill"
code=0
"$geodl" "${classify[@]}" --output changed/c.tif --resume --tta > refused.log 2>&1 || code=$?
[ $code = 3 ] && grep -q "it is not the stopped run: the option tta (inference.tta, --tta, TTA): false then, true now" refused.log ||
  { cat refused.log; fail "a resume with --tta: exit $code"; }
[ ! -e changed/c.tif ] && [ "$(ls changed/.c.tif.partial/block-*.json | wc -l)" = "$blocks" ] ||
  fail "the refused resume touched the journal or wrote an output"
cp "$model" other-model.pt && touch -d '2001-01-01' other-model.pt
code=0
"$geodl" classify --model other-model.pt "${classify[@]:3}" --output changed/c.tif --resume > refused.log 2>&1 || code=$?
[ $code = 3 ] && grep -q "another model file ('.*model.pt' then, '.*other-model.pt' now)" refused.log ||
  { cat refused.log; fail "a resume with another model: exit $code"; }
# Without --resume the stopped run's blocks are discarded, and the run starts again.
"$geodl" "${classify[@]}" --output changed/c.tif > restarted.log 2>&1
grep -q "discarded the $blocks finished blocks of a stopped run" restarted.log || { cat restarted.log; fail "not discarded"; }
same_outputs ref1 changed "a run that discarded a stopped one"
# A raster that cannot be read past its first blocks (a truncated copy) keeps nothing: a resume
# would read another file, which it refuses.
cp big.tif truncated.tif && truncate -s 1500000 truncated.tif
code=0
"$geodl" classify --model "$model" --input truncated.tif --window 96 --threads 2 --output truncated/c.tif \
  > truncated.log 2>&1 || code=$?
[ $code = 4 ] && grep -q "damaged or truncated" truncated.log && [ ! -e truncated ] ||
  { cat truncated.log; ls -laR truncated 2>/dev/null; fail "a truncated raster: exit $code, or something kept"; }
# --resume with nothing to resume classifies from the start.
"$geodl" "${classify[@]}" --output fresh/c.tif --resume > fresh.log 2>&1
grep -q "nothing to resume" fresh.log || fail "no word that there was nothing to resume"
same_outputs ref1 fresh "--resume with nothing to resume"

# A journal changed after the stop. kill_after FOLDER: a run into FOLDER/c.tif killed once 3
# blocks are finished.
kill_after() {
  kill_when 3 "$1/.c.tif.partial/block-*.json" "$1.log" "$geodl" "${classify[@]}" --output "$1/c.tif"
  [ "$(ls "$1"/.c.tif.partial/block-*.json | wc -l)" -ge 3 ] || fail "$1: not 3 blocks before the kill"
}
# A block file cut short (its size is not the one its mark records): computed again, named.
kill_after cut
truncate -s 1000 cut/.c.tif.partial/block-000001.tif
"$geodl" "${classify[@]}" --output cut/c.tif --resume > cut-resumed.log 2>&1 || { cat cut-resumed.log; fail "cut: resume"; }
grep -q "1 finished block in '.*' changed after the stop (the sizes of their files differ from those recorded: cut short or replaced), and is computed again: block 1" cut-resumed.log ||
  { cat cut-resumed.log; fail "cut: not named"; }
same_outputs ref1 cut "a block cut short after the stop"
# A block file of its size that does not read (its header overwritten): the resume fails
# naming it, writes no output, and drops it from the journal; the next resume computes it.
kill_after unreadable
printf '\0\0\0\0' | dd of=unreadable/.c_probabilities.tif.partial/block-000000.tif conv=notrunc status=none
code=0
"$geodl" "${classify[@]}" --output unreadable/c.tif --resume > unreadable.log 2>&1 || code=$?
[ $code = 4 ] && grep -q "the finished block 0 in the journal does not read (cannot read '.*block-000000.tif': .*): it is dropped from the journal, and a resume computes it again" unreadable.log &&
  grep -q "run it again with the option resume" unreadable.log && [ ! -e unreadable/c.tif ] &&
  [ ! -e unreadable/.c.tif.partial/block-000000.json ] ||
  { cat unreadable.log; ls -la unreadable unreadable/.c.tif.partial; fail "an unreadable block: exit $code"; }
"$geodl" "${classify[@]}" --output unreadable/c.tif --resume > unreadable-resumed.log 2>&1 ||
  { cat unreadable-resumed.log; fail "unreadable: the second resume"; }
same_outputs ref1 unreadable "a block that did not read, resumed again"
echo "a journal changed after the stop: a block cut short is computed again; one that does not read fails the resume, which the next resume mends"

# Samples (geodl samples --resume): a scene of 1024 x 1024 pixels cut in windows of 64 every 8
# pixels (about 29000 windows), stopped at 30, 60 and 90% on one process and on 2 ranks, then
# resumed: the stores hold the datasets of an uninterrupted job, and the footprints its features.
"$geodl" make-scene sscene --size 1024 --seed 5 > /dev/null
cd sscene
sample=(samples config.yaml --samples-size 64 --samples-dist 8)
same_stores() {
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "samples: $2 differs from an uninterrupted job's"
import sys
import h5py
import numpy as np
for split in ('trn', 'val'):
    with h5py.File('%s/%s_samples.hdf5' % (sys.argv[1], split)) as fa, h5py.File('%s/%s_samples.hdf5' % (sys.argv[2], split)) as fb:
        names, others = [], []
        fa.visit(names.append)
        fb.visit(others.append)
        assert sorted(names) == sorted(others), (names, others)
        for name in names:
            if isinstance(fa[name], h5py.Dataset):
                assert np.array_equal(fa[name][()], fb[name][()]), name
            for key in fa[name].attrs:
                assert np.array_equal(np.asarray(fa[name].attrs[key]), np.asarray(fb[name].attrs[key])), (name, key)
PY
  [ "$(ogrinfo -al -q "$1/samples_footprint.gpkg" | md5sum)" = "$(ogrinfo -al -q "$2/samples_footprint.gpkg" | md5sum)" ] ||
    fail "samples: the footprints of $2 differ"
  if find "$2" -name '*.partial' -o -name '*.tmp-*' | grep -q .; then find "$2"; fail "samples: leftovers in $2"; fi
}
one_ms=$(timed "$geodl" -q "${sample[@]}" --data-path ref-one)
windows=$(grep -o "windows considered: [0-9]*" "$work/ref.log" | grep -o "[0-9]*")
two_ms=$(timed "$geodl" -q "${sample[@]}" --data-path ref-two --nproc 2)
same_stores ref-one/samples ref-two/samples
samples_resumed=0
for layout in one two; do
  for signal in KILL TERM; do
    for fraction in 30 60 90; do
      out=s-$layout-$signal-$fraction
      if [ $layout = one ]; then flags=(); else flags=(--nproc 2); fi
      "$geodl" "${sample[@]}" --data-path "$out" "${flags[@]}" > "$out.log" 2>&1 &
      pid=$!
      at_progress $pid samples "$out/samples" "$fraction" "$windows"
      ranks=$(pgrep -P $pid || true)
      if [ $signal = KILL ]; then kill -KILL $ranks $pid 2>/dev/null || true; else kill -TERM $pid 2>/dev/null || true; fi
      set +e; wait $pid; code=$?; set -e
      [ $signal = KILL ] || [ $code = 5 ] || [ $code = 0 ] || { cat "$out.log"; fail "samples: exit $code after SIGTERM"; }
      gone $ranks
      "$geodl" "${sample[@]}" --data-path "$out" "${flags[@]}" --resume > "$out-resumed.log" 2>&1 ||
        { cat "$out-resumed.log"; fail "samples: the resume of $out failed"; }
      line=$(grep -o "resuming: [0-9]* of [0-9]* windows" "$out-resumed.log" || true)
      [ -n "$line" ] && samples_resumed=$((samples_resumed + 1))
      same_stores ref-one/samples "$out/samples"
      echo "samples, $layout, $signal at $fraction% (exit $code): ${line:-nothing to resume}; the same datasets"
    done
  done
done
[ $samples_resumed -ge 8 ] || fail "only $samples_resumed of 12 sample stops left windows to resume"
code=0
"$geodl" "${sample[@]}" --data-path s-one-KILL-30 > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 500); do ls s-one-KILL-30/samples/.samples.partial/seg-* > /dev/null 2>&1 && break; sleep 0.02; done
kill -KILL $pid; wait $pid 2>/dev/null || true
"$geodl" "${sample[@]}" --data-path s-one-KILL-30 --min-annotated-percent 5 --resume > refused.log 2>&1 || code=$?
[ $code = 3 ] && grep -q "it is not the stopped job: the option min_annotated_percent (sample.min_annotated_percent, --min-annotated-percent, MIN_ANNOTATED): 0.0 then, 5.0 now" refused.log &&
  ls s-one-KILL-30/samples/.samples.partial/seg-* > /dev/null ||
  { cat refused.log; fail "samples: a resume with another min_annotated_percent: exit $code"; }
cd ..
echo "resume: $cases stops ($resumed with finished blocks), each resumed to an uninterrupted run's bytes; a resume with other options refused; samples: 12 stops ($samples_resumed with windows read) resumed to the same datasets"
