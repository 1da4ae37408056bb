// The provider and geodl:estimatebatchsize inside an initialised (headless) QGIS.
#include <gtest/gtest.h>

#include <qgis.h>
#include <qgsapplication.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingregistry.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QDomDocument>
#include <QTemporaryDir>

#include <qgsprocessingparameters.h>
#include <qgsprocessingmodelalgorithm.h>
#include <qgsxmlutils.h>
#include <qgsproject.h>
#include <qgsvectorlayer.h>
#include <qgsrasterlayer.h>
#include <qgsrasterdataprovider.h>
#include <qgsrasterblock.h>
#include <qgsgeometry.h>
#include <qgsvectordataprovider.h>
#include <qgsmaplayerstore.h>
#include <qgspalettedrasterrenderer.h>

#include "app/batch_probe_options.h"
#include "app/classify.h"
#include "app/create_samples.h"
#include "app/train.h"
#include "core/device.h"
#include "io/sample_store.h"
#include "model/model_info.h"
#include "io/synthetic_scene.h"
#include "geodlplugin.h"
#include "geodlprovider.h"

namespace
{

// Keeps the errors the algorithm reports.
class RecordingFeedback : public QgsProcessingFeedback
{
  public:
    void reportError( const QString &error, bool fatalError = false ) override
    {
      errors << error;
      QgsProcessingFeedback::reportError( error, fatalError );
    }
    void pushInfo( const QString &info ) override
    {
      infos << info;
      QgsProcessingFeedback::pushInfo( info );
    }
    QStringList errors, infos;
};

QVariantMap smallProbe()
{
  QVariantMap p;
  p.insert( QStringLiteral( "MODEL" ), 2 );  // checkpointed_unet
  p.insert( QStringLiteral( "SAMPLE_SIZE" ), 32 );
  p.insert( QStringLiteral( "BANDS" ), 3 );
  p.insert( QStringLiteral( "CLASSES" ), 4 );
  p.insert( QStringLiteral( "CHECKPOINT" ), false );
  p.insert( QStringLiteral( "BUDGET_MIB" ), 96 );
  p.insert( QStringLiteral( "DEVICE" ), 1 );  // cpu
  p.insert( QStringLiteral( "THREADS" ), 2 );
  return p;
}

// Declared before the fixture's tests, so it runs while no "geodl" provider exists yet.
TEST( PluginTest, LoadingRegistersTheProviderAndUnloadingRemovesIt )
{
  QgsProcessingRegistry *registry = QgsApplication::processingRegistry();
  ASSERT_EQ( registry->providerById( QStringLiteral( "geodl" ) ), nullptr );
  GeoDLPlugin plugin( nullptr );
  EXPECT_EQ( plugin.name(), QStringLiteral( "GeoDL" ) );
  plugin.initGui();
  ASSERT_NE( registry->providerById( QStringLiteral( "geodl" ) ), nullptr );
  EXPECT_NE( registry->algorithmById( QStringLiteral( "geodl:estimatebatchsize" ) ), nullptr );
  plugin.unload();
  EXPECT_EQ( registry->providerById( QStringLiteral( "geodl" ) ), nullptr );
  EXPECT_EQ( registry->algorithmById( QStringLiteral( "geodl:estimatebatchsize" ) ), nullptr );
}

class ProviderTest : public ::testing::Test
{
  protected:
    static void SetUpTestSuite()
    {
      QgsApplication::processingRegistry()->addProvider( new GeoDLProvider() );
    }
    static const QgsProcessingAlgorithm *algorithm()
    {
      return QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "geodl:estimatebatchsize" ) );
    }
};

TEST_F( ProviderTest, ProviderAndAlgorithmAreRegistered )
{
  QgsProcessingProvider *provider = QgsApplication::processingRegistry()->providerById( QStringLiteral( "geodl" ) );
  ASSERT_NE( provider, nullptr );
  EXPECT_EQ( provider->name(), QStringLiteral( "GeoDL" ) );
  const QgsProcessingAlgorithm *alg = algorithm();
  ASSERT_NE( alg, nullptr );
  EXPECT_EQ( alg->displayName(), QStringLiteral( "Estimate maximum batch size" ) );
  EXPECT_TRUE( alg->flags() & Qgis::ProcessingAlgorithmFlag::CanCancel );
  EXPECT_FALSE( alg->shortHelpString().isEmpty() );
  for ( const char *name : { "MODEL", "SAMPLE_SIZE", "BANDS", "CLASSES", "CHECKPOINT", "BUDGET_MIB" } )
    EXPECT_NE( alg->parameterDefinition( QString( name ) ), nullptr ) << name;
  EXPECT_NE( alg->outputDefinition( QStringLiteral( "MAX_BATCH" ) ), nullptr );
}

// Each algorithm's parameters are its option table's: every one there, with the table's
// default (the options struct's own), range, advanced flag and help.
template <class Options>
void expectParametersFromTable( const QString &id, const geodl::OptionTable<Options> &table )
{
  const QgsProcessingAlgorithm *alg = QgsApplication::processingRegistry()->algorithmById( id );
  ASSERT_NE( alg, nullptr ) << id.toStdString();
  for ( const auto &o : table )
  {
    if ( o.parameter.empty() )
      continue;
    SCOPED_TRACE( id.toStdString() + " " + o.parameter );
    const QgsProcessingParameterDefinition *p = alg->parameterDefinition( QString::fromStdString( o.parameter ) );
    ASSERT_NE( p, nullptr );
    EXPECT_EQ( bool( p->flags() & Qgis::ProcessingParameterFlag::Advanced ), o.advanced );
    EXPECT_FALSE( p->help().isEmpty() );
    EXPECT_TRUE( alg->shortHelpString().contains( p->description() ) );
    if ( o.plugin_declares )
      continue;
    const std::string def = o.processing_default.empty() ? geodl::defaultText( o ) : o.processing_default;
    if ( const auto *n = dynamic_cast<const QgsProcessingParameterNumber *>( p ) )
    {
      EXPECT_DOUBLE_EQ( n->defaultValue().toDouble(), std::stod( def ) );
      EXPECT_DOUBLE_EQ( n->minimum(), o.min );
      EXPECT_DOUBLE_EQ( n->maximum(), o.max );
    }
    else if ( dynamic_cast<const QgsProcessingParameterBoolean *>( p ) )
      EXPECT_EQ( p->defaultValue().toBool(), def == "true" );
    else if ( const auto *e = dynamic_cast<const QgsProcessingParameterEnum *>( p ) )
    {
      const auto choices = o.choices();
      ASSERT_EQ( e->options().size(), static_cast<int>( choices.size() ) );
      EXPECT_EQ( choices.at( static_cast<size_t>( e->defaultValue().toInt() ) ).value, def );
    }
  }
}

TEST_F( ProviderTest, ParametersComeFromTheOptionTables )
{
  expectParametersFromTable( QStringLiteral( "geodl:createsamples" ), geodl::sampleOptionTable() );
  expectParametersFromTable( QStringLiteral( "geodl:train" ), geodl::trainOptionTable() );
  expectParametersFromTable( QStringLiteral( "geodl:classify" ), geodl::classifyOptionTable() );
  expectParametersFromTable( QStringLiteral( "geodl:estimatebatchsize" ), geodl::batchProbeOptionTable() );
  // The drift that started it: QGIS's dropout probability was 0.2, the engine's 0.5.
  const QgsProcessingAlgorithm *train = QgsApplication::processingRegistry()->algorithmById( QStringLiteral( "geodl:train" ) );
  EXPECT_DOUBLE_EQ( train->parameterDefinition( QStringLiteral( "DROPOUT_PROBABILITY" ) )->defaultValue().toDouble(),
                    geodl::TrainOptions{}.dropout_probability );
}

TEST_F( ProviderTest, RunsThroughTheRegistryWithProgress )
{
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:estimatebatchsize" ) ) );
  ASSERT_TRUE( alg );
  QgsProcessingContext context;
  QgsProcessingFeedback feedback;
  int progressUpdates = 0;
  QObject::connect( &feedback, &QgsFeedback::progressChanged, [&]( double ) { ++progressUpdates; } );
  bool ok = false;
  const QVariantMap results = alg->run( smallProbe(), context, &feedback, &ok );
  ASSERT_TRUE( ok );
  const int maxBatch = results.value( QStringLiteral( "MAX_BATCH" ) ).toInt();
  EXPECT_GE( maxBatch, 4 );
  EXPECT_GT( results.value( QStringLiteral( "BYTES_PER_SAMPLE" ) ).toDouble(), 0.0 );
  EXPECT_GT( progressUpdates, 2 );
}

TEST_F( ProviderTest, CancelStopsWithAProcessingError )
{
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:estimatebatchsize" ) ) );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  QObject::connect( &feedback, &QgsFeedback::progressChanged, [&]( double ) { feedback.cancel(); } );
  bool ok = true;
  alg->run( smallProbe(), context, &feedback, &ok );
  EXPECT_FALSE( ok );
  EXPECT_TRUE( feedback.errors.join( '\n' ).contains( QStringLiteral( "Cancelled" ) ) ) << feedback.errors.join( '\n' ).toStdString();
}

TEST_F( ProviderTest, BadParametersAreRefusedBeforeRunning )
{
  const QgsProcessingAlgorithm *alg = algorithm();
  QgsProcessingContext context;
  QVariantMap p = smallProbe();
  p.insert( QStringLiteral( "BANDS" ), 0 );
  QString message;
  EXPECT_FALSE( alg->checkParameterValues( p, context, &message ) );
  EXPECT_TRUE( message.contains( QStringLiteral( "bands" ), Qt::CaseInsensitive ) ) << message.toStdString();
}

TEST_F( ProviderTest, EngineErrorsBecomeProcessingErrorsNotCrashes )
{
  if ( geodl::cudaAvailable() )
    GTEST_SKIP() << "a GPU is present: asking for cuda is no error here";
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:estimatebatchsize" ) ) );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  QVariantMap p = smallProbe();
  p.insert( QStringLiteral( "DEVICE" ), 2 );  // cuda
  bool ok = true;
  alg->run( p, context, &feedback, &ok );
  EXPECT_FALSE( ok );
  EXPECT_TRUE( feedback.errors.join( '\n' ).contains( QStringLiteral( "no CUDA GPU" ) ) ) << feedback.errors.join( '\n' ).toStdString();
}

TEST_F( ProviderTest, CreateSamplesFromSelectedFeaturesWithValidationBlocks )
{
  QTemporaryDir dir;
  geodl::io::SceneOptions scene;
  scene.size = 256;
  const auto files = geodl::io::makeSyntheticScene( dir.path().toStdString(), "scene", scene );
  auto *truth = new QgsVectorLayer( QString::fromStdString( files.labels ) + QStringLiteral( "|layername=labels" ),
                                    QStringLiteral( "truth" ), QStringLiteral( "ogr" ) );
  ASSERT_TRUE( truth->isValid() );
  QgsProject::instance()->addMapLayer( truth );
  truth->selectByExpression( QStringLiteral( "\"class\" IN ('building', 'water')" ) );
  ASSERT_GT( truth->selectedFeatureCount(), 0 );

  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:createsamples" ) ) );
  ASSERT_TRUE( alg );
  QVariantMap p;
  p.insert( QStringLiteral( "INPUT" ), QString::fromStdString( files.raster ) );
  p.insert( QStringLiteral( "VECTOR" ), QVariant::fromValue( QgsProcessingFeatureSourceDefinition( truth->id(), true ) ) );
  p.insert( QStringLiteral( "FIELD" ), QStringLiteral( "class" ) );
  p.insert( QStringLiteral( "SPLIT" ), 1 );
  p.insert( QStringLiteral( "VALIDATION_PERCENT" ), 25 );
  p.insert( QStringLiteral( "SAMPLE_SIZE" ), 32 );
  p.insert( QStringLiteral( "STRIDE" ), 32 );
  p.insert( QStringLiteral( "OUTPUT_FOLDER" ), dir.filePath( QStringLiteral( "samples" ) ) );
  p.insert( QStringLiteral( "FOOTPRINT" ), dir.filePath( QStringLiteral( "footprints.gpkg" ) ) );
  QgsProcessingContext context;
  context.setProject( QgsProject::instance() );
  RecordingFeedback feedback;
  bool ok = false;
  const QVariantMap results = alg->run( p, context, &feedback, &ok );
  ASSERT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();
  EXPECT_GT( results.value( QStringLiteral( "TRAINING_SAMPLES" ) ).toInt(), 0 );
  EXPECT_GT( results.value( QStringLiteral( "VALIDATION_SAMPLES" ) ).toInt(), 0 );
  EXPECT_TRUE( QFileInfo::exists( dir.filePath( QStringLiteral( "footprints.gpkg" ) ) ) );
  // Only the selected classes made it into the class list.
  const auto stored = geodl::io::readStoreMetadata( results.value( QStringLiteral( "TRAINING_STORE" ) ).toString().toStdString() );
  EXPECT_EQ( stored.metadata.class_names, ( std::vector<std::string> {"background", "building", "water"} ) );
  QgsProject::instance()->removeAllMapLayers();
}

// geodl:createsamples parameters for a synthetic scene of `size` pixels made in `dir`:
// 32-pixel samples, every 32 pixels, all for training unless changed. Files are named
// `prefix` + scene.tif, samples/, footprints.gpkg.
QVariantMap sceneSampleParameters( const QTemporaryDir &dir, int size, const QString &prefix = QString(), uint64_t seed = 1 )
{
  geodl::io::SceneOptions scene;
  scene.size = size;
  scene.seed = seed;
  const auto files = geodl::io::makeSyntheticScene( dir.path().toStdString(), ( prefix + QStringLiteral( "scene" ) ).toStdString(), scene );
  QVariantMap p;
  p.insert( QStringLiteral( "INPUT" ), QString::fromStdString( files.raster ) );
  p.insert( QStringLiteral( "VECTOR" ), QString::fromStdString( files.labels ) );
  p.insert( QStringLiteral( "FIELD" ), QStringLiteral( "class" ) );
  p.insert( QStringLiteral( "SPLIT" ), 0 );
  p.insert( QStringLiteral( "SAMPLE_SIZE" ), 32 );
  p.insert( QStringLiteral( "STRIDE" ), 32 );
  p.insert( QStringLiteral( "OUTPUT_FOLDER" ), dir.filePath( prefix + QStringLiteral( "samples" ) ) );
  p.insert( QStringLiteral( "FOOTPRINT" ), dir.filePath( prefix + QStringLiteral( "footprints.gpkg" ) ) );
  return p;
}

TEST_F( ProviderTest, CreateSamplesRefusesAFieldTheLayerLacks )
{
  QTemporaryDir dir;
  QVariantMap p = sceneSampleParameters( dir, 128 );
  p.insert( QStringLiteral( "FIELD" ), QStringLiteral( "landuse" ) );
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:createsamples" ) ) );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  bool ok = true;
  alg->run( p, context, &feedback, &ok );
  EXPECT_FALSE( ok );
  EXPECT_FALSE( QFileInfo::exists( dir.filePath( QStringLiteral( "samples/trn_samples.hdf5" ) ) ) );
}

// Samples from the synthetic scene through geodl:createsamples, for the training tests.
QVariantMap sceneSamples( const QTemporaryDir &dir )
{
  QVariantMap p = sceneSampleParameters( dir, 256 );
  p.insert( QStringLiteral( "SPLIT" ), 1 );
  p.insert( QStringLiteral( "VALIDATION_PERCENT" ), 30 );
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:createsamples" ) ) );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  bool ok = false;
  const QVariantMap results = alg->run( p, context, &feedback, &ok );
  EXPECT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();
  return results;
}

QVariantMap trainParameters( const QVariantMap &samples, const QTemporaryDir &dir )
{
  QVariantMap p;
  p.insert( QStringLiteral( "TRAINING_STORE" ), samples.value( QStringLiteral( "TRAINING_STORE" ) ) );
  p.insert( QStringLiteral( "VALIDATION_STORE" ), samples.value( QStringLiteral( "VALIDATION_STORE" ) ) );
  p.insert( QStringLiteral( "MODEL" ), 1 );  // unetsmall
  p.insert( QStringLiteral( "EPOCHS" ), 2 );
  p.insert( QStringLiteral( "BATCH_SIZE" ), 8 );
  p.insert( QStringLiteral( "LEARNING_RATE" ), 0.001 );
  p.insert( QStringLiteral( "THREADS" ), 2 );
  p.insert( QStringLiteral( "SEED" ), 1 );
  p.insert( QStringLiteral( "HFLIP_PROB" ), 0.5 );
  p.insert( QStringLiteral( "OUTPUT_MODEL" ), dir.filePath( QStringLiteral( "model/model.pt" ) ) );
  return p;
}

TEST_F( ProviderTest, TrainOnCreatedSamplesGivesModelAndHtmlReport )
{
  QTemporaryDir dir;
  const QVariantMap samples = sceneSamples( dir );
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:train" ) ) );
  ASSERT_TRUE( alg );
  EXPECT_EQ( alg->displayName(), QStringLiteral( "Train segmentation model" ) );
  EXPECT_TRUE( dynamic_cast<const QgsProcessingOutputHtml *>( alg->outputDefinition( QStringLiteral( "REPORT" ) ) ) );
  EXPECT_TRUE( alg->parameterDefinition( QStringLiteral( "WEIGHT_DECAY" ) )->flags() & Qgis::ProcessingParameterFlag::Advanced );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  int progressUpdates = 0;
  QObject::connect( &feedback, &QgsFeedback::progressChanged, [&]( double ) { ++progressUpdates; } );
  bool ok = false;
  const QVariantMap results = alg->run( trainParameters( samples, dir ), context, &feedback, &ok );
  ASSERT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();
  EXPECT_GT( progressUpdates, 4 );
  const QString model = results.value( QStringLiteral( "OUTPUT_MODEL" ) ).toString();
  EXPECT_EQ( model, dir.filePath( QStringLiteral( "model/model.pt" ) ) );
  EXPECT_TRUE( QFileInfo::exists( model ) );
  EXPECT_EQ( geodl::readModelInfo( model.toStdString() ).classes.size(), 5u );
  QFile report( results.value( QStringLiteral( "REPORT" ) ).toString() );
  ASSERT_TRUE( report.open( QIODevice::ReadOnly ) );
  EXPECT_TRUE( report.readAll().contains( "<svg" ) );
  EXPECT_TRUE( QFileInfo::exists( results.value( QStringLiteral( "CHECKPOINT" ) ).toString() ) );
  EXPECT_TRUE( QFileInfo::exists( results.value( QStringLiteral( "METRICS" ) ).toString() ) );
  EXPECT_GE( results.value( QStringLiteral( "BEST_EPOCH" ) ).toInt(), 1 );
  EXPECT_GT( results.value( QStringLiteral( "MEAN_IOU" ) ).toDouble(), 0.0 );
  EXPECT_EQ( results.value( QStringLiteral( "BATCH_SIZE_USED" ) ).toInt(), 8 );
  EXPECT_TRUE( feedback.infos.join( '\n' ).contains( QStringLiteral( "epoch 2/2" ) ) ) << feedback.infos.join( '\n' ).toStdString();

  // Cancelled in the middle: a processing error that says how to continue, no crash.
  RecordingFeedback cancelling;
  QObject::connect( &cancelling, &QgsFeedback::progressChanged, [&]( double ) { cancelling.cancel(); } );
  QVariantMap again = trainParameters( samples, dir );
  again.insert( QStringLiteral( "OUTPUT_MODEL" ), dir.filePath( QStringLiteral( "cancelled/model.pt" ) ) );
  alg->run( again, context, &cancelling, &ok );
  EXPECT_FALSE( ok );
  // (The engine's advice, as the CLI gives it: here no epoch had ended.)
  EXPECT_TRUE( cancelling.errors.join( '\n' ).contains( QStringLiteral( "Cancelled by the user: training stopped; no epoch had ended: there is "
               "nothing to resume; start it again without --resume (in QGIS: without \"Resume from the checkpoint in the model's folder\")" ) ) )
      << cancelling.errors.join( '\n' ).toStdString();
  EXPECT_FALSE( QFileInfo::exists( dir.filePath( QStringLiteral( "cancelled/model.pt" ) ) ) );

  // A store that is not there: the engine's message, before any training.
  RecordingFeedback failing;
  QVariantMap bad = trainParameters( samples, dir );
  bad.insert( QStringLiteral( "VALIDATION_STORE" ), dir.filePath( QStringLiteral( "none.hdf5" ) ) );
  alg->run( bad, context, &failing, &ok );
  EXPECT_FALSE( ok );
  EXPECT_TRUE( failing.errors.join( '\n' ).contains( QStringLiteral( "does not exist" ) ) ) << failing.errors.join( '\n' ).toStdString();
}

TEST_F( ProviderTest, ClassifyOpensAStyledClassLayer )
{
  QTemporaryDir dir;
  const QVariantMap samples = sceneSamples( dir );
  std::unique_ptr<QgsProcessingAlgorithm> train( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:train" ) ) );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  bool ok = false;
  const QVariantMap trained = train->run( trainParameters( samples, dir ), context, &feedback, &ok );
  ASSERT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();

  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( QStringLiteral( "geodl:classify" ) ) );
  ASSERT_TRUE( alg );
  EXPECT_EQ( alg->displayName(), QStringLiteral( "Classify raster" ) );
  QVariantMap p;
  p.insert( QStringLiteral( "INPUT" ), dir.filePath( QStringLiteral( "scene.tif" ) ) );
  p.insert( QStringLiteral( "MODEL" ), trained.value( QStringLiteral( "OUTPUT_MODEL" ) ) );
  p.insert( QStringLiteral( "WINDOW" ), 64 );
  p.insert( QStringLiteral( "THREADS" ), 2 );
  const QString output = dir.filePath( QStringLiteral( "classes.tif" ) );
  p.insert( QStringLiteral( "OUTPUT" ), output );
  p.insert( QStringLiteral( "POLYGONS" ), dir.filePath( QStringLiteral( "classes.gpkg" ) ) );
  QgsProcessingContext classifyContext;
  classifyContext.addLayerToLoadOnCompletion( output, QgsProcessingContext::LayerDetails( QStringLiteral( "classes" ), QgsProject::instance(), QStringLiteral( "OUTPUT" ) ) );
  const QVariantMap results = alg->run( p, classifyContext, &feedback, &ok );
  ASSERT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();
  EXPECT_EQ( results.value( QStringLiteral( "OUTPUT" ) ).toString(), output );
  EXPECT_TRUE( QFileInfo::exists( results.value( QStringLiteral( "POLYGONS" ) ).toString() ) );

  // OUTPUT = INPUT is refused with a Processing error; the input raster stays as it was.
  const auto digest = []( const QString & path )
  {
    QFile file( path );
    file.open( QIODevice::ReadOnly );
    return QCryptographicHash::hash( file.readAll(), QCryptographicHash::Sha256 );
  };
  const QString input = dir.filePath( QStringLiteral( "scene.tif" ) );
  const QByteArray before = digest( input );
  QVariantMap overwrite = p;
  overwrite.insert( QStringLiteral( "OUTPUT" ), input );
  overwrite.remove( QStringLiteral( "POLYGONS" ) );
  QgsProcessingContext overwriteContext;
  RecordingFeedback refused;
  bool overwritten = true;
  alg->run( overwrite, overwriteContext, &refused, &overwritten );
  EXPECT_FALSE( overwritten );
  EXPECT_TRUE( refused.errors.join( '\n' ).contains( QStringLiteral( "never writes over a file the job reads" ) ) )
      << refused.errors.join( '\n' ).toStdString();
  EXPECT_EQ( digest( input ), before );

  // The layer QGIS opens gets the model's colours and names.
  QgsRasterLayer layer( output, QStringLiteral( "classes" ) );
  ASSERT_TRUE( layer.isValid() );
  QgsProcessingLayerPostProcessorInterface *styler = classifyContext.layerToLoadOnCompletionDetails( output ).postProcessor();
  ASSERT_NE( styler, nullptr );
  styler->postProcessLayer( &layer, classifyContext, &feedback );
  const QgsPalettedRasterRenderer *renderer = dynamic_cast<const QgsPalettedRasterRenderer *>( layer.renderer() );
  ASSERT_NE( renderer, nullptr );
  ASSERT_EQ( renderer->classes().size(), 5 );
  EXPECT_EQ( renderer->classes().at( 1 ).label, QStringLiteral( "building" ) );
  EXPECT_EQ( renderer->classes().at( 1 ).color.name(), QStringLiteral( "#e31a1c" ) );
  EXPECT_EQ( layer.crs().authid(), QStringLiteral( "EPSG:32618" ) );

  // A mask from a memory layer (exported for the engine): only its left half is classified.
  const QgsRectangle e = layer.extent();
  auto *mask = new QgsVectorLayer( QStringLiteral( "Polygon?crs=EPSG:32618" ), QStringLiteral( "mask" ), QStringLiteral( "memory" ) );
  QgsFeature f;
  f.setGeometry( QgsGeometry::fromRect( QgsRectangle( e.xMinimum(), e.yMinimum(), e.center().x(), e.yMaximum() ) ) );
  ASSERT_TRUE( mask->dataProvider()->addFeature( f ) );
  QgsProcessingContext maskContext;
  maskContext.temporaryLayerStore()->addMapLayer( mask );
  QVariantMap masked = p;
  masked.insert( QStringLiteral( "MASK" ), mask->id() );
  masked.insert( QStringLiteral( "OUTPUT" ), dir.filePath( QStringLiteral( "masked.tif" ) ) );
  masked.remove( QStringLiteral( "POLYGONS" ) );
  alg->run( masked, maskContext, &feedback, &ok );
  ASSERT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();
  QgsRasterLayer maskedLayer( dir.filePath( QStringLiteral( "masked.tif" ) ), QStringLiteral( "masked" ) );
  ASSERT_TRUE( maskedLayer.isValid() );
  const int w = maskedLayer.width(), h = maskedLayer.height();
  std::unique_ptr<QgsRasterBlock> block( maskedLayer.dataProvider()->block( 1, maskedLayer.extent(), w, h ) );
  for ( int y = 0; y < h; y += 7 )
    for ( int x = 0; x < w; x += 7 )
      if ( x + 0.5 != w / 2.0 )  // pixel centres inside the polygon are classified
        ASSERT_EQ( block->isNoData( y, x ), x + 0.5 > w / 2.0 ) << x << "," << y;

  // A model for other bands: refused with the engine's message, nothing written.
  QVariantMap bad = p;
  bad.insert( QStringLiteral( "MODEL" ), dir.filePath( QStringLiteral( "missing.pt" ) ) );
  bad.insert( QStringLiteral( "OUTPUT" ), dir.filePath( QStringLiteral( "bad.tif" ) ) );
  bad.remove( QStringLiteral( "POLYGONS" ) );
  RecordingFeedback failing;
  alg->run( bad, classifyContext, &failing, &ok );
  EXPECT_FALSE( ok );
  EXPECT_TRUE( failing.errors.join( '\n' ).contains( QStringLiteral( "cannot read the model file" ) ) ) << failing.errors.join( '\n' ).toStdString();
  EXPECT_FALSE( QFileInfo::exists( dir.filePath( QStringLiteral( "bad.tif" ) ) ) );
}

// What the modeler's child dialog does: every parameter left unset gets its default.
void setDefaults( QgsProcessingModelChildAlgorithm &child )
{
  std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( child.algorithmId() ) );
  ASSERT_TRUE( alg ) << child.algorithmId().toStdString();
  for ( const QgsProcessingParameterDefinition *definition : alg->parameterDefinitions() )
  {
    if ( child.parameterSources().contains( definition->name() ) || definition->isDestination() ||
         !definition->defaultValue().isValid() )
      continue;
    child.addParameterSources( definition->name(), { QgsProcessingModelChildParameterSource::fromStaticValue( definition->defaultValue() ) } );
  }
}

// A child algorithm as the modeler places it, in a column at height y.
QgsProcessingModelChildAlgorithm childAlgorithm( const QString &id, const QString &algorithm, const QString &description, double y )
{
  QgsProcessingModelChildAlgorithm child( algorithm );
  child.setChildId( id );
  child.setDescription( description );
  child.setPosition( QPointF( 420, y ) );
  return child;
}

// Makes the child's output `output` an output of the model, named `name`.
void addModelOutput( QgsProcessingModelChildAlgorithm &child, const QString &name, const QString &output )
{
  QgsProcessingModelOutput out( name );
  out.setChildId( child.childId() );
  out.setChildOutputName( output );
  out.setPosition( child.position() + QPointF( 260, 0 ) );
  child.setModelOutputs( { { name, out } } );
}

// The workflow as a graphical model: samples -> train -> classify, the typed outputs of
// one algorithm feeding the next (what the modeler connects). Also the shipped example.
std::unique_ptr<QgsProcessingModelAlgorithm> workflowModel()
{
  using Source = QgsProcessingModelChildParameterSource;
  auto model = std::make_unique<QgsProcessingModelAlgorithm>( QStringLiteral( "Samples, training and classification" ),
               QStringLiteral( "GeoDL" ), QStringLiteral( "geodl_workflow" ) );
  model->setHelpContent( { { QStringLiteral( "ALG_DESC" ), QStringLiteral( "Creates samples from imagery and ground-truth polygons, "
                               "trains a small UNet on them and classifies the imagery with it." ) } } );
  double y = 60;
  const auto input = [&]( QgsProcessingParameterDefinition * definition )
  {
    QgsProcessingModelParameter component( definition->name() );
    component.setPosition( QPointF( 120, y ) );
    y += 70;
    model->addModelParameter( definition, component );
  };
  input( new QgsProcessingParameterRasterLayer( QStringLiteral( "RASTER" ), QStringLiteral( "Imagery" ) ) );
  input( new QgsProcessingParameterVectorLayer( QStringLiteral( "TRUTH" ), QStringLiteral( "Ground truth polygons" ),
         QList<int>() << static_cast<int>( Qgis::ProcessingSourceType::VectorPolygon ) ) );
  input( new QgsProcessingParameterField( QStringLiteral( "FIELD" ), QStringLiteral( "Class field" ), QVariant(), QStringLiteral( "TRUTH" ) ) );
  input( new QgsProcessingParameterNumber( QStringLiteral( "SAMPLE_SIZE" ), QStringLiteral( "Sample size (pixels)" ),
         Qgis::ProcessingNumberParameterType::Integer, 256, false, 16, 4096 ) );
  input( new QgsProcessingParameterNumber( QStringLiteral( "EPOCHS" ), QStringLiteral( "Epochs" ),
         Qgis::ProcessingNumberParameterType::Integer, 8, false, 1, 10000 ) );

  QgsProcessingModelChildAlgorithm samples = childAlgorithm( QStringLiteral( "samples" ), QStringLiteral( "geodl:createsamples" ),
      QStringLiteral( "Create training samples" ), 120 );
  samples.addParameterSources( QStringLiteral( "INPUT" ), { Source::fromModelParameter( QStringLiteral( "RASTER" ) ) } );
  samples.addParameterSources( QStringLiteral( "VECTOR" ), { Source::fromModelParameter( QStringLiteral( "TRUTH" ) ) } );
  samples.addParameterSources( QStringLiteral( "FIELD" ), { Source::fromModelParameter( QStringLiteral( "FIELD" ) ) } );
  samples.addParameterSources( QStringLiteral( "SPLIT" ), { Source::fromStaticValue( 1 ) } );
  samples.addParameterSources( QStringLiteral( "VALIDATION_PERCENT" ), { Source::fromStaticValue( 30 ) } );
  samples.addParameterSources( QStringLiteral( "SAMPLE_SIZE" ), { Source::fromModelParameter( QStringLiteral( "SAMPLE_SIZE" ) ) } );
  samples.addParameterSources( QStringLiteral( "STRIDE" ), { Source::fromModelParameter( QStringLiteral( "SAMPLE_SIZE" ) ) } );
  setDefaults( samples );
  model->addChildAlgorithm( samples );

  QgsProcessingModelChildAlgorithm train = childAlgorithm( QStringLiteral( "train" ), QStringLiteral( "geodl:train" ),
      QStringLiteral( "Train segmentation model" ), 260 );
  train.addParameterSources( QStringLiteral( "TRAINING_STORE" ), { Source::fromChildOutput( QStringLiteral( "samples" ), QStringLiteral( "TRAINING_STORE" ) ) } );
  train.addParameterSources( QStringLiteral( "VALIDATION_STORE" ), { Source::fromChildOutput( QStringLiteral( "samples" ), QStringLiteral( "VALIDATION_STORE" ) ) } );
  train.addParameterSources( QStringLiteral( "MODEL" ), { Source::fromStaticValue( 1 ) } );  // unetsmall
  train.addParameterSources( QStringLiteral( "EPOCHS" ), { Source::fromModelParameter( QStringLiteral( "EPOCHS" ) ) } );
  train.addParameterSources( QStringLiteral( "BATCH_SIZE" ), { Source::fromStaticValue( 8 ) } );
  train.addParameterSources( QStringLiteral( "LEARNING_RATE" ), { Source::fromStaticValue( 0.001 ) } );
  addModelOutput( train, QStringLiteral( "Model file" ), QStringLiteral( "OUTPUT_MODEL" ) );
  setDefaults( train );
  model->addChildAlgorithm( train );

  QgsProcessingModelChildAlgorithm classify = childAlgorithm( QStringLiteral( "classify" ), QStringLiteral( "geodl:classify" ),
      QStringLiteral( "Classify raster" ), 400 );
  classify.addParameterSources( QStringLiteral( "INPUT" ), { Source::fromModelParameter( QStringLiteral( "RASTER" ) ) } );
  classify.addParameterSources( QStringLiteral( "MODEL" ), { Source::fromChildOutput( QStringLiteral( "train" ), QStringLiteral( "OUTPUT_MODEL" ) ) } );
  addModelOutput( classify, QStringLiteral( "Classes" ), QStringLiteral( "OUTPUT" ) );
  setDefaults( classify );
  model->addChildAlgorithm( classify );
  return model;
}

// The paths of every entry of a model's variant ("children/classify/alg_id", ...).
QStringList entriesOf( const QVariant &value, const QString &path = QString() )
{
  QStringList entries;
  if ( value.userType() == QMetaType::QVariantMap )
  {
    const QVariantMap map = value.toMap();
    for ( auto it = map.constBegin(); it != map.constEnd(); ++it )
      entries << path + '/' + it.key() << entriesOf( it.value(), path + '/' + it.key() );
  }
  else if ( value.userType() == QMetaType::QVariantList )
  {
    const QVariantList list = value.toList();
    for ( int i = 0; i < list.size(); ++i )
      entries << entriesOf( list[i], path + QStringLiteral( "[%1]" ).arg( i ) );
  }
  return entries;
}

QVariantMap runWorkflow( QgsProcessingModelAlgorithm &model, const QTemporaryDir &dir, const QString &prefix )
{
  geodl::io::SceneOptions scene;
  scene.size = 192;
  const auto files = geodl::io::makeSyntheticScene( dir.path().toStdString(), prefix.toStdString(), scene );
  QVariantMap p;
  p.insert( QStringLiteral( "RASTER" ), QString::fromStdString( files.raster ) );
  p.insert( QStringLiteral( "TRUTH" ), QString::fromStdString( files.labels ) );
  p.insert( QStringLiteral( "FIELD" ), QStringLiteral( "class" ) );
  p.insert( QStringLiteral( "SAMPLE_SIZE" ), 32 );
  p.insert( QStringLiteral( "EPOCHS" ), 1 );
  p.insert( QStringLiteral( "train:Model file" ), dir.filePath( prefix + QStringLiteral( "_model.pt" ) ) );
  p.insert( QStringLiteral( "classify:Classes" ), dir.filePath( prefix + QStringLiteral( "_classes.tif" ) ) );
  QgsProcessingContext context;
  RecordingFeedback feedback;
  bool ok = false;
  const QVariantMap results = model.run( p, context, &feedback, &ok );
  EXPECT_TRUE( ok ) << feedback.errors.join( '\n' ).toStdString();
  return results;
}

TEST_F( ProviderTest, WorkflowRunsAsAGraphicalModelAndTheShippedModelToo )
{
  QTemporaryDir dir;
  std::unique_ptr<QgsProcessingModelAlgorithm> model = workflowModel();
  QStringList issues;
  ASSERT_TRUE( model->validate( issues ) ) << issues.join( '\n' ).toStdString();
  // The modeler connects them only when the types fit: files to file parameters.
  EXPECT_EQ( model->destinationParameterDefinitions().size(), 2 );
  const QVariantMap results = runWorkflow( *model, dir, QStringLiteral( "built" ) );
  EXPECT_TRUE( QFileInfo::exists( results.value( QStringLiteral( "train:Model file" ) ).toString() ) );
  QgsRasterLayer classes( results.value( QStringLiteral( "classify:Classes" ) ).toString(), QStringLiteral( "classes" ) );
  ASSERT_TRUE( classes.isValid() );
  EXPECT_EQ( classes.width(), 192 );
  // Regenerates the shipped example when asked (after a change to the algorithms).
  const QByteArray write = qgetenv( "GEODL_WRITE_EXAMPLE_MODEL" );
  if ( !write.isEmpty() )
    ASSERT_TRUE( model->toFile( QString::fromLocal8Bit( write ) ) );

  // The shipped example, as QGIS 3.40 writes models (internal_version, output groups and
  // order), and the one QGIS 3.22 wrote, which users may still have: both open and run.
  const QStringList files = { QStringLiteral( GEODL_SOURCE_DIR "/models/geodl_workflow.model3" ),
                              QStringLiteral( GEODL_SOURCE_DIR "/tests/plugin/data/geodl_workflow_qgis322.model3" )
                            };
  for ( const QString &file : files )
  {
    QgsProcessingModelAlgorithm shipped;
    ASSERT_TRUE( shipped.fromFile( file ) ) << file.toStdString();
    ASSERT_TRUE( shipped.validate( issues ) ) << file.toStdString() << ": " << issues.join( '\n' ).toStdString();
    EXPECT_EQ( shipped.childAlgorithms().size(), 3 );
    const QVariantMap shippedResults = runWorkflow( shipped, dir, QFileInfo( file ).baseName() );
    EXPECT_TRUE( QgsRasterLayer( shippedResults.value( QStringLiteral( "classify:Classes" ) ).toString(), QStringLiteral( "c" ) ).isValid() ) << file.toStdString();
  }
  // The shipped file is QGIS 3.40's own: it has every entry this QGIS writes for the model it
  // loads (the XML's attribute order varies between runs, and empty values read back as null
  // or invalid: the entries are compared). The 3.22 file lacks what 3.40 added.
  const auto asWritten = []( const QString & file )
  {
    QgsProcessingModelAlgorithm model;
    EXPECT_TRUE( model.fromFile( file ) );
    QFile f( file );
    EXPECT_TRUE( f.open( QIODevice::ReadOnly ) );
    QDomDocument doc;
    EXPECT_TRUE( doc.setContent( &f ) );
    return entriesOf( QgsXmlUtils::readVariant( doc.firstChildElement() ) ) == entriesOf( model.toVariant() );
  };
  EXPECT_TRUE( asWritten( files[0] ) ) << "models/geodl_workflow.model3 is not as QGIS " << Qgis::version().toStdString()
                                       << " writes it: regenerate it with GEODL_WRITE_EXAMPLE_MODEL=$PWD/models/geodl_workflow.model3";
  EXPECT_FALSE( asWritten( files[1] ) );
}

// Batch mode runs one algorithm once per row of parameters, each with its own context.
TEST_F( ProviderTest, BatchModeRunsEveryAlgorithmOnSeveralInputs )
{
  QTemporaryDir dir;
  const auto runRows = [&]( const QString &id, const QList<QVariantMap> &rows )
  {
    std::unique_ptr<QgsProcessingAlgorithm> alg( QgsApplication::processingRegistry()->createAlgorithmById( id ) );
    QList<QVariantMap> results;
    for ( const QVariantMap &row : rows )
    {
      QgsProcessingContext context;
      RecordingFeedback feedback;
      bool ok = false;
      results << alg->run( row, context, &feedback, &ok );
      EXPECT_TRUE( ok ) << id.toStdString() << ": " << feedback.errors.join( '\n' ).toStdString();
    }
    return results;
  };
  QList<QVariantMap> sampleRows;
  for ( const QString prefix : { QStringLiteral( "a_" ), QStringLiteral( "b_" ) } )
  {
    QVariantMap p = sceneSampleParameters( dir, 160, prefix, prefix == QLatin1String( "a_" ) ? 3 : 4 );
    p.insert( QStringLiteral( "SPLIT" ), 1 );
    p.insert( QStringLiteral( "VALIDATION_PERCENT" ), 30 );
    sampleRows << p;
  }
  const QList<QVariantMap> samples = runRows( QStringLiteral( "geodl:createsamples" ), sampleRows );
  ASSERT_EQ( samples.size(), 2 );
  EXPECT_NE( samples[0].value( QStringLiteral( "TRAINING_STORE" ) ), samples[1].value( QStringLiteral( "TRAINING_STORE" ) ) );

  QList<QVariantMap> trainRows;
  for ( int i = 0; i < 2; ++i )
  {
    QVariantMap p = trainParameters( samples[i], dir );
    p.insert( QStringLiteral( "EPOCHS" ), 1 );
    p.insert( QStringLiteral( "OUTPUT_MODEL" ), dir.filePath( QStringLiteral( "model_%1.pt" ).arg( i ) ) );
    trainRows << p;
  }
  const QList<QVariantMap> models = runRows( QStringLiteral( "geodl:train" ), trainRows );

  QList<QVariantMap> classifyRows;
  for ( int i = 0; i < 2; ++i )
  {
    QVariantMap p;
    p.insert( QStringLiteral( "INPUT" ), sampleRows[i].value( QStringLiteral( "INPUT" ) ) );
    p.insert( QStringLiteral( "MODEL" ), models[i].value( QStringLiteral( "OUTPUT_MODEL" ) ) );
    p.insert( QStringLiteral( "THREADS" ), 2 );
    p.insert( QStringLiteral( "OUTPUT" ), dir.filePath( QStringLiteral( "classes_%1.tif" ).arg( i ) ) );
    classifyRows << p;
  }
  const QList<QVariantMap> classified = runRows( QStringLiteral( "geodl:classify" ), classifyRows );
  for ( int i = 0; i < 2; ++i )
    EXPECT_TRUE( QgsRasterLayer( classified[i].value( QStringLiteral( "OUTPUT" ) ).toString(), QStringLiteral( "c" ) ).isValid() ) << i;

  QList<QVariantMap> probeRows;
  for ( int size : { 32, 64 } )
  {
    QVariantMap p = smallProbe();
    p.insert( QStringLiteral( "SAMPLE_SIZE" ), size );
    probeRows << p;
  }
  const QList<QVariantMap> probes = runRows( QStringLiteral( "geodl:estimatebatchsize" ), probeRows );
  EXPECT_GE( probes[0].value( QStringLiteral( "MAX_BATCH" ) ).toInt(), probes[1].value( QStringLiteral( "MAX_BATCH" ) ).toInt() );
}

} // namespace

int main( int argc, char **argv )
{
  ::testing::InitGoogleTest( &argc, argv );
  QgsApplication app( argc, argv, false );
  QgsApplication::init();
  QgsApplication::initQgis();
  const int result = RUN_ALL_TESTS();
  QgsApplication::exitQgis();
  return result;
}
