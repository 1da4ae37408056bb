// The entry points QGIS (3.40) resolves in a C++ plugin library (the `const QString *`
// forms), all from metadata/metadata.txt.
#include <qgis.h>
#include <qgsapplication.h>
#include <qgsprocessingregistry.h>

#include "base/metadata.h"
#include "geodlplugin.h"
#include "geodlprovider.h"

namespace
{
const QString sName = QString::fromUtf8( geodl::metadata::kName );
const QString sDescription = QString::fromUtf8( geodl::metadata::kDescription );
const QString sCategory = QString::fromUtf8( geodl::metadata::kCategory );
const QString sVersion = QString::fromUtf8( geodl::metadata::kVersion );
const QString sIcon = QStringLiteral( ":/geodl/" ) + QString::fromUtf8( geodl::metadata::kIcon );
const QString sExperimental = QString::fromUtf8( geodl::metadata::kExperimental ).toLower();
const QString sAbout = QString::fromUtf8( geodl::metadata::kAbout ) + QStringLiteral( " Built for QGIS %1." ).arg( QString::fromUtf8( geodl::metadata::kQgisBuiltFor ) );
const QString sAuthor = QString::fromUtf8( geodl::metadata::kAuthor );
const QString sHomepage = QString::fromUtf8( geodl::metadata::kHomepage );
const QString sTracker = QString::fromUtf8( geodl::metadata::kTracker );
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

// Not read by QGIS's Plugin Manager for C++ plugins, exported for tools that list plugins.
QGISEXTERN const QString *about()
{
  return &sAbout;
}

QGISEXTERN const QString *author()
{
  return &sAuthor;
}

QGISEXTERN const QString *homepage()
{
  return &sHomepage;
}

QGISEXTERN const QString *tracker()
{
  return &sTracker;
}

QGISEXTERN void unload( QgisPlugin *pluginPointer )
{
  delete pluginPointer;
}

// For hosts that load Python plugins only (qgis_process): the Python plugin
// geodl_processing loads this library with ctypes and calls this to register the provider.
// Returns 1 when the provider is registered (now or before), 0 when the registry refused it.
QGISEXTERN int geodl_register_processing_provider()
{
  GeoDLProvider::registerIfMissing();
  return QgsApplication::processingRegistry() &&
         QgsApplication::processingRegistry()->providerById( QStringLiteral( "geodl" ) ) ? 1 : 0;
}
