// The value lists shared by several algorithms' enum parameters, in the engine's order.
#pragma once

#include <QStringList>

#include "core/model_spec.h"

// The engine's model names (global.model_name), index = enum value.
inline QStringList geodlModelNames()
{
  QStringList names;
  for ( const std::string &n : geodl::modelNames() )
    names << QString::fromStdString( n );
  return names;
}

// The device choices, index = enum value.
inline const QStringList &geodlDevices()
{
  static const QStringList list = QStringList() << QStringLiteral( "auto" ) << QStringLiteral( "cpu" ) << QStringLiteral( "cuda" );
  return list;
}
