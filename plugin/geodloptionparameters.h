// Processing parameters made from the engine's option tables (app/options.h), and their
// values read back for the engine's applyOptions: labels, help, defaults, ranges and
// choices come from the one declaration; text is translated in the "geodl" context.
#pragma once

#include <QString>
#include <QVariantMap>

#include <functional>
#include <vector>

#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingparameters.h>

#include "app/options.h"

// An engine text (a label, a help line) in the interface language.
QString geodlOptionText( const char *text );

// What an algorithm declares itself for the options marked declaredByPlugin (layers,
// destinations, extents): given the option and its translated label; nullptr: none.
using GeoDLDeclareParameter = std::function<QgsProcessingParameterDefinition *( const geodl::OptionInfo &, const QString & )>;

// The parameter of an option from its type: boolean, number, enum, string or file.
QgsProcessingParameterDefinition *geodlParameterFor( const geodl::OptionInfo &info, const std::string &defaultText );

// The value a parameter holds, as the engine's option value; false when it holds none.
bool geodlParameterValue( const QgsProcessingAlgorithm &algorithm, const geodl::OptionInfo &info,
                          const QVariantMap &parameters, QgsProcessingContext &context, geodl::OptionValue &value );

// A value the algorithm read itself (a layer's path, an output's name).
geodl::OptionValue geodlValue( const QString &text, const QString &parameter );

// Whether an optional parameter holds a value.
bool geodlIsSet( const QVariantMap &parameters, const QString &parameter );

// A vector layer parameter as a file OGR reads (the layer itself, or a copy of its selected
// features) and its layer name, into values[pathOption] and values[layerOption]. False when
// the parameter is not set.
bool geodlVectorLayerValues( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context,
                             QgsProcessingFeedback *feedback, const QString &parameter, const std::string &pathOption,
                             const std::string &layerOption, geodl::OptionValues &values );

// "Label: help (config key)" for every option with a parameter, one per line.
QString geodlOptionsHelp( const std::vector<const geodl::OptionInfo *> &options );

template <class Options>
std::vector<const geodl::OptionInfo *> geodlInfos( const geodl::OptionTable<Options> &table )
{
  std::vector<const geodl::OptionInfo *> infos;
  for ( const auto &o : table )
    infos.push_back( &o );
  return infos;
}

// The parameters of a table's options, in its order, for initAlgorithm() to add.
template <class Options>
std::vector<QgsProcessingParameterDefinition *> geodlParameters( const geodl::OptionTable<Options> &table,
    const GeoDLDeclareParameter &declare )
{
  std::vector<QgsProcessingParameterDefinition *> definitions;
  for ( const auto &o : table )
  {
    if ( o.parameter.empty() )
      continue;
    QgsProcessingParameterDefinition *p = o.plugin_declares ? declare( o, geodlOptionText( o.label ) )
                                          : geodlParameterFor( o, o.processing_default.empty() ? geodl::defaultText( o ) : o.processing_default );
    if ( !p )
      continue;
    p->setHelp( geodlOptionText( o.help ) );
    // Advanced parameters are optional (their defaults apply): a model saved before one was
    // added still validates and runs.
    if ( o.advanced )
      p->setFlags( p->flags() | Qgis::ProcessingParameterFlag::Advanced | Qgis::ProcessingParameterFlag::Optional );
    definitions.push_back( p );
  }
  return definitions;
}

// The values of the parameters the table declares (not those the algorithm declares itself).
template <class Options>
geodl::OptionValues geodlParameterValues( const QgsProcessingAlgorithm &algorithm, const geodl::OptionTable<Options> &table,
    const QVariantMap &parameters, QgsProcessingContext &context )
{
  geodl::OptionValues values;
  for ( const auto &o : table )
  {
    geodl::OptionValue value;
    if ( !o.parameter.empty() && !o.plugin_declares && geodlParameterValue( algorithm, o, parameters, context, value ) )
      values[o.name] = value;
  }
  return values;
}
