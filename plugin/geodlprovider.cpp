#include "geodlprovider.h"

#include <QCoreApplication>
#include <QIcon>

#include "core/metadata.h"
#include "geodlalgorithmclassify.h"
#include "geodlalgorithmcreatesamples.h"
#include "geodlalgorithmestimatebatchsize.h"
#include "geodlalgorithmtrain.h"

// The icons live in a static library: their resource must be registered explicitly.
static void initGeoDLResources()
{
  Q_INIT_RESOURCE( geodl );
}

GeoDLProvider::GeoDLProvider()
{
  initGeoDLResources();
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
  return QCoreApplication::translate( "GeoDLProvider", "GeoDL deep learning (%1)" ).arg( versionInfo() );
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
