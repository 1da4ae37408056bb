// Adapts QGIS Processing feedback (progress bar, cancel button, log) to the engine's Progress.
#pragma once

#include "base/progress.h"

class QgsProcessingFeedback;

class GeoDLFeedbackProgress final : public geodl::Progress
{
  public:
    explicit GeoDLFeedbackProgress( QgsProcessingFeedback *feedback );
    void report( double fraction, const std::string &message ) override;
    bool cancelled() const override;
    void log( const std::string &message ) override;

  private:
    QgsProcessingFeedback *mFeedback = nullptr;
    std::string mLastMessage;
};
