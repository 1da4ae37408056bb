#!/usr/bin/env bash
# SIGTERM (what schedulers, systemd and `timeout` send) and SIGHUP stop like Ctrl-C: exit code 5, a
# message, no temporary file, the checkpoint kept and resumable; during the first epoch the
# message says there is nothing to resume; a stopped classification leaves no output.
# Usage: sigterm.sh GEODL CONFIG MODEL WORKDIR
set -euo pipefail
geodl=$1 config=$2 model=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
scene=$(dirname "$config")
args=(-q train "$config" --samples-size 64 --batch-size 4 --threads 1 --seed 2)
stop() {  # stop PID with SIGTERM; its exit code must be 5
  kill -TERM "$1"
  set +e; wait "$1"; local code=$?; set -e
  [ $code = 5 ] || { echo "exit code $code after SIGTERM, expected 5"; exit 1; }
}
# Waits (up to a minute) for PATH to exist: the job has started and installed its handler
# (a SIGTERM while the libraries load, before main, kills outright: issue 30's to handle).
started() {
  for _ in $(seq 1 3000); do [ -e "$1" ] && return; sleep 0.02; done
  echo "the job never created $1"; exit 1
}
no_temporaries() {
  if ls -a "$1" 2>/dev/null | grep -q '\.tmp-'; then echo "temporary files left in $1:"; ls -a "$1"; exit 1; fi
}

# After the first epoch: the checkpoint stays, and --resume continues from it.
"$geodl" "${args[@]}" --epochs 6 --output-path "$work/later" > "$work/later.log" 2>&1 &
pid=$!
for _ in $(seq 1 3000); do
  [ "$( (cat "$work/later/metrics.csv" 2>/dev/null || true) | wc -l)" -ge 2 ] && break
  sleep 0.02
done
stop $pid
grep -q "training stopped; the last complete epoch is in .*last_checkpoint.pt: continue with --resume" "$work/later.log"
no_temporaries "$work/later"
"$geodl" info "$work/later/last_checkpoint.pt" > /dev/null
"$geodl" "${args[@]}" --output-path "$work/later" --epochs 2 --resume > "$work/resumed.log" 2>&1
grep -qE "resuming after epoch|nothing to train" "$work/resumed.log" || { cat "$work/resumed.log"; exit 1; }

# During the first epoch: nothing to resume, and the message says so.
"$geodl" "${args[@]}" --epochs 6 --output-path "$work/early" > "$work/early.log" 2>&1 &
pid=$!
started "$work/early"
stop $pid
grep -q "training stopped; no epoch had ended: there is nothing to resume" "$work/early.log" || { cat "$work/early.log"; exit 1; }
no_temporaries "$work/early"

# A classification stopped leaves no output.
"$geodl" -q classify --input "$scene/scene_val.tif" --model "$model" --output "$work/c/classes.tif" --window 32 \
  --overlap 40 --tta --threads 1 > "$work/classify.log" 2>&1 &
pid=$!
started "$work/c"
stop $pid
[ ! -e "$work/c/classes.tif" ] || { echo "a stopped classification left its output"; exit 1; }
no_temporaries "$work/c"
# SIGHUP (the terminal closed) stops the same way; under nohup it is ignored.
"$geodl" "${args[@]}" --epochs 6 --output-path "$work/hup" > "$work/hup.log" 2>&1 &
pid=$!
started "$work/hup"
kill -HUP $pid
set +e; wait $pid; code=$?; set -e
[ $code = 5 ] || { echo "exit code $code after SIGHUP, expected 5"; tail -3 "$work/hup.log"; exit 1; }
no_temporaries "$work/hup"
nohup "$geodl" "${args[@]}" --epochs 6 --output-path "$work/nohup" > "$work/nohup.log" 2>&1 &
pid=$!
started "$work/nohup"
kill -HUP $pid
sleep 1
kill -0 $pid 2>/dev/null || { echo "under nohup, SIGHUP stopped the job"; tail -3 "$work/nohup.log"; exit 1; }
stop $pid

# SIGTERM to the process and then to its group, as `timeout` sends it: one stop, exit code 5
# (the second delivery used to count as a second Ctrl-C and kill it: 143).
setsid "$geodl" "${args[@]}" --epochs 6 --output-path "$work/group" > "$work/group.log" 2>&1 &
pid=$!
started "$work/group"
kill -TERM $pid; kill -TERM -- -$pid
set +e; wait $pid; code=$?; set -e
[ $code = 5 ] || { echo "exit code $code after SIGTERM to the process and its group, expected 5"; exit 1; }
no_temporaries "$work/group"
echo "SIGTERM and SIGHUP stop train and classify with exit code 5, files complete, nothing partial"
