#!/usr/bin/env bash
# The workflow on a model with a ResNet encoder and a non-default loss, optimizer and
# schedule: the scene's samples -> train -> classify -> evaluate.
# Usage: resnet_workflow.sh GEODL SCENE_DIR [MODEL LOSS OPTIMIZER SCHEDULER EPOCHS]
# (default: resnet18_unet ce_dice adamw onecycle 3)
set -euo pipefail
geodl=$1 scene=$2
model=${3:-resnet18_unet} loss=${4:-ce_dice} optimizer=${5:-adamw} scheduler=${6:-onecycle} epochs=${7:-3}
out=$scene/$model
rm -rf "$out"
"$geodl" -q train "$scene/config.yaml" --samples-size 64 --model "$model" --loss "$loss" --optimizer "$optimizer" \
  --scheduler "$scheduler" --learning-rate 0.003 --epochs "$epochs" --batch-size 4 --threads 2 --seed 1 \
  --num-trn-samples 16 --num-val-samples 8 --output-path "$out"
"$geodl" info "$out/model.pt" | grep -E "^model: $model"
grep -aq "\"loss\":\"$loss\"" "$out/model.pt" || { echo "the model file does not record the loss"; exit 1; }
"$geodl" -q classify --input "$scene/scene_val.tif" --model "$out/model.pt" --output "$out/classes.tif" --threads 2
"$geodl" -q evaluate "$out/classes.tif" "$scene/scene_val_labels.gpkg"
echo "$model workflow: done"
