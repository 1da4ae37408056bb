# Sourced by the classification benchmarks. speed_model GEODL [MODEL.pt]: prints MODEL.pt, or
# trains unetsmall for one short epoch on a small generated scene in ./small (the speed of
# classification does not depend on the weights) and prints that model.
speed_model() {
  if [ -n "${2:-}" ]; then echo "$2"; return; fi
  "$1" make-scene small --size 512 --seed 3 > /dev/null
  (cd small && "$1" -q samples config.yaml --samples-size 256 --samples-dist 128 > /dev/null &&
    "$1" -q train config.yaml --samples-size 256 --batch-size 4 --epochs 1 --output-path model > /dev/null)
  echo "$PWD/small/model/model.pt"
}
