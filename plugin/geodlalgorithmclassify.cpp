#include "geodlalgorithmclassify.h"

#include <QCoreApplication>
#include <QIcon>

#include <qgscategorizedsymbolrenderer.h>
#include <qgsexception.h>
#include <qgsfillsymbol.h>
#include <qgspalettedrasterrenderer.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>
#include <qgsrasterlayer.h>
#include <qgsvectorlayer.h>

#include "app/classify.h"
#include "core/model_info.h"
#include "geodlchoices.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"

namespace
{
QString tr( const char *text )
{
  return QCoreApplication::translate( "GeoDLClassifyAlgorithm", text );
}

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

QString GeoDLClassifyAlgorithm::group() const
{
  return tr( "Classification" );
}

QString GeoDLClassifyAlgorithm::groupId() const
{
  return QStringLiteral( "classification" );
}

QString GeoDLClassifyAlgorithm::shortHelpString() const
{
  return tr( "Classifies every pixel of a raster layer with a model trained by \"Train segmentation model\". "
             "The raster is read window by window, so rasters of any size classify in bounded memory; "
             "overlapping windows are blended smoothly (no seams) and the edges are padded by reflection, "
             "so no strip is left unclassified. The class raster opens styled with the model's class colours "
             "and names.\n\n"
             "Model file: the .pt file training wrote (inference.state_dict_path); it says which bands, "
             "normalization and classes it needs.\n"
             "Window size: pixels per window, 0 for the model's sample size (inference.chunk_size).\n"
             "Overlap: percent of the window shared with each neighbour, e.g. 25 (inference.overlap).\n"
             "Batch size: windows per forward pass; more is faster until memory runs out (inference.batch_size).\n"
             "Test-time augmentation: average over the 8 flips and quarter turns (8x slower, often "
             "smoother; inference.tta).\n"
             "Extent: only windows touching it are computed; the rest is nodata.\n"
             "Mask polygons: only windows with a pixel inside a polygon are computed; pixels outside "
             "every polygon are nodata (the layer is reprojected to the raster's CRS; inference.mask).\n"
             "Probabilities: one band per class, 0-255 (inference.probabilities).\n"
             "Polygons: the classes as polygons (GeoPackage); smaller than the minimum area are dropped." );
}

QIcon GeoDLClassifyAlgorithm::icon() const
{
  return QIcon( QStringLiteral( ":/geodl/geodl.svg" ) );
}

QgsProcessingAlgorithm *GeoDLClassifyAlgorithm::createInstance() const
{
  return new GeoDLClassifyAlgorithm();
}

void GeoDLClassifyAlgorithm::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterRasterLayer( QStringLiteral( "INPUT" ), tr( "Raster layer" ) ) );
  addParameter( new QgsProcessingParameterFile( QStringLiteral( "MODEL" ), tr( "Model file" ),
                QgsProcessingParameterFile::File, QStringLiteral( "pt" ) ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "WINDOW" ), tr( "Window size (pixels, 0: the model's sample size)" ),
                QgsProcessingParameterNumber::Integer, 0, false, 0, 100000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "OVERLAP" ), tr( "Overlap (percent of the window)" ),
                QgsProcessingParameterNumber::Double, 25, false, 0, 49 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "BATCH_SIZE" ), tr( "Batch size (windows)" ),
                QgsProcessingParameterNumber::Integer, 4, false, 1, 10000 ) );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "TTA" ), tr( "Test-time augmentation" ), false ) );
  addParameter( new QgsProcessingParameterExtent( QStringLiteral( "EXTENT" ), tr( "Extent" ), QVariant(), true ) );
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "MASK" ), tr( "Mask polygons" ),
                QList<int>() << QgsProcessing::TypeVectorPolygon, QVariant(), true ) );
  const auto advanced = [this]( QgsProcessingParameterDefinition * p )
  {
    p->setFlags( p->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
    addParameter( p );
  };
  advanced( new QgsProcessingParameterNumber( QStringLiteral( "MIN_AREA" ), tr( "Minimum polygon area (map units squared)" ),
            QgsProcessingParameterNumber::Double, 0, false, 0 ) );
  advanced( new QgsProcessingParameterBoolean( QStringLiteral( "COG" ), tr( "Cloud Optimized GeoTIFF" ), false ) );
  advanced( new QgsProcessingParameterEnum( QStringLiteral( "DEVICE" ), tr( "Device" ), geodlDevices(), false, 0 ) );
  advanced( new QgsProcessingParameterNumber( QStringLiteral( "THREADS" ), tr( "CPU threads (0: all cores)" ),
            QgsProcessingParameterNumber::Integer, 0, false, 0, 1024 ) );
  addParameter( new QgsProcessingParameterRasterDestination( QStringLiteral( "OUTPUT" ), tr( "Classes" ) ) );
  addParameter( new QgsProcessingParameterRasterDestination( QStringLiteral( "PROBABILITIES" ), tr( "Class probabilities" ),
                QVariant(), true, false ) );
  addParameter( new QgsProcessingParameterVectorDestination( QStringLiteral( "POLYGONS" ), tr( "Class polygons" ),
                QgsProcessing::TypeVectorPolygon, QVariant(), true, false ) );
}

QVariantMap GeoDLClassifyAlgorithm::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
    QgsProcessingFeedback *feedback )
{
  QgsRasterLayer *layer = parameterAsRasterLayer( parameters, QStringLiteral( "INPUT" ), context );
  if ( !layer )
    throw QgsProcessingException( invalidRasterError( parameters, QStringLiteral( "INPUT" ) ) );
  geodl::ClassifyOptions options;
  options.input = layer->source().toStdString();
  options.model_path = parameterAsFile( parameters, QStringLiteral( "MODEL" ), context ).toStdString();
  options.window = parameterAsInt( parameters, QStringLiteral( "WINDOW" ), context );
  options.overlap = parameterAsDouble( parameters, QStringLiteral( "OVERLAP" ), context );
  options.batch_size = parameterAsInt( parameters, QStringLiteral( "BATCH_SIZE" ), context );
  options.tta = parameterAsBoolean( parameters, QStringLiteral( "TTA" ), context );
  options.min_area = parameterAsDouble( parameters, QStringLiteral( "MIN_AREA" ), context );
  options.cog = parameterAsBoolean( parameters, QStringLiteral( "COG" ), context );
  options.device = geodlDevices().value( parameterAsEnum( parameters, QStringLiteral( "DEVICE" ), context ) ).toStdString();
  options.threads = parameterAsInt( parameters, QStringLiteral( "THREADS" ), context );
  if ( parameters.value( QStringLiteral( "EXTENT" ) ).isValid() && !parameters.value( QStringLiteral( "EXTENT" ) ).toString().isEmpty() )
  {
    const QgsRectangle extent = parameterAsExtent( parameters, QStringLiteral( "EXTENT" ), context, layer->crs() );
    if ( !extent.isNull() )
    {
      options.has_extent = true;
      options.extent[0] = extent.xMinimum();
      options.extent[1] = extent.yMinimum();
      options.extent[2] = extent.xMaximum();
      options.extent[3] = extent.yMaximum();
    }
  }
  if ( parameters.value( QStringLiteral( "MASK" ) ).isValid() && !parameters.value( QStringLiteral( "MASK" ) ).toString().isEmpty() )
  {
    // A file OGR reads: the layer itself, or a copy of its selected features.
    QString maskLayer;
    options.mask = parameterAsCompatibleSourceLayerPathAndLayerName( parameters, QStringLiteral( "MASK" ), context,
                   QStringList() << QStringLiteral( "gpkg" ) << QStringLiteral( "shp" ) << QStringLiteral( "geojson" ),
                   QStringLiteral( "gpkg" ), feedback, &maskLayer ).toStdString();
    options.mask_layer = maskLayer.toStdString();
  }
  const QString output = parameterAsOutputLayer( parameters, QStringLiteral( "OUTPUT" ), context );
  if ( !output.endsWith( QLatin1String( ".tif" ), Qt::CaseInsensitive ) && !output.endsWith( QLatin1String( ".tiff" ), Qt::CaseInsensitive ) )
    throw QgsProcessingException( tr( "The classes are written as GeoTIFF: give a .tif file (got %1)." ).arg( output ) );
  options.output = output.toStdString();
  const QString probabilities = parameterAsOutputLayer( parameters, QStringLiteral( "PROBABILITIES" ), context );
  if ( !probabilities.isEmpty() )
  {
    if ( !probabilities.endsWith( QLatin1String( ".tif" ), Qt::CaseInsensitive ) )
      throw QgsProcessingException( tr( "The probabilities are written as GeoTIFF: give a .tif file (got %1)." ).arg( probabilities ) );
    options.probabilities = probabilities.toStdString();
  }
  const QString polygons = parameterAsOutputLayer( parameters, QStringLiteral( "POLYGONS" ), context );
  if ( !polygons.isEmpty() )
  {
    if ( !polygons.endsWith( QLatin1String( ".gpkg" ), Qt::CaseInsensitive ) )
      throw QgsProcessingException( tr( "The polygons are written as a GeoPackage: give a .gpkg file (got %1)." ).arg( polygons ) );
    options.polygons = polygons.toStdString();
  }

  GeoDLFeedbackProgress progress( feedback );
  const geodl::ClassifyResult result = geodlEngineCall( [&] { return geodl::classify( options, progress ); },
                                       tr( "Cancelled by the user: no output was written." ) );
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
