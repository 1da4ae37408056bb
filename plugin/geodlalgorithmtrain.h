// geodl:train: trains a segmentation model on sample stores; outputs the model file and an
// HTML report for the Results Viewer.
#pragma once

#include <qgsprocessingalgorithm.h>

class GeoDLTrainAlgorithm : public QgsProcessingAlgorithm
{
  public:
    QString name() const override;
    QString displayName() const override;
    QStringList tags() const override;
    QString group() const override;
    QString groupId() const override;
    QString shortHelpString() const override;
    QIcon icon() const override;
    QgsProcessingAlgorithm *createInstance() const override;

  protected:
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
                                  QgsProcessingFeedback *feedback ) override;
};
