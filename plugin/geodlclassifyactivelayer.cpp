#include "geodlclassifyactivelayer.h"

#include <algorithm>
#include <memory>
#include <optional>

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <qgisinterface.h>
#include <qgsapplication.h>
#include <qgslayertree.h>
#include <qgsmessagebar.h>
#include <qgsprocessingalgrunnertask.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingregistry.h>
#include <qgsprocessingutils.h>
#include <qgsproject.h>
#include <qgsrasterlayer.h>
#include <qgssettings.h>
#include <qgstaskmanager.h>

#include "app/classify.h"
#include "base/errors.h"
#include "model/model_info.h"
#include "geodlresumequestion.h"

namespace
{
const QString kMenu = QStringLiteral( "&GeoDL" );

// Where the classes of `layer` go: beside its file when that folder is writable (kept
// after QGIS closes), else in the Processing temporary folder; never over an existing file.
QString outputPathFor( const QgsRasterLayer *layer )
{
  const QFileInfo source( layer->source() );
  QDir folder = source.absoluteDir();
  if ( !source.exists() || !QFileInfo( folder.absolutePath() ).isWritable() )
    folder = QDir( QgsProcessingUtils::tempFolder() );
  const QString stem = source.exists() ? source.completeBaseName() : QStringLiteral( "layer" );
  QString path = folder.filePath( stem + QStringLiteral( "_classes.tif" ) );
  for ( int i = 2; QFileInfo::exists( path ); ++i )
    path = folder.filePath( QStringLiteral( "%1_classes_%2.tif" ).arg( stem ).arg( i ) );
  return path;
}
} // namespace

GeoDLClassifyActiveLayer::GeoDLClassifyActiveLayer( QgisInterface *iface, QObject *parent )
  : QObject( parent )
  , mIface( iface )
{
  const QIcon icon( QStringLiteral( ":/geodl/geodl.svg" ) );
  mChoose = new QAction( icon, tr( "Classify Active Layer…" ), this );
  mChoose->setObjectName( QStringLiteral( "geodlClassifyActiveLayer" ) );
  mChoose->setToolTip( tr( "Classify the active raster layer with a GeoDL model" ) );
  mRepeat = new QAction( icon, tr( "Classify Active Layer with Last Model" ), this );
  mRepeat->setObjectName( QStringLiteral( "geodlClassifyActiveLayerLastModel" ) );
  connect( mChoose, &QAction::triggered, this, &GeoDLClassifyActiveLayer::chooseModelAndClassify );
  connect( mRepeat, &QAction::triggered, this, &GeoDLClassifyActiveLayer::classifyWithLastModel );
  mIface->addRasterToolBarIcon( mChoose );
  mIface->addPluginToRasterMenu( kMenu, mChoose );
  mIface->addPluginToRasterMenu( kMenu, mRepeat );
  mIface->addCustomActionForLayerType( mChoose, QString(), Qgis::LayerType::Raster, true );
}

GeoDLClassifyActiveLayer::~GeoDLClassifyActiveLayer()
{
  unload();
}

void GeoDLClassifyActiveLayer::unload()
{
  if ( !mIface || !mChoose )
    return;
  mIface->removeRasterToolBarIcon( mChoose );
  mIface->removePluginRasterMenu( kMenu, mChoose );
  mIface->removePluginRasterMenu( kMenu, mRepeat );
  mIface->removeCustomActionForLayerType( mChoose );
  mIface = nullptr;
}

QString GeoDLClassifyActiveLayer::lastModelKey()
{
  return QStringLiteral( "geodl/lastModel" );
}

QgsRasterLayer *GeoDLClassifyActiveLayer::activeRaster()
{
  QgsRasterLayer *layer = qobject_cast<QgsRasterLayer *>( mIface->activeLayer() );
  if ( !layer )
  {
    mIface->messageBar()->pushWarning( tr( "GeoDL" ), tr( "The active layer is not a raster layer: select the imagery to classify "
                                       "in the Layers panel first." ) );
    return nullptr;
  }
  if ( layer->providerType() != QLatin1String( "gdal" ) )
  {
    mIface->messageBar()->pushWarning( tr( "GeoDL" ), tr( "'%1' is not a file GDAL reads (it comes from the %2 provider): save it "
                                       "as a GeoTIFF first." ).arg( layer->name(), layer->providerType() ) );
    return nullptr;
  }
  return layer;
}

void GeoDLClassifyActiveLayer::chooseModelAndClassify()
{
  QgsRasterLayer *layer = activeRaster();
  if ( !layer )
    return;
  const QString last = QgsSettings().value( lastModelKey() ).toString();
  const QString model = QFileDialog::getOpenFileName( mIface->mainWindow(), tr( "GeoDL model for '%1'" ).arg( layer->name() ),
                        last.isEmpty() ? QDir::homePath() : last, tr( "GeoDL or TorchScript models (*.pt *.pth);;All files (*)" ) );
  if ( !model.isEmpty() )
    classify( layer, model );
}

void GeoDLClassifyActiveLayer::classifyWithLastModel()
{
  const QString last = QgsSettings().value( lastModelKey() ).toString();
  if ( last.isEmpty() || !QFileInfo::exists( last ) )
  {
    chooseModelAndClassify();
    return;
  }
  if ( QgsRasterLayer *layer = activeRaster() )
    classify( layer, last );
}

void GeoDLClassifyActiveLayer::classify( QgsRasterLayer *layer, const QString &model )
{
  // A GeoDL model file says what it expects: refuse a layer that does not fit it now,
  // rather than from the task. (TorchScript models are checked by the engine.)
  std::optional<geodl::ModelInfo> info;
  try
  {
    info = geodl::tryReadModelInfo( model.toStdString() );
  }
  catch ( const geodl::Error &e )  // a damaged model file: nothing reaches QGIS's event loop
  {
    mIface->messageBar()->pushCritical( tr( "GeoDL" ), QString::fromStdString( e.what() ) );
    return;
  }
  if ( info )
  {
    if ( info->spec.bands != layer->bandCount() )
    {
      mIface->messageBar()->pushWarning( tr( "GeoDL" ), tr( "'%1' has %2 bands but the model %3 expects %4: choose a raster with the "
                                         "bands it was trained on, or another model." )
                                         .arg( layer->name() ).arg( layer->bandCount() ).arg( QFileInfo( model ).fileName() )
                                         .arg( info->spec.bands ) );
      return;
    }
  }
  QgsSettings().setValue( lastModelKey(), model );

  const QgsProcessingAlgorithm *alg = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "geodl:classify" ) );
  if ( !alg )
  {
    mIface->messageBar()->pushCritical( tr( "GeoDL" ), tr( "The geodl:classify algorithm is not registered: re-enable the GeoDL plugin." ) );
    return;
  }
  const QString output = outputPathFor( layer );
  // The same classification stopped before (cancelled, QGIS closed): offer to continue it.
  bool resume = false;
  if ( const std::optional<geodl::StoppedRun> stopped = geodl::stoppedClassification( output.toStdString(), layer->source().toStdString(),
       model.toStdString() ) )
  {
    const GeoDLResumeAnswer answer = GeoDLResumeQuestion::ask( mIface->mainWindow(), layer->name(), output, *stopped );
    if ( answer == GeoDLResumeAnswer::Cancel )
      return;
    resume = answer == GeoDLResumeAnswer::Continue;
  }
  QVariantMap parameters;
  parameters.insert( QStringLiteral( "INPUT" ), layer->source() );
  parameters.insert( QStringLiteral( "MODEL" ), model );
  parameters.insert( QStringLiteral( "OUTPUT" ), output );
  parameters.insert( QStringLiteral( "RESUME" ), resume );
  const QString name = tr( "%1 classes" ).arg( layer->name() );

  // Context and feedback live as long as the task; the algorithm styles the output through
  // the context's layer details.
  auto *context = new QgsProcessingContext();
  context->setProject( QgsProject::instance() );
  context->addLayerToLoadOnCompletion( output, QgsProcessingContext::LayerDetails( name, QgsProject::instance(), QStringLiteral( "OUTPUT" ) ) );
  auto *feedback = new QgsProcessingFeedback();
  auto *task = new QgsProcessingAlgRunnerTask( alg, parameters, *context, feedback );
  task->setDescription( tr( "GeoDL: classifying %1" ).arg( layer->name() ) );
  const QString sourceId = layer->id();
  QgisInterface *ifacePtr = mIface;
  connect( task, &QgsProcessingAlgRunnerTask::executed, this, [ifacePtr, context, feedback, output, name, sourceId]( bool ok, const QVariantMap & )
  {
    std::unique_ptr<QgsProcessingContext> ownedContext( context );
    std::unique_ptr<QgsProcessingFeedback> ownedFeedback( feedback );
    if ( !ok || !QFileInfo::exists( output ) )
    {
      if ( !feedback->isCanceled() )
        ifacePtr->messageBar()->pushCritical( QObject::tr( "GeoDL" ), QObject::tr( "Classification failed: see the Log Messages panel (Processing)." ) );
      return;
    }
    auto *result = new QgsRasterLayer( output, name );
    if ( context->willLoadLayerOnCompletion( output ) )
      if ( QgsProcessingLayerPostProcessorInterface *styler = context->layerToLoadOnCompletionDetails( output ).postProcessor() )
        styler->postProcessLayer( result, *context, feedback );
    // Above the source layer, in its group.
    QgsProject::instance()->addMapLayer( result, false );
    QgsLayerTree *root = QgsProject::instance()->layerTreeRoot();
    QgsLayerTreeLayer *sourceNode = root->findLayer( sourceId );
    QgsLayerTreeGroup *group = sourceNode ? qobject_cast<QgsLayerTreeGroup *>( sourceNode->parent() ) : root;
    const int index = sourceNode ? group->children().indexOf( sourceNode ) : 0;
    group->insertLayer( std::max( 0, index ), result );
    ifacePtr->messageBar()->pushSuccess( QObject::tr( "GeoDL" ), QObject::tr( "Classified: %1" ).arg( output ) );
  } );
  QgsApplication::taskManager()->addTask( task );
}
