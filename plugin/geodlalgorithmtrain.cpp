#include "geodlalgorithmtrain.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QIcon>

#include <functional>

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include "app/train.h"
#include "core/errors.h"
#include "core/model_spec.h"
#include "geodlchoices.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"

namespace
{
QString tr( const char *text )
{
  return QCoreApplication::translate( "GeoDLTrainAlgorithm", text );
}
} // namespace

QString GeoDLTrainAlgorithm::name() const
{
  return QStringLiteral( "train" );
}

QString GeoDLTrainAlgorithm::displayName() const
{
  return tr( "Train segmentation model" );
}

QStringList GeoDLTrainAlgorithm::tags() const
{
  return tr( "train,training,unet,segmentation,deep learning,model,geo-deep-learning" ).split( ',' );
}

QString GeoDLTrainAlgorithm::group() const
{
  return tr( "Training" );
}

QString GeoDLTrainAlgorithm::groupId() const
{
  return QStringLiteral( "training" );
}

QString GeoDLTrainAlgorithm::shortHelpString() const
{
  return tr( "Trains a semantic-segmentation network on the sample stores that \"Create training samples\" wrote, "
             "with Adam and a step learning-rate schedule, validating after each epoch. The best model is kept "
             "(by validation loss or mean IoU), with a checkpoint of the last epoch beside it.\n\n"
             "Training / validation samples: the trn_samples.hdf5 and val_samples.hdf5 stores "
             "(global.data_path/samples in geo-deep-learning).\n"
             "Model: unet, unetsmall, checkpointed_unet (unetsmall with gradient checkpointing) or ternausnet "
             "(global.model_name).\n"
             "Epochs: passes over the training samples, e.g. 50-200 (training.num_epochs).\n"
             "Batch size: samples per step (training.batch_size); 0 finds the largest that fits the memory budget.\n"
             "Learning rate: Adam's, typically 0.0001 (training.learning_rate); multiplied by gamma every "
             "step size epochs (training.step_size, training.gamma).\n"
             "Class weights: none, or automatic from the class frequencies of the training samples "
             "(training.class_weights: auto), to help rare classes.\n"
             "Augmentation: random rotation up to a limit in degrees, horizontal and vertical flips, with "
             "their probabilities; training samples only.\n"
             "Gradient checkpointing: recomputes activations in backward; about three times the batch "
             "for some 25% more time.\n"
             "Patience: stop when the chosen metric has not improved for that many epochs (0: never).\n"
             "Seed and deterministic: the same seed gives the same model on the same machine.\n"
             "Model file: the trained model with everything classification needs (bands, normalization, "
             "classes and colours); the folder also receives last_checkpoint.pt, metrics.csv and report.html. "
             "Resume continues from the checkpoint in that folder." );
}

QIcon GeoDLTrainAlgorithm::icon() const
{
  return QIcon( QStringLiteral( ":/geodl/geodl.svg" ) );
}

QgsProcessingAlgorithm *GeoDLTrainAlgorithm::createInstance() const
{
  return new GeoDLTrainAlgorithm();
}

void GeoDLTrainAlgorithm::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterFile( QStringLiteral( "TRAINING_STORE" ), tr( "Training samples (HDF5)" ),
                QgsProcessingParameterFile::File, QStringLiteral( "hdf5" ) ) );
  addParameter( new QgsProcessingParameterFile( QStringLiteral( "VALIDATION_STORE" ), tr( "Validation samples (HDF5)" ),
                QgsProcessingParameterFile::File, QStringLiteral( "hdf5" ) ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "MODEL" ), tr( "Model" ), geodlModelNames(), false, 1 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "EPOCHS" ), tr( "Epochs" ),
                QgsProcessingParameterNumber::Integer, 100, false, 1, 100000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "BATCH_SIZE" ), tr( "Batch size (0: largest that fits)" ),
                QgsProcessingParameterNumber::Integer, 0, false, 0, 100000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "LEARNING_RATE" ), tr( "Learning rate" ),
                QgsProcessingParameterNumber::Double, 0.0001, false, 1e-9, 10 ) );

  // The rest are advanced parameters, with geo-deep-learning's defaults.
  const auto advanced = [this]( QgsProcessingParameterDefinition * p )
  {
    p->setFlags( p->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
    addParameter( p );
  };
  const auto number = [&]( const char *key, const QString & label, QgsProcessingParameterNumber::Type type, double def,
                           double min, double max )
  {
    advanced( new QgsProcessingParameterNumber( QString::fromLatin1( key ), label, type, def, false, min, max ) );
  };
  number( "WEIGHT_DECAY", tr( "Weight decay" ), QgsProcessingParameterNumber::Double, 0, 0, 1 );
  number( "STEP_SIZE", tr( "Learning rate step (epochs)" ), QgsProcessingParameterNumber::Integer, 4, 1, 100000 );
  number( "GAMMA", tr( "Learning rate factor per step (gamma)" ), QgsProcessingParameterNumber::Double, 0.9, 1e-6, 10 );
  advanced( new QgsProcessingParameterEnum( QStringLiteral( "CLASS_WEIGHTS" ), tr( "Class weights" ),
               QStringList() << tr( "None" ) << tr( "Automatic (inverse class frequency)" ), false, 0 ) );
  advanced( new QgsProcessingParameterBoolean( QStringLiteral( "CHECKPOINT" ), tr( "Gradient checkpointing" ), false ) );
  advanced( new QgsProcessingParameterBoolean( QStringLiteral( "DROPOUT" ), tr( "Dropout" ), false ) );
  number( "DROPOUT_PROBABILITY", tr( "Dropout probability" ), QgsProcessingParameterNumber::Double, 0.2, 0, 0.99 );
  advanced( new QgsProcessingParameterFile( QStringLiteral( "PRETRAINED" ), tr( "Pretrained weights" ),
               QgsProcessingParameterFile::File, QString(), QVariant(), true ) );
  number( "ROTATE_LIMIT", tr( "Random rotation limit (degrees)" ), QgsProcessingParameterNumber::Double, 0, 0, 180 );
  number( "ROTATE_PROB", tr( "Rotation probability" ), QgsProcessingParameterNumber::Double, 0, 0, 1 );
  number( "HFLIP_PROB", tr( "Horizontal flip probability" ), QgsProcessingParameterNumber::Double, 0, 0, 1 );
  number( "VFLIP_PROB", tr( "Vertical flip probability" ), QgsProcessingParameterNumber::Double, 0, 0, 1 );
  number( "NUM_TRN_SAMPLES", tr( "Training samples to use (0: all)" ), QgsProcessingParameterNumber::Integer, 0, 0, 1e12 );
  number( "NUM_VAL_SAMPLES", tr( "Validation samples to use (0: all)" ), QgsProcessingParameterNumber::Integer, 0, 0, 1e12 );
  number( "PATIENCE", tr( "Early stopping patience (epochs, 0: off)" ), QgsProcessingParameterNumber::Integer, 0, 0, 100000 );
  advanced( new QgsProcessingParameterEnum( QStringLiteral( "BEST_METRIC" ), tr( "Best model by" ),
               QStringList() << tr( "Validation loss" ) << tr( "Mean IoU" ), false, 0 ) );
  number( "MEMORY_BUDGET_MIB", tr( "Memory budget for batch size 0 (MiB, 0: automatic)" ),
          QgsProcessingParameterNumber::Double, 0, 0, 1e9 );
  number( "SEED", tr( "Random seed (-1: random)" ), QgsProcessingParameterNumber::Integer, -1, -1, 2147483647 );
  advanced( new QgsProcessingParameterBoolean( QStringLiteral( "DETERMINISTIC" ), tr( "Deterministic" ), false ) );
  number( "THREADS", tr( "CPU threads (0: all cores)" ), QgsProcessingParameterNumber::Integer, 0, 0, 1024 );
  advanced( new QgsProcessingParameterEnum( QStringLiteral( "DEVICE" ), tr( "Device" ), geodlDevices(), false, 0 ) );
  advanced( new QgsProcessingParameterBoolean( QStringLiteral( "BF16" ), tr( "bfloat16 autocast (GPU)" ), false ) );
  advanced( new QgsProcessingParameterBoolean( QStringLiteral( "RESUME" ), tr( "Resume from the checkpoint in the model's folder" ), false ) );

  addParameter( new QgsProcessingParameterFileDestination( QStringLiteral( "OUTPUT_MODEL" ), tr( "Model file" ),
                tr( "GeoDL model (*.pt)" ) ) );
  addOutput( new QgsProcessingOutputHtml( QStringLiteral( "REPORT" ), tr( "Training report" ) ) );
  addOutput( new QgsProcessingOutputFile( QStringLiteral( "CHECKPOINT" ), tr( "Last checkpoint" ) ) );
  addOutput( new QgsProcessingOutputFile( QStringLiteral( "METRICS" ), tr( "Metrics per epoch (CSV)" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "BEST_EPOCH" ), tr( "Best epoch" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "MEAN_IOU" ), tr( "Best epoch's mean IoU" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "BATCH_SIZE_USED" ), tr( "Batch size used" ) ) );
}

QVariantMap GeoDLTrainAlgorithm::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
    QgsProcessingFeedback *feedback )
{
  geodl::TrainOptions options;
  options.train_store = parameterAsFile( parameters, QStringLiteral( "TRAINING_STORE" ), context ).toStdString();
  options.val_store = parameterAsFile( parameters, QStringLiteral( "VALIDATION_STORE" ), context ).toStdString();
  options.model = geodl::modelNames().at( static_cast<size_t>( parameterAsEnum( parameters, QStringLiteral( "MODEL" ), context ) ) );
  options.epochs = parameterAsInt( parameters, QStringLiteral( "EPOCHS" ), context );
  options.batch_size = parameterAsInt( parameters, QStringLiteral( "BATCH_SIZE" ), context );
  options.learning_rate = parameterAsDouble( parameters, QStringLiteral( "LEARNING_RATE" ), context );
  options.weight_decay = parameterAsDouble( parameters, QStringLiteral( "WEIGHT_DECAY" ), context );
  options.step_size = parameterAsInt( parameters, QStringLiteral( "STEP_SIZE" ), context );
  options.gamma = parameterAsDouble( parameters, QStringLiteral( "GAMMA" ), context );
  options.class_weighting = parameterAsEnum( parameters, QStringLiteral( "CLASS_WEIGHTS" ), context ) == 1
                            ? geodl::ClassWeighting::Auto : geodl::ClassWeighting::None;
  options.checkpoint = parameterAsBoolean( parameters, QStringLiteral( "CHECKPOINT" ), context );
  options.dropout = parameterAsBoolean( parameters, QStringLiteral( "DROPOUT" ), context );
  options.dropout_probability = parameterAsDouble( parameters, QStringLiteral( "DROPOUT_PROBABILITY" ), context );
  options.pretrained = parameterAsFile( parameters, QStringLiteral( "PRETRAINED" ), context ).toStdString();
  options.augmentation.rotate_limit = parameterAsDouble( parameters, QStringLiteral( "ROTATE_LIMIT" ), context );
  options.augmentation.rotate_prob = parameterAsDouble( parameters, QStringLiteral( "ROTATE_PROB" ), context );
  options.augmentation.hflip_prob = parameterAsDouble( parameters, QStringLiteral( "HFLIP_PROB" ), context );
  options.augmentation.vflip_prob = parameterAsDouble( parameters, QStringLiteral( "VFLIP_PROB" ), context );
  const qint64 trn = static_cast<qint64>( parameterAsDouble( parameters, QStringLiteral( "NUM_TRN_SAMPLES" ), context ) );
  const qint64 val = static_cast<qint64>( parameterAsDouble( parameters, QStringLiteral( "NUM_VAL_SAMPLES" ), context ) );
  options.num_trn_samples = trn > 0 ? trn : -1;
  options.num_val_samples = val > 0 ? val : -1;
  options.patience = parameterAsInt( parameters, QStringLiteral( "PATIENCE" ), context );
  options.best_metric = parameterAsEnum( parameters, QStringLiteral( "BEST_METRIC" ), context ) == 1 ? "miou" : "loss";
  options.memory_budget_mib = parameterAsDouble( parameters, QStringLiteral( "MEMORY_BUDGET_MIB" ), context );
  options.seed = parameterAsInt( parameters, QStringLiteral( "SEED" ), context );
  options.deterministic = parameterAsBoolean( parameters, QStringLiteral( "DETERMINISTIC" ), context );
  options.threads = parameterAsInt( parameters, QStringLiteral( "THREADS" ), context );
  options.device = geodlDevices().value( parameterAsEnum( parameters, QStringLiteral( "DEVICE" ), context ) ).toStdString();
  options.bf16 = parameterAsBoolean( parameters, QStringLiteral( "BF16" ), context );
  options.resume = parameterAsBoolean( parameters, QStringLiteral( "RESUME" ), context );

  QString modelPath = parameterAsFileOutput( parameters, QStringLiteral( "OUTPUT_MODEL" ), context );
  if ( modelPath.isEmpty() )
    throw QgsProcessingException( tr( "Choose where to save the model file." ) );
  if ( !modelPath.endsWith( QLatin1String( ".pt" ), Qt::CaseInsensitive ) )
    modelPath += QLatin1String( ".pt" );
  options.model_path = modelPath.toStdString();
  options.output_folder = QFileInfo( modelPath ).absolutePath().toStdString();

  GeoDLFeedbackProgress progress( feedback );
  const geodl::TrainResult result = geodlEngineCall( [&] { return geodl::train( options, progress ); },
                                    tr( "Cancelled by the user: the last complete epoch is kept in the checkpoint beside the "
                                        "model file; run again with \"Resume\" to continue." ) );

  QVariantMap outputs;
  outputs.insert( QStringLiteral( "OUTPUT_MODEL" ), QString::fromStdString( result.model_path ) );
  outputs.insert( QStringLiteral( "REPORT" ), QString::fromStdString( result.report_path ) );
  outputs.insert( QStringLiteral( "CHECKPOINT" ), QString::fromStdString( result.checkpoint_path ) );
  outputs.insert( QStringLiteral( "METRICS" ), QString::fromStdString( result.csv_path ) );
  outputs.insert( QStringLiteral( "BEST_EPOCH" ), result.best_epoch );
  outputs.insert( QStringLiteral( "BATCH_SIZE_USED" ), result.batch_size );
  if ( const geodl::EpochRecord *best = result.best() )
    outputs.insert( QStringLiteral( "MEAN_IOU" ), best->val.mean_iou );
  feedback->pushInfo( tr( "Model: %1\nReport: %2" ).arg( QString::fromStdString( result.model_path ),
                      QString::fromStdString( result.report_path ) ) );
  return outputs;
}
