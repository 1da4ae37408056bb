#!/usr/bin/python3
"""Points a QGIS 3 profile at GeoDL's plugin folder and enables the plugin, the way
Settings > Options > System > Plugin paths and the Plugin Manager would. Also installs
the Python plugin geodl_processing (found beside PLUGIN_DIR, in ../qgis-python-plugins)
into the profile's python/plugins folder and enables it: qgis_process loads Python
plugins only, and through it sees GeoDL's algorithms.

Usage: register-qgis-plugin.py PLUGIN_DIR [PROFILE_INI]
PROFILE_INI defaults to the current user's default profile,
~/.local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini (created if missing).
"""
import os
import shutil
import sys

from qgis.PyQt.QtCore import QSettings


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    plugin_dir = os.path.abspath(sys.argv[1])
    ini = sys.argv[2] if len(sys.argv) > 2 else os.path.expanduser(
        '~/.local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini')
    os.makedirs(os.path.dirname(ini), exist_ok=True)
    settings = QSettings(ini, QSettings.IniFormat)
    paths = settings.value('plugins/searchPathsForPlugins', []) or []
    if isinstance(paths, str):
        paths = [paths]
    if plugin_dir not in paths:
        paths.append(plugin_dir)
    # One path as a plain string: a one-element Python list would be written as an
    # @Variant blob that QGIS does not read back as a list of paths.
    settings.setValue('plugins/searchPathsForPlugins', paths[0] if len(paths) == 1 else paths)
    settings.setValue('Plugins/libgeodlplugin', True)
    shim = os.path.join(os.path.dirname(plugin_dir), 'qgis-python-plugins', 'geodl_processing')
    if os.path.isdir(shim):
        # The profile folder: <profile>/QGIS/QGIS3.ini -> <profile>/python/plugins
        target = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(ini))),
                              'python', 'plugins', 'geodl_processing')
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(shim, target)
        # Where the library is, whatever prefix it was installed under.
        with open(os.path.join(target, 'library.txt'), 'w') as f:
            f.write(os.path.join(plugin_dir, 'libgeodlplugin.so') + '\n')
        settings.setValue('PythonPlugins/geodl_processing', True)
    settings.sync()
    print('QGIS profile %s: plugin path %s added, GeoDL enabled%s' % (
        ini, plugin_dir, ', geodl_processing installed for qgis_process' if os.path.isdir(shim) else ''))


if __name__ == '__main__':
    main()
