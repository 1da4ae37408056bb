#include "cli/option_flags.h"

#include <filesystem>

#include "base/errors.h"

namespace geodl::cli {

namespace {

std::string typeName(const OptionInfo& info) {
  switch (info.type) {
    case OptionType::Int: return info.zero_word.empty() ? "INT" : "INT|" + info.zero_word;
    case OptionType::Number: return "NUMBER";
    case OptionType::Path: return "PATH";
    case OptionType::Choice: {
      std::string names;
      for (const auto& c : info.choices()) names += (names.empty() ? "" : "|") + c.value;
      if (!info.choice_pattern.empty()) names += "|" + info.choice_pattern;
      return "{" + names + "}";
    }
    default: return "TEXT";
  }
}

}  // namespace

void OptionFlags::add(CLI::App* command, const OptionInfo& info, const std::string& default_text) {
  Flag& flag = flags_.emplace_back();
  flag.info = &info;
  std::string help = info.help;
  std::string notes;
  if (!info.key.empty()) notes = "config: " + info.key;
  if (!default_text.empty() && info.type != OptionType::Bool)
    notes += (notes.empty() ? "" : "; ") + std::string("default: ") + default_text;
  if (!notes.empty()) help += " (" + notes + ")";
  const std::string name = "--" + info.flag;
  if (info.type == OptionType::Bool) {
    flag.option = command->add_flag(name)->description(help);
  } else if (info.type == OptionType::List) {
    flag.option = command->add_option(name, flag.list, help)->delimiter(',');
  } else if (!info.bare_value.empty()) {
    // A choice that was a plain flag before (--checkpoint): the flag alone still means it.
    flag.option = command->add_option(name, flag.text, help)->expected(0, 1)->type_name(typeName(info));
  } else if (info.type != OptionType::Int && info.type != OptionType::Number) {
    // Choices and paths are checked when applied: a wrong name is bad input (exit code 3).
    flag.option = command->add_option(name, flag.text, help)->type_name(typeName(info));
  } else {
    // A number out of its range is bad usage (exit code 2), refused while parsing.
    const OptionInfo* checked = &info;
    flag.option = command->add_option(name, flag.text, help)
                      ->check(CLI::Validator(
                          [checked](std::string& text) -> std::string {
                            try {
                              parseOption(*checked, OptionValue{{text}, false, "", ""});
                              return "";
                            } catch (const InputError&) {
                              return "'" + text + "' is not " + describeExpected(*checked);
                            }
                          },
                          ""))
                      ->type_name(typeName(info));
  }
}

OptionValues OptionFlags::values() const {
  const std::string here = std::filesystem::current_path().string();
  OptionValues values;
  for (const Flag& f : flags_) {
    if (f.option->count() == 0) continue;
    OptionValue v;
    v.base = here;
    v.origin = "--" + f.info->flag;
    if (f.info->type == OptionType::Bool) {
      v.items = {f.info->flag_negates ? "false" : "true"};
    } else if (f.info->type == OptionType::List) {
      v.items = f.list;
      v.list = true;
    } else {
      v.items = {f.text.empty() && !f.info->bare_value.empty() ? f.info->bare_value : f.text};
    }
    values[f.info->name] = v;
  }
  return values;
}

std::string OptionFlags::given(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.info->name == name && f.option->count() > 0) return f.text;
  return "";
}

}  // namespace geodl::cli
