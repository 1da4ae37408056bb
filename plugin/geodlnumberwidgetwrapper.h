// QGIS's number box for Processing parameters, with the word an option's sentinel minimum
// means ("Automatic" for a window of 0) instead of the number, wherever GeoDL's parameters
// are shown: the algorithm dialog, batch mode and the modeler.
#pragma once

#include <qgsprocessingwidgetwrapperimpl.h>

// The metadata key (on a QgsProcessingParameterNumber) whose map holds "minimum_text".
inline const QString kGeoDLParameterMetadata = QStringLiteral( "geodl" );

class GeoDLNumberWidgetWrapper : public QgsProcessingNumericWidgetWrapper
{
    Q_OBJECT

  public:
    explicit GeoDLNumberWidgetWrapper( const QgsProcessingParameterDefinition *parameter = nullptr,
                                       QgsProcessingGui::WidgetType type = QgsProcessingGui::Standard, QWidget *parent = nullptr );

    QgsAbstractProcessingParameterWidgetWrapper *createWidgetWrapper( const QgsProcessingParameterDefinition *parameter,
        QgsProcessingGui::WidgetType type ) override;
    QWidget *createWidget() override;

    // Puts this factory in the place of QGIS's own for "number" parameters (the registry
    // keeps one per type), and puts QGIS's back. Parameters without GeoDL's metadata get
    // exactly QGIS's box: the class is QGIS's, only the special value text is added.
    static void install();
    static void uninstall();
};
