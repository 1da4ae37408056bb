#!/usr/bin/env bash
# Data-parallel training, 2 ranks of 1 thread, through every launcher: `geodl train
# --nproc 2`, torchrun (skipped, saying so, without it), and simulated Slurm variables.
# Each run must say its weights stayed identical on the ranks. Then: resuming with another
# world size (2 -> 1 and 1 -> 2), a rank with another config refused by both, a rank killed
# with kill -9 mid-run (the other exits within the collective timeout with a message, the
# files are complete, --resume continues), and bad launcher variables.
# Usage: distributed.sh GEODL CONFIG WORKDIR
set -euo pipefail
geodl=$(realpath "$1") config=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
base=(-q train "$config" --samples-size 64 --seed 4)
args=("${base[@]}" --batch-size 2 --collective-timeout 20)
port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# two_ranks NAME FLAGS...: ranks 0 and 1 started with torchrun's variables on a fresh port,
# logging to $work/NAME-RANK.log; their process ids in $pids.
two_ranks() {
  local name=$1 p; shift; p=$(port); pids=()
  for rank in 0 1; do
    RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$geodl" "${args[@]}" "$@" > "$work/$name-$rank.log" 2>&1 &
    pids+=($!)
  done
}
# first_epoch FOLDER: waits until the run writing FOLDER has finished its first epoch.
first_epoch() {
  for _ in $(seq 1 3000); do
    [ "$( (cat "$1/metrics.csv" 2>/dev/null || true) | wc -l)" -ge 2 ] && return
    sleep 0.02
  done
}
identical() { grep -q "weights identical on all 2 ranks" "$1" || { echo "$2: no identical-weights line:"; cat "$1"; exit 1; }; }

# 1. The launchers.
"$geodl" "${args[@]}" --epochs 2 --output-path "$work/nproc" --nproc 2 > "$work/nproc.log" 2>&1 ||
  { cat "$work/nproc.log"; exit 1; }
identical "$work/nproc.log" "--nproc 2"
grep -q "batch 2 per rank x 2 ranks (geodl --nproc) = 4" "$work/nproc.log"
"$geodl" info "$work/nproc/model.pt" | grep -q "trained on 2 ranks, batch 2 per rank (global 4)"
grep -q "batch 2 per rank x 2 ranks = 4" "$work/nproc/report.html"
echo "geodl --nproc 2: $(grep -o 'weights identical.*' "$work/nproc.log")"
if command -v torchrun > /dev/null; then
  # --redirects 1 --tee 1: Debian 12's torchrun (torch 1.13 on Python 3.11) fails on its own
  # defaults (its Std flags parse "0" as nothing); these keep the output on the console.
  torchrun --no_python --redirects 1 --tee 1 --nproc_per_node 2 --master_port "$(port)" "$geodl" "${args[@]}" --epochs 1 \
    --output-path "$work/torchrun" > "$work/torchrun.log" 2>&1 || { cat "$work/torchrun.log"; exit 1; }
  identical "$work/torchrun.log" torchrun
  grep -q "(torchrun)" "$work/torchrun.log"
  echo "torchrun --no_python --nproc_per_node 2: weights identical, agent store"
else
  echo "SKIPPED: torchrun is not installed (Debian's python3-torch has it): no torchrun check"
fi
p=$(port); pids=()
for rank in 0 1; do
  SLURM_PROCID=$rank SLURM_NTASKS=2 SLURM_LOCALID=$rank SLURM_NTASKS_PER_NODE=2 SLURM_JOB_ID=77 \
    SLURM_JOB_NODELIST="localhost" MASTER_PORT=$p "$geodl" "${args[@]}" --epochs 1 --sync-batchnorm --output-path "$work/slurm" \
    > "$work/slurm-$rank.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || { cat "$work"/slurm-*.log; exit 1; }; done
identical "$work/slurm-0.log" srun
grep -q "(srun) = 4, BatchNorm over all ranks" "$work/slurm-0.log"
echo "srun (simulated Slurm variables), sync_batchnorm: weights identical"

# Only rank 0 writes: rank 1 runs under strace, which must show it creating, renaming or
# removing nothing in the output folder.
if command -v strace > /dev/null; then
  p=$(port)
  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$geodl" "${args[@]}" --epochs 1 \
    --output-path "$work/writes" > "$work/writes-0.log" 2>&1 &
  zero=$!
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p strace -f -qq -o "$work/rank1.trace" \
    -e trace=openat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat \
    "$geodl" "${args[@]}" --epochs 1 --output-path "$work/writes" > "$work/writes-1.log" 2>&1 ||
    { cat "$work/writes-1.log"; exit 1; }
  wait $zero || { cat "$work/writes-0.log"; exit 1; }
  [ -e "$work/writes/model.pt" ] || { echo "rank 0 wrote no model"; exit 1; }
  if grep "$work/writes" "$work/rank1.trace" | grep -E 'O_WRONLY|O_RDWR|O_CREAT|rename|unlink|mkdir' | grep -v ENOENT; then
    echo "rank 1 wrote in the output folder (above)"; exit 1
  fi
  echo "only rank 0 writes: rank 1 (under strace) created, renamed and removed nothing in the output folder"
else
  echo "SKIPPED: strace is not installed: the check that only rank 0 writes did not run"
fi

# Sharded validation gives one process's metrics: with sync_batchnorm and a learning rate
# of 1e-9, 2 ranks of batch 2 and 1 process of batch 4 see the same global batches, so the
# validation's confusion counts (IoU, F1, accuracy) are equal and its loss nearly so.
same=(--epochs 1 --learning-rate 1e-9 --num-trn-samples 24 --sync-batchnorm)
"$geodl" "${base[@]}" "${same[@]}" --batch-size 4 --output-path "$work/val-one" > "$work/val-one.log" 2>&1 ||
  { cat "$work/val-one.log"; exit 1; }
"$geodl" "${args[@]}" "${same[@]}" --nproc 2 --output-path "$work/val-two" > "$work/val-two.log" 2>&1 ||
  { cat "$work/val-two.log"; exit 1; }
one=$(sed -n 2p "$work/val-one/metrics.csv" | cut -d, -f5-16) two=$(sed -n 2p "$work/val-two/metrics.csv" | cut -d, -f5-16)
[ "$one" = "$two" ] || { echo "validation metrics differ: 1 process $one, 2 ranks $two"; exit 1; }
loss_one=$(sed -n 2p "$work/val-one/metrics.csv" | cut -d, -f4) loss_two=$(sed -n 2p "$work/val-two/metrics.csv" | cut -d, -f4)
awk -v a="$loss_one" -v b="$loss_two" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * a) }' ||
  { echo "validation losses differ: $loss_one and $loss_two"; exit 1; }
echo "sharded validation: the same IoU, F1 and accuracy as one process ($one), loss $loss_one / $loss_two"

# 2. Resuming with another world size.
"$geodl" "${args[@]}" --epochs 2 --output-path "$work/nproc" --resume > "$work/resume-1.log" 2>&1 ||
  { cat "$work/resume-1.log"; exit 1; }
grep -q "nothing to train" "$work/resume-1.log"
"$geodl" "${args[@]}" --epochs 3 --output-path "$work/nproc" --resume > "$work/resume-1.log" 2>&1 ||
  { cat "$work/resume-1.log"; exit 1; }
grep -q "resuming after epoch 2" "$work/resume-1.log"
"$geodl" "${args[@]}" --epochs 4 --output-path "$work/nproc" --resume --nproc 2 > "$work/resume-2.log" 2>&1 ||
  { cat "$work/resume-1.log"; exit 1; }
grep -q "resuming after epoch 3" "$work/resume-2.log"
identical "$work/resume-2.log" "resume on 2 ranks"
echo "resumed: 2 ranks -> 1 process (epoch 3) -> 2 ranks (epoch 4)"

# 3. A rank with another configuration: both refuse, naming the rank and the key.
p=$(port); pids=()
for rank in 0 1; do
  RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$geodl" "${args[@]}" --epochs 1 \
    --learning-rate "0.00$((rank + 1))" --output-path "$work/mismatch" > "$work/mismatch-$rank.log" 2>&1 &
  pids+=($!)
done
for rank in 0 1; do
  set +e; wait "${pids[$rank]}"; code=$?; set -e
  [ $code = 3 ] || { echo "mismatch: rank $rank exit code $code, expected 3"; cat "$work/mismatch-$rank.log"; exit 1; }
  grep -q "rank 1 would train another run than rank 0: its learning_rate is 0.002, rank 0's 0.001" "$work/mismatch-$rank.log"
done
[ ! -e "$work/mismatch/model.pt" ]
echo "another config on rank 1: both ranks exit 3 ($(grep -o 'rank 1 would[^;]*' "$work/mismatch-0.log"))"

# 4. A rank killed mid-run: the other stops within the timeout, files complete, resume works.
two_ranks killed --epochs 30 --output-path "$work/killed"
first_epoch "$work/killed"
kill -9 "${pids[1]}"
start=$(date +%s)
set +e; wait "${pids[0]}"; code=$?; set -e
seconds=$(( $(date +%s) - start ))
[ $code != 0 ] || { echo "rank 0 went on after rank 1 died"; exit 1; }
[ $seconds -le 25 ] || { echo "rank 0 took $seconds s to stop (timeout 20)"; exit 1; }
grep -q "rank 1 stopped answering (died or hung).*continue with --resume" "$work/killed-0.log" || { cat "$work/killed-0.log"; exit 1; }
"$geodl" info "$work/killed/last_checkpoint.pt" > /dev/null
"$geodl" "${args[@]}" --epochs 2 --output-path "$work/killed" --resume --nproc 2 > "$work/killed-resume.log" 2>&1 ||
  { cat "$work/killed-resume.log"; exit 1; }
echo "rank 1 killed: rank 0 stopped after $seconds s with exit code $code ($(grep -o 'with the other ranks failed' "$work/killed-0.log" | head -1)); checkpoint complete; resumed"

# 5. SIGTERM on one rank stops both at the same batch (exit 5), the checkpoint kept; and
# SIGTERM to the --nproc launcher reaches its ranks.
two_ranks stopped --epochs 30 --output-path "$work/stopped"
first_epoch "$work/stopped"
kill -TERM "${pids[1]}"
for rank in 0 1; do
  set +e; wait "${pids[$rank]}"; code=$?; set -e
  [ $code = 5 ] || { echo "SIGTERM on rank 1: rank $rank exit code $code, expected 5"; cat "$work/stopped-$rank.log"; exit 1; }
done
grep -q "continue with --resume" "$work/stopped-0.log"
"$geodl" "${args[@]}" --epochs 30 --output-path "$work/launcher" --nproc 2 > "$work/launcher.log" 2>&1 &
pid=$!
first_epoch "$work/launcher"
kill -TERM $pid
set +e; wait $pid; code=$?; set -e
[ $code = 5 ] || { echo "SIGTERM on the launcher: exit code $code, expected 5"; cat "$work/launcher.log"; exit 1; }
"$geodl" info "$work/launcher/last_checkpoint.pt" > /dev/null
if find "$work" -name '*.tmp-*' | grep -q .; then echo "temporaries left:"; find "$work" -name '*.tmp-*'; exit 1; fi
echo "SIGTERM on rank 1, and on the --nproc launcher: every rank exits 5 at the same batch, checkpoint kept"

# 6. Bad launcher variables: a clear message, at once.
bad() {  # bad VARIABLE=VALUE...: the run's message
  set +e; env "$@" "$geodl" "${base[@]}" --batch-size 2 --collective-timeout 3 --epochs 1 --output-path "$work/bad" > "$work/bad.log" 2>&1
  local code=$?; set -e
  [ $code = 3 ] || [ $code = 4 ] || { echo "bad variables $*: exit code $code"; cat "$work/bad.log"; exit 1; }
}
bad WORLD_SIZE=0 RANK=0; grep -q "WORLD_SIZE is 0" "$work/bad.log"
bad WORLD_SIZE=2 RANK=2; grep -q "RANK is 2 but WORLD_SIZE is 2" "$work/bad.log"
bad WORLD_SIZE=2 RANK=0 MASTER_PORT=99999; grep -q "MASTER_PORT is 99999" "$work/bad.log"
bad WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(port)"
grep -q "cannot join the others" "$work/bad.log"
busy=$(port)
/usr/bin/python3 -c "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', $busy)); s.listen(); time.sleep(60)" &
holder=$!
sleep 0.5
bad WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$busy"
kill $holder 2>/dev/null || true
grep -q "cannot join the others through 127.0.0.1:$busy" "$work/bad.log" || { cat "$work/bad.log"; exit 1; }
echo "bad variables: WORLD_SIZE=0, RANK >= WORLD_SIZE, a port out of range, no rank 0, a port in use: messages"
echo "distributed training: every check passed"
