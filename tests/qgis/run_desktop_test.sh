#!/usr/bin/env bash
# End to end in the real QGIS desktop: qgis.bin under Xvfb with a throw-away profile whose
# settings enable the plugin and point at its folder; desktop_check.py runs inside QGIS,
# writes its findings and a screenshot, and quits QGIS.
# Usage: run_desktop_test.sh PLUGIN_DIR ARTIFACT_DIR GEODL
set -euo pipefail
plugin_dir=$(realpath "$1")
artifacts=$(realpath -m "$2")
geodl=$(realpath "$3")
here=$(dirname "$(realpath "$0")")
mkdir -p "$artifacts"
profiles=$(mktemp -d)
trap 'rm -rf "$profiles"' EXIT
ini="$profiles/profiles/default/QGIS/QGIS3.ini"
# The same registration scripts/demo.sh does for a user's profile.
/usr/bin/python3 "$here/../../scripts/register-qgis-plugin.py" "$plugin_dir" "$ini"
cat >> "$ini" <<INI

[qgis]
checkVersion=false
showTips340=false
INI
# The built-in scene, for geodl:createsamples inside QGIS.
"$geodl" make-scene "$profiles/scene" --size 512 --seed 2 > /dev/null
export GEODL_TEST_SCENE="$profiles/scene" GEODL_TEST_GEODL="$geodl"
# The model QGIS trains: resnet18_unet, with a pretrained-encoder file written from
# torchvision's randomly initialised ResNet-18 where python3-torchvision is installed.
export GEODL_TEST_MODEL=resnet18_unet GEODL_TEST_ENCODER=
if /usr/bin/python3 "$here/../reference/write_torchvision_encoder.py" resnet18 "$profiles/resnet18.pt" 2> /dev/null; then
  GEODL_TEST_ENCODER="$profiles/resnet18.pt"
else
  echo "python3-torchvision is not installed: QGIS trains resnet18_unet without a pretrained encoder"
fi
export GEODL_TEST_RESULT="$artifacts/desktop_result.json"
export GEODL_TEST_SCREENSHOT="$artifacts/qgis_desktop.png"
rm -f "$GEODL_TEST_RESULT" "$GEODL_TEST_SCREENSHOT" "$artifacts/qgis_toolbox.png" "$artifacts/qgis_classify_dialog.png"
status=0
timeout 240 xvfb-run -a -s "-screen 0 1366x800x24" \
  qgis.bin --noversioncheck --nologo --profiles-path "$profiles" --code "$here/desktop_check.py" \
  > "$artifacts/qgis_desktop.log" 2>&1 || status=$?
echo "qgis.bin exited with $status"
if [ ! -f "$GEODL_TEST_RESULT" ]; then
  echo "no result from inside QGIS; its log:"
  tail -n 40 "$artifacts/qgis_desktop.log"
  exit 1
fi
cat "$GEODL_TEST_RESULT"; echo
# What QGIS trained, from the model file: the architecture and the encoder's source.
"$geodl" info "$profiles/scene/model/model.pt" > "$artifacts/desktop_model_info.txt" 2>&1 || true
grep -q "^model: $GEODL_TEST_MODEL" "$artifacts/desktop_model_info.txt" ||
  { echo "QGIS did not train a $GEODL_TEST_MODEL:"; cat "$artifacts/desktop_model_info.txt"; exit 1; }
if [ -n "$GEODL_TEST_ENCODER" ]; then
  grep -q "resnet18.pt" "$artifacts/desktop_model_info.txt" ||
    { echo "the model file does not record the pretrained encoder:"; cat "$artifacts/desktop_model_info.txt"; exit 1; }
fi
echo "QGIS trained $(grep -m1 '^model:' "$artifacts/desktop_model_info.txt")${GEODL_TEST_ENCODER:+ from a pretrained encoder}"
/usr/bin/python3 - "$GEODL_TEST_RESULT" "$GEODL_TEST_SCREENSHOT" <<'PY'
import json, os, sys
result = json.load(open(sys.argv[1]))
problems = []
if result.get('error'):
    problems.append('error inside QGIS: ' + result['error'])
if not result.get('plugin_loaded'):
    problems.append('QGIS did not load libgeodlplugin')
if not result.get('provider'):
    problems.append('provider geodl not registered')
if not result.get('algorithm'):
    problems.append('geodl:estimatebatchsize not registered')
if not (result.get('training_samples', 0) > 0 and result.get('validation_samples', 0) > 0):
    problems.append('geodl:createsamples made no samples: %r' % result)
if not result.get('footprint_in_project'):
    problems.append('the footprint layer was not opened in the project')
if not (result.get('model_file') and result.get('report_has_chart') and 1 <= result.get('best_epoch', 0) <= 4):
    problems.append('geodl:train gave no model file or report: %r' % result)
if result.get('classified_renderer') != 'paletted' or 'building' not in result.get('classified_labels', []):
    problems.append('geodl:classify did not open a paletted class layer: %r' % result)
if not (isinstance(result.get('max_batch'), (int, float)) and result['max_batch'] >= 1):
    problems.append('processing.run returned no max batch: %r' % result.get('max_batch'))
if not (result.get('active_layer_actions') and result.get('raster_menu_has_geodl')):
    problems.append('no Classify Active Layer actions in the Raster menu: %r' % result)
if not result.get('vector_refused'):
    problems.append('Classify Active Layer did not refuse a vector layer: %r' % result)
if not result.get('band_mismatch_refused'):
    problems.append('Classify Active Layer did not refuse a raster whose bands do not fit: %r' % result)
if not result.get('context_menu_has_action'):
    problems.append("the Layers panel's context menu of a raster lacks Classify Active Layer: %r" % result)
if not (result.get('active_layer_task_started') and result.get('active_layer_result')
        and result.get('active_layer_renderer') == 'paletted' and result.get('active_layer_above_source')):
    problems.append('Classify Active Layer gave no styled layer above the source: %r' % result)
# A stopped classification: Classify Active Layer asks whether to continue it, and continuing
# gives an uninterrupted run's classes, with nothing of the stopped run left.
if not (result.get('resume_stopped_exit') == 5 and result.get('resume_blocks_kept', 0) > 0
        and 'run it again with the option resume' in result.get('resume_stopped_message', '')):
    problems.append('the command line did not stop with finished blocks to resume: %r' % result)
question = result.get('resume_question', '')
if not ('was stopped with %d of its' % result.get('resume_blocks_kept', -1) in question and 'Continue it' in question):
    problems.append('Classify Active Layer did not offer to continue the stopped run: %r' % question)
if not (result.get('resume_task_started') and result.get('resume_output') and result.get('resumed_as_uninterrupted')
        and result.get('resume_journal_gone')):
    problems.append('the continued classification is not an uninterrupted run\'s: %r' % result)
# The same from the Processing dialog of geodl:classify: Run asks, Continue resumes.
dialog_question = result.get('dialog_resume_question', '')
if not (result.get('dialog_stopped_exit') == 5 and result.get('dialog_blocks_kept', 0) > 0
        and 'was stopped with %d of its' % result.get('dialog_blocks_kept', -1) in dialog_question):
    problems.append('the Processing dialog did not offer to continue the stopped run: %r' % result)
if not (result.get('dialog_log_resumed') and result.get('dialog_resumed_as_uninterrupted')
        and result.get('dialog_journal_gone')):
    problems.append("the Processing dialog's continued run is not a resumed uninterrupted run's: %r" % result)
shots = [sys.argv[2]] + [os.path.join(os.path.dirname(sys.argv[2]), n)
                         for n in ('qgis_toolbox.png', 'qgis_classify_dialog.png')]
for shot in shots:
    if not (os.path.exists(shot) and os.path.getsize(shot) > 5000):
        problems.append('no screenshot at ' + shot)
# QGIS's number boxes, as GeoDL's parameters declare them: a sentinel reads as its word, a
# whole number has no decimals.
numbers = result.get('classify_dialog_numbers', {})
for name, want in (('WINDOW', 'Automatic'), ('OVERLAP', 'Automatic'), ('THREADS', 'All cores')):
    if numbers.get(name) != want:
        problems.append('the classify dialog shows %s as %r, not %r: %r' % (name, numbers.get(name), want, numbers))
if numbers.get('BATCH_SIZE') != '2':
    problems.append('the classify dialog shows BATCH_SIZE as %r, not 2: %r' % (numbers.get('BATCH_SIZE'), numbers))
if not result.get('qgis_version', '').startswith(os.environ.get('GEODL_QGIS_SERIES', '3.40') + '.'):
    problems.append('QGIS %r ran, not the %s the plugin was built for' % (result.get('qgis_version'), os.environ.get('GEODL_QGIS_SERIES')))
if problems:
    print('\n'.join(problems))
    sys.exit(1)
print('QGIS %s desktop: plugin loaded, algorithms %s registered, max_batch=%d, %d+%d samples '
      'with their footprints opened in the project, a model trained with its report, the '
      'scene classified and opened with the model\'s classes, the active layer classified '
      'by a task into a styled layer above it, a stopped classification continued when it '
      'offered to (%s); the classify dialog shows %s; screenshots %s' % (
          result['qgis_version'], ', '.join(result['algorithms']), result['max_batch'], result['training_samples'],
          result['validation_samples'], question, numbers, ', '.join(shots)))
PY
