// The entry points QGIS 3.22 resolves in a C++ plugin library (the `const QString *`
// forms), all from metadata/metadata.txt.
#include <qgis.h>

#include "core/metadata.h"
#include "geodlplugin.h"

namespace
{
const QString sName = QString::fromUtf8( geodl::metadata::kName );
const QString sDescription = QString::fromUtf8( geodl::metadata::kDescription );
const QString sCategory = QString::fromUtf8( geodl::metadata::kCategory );
const QString sVersion = QString::fromUtf8( geodl::metadata::kVersion );
const QString sIcon = QStringLiteral( ":/geodl/geodl.svg" );
const QString sExperimental = QStringLiteral( "true" );
const QString sCreateDate = QStringLiteral( "2026-11-30" );
const QString sUpdateDate = QStringLiteral( "2026-11-30" );
} // namespace

QGISEXTERN QgisPlugin *classFactory( QgisInterface *qgisInterfacePointer )
{
  return new GeoDLPlugin( qgisInterfacePointer );
}

QGISEXTERN const QString *name()
{
  return &sName;
}

QGISEXTERN const QString *description()
{
  return &sDescription;
}

QGISEXTERN const QString *category()
{
  return &sCategory;
}

QGISEXTERN int type()
{
  return QgisPlugin::UI;
}

QGISEXTERN const QString *version()
{
  return &sVersion;
}

QGISEXTERN const QString *icon()
{
  return &sIcon;
}

QGISEXTERN const QString *experimental()
{
  return &sExperimental;
}

QGISEXTERN const QString *create_date()
{
  return &sCreateDate;
}

QGISEXTERN const QString *update_date()
{
  return &sUpdateDate;
}

QGISEXTERN void unload( QgisPlugin *pluginPointer )
{
  delete pluginPointer;
}
