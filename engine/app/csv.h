// The CSV lists geo-deep-learning's configs name: the prep CSV (sample.prep_csv_file) and
// the inference CSV (inference.img_csv_file).
#pragma once

#include <string>
#include <vector>

#include "app/create_samples.h"

namespace geodl {

// One line of a CSV: fields split at commas outside double quotes, trimmed.
std::vector<std::string> splitCsvLine(const std::string& line);

// The prep CSV: no header; image, vector, attribute, dataset per line; paths relative to the
// CSV's folder. Throws InputError naming the line of a malformed row.
std::vector<SampleSource> readPrepCsv(const std::string& path);

// The rasters of an inference CSV (first column of each non-empty line, relative to the
// CSV's folder). Throws InputError for a CSV without a raster.
std::vector<std::string> readInferenceCsv(const std::string& path);

}  // namespace geodl
