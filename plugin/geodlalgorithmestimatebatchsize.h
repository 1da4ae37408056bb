// geodl:estimatebatchsize: the largest training batch that fits a memory budget.
#pragma once

#include "geodlalgorithm.h"

class GeoDLEstimateBatchSizeAlgorithm : public GeoDLAlgorithm
{
    Q_DECLARE_TR_FUNCTIONS( GeoDLEstimateBatchSizeAlgorithm )

  public:
    GeoDLEstimateBatchSizeAlgorithm() : GeoDLAlgorithm( Group::Training ) {}
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
