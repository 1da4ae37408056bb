"""Runs inside the QGIS desktop (qgis.bin --code): checks GeoDL from there (the three
algorithms from the Processing registry, then the Classify Active Layer action and its
task), saves screenshots (the map with the classes over the imagery, the Processing
Toolbox on GeoDL, the classify dialog), and quits."""
import json
import os
import time
import traceback

from qgis.PyQt.QtCore import QRect, QTimer, Qt
from qgis.PyQt.QtGui import QColor, QFont, QImage, QPainter
from qgis.PyQt.QtWidgets import QAction, QApplication
from qgis.core import Qgis, QgsApplication, QgsProject, QgsSettings
from qgis.utils import iface

RESULT = {}
ARTIFACTS = os.path.dirname(os.environ['GEODL_TEST_SCREENSHOT'])
STATE = {}


def finish():
    with open(os.environ['GEODL_TEST_RESULT'], 'w') as f:
        json.dump(RESULT, f)
    # Nothing to save: quit without the "save the project?" question.
    QgsProject.instance().clear()
    QgsProject.instance().setDirty(False)
    iface.actionExit().trigger()


def save_titled(widget, path):
    """Saves a widget's picture under a title bar, as a window manager would draw it (Xvfb has
    none): the window's title and the QGIS version it runs in."""
    shot = widget.grab().toImage()
    bar = 28
    image = QImage(shot.width(), shot.height() + bar, QImage.Format.Format_RGB32)
    image.fill(QColor('#dcdcdc'))
    painter = QPainter(image)
    painter.drawImage(0, bar, shot)
    font = QFont()
    font.setPointSize(10)
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(QColor('#303030'))
    title = widget.windowTitle() or 'QGIS'
    painter.drawText(QRect(0, 0, shot.width(), bar), Qt.AlignmentFlag.AlignCenter,
                     '%s  (QGIS %s)' % (title, Qgis.version()))
    painter.end()
    image.save(path)


def number_boxes(dialog):
    """What the classify dialog's number boxes show, by parameter name."""
    shown = {}
    for name, wrapper in dialog.mainWidget().wrappers.items():
        widget = wrapper.wrappedWidget() if hasattr(wrapper, 'wrappedWidget') else None
        if widget is not None and hasattr(widget, 'specialValueText'):
            shown[name] = widget.text()
    return shown


def screenshot():
    try:
        QApplication.processEvents()
        save_titled(iface.mainWindow(), os.environ['GEODL_TEST_SCREENSHOT'])
        toolbox = STATE['toolbox']
        toolbox.grab().save(os.path.join(ARTIFACTS, 'qgis_toolbox.png'))
        # The classify dialog, as the Toolbox opens it.
        from processing.gui.AlgorithmDialog import AlgorithmDialog
        alg = QgsApplication.processingRegistry().createAlgorithmById('geodl:classify')
        dialog = AlgorithmDialog(alg, False, iface.mainWindow())
        dialog.show()
        QApplication.processEvents()
        RESULT['classify_dialog_numbers'] = number_boxes(dialog)
        save_titled(dialog, os.path.join(ARTIFACTS, 'qgis_classify_dialog.png'))
        dialog.close()
    except Exception:
        RESULT['error'] = traceback.format_exc()
    finish()


def still_running(step):
    """Whether a task started at STATE['start'] still runs (3 minutes at most): `step` is then
    called again in half a second."""
    if QgsApplication.taskManager().countActiveTasks() > 0 and time.time() - STATE['start'] < 180:
        QTimer.singleShot(500, step)
        return True
    return False


def journal_of(output):
    """The folder where a classification into `output` keeps its finished blocks."""
    return os.path.join(os.path.dirname(output), '.' + os.path.basename(output) + '.partial')


def layer_named(name):
    layers = QgsProject.instance().mapLayersByName(name)
    return layers[0] if layers else None


def after_active_layer_task():
    """Polls until the Classify Active Layer task is done, then checks its layer."""
    try:
        if still_running(after_active_layer_task):
            return
        result = layer_named('scene classes')
        RESULT['active_layer_result'] = result is not None
        if result is not None:
            RESULT['active_layer_renderer'] = result.renderer().type()
            root = QgsProject.instance().layerTreeRoot()
            order = [node.layer().name() for node in root.findLayers()]
            RESULT['active_layer_above_source'] = order.index('scene classes') < order.index('scene')
            RESULT['active_layer_output'] = result.source()
            result.renderer().setOpacity(0.6)
            # Only the class layer over the imagery: the other outputs (Processing's class
            # raster, the footprint layers) are hidden and collapsed.
            for node in root.findLayers():
                if node.layer().name() not in ('scene classes', 'scene'):
                    node.setItemVisibilityChecked(False)
                    node.setExpanded(False)
            iface.mapCanvas().setExtent(result.extent())
            iface.mapCanvas().refresh()
    except Exception:
        RESULT['error'] = traceback.format_exc()
        QTimer.singleShot(2000, screenshot)
        return
    QTimer.singleShot(500, resume_check)


def answer_resume_question(tries=0, key='resume_question'):
    """Clicks Continue in the question GeoDL asks about a stopped run (Classify Active Layer,
    or the Processing dialog), and keeps its text under RESULT[key]."""
    for widget in QApplication.topLevelWidgets():
        if widget.objectName() == 'geodlResumeQuestion' and widget.isVisible():
            RESULT[key] = widget.text()
            for button in widget.buttons():
                if button.text() == 'Continue':
                    button.click()
                    return
    if tries < 40:
        QTimer.singleShot(250, lambda: answer_resume_question(tries + 1, key))


def same_classes(path, reference):
    """Whether the class raster at `path` holds the classes of the one at `reference`."""
    from osgeo import gdal
    # (GDAL's Python needs each dataset kept while its bands are read.)
    a, b = gdal.Open(path), gdal.Open(reference)
    if a is None or b is None:
        return False
    return bool((a.GetRasterBand(1).ReadAsArray() == b.GetRasterBand(1).ReadAsArray()).all())


def stop_after_first_block(output):
    """A command-line classification of big.tif into `output` stopped by SIGTERM once its first
    block is finished; returns its exit code, the end of its message and the blocks kept."""
    import glob
    import signal
    import subprocess
    journal = journal_of(output)
    run = subprocess.Popen([os.environ['GEODL_TEST_GEODL'], '-q', 'classify', '--input',
                            os.path.join(os.environ['GEODL_TEST_SCENE'], 'big.tif'),
                            '--model', QgsSettings().value('geodl/lastModel'), '--output', output],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = time.time()
    while not glob.glob(os.path.join(journal, 'block-*.json')) and run.poll() is None and time.time() - start < 120:
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    code = run.wait()
    return code, run.stderr.read().decode()[-300:], len(glob.glob(os.path.join(journal, 'block-*.json')))


def resume_check():
    """A classification of a larger raster stopped after its first block (SIGTERM to the
    command line, as a cluster's time limit or QGIS's Cancel would stop it), then Classify
    Active Layer on that raster: it asks whether to continue, and continuing gives the
    classes of an uninterrupted run."""
    try:
        from osgeo import gdal
        scene = os.environ['GEODL_TEST_SCENE']
        source = gdal.Open(os.path.join(scene, 'scene_trn.tif'))
        gt = source.GetGeoTransform()
        big = os.path.join(scene, 'big.tif')
        gdal.Translate(big, source, width=1024, height=1024, resampleAlg='bilinear',
                       outputBounds=[gt[0], gt[3], gt[0] + 1024 * gt[1], gt[3] + 1024 * gt[5]])
        source = None
        output = os.path.join(scene, 'big_classes.tif')  # the name Classify Active Layer gives
        journal = journal_of(output)
        (RESULT['resume_stopped_exit'], RESULT['resume_stopped_message'],
         RESULT['resume_blocks_kept']) = stop_after_first_block(output)
        STATE['resume_output'] = output
        STATE['resume_journal'] = journal
        STATE['resume_reference'] = os.path.join(scene, 'big_reference.tif')
        iface.addRasterLayer(big, 'big')
        iface.setActiveLayer(layer_named('big'))
        QTimer.singleShot(500, answer_resume_question)
        iface.mainWindow().findChild(QAction, 'geodlClassifyActiveLayerLastModel').trigger()
        RESULT['resume_task_started'] = QgsApplication.taskManager().countActiveTasks() > 0
        STATE['start'] = time.time()
    except Exception:
        RESULT['error'] = traceback.format_exc()
        QTimer.singleShot(2000, screenshot)
        return
    QTimer.singleShot(500, after_resume_task)


def after_resume_task():
    """Polls until the resumed task is done, then compares its classes with an uninterrupted
    run's and leaves the project as it was for the screenshots."""
    try:
        if still_running(after_resume_task):
            return
        import subprocess
        model = QgsSettings().value('geodl/lastModel')
        reference = STATE['resume_reference']
        subprocess.run([os.environ['GEODL_TEST_GEODL'], '-q', 'classify', '--input',
                        os.path.join(os.environ['GEODL_TEST_SCENE'], 'big.tif'), '--model', model,
                        '--output', reference], check=True, stdout=subprocess.DEVNULL)
        RESULT['resume_output'] = os.path.exists(STATE['resume_output'])
        RESULT['resumed_as_uninterrupted'] = same_classes(STATE['resume_output'], reference)
        RESULT['resume_journal_gone'] = not os.path.exists(STATE['resume_journal'])
        for name in ('big classes', 'big'):
            if layer_named(name) is not None:
                QgsProject.instance().removeMapLayer(layer_named(name).id())
        iface.setActiveLayer(layer_named('scene'))
    except Exception:
        RESULT['error'] = traceback.format_exc()
        QTimer.singleShot(2000, screenshot)
        return
    QTimer.singleShot(500, dialog_resume_check)


def dialog_resume_check():
    """The Processing dialog of geodl:classify run on an output whose classification was
    stopped: Run asks the same question, and Continue resumes the stopped run (its log says
    so) to an uninterrupted run's classes."""
    try:
        from processing.gui.AlgorithmDialog import AlgorithmDialog
        scene = os.environ['GEODL_TEST_SCENE']
        output = os.path.join(scene, 'big_dialog.tif')
        (RESULT['dialog_stopped_exit'], _, RESULT['dialog_blocks_kept']) = stop_after_first_block(output)
        alg = QgsApplication.processingRegistry().createAlgorithmById('geodl:classify')
        dialog = AlgorithmDialog(alg, False, iface.mainWindow())
        dialog.setParameters({'INPUT': os.path.join(scene, 'big.tif'),
                              'MODEL': QgsSettings().value('geodl/lastModel'), 'OUTPUT': output})
        dialog.show()
        QApplication.processEvents()
        STATE['dialog'] = dialog
        STATE['dialog_output'] = output
        STATE['start'] = time.time()
        QTimer.singleShot(500, lambda: answer_resume_question(0, 'dialog_resume_question'))
        dialog.runAlgorithm()
    except Exception:
        RESULT['error'] = traceback.format_exc()
        QTimer.singleShot(2000, screenshot)
        return
    QTimer.singleShot(500, after_dialog_task)


def after_dialog_task():
    """Polls until the dialog's run is done, then checks it resumed to an uninterrupted run's
    classes."""
    try:
        if still_running(after_dialog_task):
            return
        from qgis.PyQt.QtWidgets import QTextEdit
        dialog = STATE['dialog']
        log = '\n'.join(w.toPlainText() for w in dialog.findChildren(QTextEdit))
        RESULT['dialog_log_resumed'] = 'resuming: %d of' % RESULT.get('dialog_blocks_kept', -1) in log
        RESULT['dialog_resumed_as_uninterrupted'] = same_classes(STATE['dialog_output'], STATE['resume_reference'])
        RESULT['dialog_journal_gone'] = not os.path.exists(journal_of(STATE['dialog_output']))
        dialog.close()
        for layer in QgsProject.instance().mapLayers().values():
            if layer.source() == STATE['dialog_output']:
                QgsProject.instance().removeMapLayer(layer.id())
    except Exception:
        RESULT['error'] = traceback.format_exc()
    # Let the window paint before grabbing it.
    QTimer.singleShot(2000, screenshot)


def check():
    try:
        # Xvfb has no window manager to maximise the window: it is sized to the screen here,
        # less the title bar save_titled() draws.
        iface.mainWindow().showMaximized()
        iface.mainWindow().setGeometry(0, 0, 1366, 772)
        RESULT['qgis_version'] = Qgis.version()
        from qgis import utils
        # QGIS loaded the library from GeoDL's own plugin folder.
        with open('/proc/self/maps') as maps:
            RESULT['plugin_loaded'] = any(line.rstrip().endswith('/libgeodlplugin.so')
                                          for line in maps)
        registry = QgsApplication.processingRegistry()
        provider = registry.providerById('geodl')
        RESULT['provider'] = provider is not None
        RESULT['algorithm'] = registry.algorithmById('geodl:estimatebatchsize') is not None
        if provider is not None:
            RESULT['algorithms'] = [a.id() for a in provider.algorithms()]
        import processing
        out = processing.run('geodl:estimatebatchsize', {
            'MODEL': 2, 'SAMPLE_SIZE': 32, 'BANDS': 3, 'CLASSES': 4, 'CHECKPOINT': False,
            'BUDGET_MIB': 96, 'DEVICE': 1, 'THREADS': 2})
        RESULT['max_batch'] = out['MAX_BATCH']
        RESULT['bytes_per_sample'] = out['BYTES_PER_SAMPLE']
        # Samples from the built-in scene, the way a user runs them from the Toolbox: the
        # outputs open in the project.
        scene = os.environ['GEODL_TEST_SCENE']
        iface.addRasterLayer(os.path.join(scene, 'scene_trn.tif'), 'scene')
        footprint = os.path.join(scene, 'footprints.gpkg')
        out = processing.runAndLoadResults('geodl:createsamples', {
            'INPUT': os.path.join(scene, 'scene_trn.tif'),
            'VECTOR': os.path.join(scene, 'scene_trn_labels.gpkg'),
            'FIELD': 'class', 'SPLIT': 1, 'VALIDATION_PERCENT': 25, 'SAMPLE_SIZE': 64,
            'STRIDE': 64, 'OUTPUT_FOLDER': os.path.join(scene, 'samples'),
            'FOOTPRINT': footprint})
        RESULT['training_samples'] = out['TRAINING_SAMPLES']
        RESULT['validation_samples'] = out['VALIDATION_SAMPLES']
        RESULT['footprint_in_project'] = any(
            layer.source().split('|')[0] == footprint
            for layer in QgsProject.instance().mapLayers().values())
        # Training on those samples, from inside the desktop: model file and HTML report. The
        # model is a ResNet UNet chosen by name in the model enum, its encoder from a
        # torchvision file when the test could write one.
        train = registry.algorithmById('geodl:train')
        model_index = train.parameterDefinition('MODEL').options().index(os.environ['GEODL_TEST_MODEL'])
        params = {
            'TRAINING_STORE': out['TRAINING_STORE'], 'VALIDATION_STORE': out['VALIDATION_STORE'],
            'MODEL': model_index, 'EPOCHS': 4, 'BATCH_SIZE': 4, 'LEARNING_RATE': 0.001, 'THREADS': 2,
            'SEED': 1, 'OUTPUT_MODEL': os.path.join(scene, 'model', 'model.pt')}
        if os.environ.get('GEODL_TEST_ENCODER'):
            params['PRETRAINED_ENCODER'] = os.environ['GEODL_TEST_ENCODER']
        out = processing.run('geodl:train', params)
        RESULT['model_file'] = os.path.exists(out['OUTPUT_MODEL'])
        with open(out['REPORT']) as report:
            RESULT['report_has_chart'] = '<svg' in report.read()
        RESULT['best_epoch'] = out['BEST_EPOCH']
        # Classification of the scene with it: the class layer opens with the model's classes.
        classes = os.path.join(scene, 'classes.tif')
        processing.runAndLoadResults('geodl:classify', {
            'INPUT': os.path.join(scene, 'scene_trn.tif'), 'MODEL': out['OUTPUT_MODEL'],
            'WINDOW': 64, 'THREADS': 2, 'OUTPUT': classes})
        QApplication.processEvents()
        for layer in QgsProject.instance().mapLayers().values():
            if layer.source() == classes:
                renderer = layer.renderer()
                RESULT['classified_renderer'] = renderer.type()
                RESULT['classified_labels'] = [c.label for c in renderer.classes()] \
                    if renderer.type() == 'paletted' else []
        toolbox = utils.plugins['processing'].toolbox
        toolbox.setVisible(True)
        toolbox.searchBox.setText('geodl')
        STATE['toolbox'] = toolbox

        # Classify Active Layer: in the Raster menu, refused for a vector layer, then run on
        # the imagery with the model last used (remembered in the settings).
        choose = iface.mainWindow().findChild(QAction, 'geodlClassifyActiveLayer')
        repeat = iface.mainWindow().findChild(QAction, 'geodlClassifyActiveLayerLastModel')
        RESULT['active_layer_actions'] = choose is not None and repeat is not None
        raster_menu = iface.rasterMenu()
        RESULT['raster_menu_has_geodl'] = any(a.text().replace('&', '') == 'GeoDL' for a in raster_menu.actions())
        footprints = [l for l in QgsProject.instance().mapLayers().values() if l.type() == Qgis.LayerType.Vector]
        if footprints:
            iface.setActiveLayer(footprints[0])
            repeat.trigger()
            item = iface.messageBar().currentItem()
            RESULT['vector_refused'] = item is not None and 'not a raster' in item.text()
            iface.messageBar().clearWidgets()
        QgsSettings().setValue('geodl/lastModel', out['OUTPUT_MODEL'])
        # A one-band raster does not fit the 3-band model: refused before any task.
        from osgeo import gdal
        one_band = os.path.join(scene, 'one_band.tif')
        gdal.GetDriverByName('GTiff').Create(one_band, 64, 64, 1, gdal.GDT_Byte).FlushCache()
        iface.addRasterLayer(one_band, 'one band')
        iface.setActiveLayer(layer_named('one band'))
        repeat.trigger()
        item = iface.messageBar().currentItem()
        RESULT['band_mismatch_refused'] = item is not None and 'bands but the model' in item.text() \
            and QgsApplication.taskManager().countActiveTasks() == 0
        iface.messageBar().clearWidgets()
        QgsProject.instance().removeMapLayer(layer_named('one band').id())
        iface.setActiveLayer(layer_named('scene'))
        # The Layers panel's context menu of a raster layer offers it.
        menu = iface.layerTreeView().menuProvider().createContextMenu()
        RESULT['context_menu_has_action'] = menu is not None and any(
            a.objectName() == 'geodlClassifyActiveLayer' for a in menu.actions())
        STATE['start'] = time.time()
        repeat.trigger()
        RESULT['active_layer_task_started'] = QgsApplication.taskManager().countActiveTasks() > 0
    except Exception:
        RESULT['error'] = traceback.format_exc()
        QTimer.singleShot(1500, screenshot)
        return
    QTimer.singleShot(500, after_active_layer_task)


QTimer.singleShot(2000, check)
