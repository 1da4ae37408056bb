// The command-line flags of a subcommand, made from an option table (app/options.h).
#pragma once

#include <CLI/CLI.hpp>

#include <deque>
#include <set>
#include <string>
#include <vector>

#include "app/options.h"

namespace geodl::cli {

class OptionFlags {
 public:
  // A flag for every option of the table that has one (except those in `skip`), with its
  // help, config key and default; values are checked as they are parsed (exit code 2).
  template <class Options>
  void add(CLI::App* command, const OptionTable<Options>& table, const std::set<std::string>& skip = {}) {
    for (const auto& o : table)
      if (!o.flag.empty() && !skip.count(o.name)) add(command, o, defaultText(o));
  }

  // The flags given, by option name; relative paths are taken from the current folder.
  OptionValues values() const;

  // The text of a flag given, or "" (e.g. the model, before the config is read).
  std::string given(const std::string& name) const;

 private:
  struct Flag {
    const OptionInfo* info = nullptr;
    CLI::Option* option = nullptr;
    std::string text;
    std::vector<std::string> list;
  };
  void add(CLI::App* command, const OptionInfo& info, const std::string& default_text);
  std::deque<Flag> flags_;  // stable addresses: CLI11 writes into them
};

}  // namespace geodl::cli
