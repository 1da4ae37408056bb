// geodl:createsamples: training samples from a raster layer and ground-truth polygons.
#pragma once

#include "geodlalgorithm.h"

class GeoDLCreateSamplesAlgorithm : public GeoDLAlgorithm
{
    Q_DECLARE_TR_FUNCTIONS( GeoDLCreateSamplesAlgorithm )

  public:
    GeoDLCreateSamplesAlgorithm() : GeoDLAlgorithm( Group::Training ) {}
    QString name() const override;
    QString displayName() const override;
    QStringList tags() const override;
    QgsProcessingAlgorithm *createInstance() const override;

  protected:
    QString helpIntro() const override;
    std::vector<const geodl::OptionInfo *> optionInfos() const override;
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
                                  QgsProcessingFeedback *feedback ) override;
};
