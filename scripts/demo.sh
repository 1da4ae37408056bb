#!/usr/bin/env bash
# Quick start, first command: installs what is missing, builds, installs the `geodl` tool
# and the QGIS plugin, and runs the main job on built-in data: the synthetic scenes are
# generated and cut into training samples, a UNet is trained on them (a few minutes on 2
# cores), classifies the validation scene, and its IoU against the scene's truth is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
prefix=${GEODL_PREFIX:-/usr/local}
cmake --install build --prefix "$prefix"
plugin_dir="$prefix/lib/geodl/qgis-plugins"
# Point this user's QGIS profile at the plugin's own folder and enable GeoDL.
/usr/bin/python3 scripts/register-qgis-plugin.py "$plugin_dir"
echo
echo "Installed: $prefix/bin/geodl, and the QGIS plugin in $plugin_dir (start QGIS:"
echo "the Processing Toolbox has a GeoDL group, the Raster menu GeoDL > Classify Active Layer;"
echo "qgis_process.bin list shows the geodl: algorithms; the example graphical model is"
echo "$prefix/share/geodl/models/geodl_workflow.model3; user guide: docs/user-guide.md)."
echo
"$prefix/bin/geodl" models
echo
demo=${GEODL_DEMO_DIR:-$PWD/build/demo}
echo "Built-in scenes in $demo, then training samples from them:"
"$prefix/bin/geodl" make-scene "$demo"
"$prefix/bin/geodl" samples "$demo/config.yaml"
echo
echo "Training unetsmall on them (8 epochs; progress per batch with ETA):"
"$prefix/bin/geodl" train "$demo/config.yaml"
echo
"$prefix/bin/geodl" info "$demo/model/model.pt"
echo
echo "Classifying the validation scene with it, then its accuracy against the scene's truth:"
"$prefix/bin/geodl" classify "$demo/config.yaml" --probabilities --polygons
"$prefix/bin/geodl" evaluate "$demo/classified/scene_val_inference.tif" "$demo/scene_val_labels.gpkg"
echo
echo "Outputs: $demo/model/ (model.pt, report.html with the loss and IoU curves, metrics.csv),"
echo "$demo/classified/ (class raster, probabilities, polygons: open them in QGIS). Benchmarks:"
echo "benchmarks/run_memory_benchmark.sh build, benchmarks/run_train_benchmark.sh build,"
echo "benchmarks/run_classify_benchmark.sh build"
