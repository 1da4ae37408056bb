// geodl:classify: classifies a raster layer with a trained model; the class raster opens
// styled with the model's class colours and names.
#pragma once

#include "geodlalgorithm.h"

class GeoDLClassifyAlgorithm : public GeoDLAlgorithm
{
    Q_DECLARE_TR_FUNCTIONS( GeoDLClassifyAlgorithm )

  public:
    GeoDLClassifyAlgorithm() : GeoDLAlgorithm( Group::Classification ) {}
    QString name() const override;
    QString displayName() const override;
    QStringList tags() const override;
    QgsProcessingAlgorithm *createInstance() const override;

  protected:
    QString helpIntro() const override;
    std::vector<const geodl::OptionInfo *> optionInfos() const override;
    void initAlgorithm( const QVariantMap &configuration = QVariantMap() ) override;
    // In the Processing dialog, an output whose classification was stopped: asks whether to
    // continue it (as Classify Active Layer does), unless RESUME is ticked already.
    bool checkParameterValues( const QVariantMap &parameters, QgsProcessingContext &context,
                               QString *message = nullptr ) const override;
    QVariantMap processAlgorithm( const QVariantMap &parameters, QgsProcessingContext &context,
                                  QgsProcessingFeedback *feedback ) override;
};
