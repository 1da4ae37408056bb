#include "geodlalgorithmclassify.h"

#include <QApplication>
#include <QCoreApplication>
#include <QIcon>
#include <QMutex>
#include <QSet>
#include <QThread>
#include <QWidget>

#include <qgscategorizedsymbolrenderer.h>
#include <qgsexception.h>
#include <qgsfillsymbol.h>
#include <qgspalettedrasterrenderer.h>
#include <qgsprocessingalgorithmdialogbase.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>
#include <qgsrasterlayer.h>
#include <qgsvectorlayer.h>

#include "app/classify.h"
#include "model/model_info.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"
#include "geodloptionparameters.h"
#include "geodlresumequestion.h"

namespace
{
// Colours and names of the model's classes, for the layers the algorithm opens.
class ClassStyler : public QgsProcessingLayerPostProcessorInterface
{
  public:
    explicit ClassStyler( const std::vector<geodl::ModelClass> &classes ) : mClasses( classes ) {}

    void postProcessLayer( QgsMapLayer *layer, QgsProcessingContext &, QgsProcessingFeedback * ) override
    {
      if ( QgsRasterLayer *raster = qobject_cast<QgsRasterLayer *>( layer ) )
      {
        QgsPalettedRasterRenderer::ClassData classes;
        for ( const geodl::ModelClass &c : mClasses )
          classes << QgsPalettedRasterRenderer::Class( c.id, QColor( QString::fromStdString( c.colour ) ), QString::fromStdString( c.name ) );
        raster->setRenderer( new QgsPalettedRasterRenderer( raster->dataProvider(), 1, classes ) );
        raster->triggerRepaint();
      }
      else if ( QgsVectorLayer *vector = qobject_cast<QgsVectorLayer *>( layer ) )
      {
        QgsCategoryList categories;
        for ( const geodl::ModelClass &c : mClasses )
        {
          QVariantMap props;
          props.insert( QStringLiteral( "color" ), QColor( QString::fromStdString( c.colour ) ).name() );
          props.insert( QStringLiteral( "outline_style" ), QStringLiteral( "no" ) );
          categories << QgsRendererCategory( c.id, QgsFillSymbol::createSimple( props ), QString::fromStdString( c.name ) );
        }
        vector->setRenderer( new QgsCategorizedSymbolRenderer( QStringLiteral( "class_id" ), categories ) );
        vector->triggerRepaint();
      }
    }

  private:
    std::vector<geodl::ModelClass> mClasses;
};

// The runs whose stopped classification the user chose to continue in the Processing dialog
// (checkParameterValues, in the main thread), for the run that follows with the same
// parameters (processAlgorithm, in a task's thread), by continueKey.
QMutex sContinueMutex;
QSet<QString> sContinueChosen;

QString continueKey( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context )
{
  QStringList key;
  for ( auto it = parameters.constBegin(); it != parameters.constEnd(); ++it )
  {
    const QgsProcessingParameterDefinition *definition = algorithm.parameterDefinition( it.key() );
    key << it.key() + '=' + ( definition ? definition->valueAsPythonString( it.value(), context ) : it.value().toString() );
  }
  return key.join( '\n' );
}
} // namespace

QString GeoDLClassifyAlgorithm::name() const
{
  return QStringLiteral( "classify" );
}

QString GeoDLClassifyAlgorithm::displayName() const
{
  return tr( "Classify raster" );
}

QStringList GeoDLClassifyAlgorithm::tags() const
{
  return tr( "classify,classification,inference,segmentation,deep learning,unet,prediction" ).split( ',' );
}

QString GeoDLClassifyAlgorithm::helpIntro() const
{
  return tr( "Classifies every pixel of a raster layer with a model trained by \"Train segmentation model\". "
             "The raster is read window by window, so rasters of any size classify in bounded memory; "
             "overlapping windows are blended smoothly (no seams) and the edges are padded by reflection, "
             "so no strip is left unclassified. The class raster opens styled with the model's class colours "
             "and names." );
}

std::vector<const geodl::OptionInfo *> GeoDLClassifyAlgorithm::optionInfos() const
{
  return geodlInfos( geodl::classifyOptionTable() );
}

QgsProcessingAlgorithm *GeoDLClassifyAlgorithm::createInstance() const
{
  return new GeoDLClassifyAlgorithm();
}

void GeoDLClassifyAlgorithm::initAlgorithm( const QVariantMap & )
{
  // Every parameter comes from the engine's option table; layers, extent and destinations are declared here.
  const auto declare = []( const geodl::OptionInfo & o, const QString & label ) -> QgsProcessingParameterDefinition *
  {
    const QString name = QString::fromStdString( o.parameter );
    if ( name == QLatin1String( "INPUT" ) )
      return new QgsProcessingParameterRasterLayer( name, label );
    if ( name == QLatin1String( "EXTENT" ) )
      return new QgsProcessingParameterExtent( name, label, QVariant(), true );
    if ( name == QLatin1String( "MASK" ) )
      return new QgsProcessingParameterFeatureSource( name, label, QList<int>() << static_cast<int>( Qgis::ProcessingSourceType::VectorPolygon ), QVariant(), true );
    if ( name == QLatin1String( "OUTPUT" ) )
      return new QgsProcessingParameterRasterDestination( name, label );
    if ( name == QLatin1String( "PROBABILITIES" ) )
      return new QgsProcessingParameterRasterDestination( name, label, QVariant(), true, false );
    if ( name == QLatin1String( "POLYGONS" ) )
      return new QgsProcessingParameterVectorDestination( name, label, Qgis::ProcessingSourceType::VectorPolygon, QVariant(), true, false );
    return nullptr;
  };
  for ( QgsProcessingParameterDefinition *p : geodlParameters( geodl::classifyOptionTable(), declare ) )
    addParameter( p );
}

bool GeoDLClassifyAlgorithm::checkParameterValues( const QVariantMap &parameters, QgsProcessingContext &context,
    QString *message ) const
{
  if ( !GeoDLAlgorithm::checkParameterValues( parameters, context, message ) )
    return false;
  // Only where someone can answer: in the GUI thread, for the Processing dialog that runs this
  // very algorithm (not qgis_process, the modeler's runs or Python scripts).
  QApplication *gui = qobject_cast<QApplication *>( QCoreApplication::instance() );
  if ( !gui || QThread::currentThread() != gui->thread() )
    return true;
  QWidget *window = nullptr;
  for ( QWidget *w : QApplication::topLevelWidgets() )
  {
    QgsProcessingAlgorithmDialogBase *dialog = qobject_cast<QgsProcessingAlgorithmDialogBase *>( w );
    if ( dialog && dialog->isVisible() && dialog->algorithm() == this )
      window = dialog;
  }
  if ( !window )
    return true;
  if ( parameterAsBoolean( parameters, QStringLiteral( "RESUME" ), context ) )
    return true;
  QgsRasterLayer *layer = parameterAsRasterLayer( parameters, QStringLiteral( "INPUT" ), context );
  const QString output = parameterAsOutputLayer( parameters, QStringLiteral( "OUTPUT" ), context );
  const QString model = parameterAsFile( parameters, QStringLiteral( "MODEL" ), context );
  if ( !layer || output.isEmpty() )
    return true;  // processAlgorithm names the problem
  const std::optional<geodl::StoppedRun> stopped =
    geodl::stoppedClassification( output.toStdString(), layer->source().toStdString(), model.toStdString() );
  if ( !stopped )
    return true;
  const GeoDLResumeAnswer answer = GeoDLResumeQuestion::ask( window, layer->name(), output, *stopped );
  {
    const QMutexLocker lock( &sContinueMutex );
    const QString key = continueKey( *this, parameters, context );
    if ( answer == GeoDLResumeAnswer::Continue )
      sContinueChosen.insert( key );
    else
      sContinueChosen.remove( key );  // an earlier Continue whose run never started
  }
  if ( answer != GeoDLResumeAnswer::Cancel )
    return true;
  if ( message )
    *message = tr( "Not run: the stopped classification into %1 is kept. Tick \"%2\" to continue it." )
               .arg( output, parameterDefinition( QStringLiteral( "RESUME" ) )->description() );
  return false;
}

QVariantMap GeoDLClassifyAlgorithm::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
    QgsProcessingFeedback *feedback )
{
  QgsRasterLayer *layer = parameterAsRasterLayer( parameters, QStringLiteral( "INPUT" ), context );
  if ( !layer )
    throw QgsProcessingException( invalidRasterError( parameters, QStringLiteral( "INPUT" ) ) );
  geodl::OptionValues values = geodlParameterValues( *this, geodl::classifyOptionTable(), parameters, context );
  values["input"] = geodlValue( layer->source(), QStringLiteral( "INPUT" ) );
  if ( geodlIsSet( parameters, QStringLiteral( "EXTENT" ) ) )
  {
    const QgsRectangle extent = parameterAsExtent( parameters, QStringLiteral( "EXTENT" ), context, layer->crs() );
    if ( !extent.isNull() )
      values["extent"] = geodlValue( QStringLiteral( "%1,%2,%3,%4" ).arg( extent.xMinimum(), 0, 'g', 17 ).arg( extent.yMinimum(), 0, 'g', 17 )
                                     .arg( extent.xMaximum(), 0, 'g', 17 ).arg( extent.yMaximum(), 0, 'g', 17 ), QStringLiteral( "EXTENT" ) );
  }
  geodlVectorLayerValues( *this, parameters, context, feedback, QStringLiteral( "MASK" ), "mask", "mask_layer", values );
  const QString output = parameterAsOutputLayer( parameters, QStringLiteral( "OUTPUT" ), context );
  values["output"] = geodlValue( output, QStringLiteral( "OUTPUT" ) );
  const QString probabilities = parameterAsOutputLayer( parameters, QStringLiteral( "PROBABILITIES" ), context );
  if ( !probabilities.isEmpty() )
    values["probabilities_path"] = geodlValue( probabilities, QStringLiteral( "PROBABILITIES" ) );
  const QString polygons = parameterAsOutputLayer( parameters, QStringLiteral( "POLYGONS" ), context );
  if ( !polygons.isEmpty() )
    values["polygons_path"] = geodlValue( polygons, QStringLiteral( "POLYGONS" ) );

  {
    // Continue chosen in the dialog's question (checkParameterValues).
    const QMutexLocker lock( &sContinueMutex );
    if ( sContinueChosen.remove( continueKey( *this, parameters, context ) ) )
      values["resume"] = geodlValue( QStringLiteral( "true" ), QStringLiteral( "RESUME" ) );
  }
  GeoDLFeedbackProgress progress( feedback );
  const geodl::ClassifyResult result = geodlEngineCall( [&]
  {
    geodl::ClassifyJob job;
    geodl::applyOptions( geodl::classifyOptionTable(), values, job );
    return geodl::classify( geodl::classifyRuns( job ).front(), progress );
  },
                                       tr( "Cancelled by the user: no output was written" ) );
  for ( const std::string &w : result.warnings )
    feedback->reportError( QString::fromStdString( w ), false );

  if ( context.willLoadLayerOnCompletion( output ) )
    context.layerToLoadOnCompletionDetails( output ).setPostProcessor( new ClassStyler( result.classes ) );
  if ( !polygons.isEmpty() && context.willLoadLayerOnCompletion( polygons ) )
    context.layerToLoadOnCompletionDetails( polygons ).setPostProcessor( new ClassStyler( result.classes ) );

  QVariantMap outputs;
  outputs.insert( QStringLiteral( "OUTPUT" ), output );
  if ( !probabilities.isEmpty() )
    outputs.insert( QStringLiteral( "PROBABILITIES" ), probabilities );
  if ( !polygons.isEmpty() )
    outputs.insert( QStringLiteral( "POLYGONS" ), polygons );
  return outputs;
}
