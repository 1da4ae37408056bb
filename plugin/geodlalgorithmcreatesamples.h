// geodl:createsamples: training samples from a raster layer and ground-truth polygons.
#pragma once

#include <qgsprocessingalgorithm.h>

class GeoDLCreateSamplesAlgorithm : public QgsProcessingAlgorithm
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
