// The GeoDL Processing provider (id "geodl"): nothing but the list of its algorithms.
#pragma once

#include <qgsprocessingprovider.h>

class GeoDLProvider : public QgsProcessingProvider
{
  public:
    GeoDLProvider();
    QString id() const override;
    QString name() const override;
    QString longName() const override;
    QIcon icon() const override;
    QString svgIconPath() const override;
    QString versionInfo() const override;

  protected:
    void loadAlgorithms() override;
};
