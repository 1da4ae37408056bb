#include "geodlprovider.h"

#include <QCoreApplication>
#include <QIcon>
#include <QTranslator>
#include <qgsapplication.h>
#include <qgsprocessingregistry.h>

#include "base/metadata.h"
#include "geodlalgorithmclassify.h"
#include "geodlalgorithmcreatesamples.h"
#include "geodlalgorithmestimatebatchsize.h"
#include "geodlalgorithmtrain.h"

// The icons and translations live in a static library: their resources must be
// registered explicitly.
static void initGeoDLResources()
{
  Q_INIT_RESOURCE( geodl );
  Q_INIT_RESOURCE( geodl_i18n );
}

void GeoDLProvider::installTranslator()
{
  static QTranslator *installed = nullptr;  // one per process, kept for its lifetime
  if ( installed || !QCoreApplication::instance() )
    return;
  // QGIS's interface language (Settings > Options > General, or the system's): "fr", "fr_CA"...
  const QString locale = QgsApplication::locale();
  auto *translator = new QTranslator( QCoreApplication::instance() );
  // geodl_fr_CA.qm, else geodl_fr.qm (QTranslator drops the suffixes in turn).
  if ( translator->load( QStringLiteral( "geodl_" ) + locale, QStringLiteral( ":/geodl/i18n" ) ) )
  {
    QCoreApplication::installTranslator( translator );
    installed = translator;
  }
  else
  {
    delete translator;
  }
}

GeoDLProvider *GeoDLProvider::registerIfMissing()
{
  QgsProcessingRegistry *registry = QgsApplication::processingRegistry();
  if ( !registry || registry->providerById( QStringLiteral( "geodl" ) ) )
    return nullptr;
  GeoDLProvider *provider = new GeoDLProvider();
  return registry->addProvider( provider ) ? provider : nullptr;  // refused: the registry deleted it
}

GeoDLProvider::GeoDLProvider()
{
  initGeoDLResources();
  installTranslator();
}

QString GeoDLProvider::id() const
{
  return QStringLiteral( "geodl" );
}

QString GeoDLProvider::name() const
{
  return QStringLiteral( "GeoDL" );
}

QString GeoDLProvider::longName() const
{
  return QCoreApplication::translate( "GeoDLProvider", "GeoDL deep learning (%1, built for QGIS %2)" )
         .arg( versionInfo(), QString::fromUtf8( geodl::metadata::kQgisBuiltFor ) );
}

QIcon GeoDLProvider::icon() const
{
  return QIcon( svgIconPath() );
}

QString GeoDLProvider::svgIconPath() const
{
  return QStringLiteral( ":/geodl/geodl.svg" );
}

QString GeoDLProvider::versionInfo() const
{
  return QString::fromUtf8( geodl::metadata::kVersion );
}

void GeoDLProvider::loadAlgorithms()
{
  addAlgorithm( new GeoDLCreateSamplesAlgorithm() );
  addAlgorithm( new GeoDLEstimateBatchSizeAlgorithm() );
  addAlgorithm( new GeoDLTrainAlgorithm() );
  addAlgorithm( new GeoDLClassifyAlgorithm() );
}
