// geodl:train: trains a segmentation model on sample stores; outputs the model file and an
// HTML report for the Results Viewer.
#pragma once

#include "geodlalgorithm.h"

class GeoDLTrainAlgorithm : public GeoDLAlgorithm
{
    Q_DECLARE_TR_FUNCTIONS( GeoDLTrainAlgorithm )

  public:
    GeoDLTrainAlgorithm() : GeoDLAlgorithm( Group::Training ) {}
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
