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
#include "core/errors.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"

namespace
{
QString tr( const char *text )
{
  return QCoreApplication::translate( "GeoDLCreateSamplesAlgorithm", text );
}
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

QString GeoDLCreateSamplesAlgorithm::group() const
{
  return tr( "Training" );
}

QString GeoDLCreateSamplesAlgorithm::groupId() const
{
  return QStringLiteral( "training" );
}

QString GeoDLCreateSamplesAlgorithm::shortHelpString() const
{
  return tr( "Cuts a raster and its ground-truth polygons into training samples: HDF5 stores in "
             "geo-deep-learning's layout (trn_samples.hdf5, val_samples.hdf5) and a footprint layer "
             "with one polygon per sample.\n\n"
             "Raster layer: any GDAL raster, any number of bands (Byte, UInt16, Int16, Float32...); "
             "nodata pixels are left out of the loss.\n"
             "Ground truth: polygons in any CRS (reprojected onto the raster's grid); with "
             "\"Selected features only\", only those.\n"
             "Class field: integer class ids (0 is the background), or strings, numbered 1, 2... in "
             "sorted order. Where polygons overlap, the higher class id wins.\n"
             "Split: all training; a validation percentage taken as random spatial blocks (so "
             "overlapping samples never fall on both sides); or the samples inside a validation "
             "polygon layer.\n"
             "Sample size: samples' height and width in pixels, typically 256 (global.samples_size).\n"
             "Distance between samples: in pixels, typically 200 (sample.samples_dist).\n"
             "Minimum annotated percent: samples with fewer non-background pixels are dropped "
             "(sample.min_annotated_percent).\n"
             "Ignored class values: comma-separated values whose pixels are left out of the loss.\n"
             "Pixels under no polygon are the background (class 0), or, for sparse annotations, "
             "left out of the loss too.\n"
             "Number of classes: background included (global.num_classes); 0 takes it from the data." );
}

QIcon GeoDLCreateSamplesAlgorithm::icon() const
{
  return QIcon( QStringLiteral( ":/geodl/geodl.svg" ) );
}

QgsProcessingAlgorithm *GeoDLCreateSamplesAlgorithm::createInstance() const
{
  return new GeoDLCreateSamplesAlgorithm();
}

void GeoDLCreateSamplesAlgorithm::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterRasterLayer( QStringLiteral( "INPUT" ), tr( "Raster layer" ) ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "VECTOR" ), tr( "Ground truth polygons" ),
                QList<int>() << QgsProcessing::TypeVectorPolygon ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "FIELD" ), tr( "Class field" ), QVariant(),
                QStringLiteral( "VECTOR" ) ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "SPLIT" ), tr( "Split" ),
                QStringList() << tr( "All training" ) << tr( "Validation percentage (spatial blocks)" )
                << tr( "Validation polygon layer" ), false, 1 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "VALIDATION_PERCENT" ), tr( "Validation percentage" ),
                QgsProcessingParameterNumber::Double, 20, false, 1, 99 ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "VALIDATION_LAYER" ), tr( "Validation polygons" ),
                QList<int>() << QgsProcessing::TypeVectorPolygon, QVariant(), true ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SAMPLE_SIZE" ), tr( "Sample size (pixels)" ),
                QgsProcessingParameterNumber::Integer, 256, false, 8, 100000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "STRIDE" ), tr( "Distance between samples (pixels)" ),
                QgsProcessingParameterNumber::Integer, 200, false, 1, 100000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "MIN_ANNOTATED" ), tr( "Minimum annotated percent" ),
                QgsProcessingParameterNumber::Double, 0, false, 0, 100 ) );

  auto classes = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "NUM_CLASSES" ),
                 tr( "Number of classes, background included (0: from the data)" ), QgsProcessingParameterNumber::Integer, 0, false, 0, 255 );
  classes->setFlags( classes->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( classes.release() );
  auto ignored = std::make_unique<QgsProcessingParameterString>( QStringLiteral( "IGNORE_VALUES" ),
                 tr( "Ignored class values (comma-separated)" ), QVariant(), false, true );
  ignored->setFlags( ignored->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( ignored.release() );
  auto unlabelled = std::make_unique<QgsProcessingParameterBoolean>( QStringLiteral( "UNLABELLED_IGNORED" ),
                    tr( "Pixels under no polygon are unknown, not background (sparse annotations)" ), false );
  unlabelled->setFlags( unlabelled->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( unlabelled.release() );
  auto seed = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "SEED" ), tr( "Random seed (validation blocks)" ),
              QgsProcessingParameterNumber::Integer, 0, false, 0 );
  seed->setFlags( seed->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( seed.release() );

  addParameter( new QgsProcessingParameterFolderDestination( QStringLiteral( "OUTPUT_FOLDER" ), tr( "Sample stores folder" ) ) );
  addParameter( new QgsProcessingParameterVectorDestination( QStringLiteral( "FOOTPRINT" ), tr( "Sample footprints" ),
                QgsProcessing::TypeVectorPolygon ) );
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

  geodl::SampleOptions options;
  geodl::SampleSource source;
  source.raster = raster->source().toStdString();
  QString layerName;
  // A file OGR reads: the layer itself, or a copy of its selected features.
  const QString vectorPath = parameterAsCompatibleSourceLayerPathAndLayerName( parameters, QStringLiteral( "VECTOR" ), context,
                             QStringList() << QStringLiteral( "gpkg" ) << QStringLiteral( "shp" ) << QStringLiteral( "geojson" ),
                             QStringLiteral( "gpkg" ), feedback, &layerName );
  source.vector = vectorPath.toStdString();
  source.layer = layerName.toStdString();
  source.field = parameterAsString( parameters, QStringLiteral( "FIELD" ), context ).toStdString();
  options.sources.push_back( source );

  switch ( parameterAsEnum( parameters, QStringLiteral( "SPLIT" ), context ) )
  {
    case 0:
      options.split_mode = geodl::SplitMode::FromSources;
      break;
    case 1:
      options.split_mode = geodl::SplitMode::ValidationPercent;
      options.validation_percent = parameterAsDouble( parameters, QStringLiteral( "VALIDATION_PERCENT" ), context );
      break;
    default:
    {
      options.split_mode = geodl::SplitMode::ValidationPolygons;
      if ( !parameters.value( QStringLiteral( "VALIDATION_LAYER" ) ).isValid() )
        throw QgsProcessingException( tr( "Choose a validation polygon layer, or another split." ) );
      QString validationLayer;
      options.validation_vector = parameterAsCompatibleSourceLayerPathAndLayerName( parameters, QStringLiteral( "VALIDATION_LAYER" ), context,
                                  QStringList() << QStringLiteral( "gpkg" ) << QStringLiteral( "shp" ), QStringLiteral( "gpkg" ), feedback,
                                  &validationLayer ).toStdString();
      options.validation_layer = validationLayer.toStdString();
      break;
    }
  }
  options.sample_size = parameterAsInt( parameters, QStringLiteral( "SAMPLE_SIZE" ), context );
  options.stride = parameterAsInt( parameters, QStringLiteral( "STRIDE" ), context );
  options.min_annotated_percent = parameterAsDouble( parameters, QStringLiteral( "MIN_ANNOTATED" ), context );
  options.num_classes = parameterAsInt( parameters, QStringLiteral( "NUM_CLASSES" ), context );
  options.seed = static_cast<uint64_t>( parameterAsInt( parameters, QStringLiteral( "SEED" ), context ) );
  options.unlabelled_ignored = parameterAsBoolean( parameters, QStringLiteral( "UNLABELLED_IGNORED" ), context );
  const QString ignored = parameterAsString( parameters, QStringLiteral( "IGNORE_VALUES" ), context );
  for ( const QString &v : ignored.split( ',', Qt::SkipEmptyParts ) )
    options.ignored_values.push_back( v.trimmed().toStdString() );
  options.output_folder = parameterAsString( parameters, QStringLiteral( "OUTPUT_FOLDER" ), context ).toStdString();
  const QString footprint = parameterAsOutputLayer( parameters, QStringLiteral( "FOOTPRINT" ), context );
  if ( !footprint.endsWith( QLatin1String( ".gpkg" ), Qt::CaseInsensitive ) )
    throw QgsProcessingException( tr( "Sample footprints are written as a GeoPackage: give a .gpkg file (got %1)." ).arg( footprint ) );
  options.footprint_path = footprint.toStdString();

  GeoDLFeedbackProgress progress( feedback );
  const geodl::SampleResult result = geodlEngineCall( [&] { return geodl::createSamples( options, progress ); },
                                     tr( "Cancelled by the user: no sample store was written." ) );
  for ( const std::string &w : result.warnings )
    feedback->reportError( QString::fromStdString( w ), false );

  if ( context.willLoadLayerOnCompletion( footprint ) )
    context.layerToLoadOnCompletionDetails( footprint ).setPostProcessor( new FootprintStyler() );

  QVariantMap outputs;
  outputs.insert( QStringLiteral( "OUTPUT_FOLDER" ), QString::fromStdString( options.output_folder ) );
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
