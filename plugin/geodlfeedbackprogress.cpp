#include "geodlfeedbackprogress.h"

#include <qgsprocessingfeedback.h>

GeoDLFeedbackProgress::GeoDLFeedbackProgress( QgsProcessingFeedback *feedback )
  : mFeedback( feedback )
{
}

void GeoDLFeedbackProgress::report( double fraction, const std::string &message )
{
  if ( !mFeedback )
    return;
  mFeedback->setProgress( 100.0 * fraction );
  if ( !message.empty() && message != mLastMessage )
  {
    mFeedback->setProgressText( QString::fromStdString( message ) );
    mLastMessage = message;
  }
}

bool GeoDLFeedbackProgress::cancelled() const
{
  return mFeedback && mFeedback->isCanceled();
}

void GeoDLFeedbackProgress::log( const std::string &message )
{
  if ( mFeedback )
    mFeedback->pushInfo( QString::fromStdString( message ) );
}
