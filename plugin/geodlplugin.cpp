#include "geodlplugin.h"

#include <QWidget>
#include <qgisinterface.h>
#include <qgsapplication.h>
#include <qgsprocessingregistry.h>

#include "base/metadata.h"
#include "geodlclassifyactivelayer.h"
#include "geodlnumberwidgetwrapper.h"
#include "geodlprovider.h"

GeoDLPlugin::GeoDLPlugin( QgisInterface *iface )
  : QgisPlugin( QString::fromUtf8( geodl::metadata::kName ), QString::fromUtf8( geodl::metadata::kDescription ),
                QString::fromUtf8( geodl::metadata::kCategory ), QString::fromUtf8( geodl::metadata::kVersion ),
                QgisPlugin::UI )
  , mIface( iface )
{
}

void GeoDLPlugin::initGui()
{
  // The provider may be there already, registered by the Python plugin geodl_processing.
  if ( !mProvider )
    mProvider = GeoDLProvider::registerIfMissing();
  GeoDLNumberWidgetWrapper::install();
  if ( mIface && !mClassifyActiveLayer )
    mClassifyActiveLayer = new GeoDLClassifyActiveLayer( mIface, mIface->mainWindow() );
}

void GeoDLPlugin::unload()
{
  delete mClassifyActiveLayer;
  mClassifyActiveLayer = nullptr;
  GeoDLNumberWidgetWrapper::uninstall();
  if ( mProvider )
  {
    QgsApplication::processingRegistry()->removeProvider( mProvider );
    mProvider = nullptr;
  }
}

