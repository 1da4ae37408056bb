#!/usr/bin/python3
"""Points a QGIS 3 profile at GeoDL's plugin folder and enables the plugin, the way
Settings > Options > System > Plugin paths and the Plugin Manager would.

Usage: register-qgis-plugin.py PLUGIN_DIR [PROFILE_INI]
PROFILE_INI defaults to the current user's default profile,
~/.local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini (created if missing).
"""
import os
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
    settings.sync()
    print('QGIS profile %s: plugin path %s added, GeoDL enabled' % (ini, plugin_dir))


if __name__ == '__main__':
    main()
