// Text put into XML or HTML (a GDAL VRT, the training report): the characters that would end
// a tag, an entity or an attribute replaced by their entities. Standard library only.
#pragma once

#include <string>

namespace geodl {

inline std::string escapeMarkup(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace geodl
