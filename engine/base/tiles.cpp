#include "base/tiles.h"

#include <algorithm>

namespace geodl {

size_t chainedParts(const std::vector<BlockPart>& parts) {
  if (parts.empty() || parts.front().x0 != 0) return 0;
  size_t n = 1;
  for (; n < parts.size(); ++n) {
    const BlockPart &a = parts[n - 1], &b = parts[n];
    if (b.block != a.block || b.y != a.y || b.rows != a.rows || b.width != a.width || b.classes != a.classes ||
        b.windows <= a.windows || b.x0 != a.final_x || b.x1 < a.x1)
      break;
  }
  return n;
}

std::optional<BlockPart> joinParts(const std::vector<BlockPart>& parts) {
  size_t n = chainedParts(parts);
  for (size_t i = 0; i < n; ++i) {  // a part without its values (headers read only) ends the chain
    const BlockPart& p = parts[i];
    const size_t plane = size_t(p.rows) * size_t(std::max(0, p.x1 - p.x0));
    if (p.sums.size() != plane * size_t(p.classes) || p.weights.size() != plane || p.valid.size() != plane) n = i;
  }
  if (n == 0) return std::nullopt;
  const BlockPart& first = parts.front();
  BlockPart joined = parts[n - 1];
  joined.x0 = 0;
  const int64_t rows = first.rows, width = joined.x1;
  joined.sums.assign(size_t(first.classes * rows * width), 0.0f);
  joined.weights.assign(size_t(rows * width), 0.0f);
  joined.valid.assign(size_t(rows * width), 0);
  for (size_t i = 0; i < n; ++i) {  // each over the columns of those before
    const BlockPart& p = parts[i];
    const int64_t cw = p.x1 - p.x0;
    for (int64_t plane = 0; plane < first.classes * rows; ++plane)
      std::copy_n(p.sums.begin() + plane * cw, cw, joined.sums.begin() + plane * width + p.x0);
    for (int64_t r = 0; r < rows; ++r) {
      std::copy_n(p.weights.begin() + r * cw, cw, joined.weights.begin() + r * width + p.x0);
      std::copy_n(p.valid.begin() + r * cw, cw, joined.valid.begin() + r * width + p.x0);
    }
  }
  return joined;
}

}  // namespace geodl
