// The GeoDL Processing provider (id "geodl"): the list of its algorithms, and their translation.
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
    // Installs GeoDL's translation for QGIS's interface language (embedded .qm files from
    // i18n/), once per process; the provider's constructor calls it.
    static void installTranslator();
    // Registers a new provider when none with id "geodl" is registered (by the C++ plugin
    // or the Python plugin geodl_processing): the provider added, or null when there was one
    // already or the registry refused it.
    static GeoDLProvider *registerIfMissing();

  protected:
    void loadAlgorithms() override;
};
