// The question GeoDL asks before it classifies into an output whose classification was
// stopped (cancelled, QGIS closed, a node lost): continue it from its finished blocks, start
// again, or not run. Classify Active Layer and the Processing dialog of geodl:classify ask it.
#pragma once

#include <QCoreApplication>
#include <QString>

class QWidget;
namespace geodl
{
  struct StoppedRun;
}

enum class GeoDLResumeAnswer
{
  Continue,
  StartAgain,
  Cancel,
};

class GeoDLResumeQuestion
{
    Q_DECLARE_TR_FUNCTIONS( GeoDLResumeQuestion )

  public:
    // A modal question over `parent` (objectName "geodlResumeQuestion"); Continue is the default.
    static GeoDLResumeAnswer ask( QWidget *parent, const QString &layerName, const QString &output,
                                  const geodl::StoppedRun &stopped );
};
