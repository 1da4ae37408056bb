#include "geodlalgorithmestimatebatchsize.h"

#include <QCoreApplication>
#include <QIcon>

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include "app/batch_probe_options.h"
#include "base/errors.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"
#include "geodloptionparameters.h"

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

QString GeoDLEstimateBatchSizeAlgorithm::helpIntro() const
{
  return tr( "Finds the largest batch whose training step (forward, backward and optimizer step) "
             "fits a memory budget, by measuring two small batches and confirming the prediction." );
}

std::vector<const geodl::OptionInfo *> GeoDLEstimateBatchSizeAlgorithm::optionInfos() const
{
  return geodlInfos( geodl::batchProbeOptionTable() );
}

QgsProcessingAlgorithm *GeoDLEstimateBatchSizeAlgorithm::createInstance() const
{
  return new GeoDLEstimateBatchSizeAlgorithm();
}

void GeoDLEstimateBatchSizeAlgorithm::initAlgorithm( const QVariantMap & )
{
  for ( QgsProcessingParameterDefinition *p : geodlParameters( geodl::batchProbeOptionTable(), GeoDLDeclareParameter() ) )
    addParameter( p );

  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "MAX_BATCH" ), tr( "Maximum batch size" ) ) );
  addOutput( new QgsProcessingOutputNumber( QStringLiteral( "BYTES_PER_SAMPLE" ), tr( "Memory per sample (bytes)" ) ) );
}

QVariantMap GeoDLEstimateBatchSizeAlgorithm::processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
    QgsProcessingFeedback *feedback )
{
  const geodl::OptionValues values = geodlParameterValues( *this, geodl::batchProbeOptionTable(), parameters, context );

  GeoDLFeedbackProgress progress( feedback );
  const geodl::BatchProbeResult result = geodlEngineCall( [&]
  {
    geodl::BatchProbeOptions options;
    geodl::applyOptions( geodl::batchProbeOptionTable(), values, options );
    return geodl::estimateBatchSize( options, progress );
  },
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
