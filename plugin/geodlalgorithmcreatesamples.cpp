#include "geodlalgorithmcreatesamples.h"

#include <QCoreApplication>
#include <QIcon>

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>
#include <qgscategorizedsymbolrenderer.h>
#include <qgsfillsymbol.h>
#include <qgsrasterlayer.h>
#include <qgsvectorlayer.h>

#include "app/create_samples.h"
#include "base/errors.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"
#include "geodloptionparameters.h"

namespace
{
// Draws the footprint layer as outlines, one colour per split, so the imagery stays visible.
class FootprintStyler : public QgsProcessingLayerPostProcessorInterface
{
  public:
    void postProcessLayer( QgsMapLayer *layer, QgsProcessingContext &, QgsProcessingFeedback * ) override
    {
      QgsVectorLayer *vector = qobject_cast<QgsVectorLayer *>( layer );
      if ( !vector )
        return;
      QgsCategoryList categories;
      const QList<QPair<QString, QString>> splits = { { QStringLiteral( "trn" ), QStringLiteral( "31,120,180" ) },
        { QStringLiteral( "val" ), QStringLiteral( "255,127,0" ) }, { QStringLiteral( "tst" ), QStringLiteral( "106,61,154" ) }
      };
      for ( const auto &split : splits )
      {
        QVariantMap props;
        props.insert( QStringLiteral( "color" ), QStringLiteral( "0,0,0,0" ) );
        props.insert( QStringLiteral( "outline_color" ), split.second );
        props.insert( QStringLiteral( "outline_width" ), QStringLiteral( "0.5" ) );
        categories << QgsRendererCategory( split.first, QgsFillSymbol::createSimple( props ), split.first );
      }
      vector->setRenderer( new QgsCategorizedSymbolRenderer( QStringLiteral( "split" ), categories ) );
      vector->triggerRepaint();
    }
};
} // namespace

QString GeoDLCreateSamplesAlgorithm::name() const
{
  return QStringLiteral( "createsamples" );
}

QString GeoDLCreateSamplesAlgorithm::displayName() const
{
  return tr( "Create training samples" );
}

QStringList GeoDLCreateSamplesAlgorithm::tags() const
{
  return tr( "samples,training,hdf5,ground truth,labels,rasterize,deep learning" ).split( ',' );
}

QString GeoDLCreateSamplesAlgorithm::helpIntro() const
{
  return tr( "Cuts a raster and its ground-truth polygons into training samples: HDF5 stores in "
             "geo-deep-learning's layout (trn_samples.hdf5, val_samples.hdf5) and a footprint layer "
             "with one polygon per sample." );
}

std::vector<const geodl::OptionInfo *> GeoDLCreateSamplesAlgorithm::optionInfos() const
{
  return geodlInfos( geodl::sampleOptionTable() );
}

QgsProcessingAlgorithm *GeoDLCreateSamplesAlgorithm::createInstance() const
{
  return new GeoDLCreateSamplesAlgorithm();
}

void GeoDLCreateSamplesAlgorithm::initAlgorithm( const QVariantMap & )
{
  // Every parameter comes from the engine's option table; layers and destinations are declared here.
  const auto declare = []( const geodl::OptionInfo & o, const QString & label ) -> QgsProcessingParameterDefinition *
  {
    const QString name = QString::fromStdString( o.parameter );
    if ( name == QLatin1String( "INPUT" ) )
      return new QgsProcessingParameterRasterLayer( name, label );
    if ( name == QLatin1String( "VECTOR" ) )
      return new QgsProcessingParameterFeatureSource( name, label, QList<int>() << static_cast<int>( Qgis::ProcessingSourceType::VectorPolygon ) );
    if ( name == QLatin1String( "FIELD" ) )
      return new QgsProcessingParameterField( name, label, QVariant(), QStringLiteral( "VECTOR" ) );
    if ( name == QLatin1String( "VALIDATION_LAYER" ) )
      return new QgsProcessingParameterFeatureSource( name, label, QList<int>() << static_cast<int>( Qgis::ProcessingSourceType::VectorPolygon ), QVariant(), true );
    if ( name == QLatin1String( "OUTPUT_FOLDER" ) )
      return new QgsProcessingParameterFolderDestination( name, label );
    if ( name == QLatin1String( "FOOTPRINT" ) )
      return new QgsProcessingParameterVectorDestination( name, label, Qgis::ProcessingSourceType::VectorPolygon );
    return nullptr;
  };
  for ( QgsProcessingParameterDefinition *p : geodlParameters( geodl::sampleOptionTable(), declare ) )
    addParameter( p );
  addOutput( new QgsProcessingOutputFile( QStringLiteral( "TRAINING_STORE" ), tr( "Training samples (HDF5)" ) ) );
  addOutput( new QgsProcessingOutputFile( QStringLiteral( "VALIDATION_STORE" ), tr( "Validation samples (HDF5)" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "TRAINING_SAMPLES" ), tr( "Number of training samples" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "VALIDATION_SAMPLES" ), tr( "Number of validation samples" ) ) );
}

QVariantMap GeoDLCreateSamplesAlgorithm::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
    QgsProcessingFeedback *feedback )
{
  QgsRasterLayer *raster = parameterAsRasterLayer( parameters, QStringLiteral( "INPUT" ), context );
  if ( !raster )
    throw QgsProcessingException( invalidRasterError( parameters, QStringLiteral( "INPUT" ) ) );
  if ( raster->providerType() != QLatin1String( "gdal" ) )
    throw QgsProcessingException( tr( "The raster layer must be a file GDAL reads (this one comes from the %1 provider); "
                                      "save it as a GeoTIFF first." ).arg( raster->providerType() ) );

  geodl::OptionValues values = geodlParameterValues( *this, geodl::sampleOptionTable(), parameters, context );
  values["raster"] = geodlValue( raster->source(), QStringLiteral( "INPUT" ) );
  geodlVectorLayerValues( *this, parameters, context, feedback, QStringLiteral( "VECTOR" ), "vector", "vector_layer", values );
  values["field"] = geodlValue( parameterAsString( parameters, QStringLiteral( "FIELD" ), context ), QStringLiteral( "FIELD" ) );
  if ( !geodlVectorLayerValues( *this, parameters, context, feedback, QStringLiteral( "VALIDATION_LAYER" ), "validation_vector",
                                "validation_layer", values )
       && parameterAsEnum( parameters, QStringLiteral( "SPLIT" ), context ) == 2 )
    throw QgsProcessingException( tr( "Choose a validation polygon layer, or another split." ) );
  const QString outputFolder = parameterAsString( parameters, QStringLiteral( "OUTPUT_FOLDER" ), context );
  values["output_folder"] = geodlValue( outputFolder, QStringLiteral( "OUTPUT_FOLDER" ) );
  const QString footprint = parameterAsOutputLayer( parameters, QStringLiteral( "FOOTPRINT" ), context );
  values["footprint_path"] = geodlValue( footprint, QStringLiteral( "FOOTPRINT" ) );

  GeoDLFeedbackProgress progress( feedback );
  const geodl::SampleResult result = geodlEngineCall( [&]
  {
    geodl::SampleOptions options;
    geodl::applyOptions( geodl::sampleOptionTable(), values, options );
    return geodl::createSamples( options, progress );
  },
                                     tr( "Cancelled by the user: no sample store was written." ) );
  for ( const std::string &w : result.warnings )
    feedback->reportError( QString::fromStdString( w ), false );

  if ( context.willLoadLayerOnCompletion( footprint ) )
    context.layerToLoadOnCompletionDetails( footprint ).setPostProcessor( new FootprintStyler() );

  QVariantMap outputs;
  outputs.insert( QStringLiteral( "OUTPUT_FOLDER" ), outputFolder );
  outputs.insert( QStringLiteral( "FOOTPRINT" ), footprint );
  for ( const geodl::SplitResult &split : result.splits )
  {
    feedback->pushInfo( tr( "%1: %2 samples in %3" ).arg( QString::fromStdString( split.split ) ).arg( split.samples )
                        .arg( QString::fromStdString( split.path ) ) );
    if ( split.split == "trn" )
    {
      outputs.insert( QStringLiteral( "TRAINING_STORE" ), QString::fromStdString( split.path ) );
      outputs.insert( QStringLiteral( "TRAINING_SAMPLES" ), static_cast<qlonglong>( split.samples ) );
    }
    else if ( split.split == "val" )
    {
      outputs.insert( QStringLiteral( "VALIDATION_STORE" ), QString::fromStdString( split.path ) );
      outputs.insert( QStringLiteral( "VALIDATION_SAMPLES" ), static_cast<qlonglong>( split.samples ) );
    }
  }
  QStringList classes;
  for ( size_t i = 0; i < result.class_ids.size(); ++i )
    classes << QStringLiteral( "%1 %2" ).arg( result.class_ids[i] ).arg( QString::fromStdString( result.class_names[i] ) );
  feedback->pushInfo( tr( "Classes: %1" ).arg( classes.join( QStringLiteral( ", " ) ) ) );
  return outputs;
}
