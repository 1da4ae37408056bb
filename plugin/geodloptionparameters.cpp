#include "geodloptionparameters.h"

#include <QCoreApplication>

#include "geodlnumberwidgetwrapper.h"

#include <cfloat>
#include <cmath>

QString geodlOptionText( const char *text )
{
  return text && *text ? QCoreApplication::translate( "geodl", text ) : QString();
}

namespace
{
// A number parameter as QGIS's box shows it best: the decimals the option needs, and the word
// its sentinel minimum means (GeoDLNumberWidgetWrapper shows it).
QgsProcessingParameterNumber *numberParameter( const geodl::OptionInfo &info, Qgis::ProcessingNumberParameterType type,
    const QString &name, const QString &label, double defaultValue, double min, double max )
{
  auto *number = new QgsProcessingParameterNumber( name, label, type, defaultValue, false, min, max );
  QVariantMap metadata;
  if ( info.decimals >= 0 )
    metadata.insert( QStringLiteral( "widget_wrapper" ), QVariantMap { { QStringLiteral( "decimals" ), info.decimals } } );
  if ( *info.minimum_text )
    metadata.insert( kGeoDLParameterMetadata, QVariantMap { { QStringLiteral( "minimum_text" ), geodlOptionText( info.minimum_text ) } } );
  number->setMetadata( metadata );
  return number;
}

// A choice's entries in QGIS's list: its choices, then the values of its pattern this machine
// has (the device: each GPU, cuda:N, named). Building the list and reading it both use this.
struct ParameterChoice
{
  std::string value;
  QString label;
};
std::vector<ParameterChoice> parameterChoices( const geodl::OptionInfo &info )
{
  std::vector<ParameterChoice> entries;
  for ( const auto &choice : info.choices() )
    entries.push_back( { choice.value, geodlOptionText( choice.label ) } );
  if ( info.pattern_values )
    for ( const auto &[value, label] : info.pattern_values() )
      entries.push_back( { value, QString::fromStdString( label ) } );
  return entries;
}
} // namespace

QgsProcessingParameterDefinition *geodlParameterFor( const geodl::OptionInfo &info, const std::string &defaultText )
{
  const QString name = QString::fromStdString( info.parameter );
  const QString label = geodlOptionText( info.label );
  const QString def = QString::fromStdString( defaultText );
  const double min = std::isfinite( info.min ) ? info.min : -DBL_MAX;
  const double max = std::isfinite( info.max ) ? info.max : DBL_MAX;
  switch ( info.type )
  {
    case geodl::OptionType::Bool:
      return new QgsProcessingParameterBoolean( name, label, def == QLatin1String( "true" ) );
    case geodl::OptionType::Int:
      return numberParameter( info, Qgis::ProcessingNumberParameterType::Integer, name, label, def.toDouble(), min, max );
    case geodl::OptionType::Number:
      return numberParameter( info, Qgis::ProcessingNumberParameterType::Double, name, label, def.toDouble(), min, max );
    case geodl::OptionType::Choice:
    {
      if ( !info.bare_value.empty() )
      {
        // A choice that was a checkbox (CHECKPOINT: false, true, auto) stays one, optional:
        // models saved with its booleans keep working, and left unset it takes the default.
        QgsProcessingParameterBoolean *box = new QgsProcessingParameterBoolean( name, label, QVariant(), true );
        return box;
      }
      QStringList labels;
      int index = 0;
      const auto choices = parameterChoices( info );
      for ( size_t i = 0; i < choices.size(); ++i )
      {
        labels << choices[i].label;
        if ( choices[i].value == defaultText )
          index = static_cast<int>( i );
      }
      return new QgsProcessingParameterEnum( name, label, labels, false, index );
    }
    case geodl::OptionType::Path:
      return new QgsProcessingParameterFile( name, label, Qgis::ProcessingFileParameterBehavior::File,
                                             QString::fromStdString( info.file_extension ), QVariant(), info.advanced );
    case geodl::OptionType::Text:
    case geodl::OptionType::List:
      return new QgsProcessingParameterString( name, label, def.isEmpty() ? QVariant() : QVariant( def ), false, info.advanced );
  }
  return nullptr;
}

geodl::OptionValue geodlValue( const QString &text, const QString &parameter )
{
  geodl::OptionValue value;
  value.items = { text.toStdString() };
  value.origin = QStringLiteral( "the parameter %1" ).arg( parameter ).toStdString();
  return value;
}

bool geodlParameterValue( const QgsProcessingAlgorithm &algorithm, const geodl::OptionInfo &info,
                          const QVariantMap &parameters, QgsProcessingContext &context, geodl::OptionValue &value )
{
  const QString name = QString::fromStdString( info.parameter );
  const QgsProcessingParameterDefinition *definition = algorithm.parameterDefinition( name );
  if ( !definition )
    return false;
  const QVariant given = parameters.value( name );
  if ( ( definition->flags() & Qgis::ProcessingParameterFlag::Optional ) && ( !given.isValid() || given.isNull() ) )
    return false;  // not set: the option's default stays
  QString text;
  switch ( info.type )
  {
    case geodl::OptionType::Bool:
      text = QgsProcessingParameters::parameterAsBool( definition, parameters, context ) ? QStringLiteral( "true" ) : QStringLiteral( "false" );
      break;
    case geodl::OptionType::Int:
      text = QString::number( std::llround( QgsProcessingParameters::parameterAsDouble( definition, parameters, context ) ) );
      break;
    case geodl::OptionType::Number:
      text = QString::number( QgsProcessingParameters::parameterAsDouble( definition, parameters, context ), 'g', 17 );
      break;
    case geodl::OptionType::Choice:
    {
      if ( definition->type() == QgsProcessingParameterBoolean::typeName() )
      {
        text = QgsProcessingParameters::parameterAsBool( definition, parameters, context ) ? QStringLiteral( "true" ) : QStringLiteral( "false" );
        break;
      }
      const auto choices = parameterChoices( info );
      const int index = QgsProcessingParameters::parameterAsEnum( definition, parameters, context );
      if ( index < 0 || index >= static_cast<int>( choices.size() ) )
        return false;
      text = QString::fromStdString( choices[static_cast<size_t>( index )].value );
      break;
    }
    case geodl::OptionType::Path:
      text = QgsProcessingParameters::parameterAsFile( definition, parameters, context );
      if ( text.isEmpty() )
        return false;
      break;
    case geodl::OptionType::Text:
      text = QgsProcessingParameters::parameterAsString( definition, parameters, context );
      break;
    case geodl::OptionType::List:
    {
      value = geodlValue( QString(), name );
      value.items.clear();
      value.list = true;
      for ( const QString &item : QgsProcessingParameters::parameterAsString( definition, parameters, context ).split( ',', Qt::SkipEmptyParts ) )
        value.items.push_back( item.trimmed().toStdString() );
      return true;
    }
  }
  value = geodlValue( text, name );
  return true;
}

bool geodlIsSet( const QVariantMap &parameters, const QString &parameter )
{
  // Unset: absent, null, or an empty string; a layer, a feature source definition (selected
  // features) or an extent is set even though it reads as no text.
  const QVariant value = parameters.value( parameter );
  if ( !value.isValid() || value.isNull() )
    return false;
  return value.userType() != QMetaType::QString || !value.toString().isEmpty();
}

bool geodlVectorLayerValues( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context,
                             QgsProcessingFeedback *feedback, const QString &parameter, const std::string &pathOption,
                             const std::string &layerOption, geodl::OptionValues &values )
{
  if ( !geodlIsSet( parameters, parameter ) )
    return false;
  QString layerName;
  const QString path = QgsProcessingParameters::parameterAsCompatibleSourceLayerPathAndLayerName(
                         algorithm.parameterDefinition( parameter ), parameters, context,
                         QStringList() << QStringLiteral( "gpkg" ) << QStringLiteral( "shp" ) << QStringLiteral( "geojson" ),
                         QStringLiteral( "gpkg" ), feedback, &layerName );
  values[pathOption] = geodlValue( path, parameter );
  values[layerOption] = geodlValue( layerName, parameter );
  return true;
}

QString geodlOptionsHelp( const std::vector<const geodl::OptionInfo *> &options )
{
  QStringList lines;
  for ( const geodl::OptionInfo *o : options )
  {
    if ( o->parameter.empty() || !*o->help )
      continue;
    QString line = QStringLiteral( "%1: %2" ).arg( geodlOptionText( o->label ), geodlOptionText( o->help ) );
    if ( !o->key.empty() )
      line += QStringLiteral( " (%1)" ).arg( QString::fromStdString( o->key ) );
    lines << line;
  }
  return lines.join( QLatin1Char( '\n' ) );
}
