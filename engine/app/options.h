// One declaration per option: the config key, command-line flag and Processing parameter
// that set a field of a job's options struct, with its type, range, choices and help.
// The config reader, the `geodl` flags, the QGIS parameters, the unknown-key warning and
// docs/options.md are all made from these tables; defaults are the struct's own member
// initializers, so each option has exactly one.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Marks text for translation without Qt: lupdate reads it as QT_TR_NOOP (see
// scripts/update-translations.sh), in the context "geodl", where the plugin translates it.
#define GEODL_TR(text) text

namespace geodl {

enum class OptionType {
  Bool,    // true/false, yes/no, on/off; a command-line flag without value means true
  Int,     // a whole number within [min, max]
  Number,  // a real number within [min, max]
  Text,
  Path,    // a file or folder: relative to the config's folder, or to the current folder
  Choice,  // one of choices() (or a list of numbers where list_of_numbers is set)
  List,    // a YAML list, or comma-separated on the command line and in QGIS
};

struct OptionChoice {
  std::string value;      // what configs and flags say
  const char* label = "";  // what QGIS shows (translated)
  std::vector<std::string> spellings = {};  // also accepted for it (geo-deep-learning's names)
};

// What a config key, a flag or a parameter gave for one option, before it is checked.
struct OptionValue {
  std::vector<std::string> items;  // a scalar is one item
  bool list = false;
  std::string base;    // relative paths are taken from this folder
  std::string origin;  // names the source in messages: "the config key sample.samples_dist", "--samples-dist"
};

// Values by option name; a later source replaces an earlier one (defaults < config < command line).
using OptionValues = std::map<std::string, OptionValue>;

// A value once checked against its option: the field its type fills is set.
struct OptionInput {
  bool flag = false;
  int64_t integer = 0;
  double number = 0;
  std::string text;               // Text, Path (resolved), Choice
  std::vector<std::string> list;  // List, or the numbers of a Choice given as a list
};

// Everything about an option but how it reaches its struct.
struct OptionInfo {
  std::string name;                  // the field's name, and the option's id
  std::string key;                   // config key, "section.key"; "models.*.x": * is the model name
  std::vector<std::string> aliases;  // other config keys accepted for it (the key wins)
  std::string flag;                  // command-line flag without "--"
  std::string parameter;             // Processing parameter name
  OptionType type = OptionType::Text;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::string zero_word;             // Int: a word that means 0 ("auto")
  std::function<std::vector<OptionChoice>()> choices;
  std::string choice_pattern;        // Choice: other values accepted, e.g. "cuda:N" (N a number)
  // QGIS: the values of the pattern this machine has, listed after the choices (the GPUs'
  // cuda:N, with their names as labels). The docs list only the choices and the pattern.
  std::function<std::vector<std::pair<std::string, std::string>>()> pattern_values;
  bool list_of_numbers = false;      // Choice: a list of numbers is accepted too; List: numbers
                                     // only, each within [min, max]
  bool flag_negates = false;         // Bool: the flag sets false (--no-confirm)
  std::string bare_value;            // Choice: what the flag alone, without a value, means
  bool advanced = false;             // QGIS: among the advanced parameters
  bool plugin_declares = false;      // QGIS: the algorithm declares and reads it (layers, destinations)
  bool applies_last = false;         // set after the others: it overrides what they imply
  std::string file_extension;        // Path, QGIS: the file filter
  std::string processing_default;    // QGIS only: a default of its own, where its context differs
  const char* minimum_text = "";     // QGIS: what a number box shows at the minimum, a sentinel
                                     // ("Automatic" for 0), instead of the number (translated)
  int decimals = -1;                 // QGIS: decimals a Number's box shows (-1: QGIS's own, 6)
  const char* label = "";            // QGIS label (translated)
  const char* help = "";             // one line (translated)
};

template <class Options>
struct Option : OptionInfo {
  std::function<void(Options&, const OptionInput&)> set;
  std::function<std::string(const Options&)> show;  // the value as configs write it

  // Builders, chained in the tables: option(...).config("global.samples_size").cli("samples-size")...
  Option& config(std::string k, std::vector<std::string> a = {}) {
    key = std::move(k);
    aliases = std::move(a);
    return *this;
  }
  Option& cli(std::string f) { flag = std::move(f); return *this; }
  Option& qgis(std::string p, bool is_advanced = false) {
    parameter = std::move(p);
    advanced = is_advanced;
    return *this;
  }
  Option& qgisDefault(std::string d) { processing_default = std::move(d); return *this; }
  Option& minimumReads(const char* text) { minimum_text = text; return *this; }
  Option& qgisDecimals(int d) { decimals = d; return *this; }
  Option& negatedFlag() { flag_negates = true; return *this; }
  Option& bareFlag(std::string v) { bare_value = std::move(v); return *this; }
  Option& numbersToo() { list_of_numbers = true; return *this; }
  Option& pattern(std::string p, std::function<std::vector<std::pair<std::string, std::string>>()> values = {}) {
    choice_pattern = std::move(p);
    pattern_values = std::move(values);
    return *this;
  }
  Option& declaredByPlugin() { plugin_declares = true; return *this; }
  Option& appliedLast() { applies_last = true; return *this; }
  Option& range(double lo, double hi) { min = lo; max = hi; return *this; }
  Option& zeroWord(std::string w) { zero_word = std::move(w); return *this; }
  Option& path(std::string extension = "") {
    type = OptionType::Path;
    file_extension = std::move(extension);
    return *this;
  }
  Option& oneOf(std::function<std::vector<OptionChoice>()> c) {
    type = OptionType::Choice;
    choices = std::move(c);
    return *this;
  }
  Option& oneOf(std::vector<OptionChoice> c) {
    return oneOf([c] { return c; });
  }
  Option& describe(const char* l, const char* h) { label = l; help = h; return *this; }
};

template <class Options>
using OptionTable = std::vector<Option<Options>>;

// Text of a value as a config file would write it.
std::string optionText(bool value);
std::string optionText(double value);
inline std::string optionText(int value) { return std::to_string(value); }
inline std::string optionText(int64_t value) { return std::to_string(value); }
inline std::string optionText(uint64_t value) { return std::to_string(value); }
inline std::string optionText(const std::string& value) { return value; }
std::string optionText(const std::vector<std::string>& value);

// An option of a struct field, its type taken from the field's.
template <class Options, class T>
Option<Options> option(const char* name, T Options::*member) {
  Option<Options> o;
  o.name = name;
  if constexpr (std::is_same_v<T, bool>) {
    o.type = OptionType::Bool;
  } else if constexpr (std::is_integral_v<T>) {
    o.type = OptionType::Int;
    o.min = double(std::numeric_limits<T>::lowest());
    o.max = double(std::numeric_limits<T>::max());
  } else if constexpr (std::is_floating_point_v<T>) {
    o.type = OptionType::Number;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    o.type = OptionType::List;
  } else {
    static_assert(std::is_same_v<T, std::string>, "an option's field is bool, a number, text or a list");
    o.type = OptionType::Text;
  }
  o.set = [member](Options& opts, const OptionInput& in) {
    if constexpr (std::is_same_v<T, bool>) opts.*member = in.flag;
    else if constexpr (std::is_integral_v<T>) opts.*member = T(in.integer);
    else if constexpr (std::is_floating_point_v<T>) opts.*member = T(in.number);
    else if constexpr (std::is_same_v<T, std::vector<std::string>>) opts.*member = in.list;
    else opts.*member = in.text;
  };
  o.show = [member](const Options& opts) { return optionText(opts.*member); };
  return o;
}

// An option whose setter does more than fill one field (or that the plugin alone reads).
template <class Options>
Option<Options> option(const char* name, OptionType type,
                       std::function<void(Options&, const OptionInput&)> set,
                       std::function<std::string(const Options&)> show = {}) {
  Option<Options> o;
  o.name = name;
  o.type = type;
  o.set = std::move(set);
  o.show = std::move(show);  // none: the option sets others and shows nothing of its own
  return o;
}

// The option of a field of a struct held by another (`member`): the same declaration, setting
// and showing the inner struct's field (a job's RunOptions, classification's ClassifyOptions).
template <class Outer, class Inner>
Option<Outer> nestedOption(const Option<Inner>& inner, Inner Outer::*member) {
  Option<Outer> o;
  static_cast<OptionInfo&>(o) = inner;
  if (inner.set) o.set = [set = inner.set, member](Outer& outer, const OptionInput& v) { set(outer.*member, v); };
  if (inner.show) o.show = [show = inner.show, member](const Outer& outer) { return show(outer.*member); };
  return o;
}

// Checks a value against its option (type, range, choices) and resolves paths. Throws
// InputError naming the value's origin, what it should be and the range in plain numbers.
OptionInput parseOption(const OptionInfo& info, const OptionValue& value);

// Sets every option that `values` names, in the table's order (a setter may fill fields a
// later option overrides), those marked appliedLast after the others.
template <class Options>
void applyOptions(const OptionTable<Options>& table, const OptionValues& values, Options& options) {
  for (const bool last : {false, true})
    for (const auto& opt : table) {
      const auto it = values.find(opt.name);
      if (opt.applies_last != last || it == values.end() || !opt.set) continue;
      opt.set(options, parseOption(opt, it->second));
    }
}

// Where a value checked in a struct came from, for code that fills the struct directly:
// "the option epochs (training.num_epochs, --epochs, EPOCHS)".
std::string optionOrigin(const OptionInfo& info);

// Checks a value as the struct holds it (its `show` text) against its option's type, range
// and choices, in parseOption's words.
void checkOptionText(const OptionInfo& info, const std::string& shown);

// Checks every field of `options` that `table` declares against its option: the one check
// of ranges and choices, whoever filled the struct (the config, the flags, QGIS, or code).
// Each job runs it first. Rules that join two fields stay in the jobs.
template <class Options>
void checkOptions(const OptionTable<Options>& table, const Options& options) {
  for (const auto& opt : table)
    if (opt.show) checkOptionText(opt, opt.show(options));
}

// The default of an option as text: the struct's member initializer.
template <class Options>
std::string defaultText(const Option<Options>& opt) {
  return opt.show ? opt.show(Options{}) : std::string();
}

// "a whole number from 8 to 100000", "one of loss, miou": what a value must be.
std::string describeExpected(const OptionInfo& info);

// A config key without effect in GeoDL: geo-deep-learning's, accepted, with the reason.
struct IgnoredKey {
  const char* key;
  const char* reason;
};
const std::vector<IgnoredKey>& ignoredConfigKeys();

}  // namespace geodl
