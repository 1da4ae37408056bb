#include "geodlnumberwidgetwrapper.h"

#include <QAbstractSpinBox>

#include <qgsdoublespinbox.h>
#include <qgsgui.h>
#include <qgsprocessingguiregistry.h>
#include <qgsprocessingparameters.h>
#include <qgsspinbox.h>

namespace
{
// The factory install() registered, while it is.
GeoDLNumberWidgetWrapper *sInstalled = nullptr;
} // namespace

GeoDLNumberWidgetWrapper::GeoDLNumberWidgetWrapper( const QgsProcessingParameterDefinition *parameter, QgsProcessingGui::WidgetType type, QWidget *parent )
  : QgsProcessingNumericWidgetWrapper( parameter, type, parent )
{
}

QgsAbstractProcessingParameterWidgetWrapper *GeoDLNumberWidgetWrapper::createWidgetWrapper( const QgsProcessingParameterDefinition *parameter,
    QgsProcessingGui::WidgetType type )
{
  return new GeoDLNumberWidgetWrapper( parameter, type );
}

QWidget *GeoDLNumberWidgetWrapper::createWidget()
{
  QWidget *widget = QgsProcessingNumericWidgetWrapper::createWidget();
  const QgsProcessingParameterNumber *number = dynamic_cast<const QgsProcessingParameterNumber *>( parameterDefinition() );
  if ( !number )
    return widget;
  const QString text = number->metadata().value( kGeoDLParameterMetadata ).toMap().value( QStringLiteral( "minimum_text" ) ).toString();
  if ( text.isEmpty() )
    return widget;
  // An optional box has QGIS's "Not set" one step below the minimum, which reads as unset:
  // the default applies. Where that default is the minimum's meaning, the box starts at the
  // minimum again, which reads as unset too and shows what it means.
  const bool optional = number->flags() & Qgis::ProcessingParameterFlag::Optional;
  const bool defaultIsMinimum = number->defaultValue().isValid() && qgsDoubleNear( number->defaultValue().toDouble(), number->minimum() );
  if ( optional && !defaultIsMinimum )
    return widget;
  if ( optional && mSpinBox )
  {
    mSpinBox->setMinimum( static_cast<int>( number->minimum() ) );
    mSpinBox->setValue( mSpinBox->minimum() );
  }
  else if ( optional && mDoubleSpinBox )
  {
    mDoubleSpinBox->setMinimum( number->minimum() );
    mDoubleSpinBox->setValue( mDoubleSpinBox->minimum() );
  }
  if ( QAbstractSpinBox *box = mSpinBox ? static_cast<QAbstractSpinBox *>( mSpinBox ) : mDoubleSpinBox )
    box->setSpecialValueText( text );
  return widget;
}

void GeoDLNumberWidgetWrapper::install()
{
  QgsProcessingGuiRegistry *registry = QgsGui::processingGuiRegistry();
  if ( sInstalled || !registry )
    return;
  // The registry removes the factory of the given one's type and deletes the one given: QGIS's
  // own (a QgsProcessingNumericWidgetWrapper it does not hand out) is named by a stand-in.
  // (Later QGIS versions pick a factory by the metadata "widget_wrapper/widget_type", which
  // would make this swap unnecessary.)
  registry->removeParameterWidgetFactory( new QgsProcessingNumericWidgetWrapper() );
  auto *ours = new GeoDLNumberWidgetWrapper();
  if ( registry->addParameterWidgetFactory( ours ) )
    sInstalled = ours;
  else
  {
    delete ours;
    registry->addParameterWidgetFactory( new QgsProcessingNumericWidgetWrapper() );
  }
}

void GeoDLNumberWidgetWrapper::uninstall()
{
  QgsProcessingGuiRegistry *registry = QgsGui::processingGuiRegistry();
  if ( !sInstalled || !registry )
    return;
  registry->removeParameterWidgetFactory( sInstalled );
  sInstalled = nullptr;
  registry->addParameterWidgetFactory( new QgsProcessingNumericWidgetWrapper() );
}
