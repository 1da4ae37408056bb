// geodl:classify: classifies a raster layer with a trained model; the class raster opens
// styled with the model's class colours and names.
#pragma once

#include <qgsprocessingalgorithm.h>

class GeoDLClassifyAlgorithm : public QgsProcessingAlgorithm
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
