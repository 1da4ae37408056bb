#include "app/options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "base/errors.h"

namespace geodl {

namespace fs = std::filesystem;

std::string optionText(bool value) { return value ? "true" : "false"; }

std::string optionText(double value) {
  std::ostringstream s;
  s.precision(15);
  s << value;
  return s.str();
}

std::string optionText(const std::vector<std::string>& value) {
  std::string out;
  for (const auto& v : value) out += (out.empty() ? "" : ",") + v;
  return out;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// A bound as a person writes it: 100000, 0.5, 1e-09.
std::string plain(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(int64_t(v));
  return optionText(v);
}

bool parseBool(const std::string& text, bool& out) {
  const std::string t = lower(text);
  if (t == "true" || t == "yes" || t == "on" || t == "y" || t == "1") return out = true, true;
  if (t == "false" || t == "no" || t == "off" || t == "n" || t == "0") return out = false, true;
  return false;
}

bool parseNumber(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && std::isfinite(out);
}

// Words that mean "no file" in geo-deep-learning's configs (pretrained: False).
bool isNoPath(const std::string& text) {
  const std::string t = lower(text);
  return t.empty() || t == "false" || t == "no" || t == "none" || t == "null" || t == "~";
}

std::string choiceList(const OptionInfo& info) {
  std::string out;
  for (const auto& c : info.choices()) out += (out.empty() ? "" : ", ") + c.value;
  if (!info.choice_pattern.empty()) out += ", " + info.choice_pattern;
  return out;
}

bool matchesPattern(const std::string& pattern, const std::string& text) {
  // "prefix:N": the prefix, then a whole number.
  const auto n = pattern.find('N');
  if (n == std::string::npos || text.compare(0, n, pattern, 0, n) != 0 || text.size() == n) return false;
  return std::all_of(text.begin() + long(n), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::string describeExpected(const OptionInfo& info) {
  const bool low = std::isfinite(info.min), high = std::isfinite(info.max);
  const auto bounds = [&]() -> std::string {
    if (low && high) return " from " + plain(info.min) + " to " + plain(info.max);
    if (low) return " of at least " + plain(info.min);
    if (high) return " of at most " + plain(info.max);
    return "";
  };
  switch (info.type) {
    case OptionType::Bool: return "true or false";
    case OptionType::Int:
      return "a whole number" + bounds() + (info.zero_word.empty() ? "" : ", or " + info.zero_word);
    case OptionType::Number: return "a number" + bounds();
    case OptionType::Text: return "text";
    case OptionType::Path: return "a path";
    case OptionType::Choice:
      return "one of " + choiceList(info) + (info.list_of_numbers ? ", or a list of numbers" : "");
    case OptionType::List: return info.list_of_numbers ? "a list of numbers" + bounds() : "a list";
  }
  return "";
}

OptionInput parseOption(const OptionInfo& info, const OptionValue& value) {
  const auto fail = [&](const std::string& shown) -> InputError {
    return InputError(value.origin + " has the value '" + shown + "', which is not " +
                      describeExpected(info) + "; give such a value");
  };
  std::string joined;
  for (const auto& item : value.items) joined += (joined.empty() ? "" : ", ") + item;
  if (value.list) joined = "[" + joined + "]";
  OptionInput in;
  if (info.type == OptionType::List) {
    for (const auto& item : value.items) {
      double n = 0;
      if (info.list_of_numbers && !(parseNumber(item, n) && n >= info.min && n <= info.max)) throw fail(joined);
    }
    in.list = value.items;
    return in;
  }
  if (info.type == OptionType::Choice && value.list) {
    if (!info.list_of_numbers) throw fail(joined);
    for (const auto& item : value.items) {
      double n = 0;
      if (!parseNumber(item, n)) throw fail(joined);
    }
    in.list = value.items;
    return in;
  }
  if (value.list || value.items.size() != 1) throw fail(joined);
  const std::string& text = value.items.front();
  switch (info.type) {
    case OptionType::Bool:
      if (!parseBool(text, in.flag)) throw fail(text);
      break;
    case OptionType::Int: {
      if (!info.zero_word.empty() && lower(text) == info.zero_word) break;
      double n = 0;
      if (!parseNumber(text, n) || n != std::floor(n) || n < info.min || n > info.max) throw fail(text);
      in.integer = int64_t(n);
      in.number = n;
      break;
    }
    case OptionType::Number:
      if (!parseNumber(text, in.number) || in.number < info.min || in.number > info.max) throw fail(text);
      break;
    case OptionType::Path:
      if (!isNoPath(text)) {
        const fs::path p(text);
        in.text = (p.is_absolute() || value.base.empty() ? p : fs::path(value.base) / p)
                      .lexically_normal().string();
      }
      break;
    case OptionType::Choice: {
      bool known = false;
      for (const auto& c : info.choices()) {
        bool b = false, cb = false;
        // A choice spelt as a boolean (class_weights: False) matches in any YAML spelling.
        if (c.value == text || std::find(c.spellings.begin(), c.spellings.end(), text) != c.spellings.end() ||
            (parseBool(c.value, cb) && parseBool(text, b) && b == cb && lower(c.value) != "1" &&
             lower(text) != "1")) {
          in.text = c.value;
          known = true;
          break;
        }
      }
      if (!known && !info.choice_pattern.empty() && matchesPattern(info.choice_pattern, text)) {
        in.text = text;
        known = true;
      }
      if (!known) throw fail(text);
      break;
    }
    default:
      in.text = text;
  }
  return in;
}

std::string optionOrigin(const OptionInfo& info) {
  std::string names;
  for (const auto& n : {info.key, info.flag.empty() ? std::string() : "--" + info.flag, info.parameter})
    if (!n.empty()) names += (names.empty() ? "" : ", ") + n;
  return "the option " + info.name + (names.empty() ? "" : " (" + names + ")");
}

void checkOptionText(const OptionInfo& info, const std::string& shown) {
  // Only what a table bounds: numbers, and choices (a Path, Text or List is checked where
  // it is used; a setter-only option shows nothing).
  if (shown.empty() || !(info.type == OptionType::Int || info.type == OptionType::Number ||
                         info.type == OptionType::Choice))
    return;
  OptionValue value;
  value.origin = optionOrigin(info);
  if (info.type == OptionType::Choice && shown.size() > 1 && shown.front() == '[' && shown.back() == ']') {
    value.list = true;
    std::string item;
    for (char c : shown.substr(1, shown.size() - 2) + ",")
      if (c == ',') value.items.push_back(item), item.clear();
      else item += c;
  } else {
    value.items = {shown};
  }
  parseOption(info, value);
}

const std::vector<IgnoredKey>& ignoredConfigKeys() {
  static const std::vector<IgnoredKey> keys = {
      {"global.bucket_name", "GeoDL reads local files (or GDAL's /vsis3/ paths) only"},
      {"global.task", "GeoDL does semantic segmentation"},
      {"global.num_gpus", "choose the GPU with training.device (cuda:N)"},
      {"global.debug_mode", "GeoDL's messages are always complete"},
      {"training.num_tst_samples", "the tst store is written by geodl samples but not read by training"},
      {"training.batch_metrics", "GeoDL computes the validation metrics after every epoch"},
      {"training.target_size", "samples are used at their own size (global.samples_size)"},
      {"training.ignore_index",
       "the ignore index comes from the sample stores (255); to leave classes out of the loss, "
       "list them in sample.ignore_values"},
  };
  return keys;
}

}  // namespace geodl
