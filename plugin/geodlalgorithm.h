// What the GeoDL algorithms share: the icon, the group (training or classification) and the
// help, made of the algorithm's own paragraph and its options' help from the engine's table.
// Each algorithm is a file of its own (one algorithm, one file, as QGIS's), translated by
// Qt's Q_DECLARE_TR_FUNCTIONS in its own context.
#pragma once

#include <QCoreApplication>

#include <vector>

#include <qgsprocessingalgorithm.h>

#include "app/options.h"

class GeoDLAlgorithm : public QgsProcessingAlgorithm
{
    Q_DECLARE_TR_FUNCTIONS( GeoDLAlgorithm )

  public:
    QString group() const override;
    QString groupId() const override;
    QString shortHelpString() const override;
    QIcon icon() const override;

  protected:
    enum class Group { Training, Classification };
    explicit GeoDLAlgorithm( Group group ) : mGroup( group ) {}

    // The algorithm's paragraph of help (translated), before its options'.
    virtual QString helpIntro() const = 0;
    // Its options (from its option table), whose help follows.
    virtual std::vector<const geodl::OptionInfo *> optionInfos() const = 0;

  private:
    Group mGroup;
};
