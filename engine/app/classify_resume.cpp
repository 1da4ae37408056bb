// Resuming a stopped classification (classify's resume): the journal of its finished blocks
// (io/block_journal.h) opened for the run, and what the run must share with the stopped one.
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/classify_stages.h"
#include "app/job_outputs.h"
#include "base/file_identity.h"
#include "base/metadata.h"
#include "io/block_journal.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

std::string shown(const nlohmann::json& value) {
  if (value.is_null()) return "none";
  if (value.is_string()) return "'" + value.get<std::string>() + "'";
  return value.dump();
}

// What differs between the stopped run (`then`) and this one, in words; empty when nothing.
std::vector<std::string> differences(const nlohmann::json& then, const nlohmann::json& now) {
  static const std::vector<std::pair<std::string, std::string>> files = {
      {"input", "the input raster"}, {"model", "the model file"}, {"mask", "the mask"}};
  std::vector<std::string> found;
  if (then.value("geodl", "") != now.value("geodl", ""))
    found.push_back("GeoDL's version (" + then.value("geodl", "") + " then, " + now.value("geodl", "") + " now)");
  for (const auto& [key, role] : files) {
    const nlohmann::json& a = then.contains(key) ? then[key] : nlohmann::json();
    const nlohmann::json& b = now[key];
    if (a == b) continue;
    if (a.is_null() || b.is_null() || a["path"] != b["path"])
      found.push_back("another " + role.substr(4) + " (" + shown(a.is_null() ? a : a["path"]) + " then, " +
                      shown(b.is_null() ? b : b["path"]) + " now)");
    else
      found.push_back(role + " " + shown(b["path"]) + " has changed since (its size or time)");
  }
  for (const auto& [key, value] : now["options"].items()) {
    const nlohmann::json& before = then.contains("options") && then["options"].contains(key)
                                       ? then["options"][key] : nlohmann::json();
    if (before != value)
      found.push_back(classifyOptionNamed(key) + ": " + shown(before) + " then, " + shown(value) + " now");
  }
  if (found.empty() && then.value("plan", nlohmann::json()) != now["plan"])
    found.push_back("the plan (windows, overlap and batch: " + then.value("plan", nlohmann::json()).dump() +
                    " then, " + now["plan"].dump() + " now)");
  return found;
}

// The files a run reads and every option that changes a pixel of its outputs, as given
// (`device`: the one it runs on).
nlohmann::json runRecord(const ClassifyOptions& o, const std::string& device) {
  return {{"geodl", metadata::kVersion},
          {"input", fileRecord(o.input)},
          {"model", fileRecord(o.model_path)},
          {"mask", fileRecord(o.mask)},
          {"options",
           {{"window", o.window},
            {"overlap", o.overlap},
            {"batch_size", o.batch_size},
            {"tta", o.tta},
            {"precision", o.run.precision},
            {"device", device},
            {"extent", o.has_extent ? nlohmann::json(std::vector<double>(o.extent, o.extent + 4)) : nlohmann::json()},
            {"mask_layer", o.mask_layer},
            {"probabilities_path",
             o.probabilities.empty() ? "" : fs::absolute(o.probabilities).lexically_normal().string()},
            {"probabilities_float", o.probabilities_float},
            {"cog", o.cog},
            {"resample", o.resample}}}};
}

}  // namespace

std::string finishedRunKey(const ClassifyOptions& o) {
  nlohmann::json key = runRecord(o, o.run.device);
  // What a finished raster wrote besides its pixels.
  key["options"].update({{"polygons", o.polygons}, {"min_area", o.min_area}, {"accept_mismatch", o.accept_mismatch}});
  key["output"] = fileRecord(o.output);
  return key.dump();
}

std::string resumeDescription(const ClassifyOptions& o, const RunPlan& run) {
  const TileJob& job = run.job;
  nlohmann::json d = runRecord(o, run.device_name);
  // The plan as chosen (the options above as given).
  d["plan"] = {{"window", job.plan.window},
               {"overlap", job.plan.overlap},
               {"batch_size", job.batch_size},
               {"width", job.plan.width},
               {"height", job.plan.height},
               {"blocks", job.plan.ys.size()}};
  return d.dump(1);
}

ClassifyOptions withStoppedPlan(const ClassifyOptions& o) {
  ClassifyOptions planned = o;
  if (!o.resume || (o.window != 0 && o.batch_size != 0)) return planned;
  try {
    const std::string text = io::journalDescription({io::journalFolderOf(o.output), ""});
    if (text.empty()) return planned;
    const auto then = nlohmann::json::parse(text);
    // Only where the stopped run chose them too: a different option is refused afterwards.
    if (o.window == 0 && then.at("options").at("window") == 0) planned.window = then.at("plan").at("window");
    if (o.batch_size == 0 && then.at("options").at("batch_size") == 0)
      planned.batch_size = then.at("plan").at("batch_size");
  } catch (const std::exception&) {  // an unreadable description: openJournal says so
  }
  return planned;
}

std::string resumeAdvice(const ClassifyOptions& o) {
  return "the blocks it finished are kept in '" + io::journalFolderOf(o.output) + "': run it again with " +
         classifyOptionNamed("resume") + " to continue from them";
}

std::optional<StoppedRun> stoppedClassification(const std::string& output, const std::string& input,
                                                const std::string& model) {
  const io::JournalFolders folders{io::journalFolderOf(output), ""};
  if (!io::journalHasBlocks(folders)) return std::nullopt;
  try {
    const auto then = nlohmann::json::parse(io::journalDescription(folders));
    if (!sameFile(then.at("input").at("path").get<std::string>(), input) ||
        !sameFile(then.at("model").at("path").get<std::string>(), model))
      return std::nullopt;
    StoppedRun run;
    run.blocks = then.at("plan").at("blocks");
    run.finished = io::markedBlocks(folders);
    return run;
  } catch (const std::exception&) {  // no description, or a damaged one: nothing to offer
    return std::nullopt;
  }
}

std::vector<io::JournalBlock> openJournal(const ClassifyOptions& o, const RunPlan& run,
                                          const io::JournalFolders& folders, Progress& progress,
                                          std::vector<io::StartedBlock>& started) {
  started.clear();
  const std::string now = resumeDescription(o, run);
  std::error_code ec;
  const bool exists = fs::exists(folders.classes, ec);
  const std::string then = exists ? io::journalDescription(folders) : "";
  if (exists && o.resume && !then.empty()) {
    nlohmann::json stopped;
    try {
      stopped = nlohmann::json::parse(then);
    } catch (const std::exception&) {
      throw InputError("cannot resume the classification into '" + o.output + "': '" + folders.classes +
                       "/job.json' is damaged; run it without " + classifyOptionNamed("resume") + " to start again");
    }
    const std::vector<std::string> changed = differences(stopped, nlohmann::json::parse(now));
    if (!changed.empty()) {
      std::string list;
      for (const auto& c : changed) list += (list.empty() ? "" : "; ") + c;
      throw InputError("cannot resume the classification into '" + o.output + "': it is not the stopped run: " +
                       list + ". Give the stopped run's options and files to resume it, or run without " +
                       classifyOptionNamed("resume") + " to start again (its finished blocks are then discarded)");
    }
    std::vector<int> altered;
    std::vector<io::JournalBlock> blocks = io::finishedBlocks(folders, &altered, &started);
    if (!altered.empty()) {
      std::string list;
      for (int k : altered) list += (list.empty() ? "" : ", ") + std::to_string(k);
      progress.log(std::to_string(altered.size()) + (altered.size() == 1 ? " finished block" : " finished blocks") +
                   " in '" + folders.classes + "' changed after the stop (the sizes of their files differ from " +
                   "those recorded: cut short or replaced), and " + (altered.size() == 1 ? "is" : "are") +
                   " computed again: block " + list);
    }
    const std::vector<int>& ys = run.job.plan.ys;
    for (const auto& b : blocks)
      if (b.block >= int(ys.size()) || b.y0 != ys[size_t(b.block)])
        throw IoError("the finished block " + std::to_string(b.block) + " in '" + folders.classes +
                      "' does not fit the run's plan (another job wrote there?): run without " +
                      classifyOptionNamed("resume") + " to start again");
    if (!folders.probabilities.empty()) fs::create_directories(folders.probabilities, ec);
    std::ostringstream line;
    for (const auto& b : started)
      if (b.block >= int(ys.size()) || b.windows >= int(run.job.row_windows[size_t(b.block)].size()))
        throw IoError("the started block " + std::to_string(b.block) + " in '" + folders.classes +
                      "' does not fit the run's plan (another job wrote there?): run without " +
                      classifyOptionNamed("resume") + " to start again");
    line << "resuming: " << blocks.size() << " of " << ys.size() << " blocks were finished by the stopped run";
    int64_t part_windows = 0;
    for (const auto& b : started) part_windows += b.windows;
    if (!started.empty())
      line << ", and " << part_windows << (part_windows == 1 ? " window" : " windows") << " of " << started.size()
           << (started.size() == 1 ? " block" : " blocks") << " it had started";
    progress.log(line.str());
    return blocks;
  }
  if (exists) {
    const size_t finished = io::finishedBlocks(folders).size();
    if (finished > 0)
      progress.log("discarded the " + std::to_string(finished) + " finished blocks of a stopped run into '" +
                   o.output + "' (" + classifyOptionNamed("resume") + " continues such a run)");
  } else if (o.resume) {
    progress.log("nothing to resume for '" + o.output + "': classifying it from the start");
  }
  io::removeJournal(folders);
  io::startJournal(folders, now);
  return {};
}

}  // namespace geodl
