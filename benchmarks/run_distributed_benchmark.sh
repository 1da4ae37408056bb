#!/usr/bin/env bash
# Data-parallel training side by side in one run, on the Massachusetts buildings data
# (../shared/data): unetsmall, 256 px samples, a global batch of 8, as 1 process x all
# cores' threads and as 2 ranks (`geodl train --nproc 2`) x half the threads each. Prints
# the CPU, samples/s of each, the time waiting in the gradient all-reduce per step, the
# scaling efficiency (2 ranks' samples/s over 1 process's on the same cores), and the
# loopback all-reduce bandwidth of Gloo for unetsmall's and unet's gradient sizes.
# Usage: benchmarks/run_distributed_benchmark.sh BUILD_DIR [EPOCHS] [TRAIN_SAMPLES]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=$(realpath "${1:?usage: run_distributed_benchmark.sh BUILD_DIR [EPOCHS] [TRAIN_SAMPLES]}")
epochs=${2:-2}
samples=${3:-48}
massachusetts_data required
bench_work bench-distributed
cores=$(nproc)
cat > "$work/massachusetts.csv" <<CSV
$data/22978945_15.tif,$data/massachusetts_buildings.gpkg,class,trn
$data/23429155_15.tif,$data/massachusetts_buildings.gpkg,class,val
CSV
cat > "$work/config.yaml" <<YAML
global: {samples_size: 256, num_classes: 2, data_path: ., number_of_bands: 3, model_name: unetsmall}
sample: {prep_csv_file: massachusetts.csv, samples_dist: 200}
training: {output_path: geodl, num_epochs: $epochs, learning_rate: 0.001, seed: 1, num_trn_samples: $samples, num_val_samples: 16}
YAML
echo "== $cores cores, $cpu; unetsmall, 256 px, global batch 8, $samples training samples, $epochs epochs"
(cd "$work" && "$geodl" -q samples config.yaml > /dev/null)
run() {  # run NAME ARGS...: samples/s of the last epoch, all-reduce seconds
  (cd "$work" && "$geodl" -q train config.yaml --output-path "$1" "${@:2}" > "$1.log" 2>&1) || { cat "$work/$1.log"; exit 1; }
  local speed; speed=$(grep -o '[0-9.]* samples/s' "$work/$1.log" | tail -1 | cut -d' ' -f1)
  local reduce; reduce=$(grep -o 'all-reduce waits [0-9.]* s' "$work/$1.log" | grep -o '[0-9.]*' || echo 0)
  echo "$speed $reduce"
}
read -r one _ < <(run one --batch-size 8 --threads "$cores")
read -r two reduce < <(run two --batch-size 4 --nproc 2)
steps=$(( epochs * (samples / 8) ))
awk -v one="$one" -v two="$two" -v reduce="$reduce" -v steps="$steps" -v cores="$cores" 'BEGIN {
  printf "1 process x %d threads, batch 8:          %.2f samples/s\n", cores, one
  printf "2 ranks x %d thread(s), batch 4 per rank: %.2f samples/s (all-reduce wait %.1f ms per step)\n", cores / 2, two, 1000 * reduce / steps
  printf "scaling efficiency (same cores): %.0f%%\n", 100 * two / one }'
# Gloo's all-reduce over loopback, through Debian's python3-torch (the same c10d and Gloo).
cat > "$work/allreduce.py" <<'PY'
import os, time, socket
import torch, torch.distributed as dist, torch.multiprocessing as mp
def work(rank, port, out):
    torch.set_num_threads(1)
    dist.init_process_group('gloo', init_method='tcp://127.0.0.1:%d' % port, rank=rank, world_size=2)
    for name, n in (('unetsmall', 1798643), ('unet', 28950999)):
        t = torch.ones(n)
        dist.all_reduce(t)
        start = time.perf_counter(); reps = 5
        for _ in range(reps): dist.all_reduce(t)
        s = (time.perf_counter() - start) / reps
        if rank == 0: out.put('%s gradients (%.1f MB): all-reduce %.1f ms, %.2f GB/s algorithm bandwidth' % (name, n * 4 / 1e6, s * 1e3, n * 4 / s / 1e9))
    dist.destroy_process_group()
if __name__ == '__main__':
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()
    q = mp.get_context('spawn').SimpleQueue()
    mp.start_processes(work, args=(port, q), nprocs=2, start_method='spawn')
    while not q.empty(): print('loopback, 2 ranks: ' + q.get())
PY
/usr/bin/python3 "$work/allreduce.py"
