// "Classify Active Layer": a toolbar button, a Raster > GeoDL menu entry and a Layers panel
// context-menu entry for raster layers. Runs geodl:classify on the active raster layer as a
// QGIS task (progress in the task manager, cancellable) and adds the styled result above
// the source layer. The model last used is remembered across sessions.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

class QAction;
class QgisInterface;
class QgsRasterLayer;

class GeoDLClassifyActiveLayer : public QObject
{
    Q_OBJECT
  public:
    explicit GeoDLClassifyActiveLayer( QgisInterface *iface, QObject *parent = nullptr );
    ~GeoDLClassifyActiveLayer() override;
    void unload();

    // Settings key of the model last used.
    static QString lastModelKey();

  private slots:
    void chooseModelAndClassify();
    void classifyWithLastModel();

  private:
    void classify( QgsRasterLayer *layer, const QString &model );
    QgsRasterLayer *activeRaster();
    QgisInterface *mIface = nullptr;
    QAction *mChoose = nullptr;  // "Classify Active Layer…": asks for the model
    QAction *mRepeat = nullptr;  // "…with Last Model": no question asked
};
