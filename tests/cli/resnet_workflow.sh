#!/usr/bin/env bash
# The workflow on a ResNet UNet with a non-default loss, optimizer and schedule: the scene's
# samples -> train (resnet18_unet, ce_dice, adamw, onecycle) -> classify -> evaluate.
# Usage: resnet_workflow.sh GEODL SCENE_DIR
set -euo pipefail
geodl=$1 scene=$2
out=$scene/resnet
rm -rf "$out"
"$geodl" -q train "$scene/config.yaml" --samples-size 64 --model resnet18_unet --loss ce_dice --optimizer adamw \
  --scheduler onecycle --learning-rate 0.003 --epochs 3 --batch-size 4 --threads 2 --seed 1 --output-path "$out"
"$geodl" info "$out/model.pt" | grep -E "^model: resnet18_unet"
grep -aq '"loss":"ce_dice"' "$out/model.pt" || { echo "the model file does not record the loss"; exit 1; }
"$geodl" -q classify --input "$scene/scene_val.tif" --model "$out/model.pt" --output "$out/classes.tif" --threads 2
"$geodl" -q evaluate "$out/classes.tif" "$scene/scene_val_labels.gpkg"
echo "resnet workflow: done"
