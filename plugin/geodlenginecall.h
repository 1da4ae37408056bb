// Runs a call into the engine from an algorithm: no exception of the engine reaches QGIS,
// each becomes a QgsProcessingException with the engine's message.
#pragma once

#include <QString>

#include <qgsexception.h>

#include "base/errors.h"
#include "core/exception_text.h"

template <typename Call>
auto geodlEngineCall( Call &&call, const QString &cancelledMessage ) -> decltype( call() )
{
  try
  {
    return call();
  }
  catch ( const geodl::Cancelled &e )
  {
    // The engine's own words, when it says more than that it was cancelled (what to do next).
    const std::string why = e.what();
    if ( why == geodl::Cancelled().what() )
      throw QgsProcessingException( cancelledMessage );
    throw QgsProcessingException( cancelledMessage + QStringLiteral( ": " ) + QString::fromStdString( why ) );
  }
  catch ( ... )
  {
    throw QgsProcessingException( QString::fromStdString( geodl::describeCurrentException() ) );
  }
}
