// The QGIS plugin: registers the GeoDL Processing provider while loaded.
#pragma once

#include <qgisplugin.h>

class QgisInterface;
class GeoDLProvider;
class GeoDLClassifyActiveLayer;

class GeoDLPlugin : public QgisPlugin
{
  public:
    explicit GeoDLPlugin( QgisInterface *iface );
    void initGui() override;
    void unload() override;

  private:
    QgisInterface *mIface = nullptr;
    GeoDLProvider *mProvider = nullptr;  // owned by the Processing registry
    GeoDLClassifyActiveLayer *mClassifyActiveLayer = nullptr;  // desktop only (an iface)
};
