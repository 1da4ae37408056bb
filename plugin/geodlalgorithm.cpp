#include "geodlalgorithm.h"

#include <QIcon>

#include "geodloptionparameters.h"

QString GeoDLAlgorithm::group() const
{
  return mGroup == Group::Training ? tr( "Training" ) : tr( "Classification" );
}

QString GeoDLAlgorithm::groupId() const
{
  return mGroup == Group::Training ? QStringLiteral( "training" ) : QStringLiteral( "classification" );
}

QString GeoDLAlgorithm::shortHelpString() const
{
  return helpIntro() + QStringLiteral( "\n\n" ) + geodlOptionsHelp( optionInfos() );
}

QIcon GeoDLAlgorithm::icon() const
{
  return QIcon( QStringLiteral( ":/geodl/geodl.svg" ) );
}
