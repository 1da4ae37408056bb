# The preamble every benchmarks/run_*.sh sources first, before anything else:
#   here     this folder (the references, speed_model.sh)
#   threads  GEODL_BENCH_THREADS, or every core
#   cpu      the CPU's model name: every benchmark prints it beside its figures
#   bench_work NAME        work=GEODL_BENCH_DIR or BUILD/NAME, emptied, and geodl=BUILD's
#                          geodl (needs $build)
#   massachusetts_data     data=GEODL_DATA or ../shared/data/massachusetts (absolute when
#                          there); with "required", the benchmark stops when it is missing
# shellcheck shell=bash
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
threads=${GEODL_BENCH_THREADS:-$(nproc)}
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)

bench_work() {
  work=${GEODL_BENCH_DIR:-$build/$1}
  rm -rf "$work" && mkdir -p "$work"
  geodl=$build/engine/geodl
}

massachusetts_data() {
  data=${GEODL_DATA:-$here/../../shared/data/massachusetts}
  if [ -d "$data" ]; then
    data=$(realpath "$data")
  elif [ "${1:-}" = required ]; then
    echo "no Massachusetts data in $data (set GEODL_DATA)"
    exit 1
  fi
}
