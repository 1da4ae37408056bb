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
#include "base/errors.h"
#include "geodlenginecall.h"
#include "geodlfeedbackprogress.h"
#include "geodloptionparameters.h"

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

QString GeoDLTrainAlgorithm::helpIntro() const
{
  return tr( "Trains a semantic-segmentation network on the sample stores that \"Create training samples\" wrote, "
             "with the loss, optimizer and learning-rate schedule chosen (cross-entropy, Adam and a step schedule by "
             "default), validating after each epoch. The best model is kept "
             "(by validation loss or mean IoU), with a checkpoint of the last epoch beside it." );
}

std::vector<const geodl::OptionInfo *> GeoDLTrainAlgorithm::optionInfos() const
{
  return geodlInfos( geodl::trainOptionTable() );
}

QgsProcessingAlgorithm *GeoDLTrainAlgorithm::createInstance() const
{
  return new GeoDLTrainAlgorithm();
}

void GeoDLTrainAlgorithm::initAlgorithm( const QVariantMap & )
{
  // Every parameter comes from the engine's option table; the model file is a destination.
  const auto declare = []( const geodl::OptionInfo &, const QString & label ) -> QgsProcessingParameterDefinition *
  {
    return new QgsProcessingParameterFileDestination( QStringLiteral( "OUTPUT_MODEL" ), label, tr( "GeoDL model (*.pt)" ) );
  };
  for ( QgsProcessingParameterDefinition *p : geodlParameters( geodl::trainOptionTable(), declare ) )
    addParameter( p );
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
  geodl::OptionValues values = geodlParameterValues( *this, geodl::trainOptionTable(), parameters, context );
  QString modelPath = parameterAsFileOutput( parameters, QStringLiteral( "OUTPUT_MODEL" ), context );
  if ( modelPath.isEmpty() )
    throw QgsProcessingException( tr( "Choose where to save the model file." ) );
  if ( !modelPath.endsWith( QLatin1String( ".pt" ), Qt::CaseInsensitive ) )
    modelPath += QLatin1String( ".pt" );
  values["model_path"] = geodlValue( QFileInfo( modelPath ).absoluteFilePath(), QStringLiteral( "OUTPUT_MODEL" ) );

  GeoDLFeedbackProgress progress( feedback );
  const geodl::TrainResult result = geodlEngineCall( [&]
  {
    geodl::TrainOptions options;
    geodl::applyOptions( geodl::trainOptionTable(), values, options );
    return geodl::train( options, progress );
  },
                                    tr( "Cancelled by the user" ) );

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
