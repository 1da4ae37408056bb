#include "geodlresumequestion.h"

#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>

#include "app/classify.h"

GeoDLResumeAnswer GeoDLResumeQuestion::ask( QWidget *parent, const QString &layerName, const QString &output,
    const geodl::StoppedRun &stopped )
{
  QMessageBox question( QMessageBox::Question, tr( "GeoDL" ),
                        tr( "The classification of '%1' into %2 was stopped with %3 of its %4 blocks of rows finished. "
                            "Continue it from there, or start again?" )
                        .arg( layerName, QFileInfo( output ).fileName() ).arg( stopped.finished ).arg( stopped.blocks ),
                        QMessageBox::NoButton, parent );
  question.setObjectName( QStringLiteral( "geodlResumeQuestion" ) );
  QPushButton *continueButton = question.addButton( tr( "Continue" ), QMessageBox::AcceptRole );
  QPushButton *againButton = question.addButton( tr( "Start Again" ), QMessageBox::DestructiveRole );
  question.addButton( QMessageBox::Cancel );
  question.setDefaultButton( continueButton );
  question.exec();
  if ( question.clickedButton() == continueButton )
    return GeoDLResumeAnswer::Continue;
  return question.clickedButton() == againButton ? GeoDLResumeAnswer::StartAgain : GeoDLResumeAnswer::Cancel;
}
