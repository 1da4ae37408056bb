#include "geodlalgorithmestimatebatchsize.h"

#include <QCoreApplication>
#include <QIcon>

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include "core/batch_probe.h"
#include "core/errors.h"
#include "core/model_spec.h"
#include "geodlchoices.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"

namespace
{
QString tr( const char *text )
{
  return QCoreApplication::translate( "GeoDLEstimateBatchSizeAlgorithm", text );
}

} // namespace

QString GeoDLEstimateBatchSizeAlgorithm::name() const
{
  return QStringLiteral( "estimatebatchsize" );
}

QString GeoDLEstimateBatchSizeAlgorithm::displayName() const
{
  return tr( "Estimate maximum batch size" );
}

QStringList GeoDLEstimateBatchSizeAlgorithm::tags() const
{
  return tr( "batch,memory,gpu,checkpointing,training,deep learning" ).split( ',' );
}

QString GeoDLEstimateBatchSizeAlgorithm::group() const
{
  return tr( "Training" );
}

QString GeoDLEstimateBatchSizeAlgorithm::groupId() const
{
  return QStringLiteral( "training" );
}

QString GeoDLEstimateBatchSizeAlgorithm::shortHelpString() const
{
  return tr( "Finds the largest batch whose training step (forward, backward and optimizer step) "
             "fits a memory budget, by measuring two small batches and confirming the prediction.\n\n"
             "Model: unet, unetsmall, checkpointed_unet (unetsmall with checkpointing) or ternausnet "
             "(geo-deep-learning's global.model_name).\n"
             "Sample size: samples' height and width in pixels, typically 256 (global.samples_size).\n"
             "Bands and classes: global.number_of_bands and global.num_classes.\n"
             "Gradient checkpointing: recompute activations during backward; about three times "
             "the batch for some 25% more time per sample.\n"
             "Memory budget: MiB the training may use (the GPU's memory, or the RAM you can spare)." );
}

QIcon GeoDLEstimateBatchSizeAlgorithm::icon() const
{
  return QIcon( QStringLiteral( ":/geodl/geodl.svg" ) );
}

QgsProcessingAlgorithm *GeoDLEstimateBatchSizeAlgorithm::createInstance() const
{
  return new GeoDLEstimateBatchSizeAlgorithm();
}

void GeoDLEstimateBatchSizeAlgorithm::initAlgorithm( const QVariantMap & )
{
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "MODEL" ), tr( "Model" ), geodlModelNames(), false, 1 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SAMPLE_SIZE" ), tr( "Sample size (pixels)" ),
                QgsProcessingParameterNumber::Integer, 256, false, 8, 100000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "BANDS" ), tr( "Number of bands" ),
                QgsProcessingParameterNumber::Integer, 3, false, 1, 1000 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "CLASSES" ), tr( "Number of classes" ),
                QgsProcessingParameterNumber::Integer, 5, false, 1, 10000 ) );
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "CHECKPOINT" ), tr( "Gradient checkpointing" ), false ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "BUDGET_MIB" ), tr( "Memory budget (MiB)" ),
                QgsProcessingParameterNumber::Double, 4096, false, 1 ) );

  auto device = std::make_unique<QgsProcessingParameterEnum>( QStringLiteral( "DEVICE" ), tr( "Device" ),
                geodlDevices(), false, 0 );
  device->setFlags( device->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( device.release() );
  auto threads = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "THREADS" ), tr( "CPU threads (0: all cores)" ),
                 QgsProcessingParameterNumber::Integer, 0, false, 0, 1024 );
  threads->setFlags( threads->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( threads.release() );
  auto confirm = std::make_unique<QgsProcessingParameterBoolean>( QStringLiteral( "CONFIRM" ),
                 tr( "Confirm with a step at the predicted batch" ), true );
  confirm->setFlags( confirm->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( confirm.release() );

  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "MAX_BATCH" ), tr( "Maximum batch size" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "BYTES_PER_SAMPLE" ), tr( "Memory per sample (bytes)" ) ) );
}

QVariantMap GeoDLEstimateBatchSizeAlgorithm::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
    QgsProcessingFeedback *feedback )
{
  geodl::BatchProbeOptions options;
  options.model = geodl::modelNames().at( static_cast<size_t>( parameterAsEnum( parameters, QStringLiteral( "MODEL" ), context ) ) );
  options.sample_size = parameterAsInt( parameters, QStringLiteral( "SAMPLE_SIZE" ), context );
  options.bands = parameterAsInt( parameters, QStringLiteral( "BANDS" ), context );
  options.classes = parameterAsInt( parameters, QStringLiteral( "CLASSES" ), context );
  options.checkpoint = parameterAsBoolean( parameters, QStringLiteral( "CHECKPOINT" ), context );
  options.budget_mib = parameterAsDouble( parameters, QStringLiteral( "BUDGET_MIB" ), context );
  options.device = geodlDevices().value( parameterAsEnum( parameters, QStringLiteral( "DEVICE" ), context ) ).toStdString();
  options.threads = parameterAsInt( parameters, QStringLiteral( "THREADS" ), context );
  options.confirm = parameterAsBoolean( parameters, QStringLiteral( "CONFIRM" ), context );

  GeoDLFeedbackProgress progress( feedback );
  const geodl::BatchProbeResult result = geodlEngineCall( [&] { return geodl::probeMaxBatch( options, progress ); },
                                         tr( "Cancelled by the user." ) );

  const double mib = 1024.0 * 1024.0;
  feedback->pushInfo( tr( "Device: %1, %2 threads" ).arg( QString::fromStdString( result.device ) ).arg( result.threads ) );
  feedback->pushInfo( tr( "Memory per sample: %1 MiB; fixed (model, gradients, optimizer): %2 MiB" )
                      .arg( result.bytes_per_sample / mib, 0, 'f', 1 ).arg( result.fixed_bytes / mib, 0, 'f', 1 ) );
  feedback->pushInfo( tr( "Maximum batch size: %1%2" ).arg( result.max_batch )
                      .arg( result.confirmed ? tr( " (confirmed)" ) : QString() ) );
  QVariantMap outputs;
  outputs.insert( QStringLiteral( "MAX_BATCH" ), result.max_batch );
  outputs.insert( QStringLiteral( "BYTES_PER_SAMPLE" ), result.bytes_per_sample );
  return outputs;
}
