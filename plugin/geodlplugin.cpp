#include "geodlplugin.h"

#include <qgis.h>
#include <qgsapplication.h>
#include <qgsprocessingregistry.h>

#include "core/metadata.h"
#include "geodlprovider.h"

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

GeoDLPlugin::GeoDLPlugin( QgisInterface *iface )
  : QgisPlugin( sName, sDescription, sCategory, sVersion, QgisPlugin::UI )
  , mIface( iface )
{
}

void GeoDLPlugin::initGui()
{
  if ( !mProvider )
  {
    mProvider = new GeoDLProvider();
    if ( !QgsApplication::processingRegistry()->addProvider( mProvider ) )
      mProvider = nullptr;  // the registry deleted it (a provider "geodl" exists already)
  }
}

void GeoDLPlugin::unload()
{
  if ( mProvider )
  {
    QgsApplication::processingRegistry()->removeProvider( mProvider );
    mProvider = nullptr;
  }
}

// Entry points QGIS 3.22 resolves in a C++ plugin library.
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
