// The classification job (app/classify.h): its rasters and their outputs, checked whole
// before the first starts, and shared by the ranks (whole rasters, or bands of one).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/classify_stages.h"
#include "app/job_outputs.h"
#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/errors.h"
#include "base/file_identity.h"
#include "base/file_kind.h"
#include "core/device.h"
#include "io/parts_vrt.h"
#include "io/raster.h"

namespace geodl {

namespace fs = std::filesystem;

std::vector<std::string> rastersOf(const std::string& input) {
  if (!fs::is_directory(input)) return {input};
  std::vector<std::string> rasters = io::rastersInFolder(input);
  if (rasters.empty())
    throw InputError("the folder '" + input + "' holds no raster GDAL can open; give a raster, or a folder of them");
  return rasters;
}

std::vector<ClassifyOptions> classifyRuns(const ClassifyJob& job) {
  checkOptions(classifyOptionTable(), job);
  if (job.inputs.empty())
    throw InputError("nothing to classify: give a raster or a folder (--input), or "
                     "inference.img_csv_file in the config");
  if (job.options.model_path.empty())
    throw InputError("no model file: give --model or inference.state_dict_path");
  if (!job.output.empty() && job.inputs.size() > 1)
    throw InputError("--output names one file but there are " + std::to_string(job.inputs.size()) +
                     " rasters; use --working-folder");
  if (job.working_folder.empty() && job.output.empty())
    throw InputError("no output folder: give --working-folder (or --output) or inference.working_folder");
  std::vector<ClassifyOptions> runs;
  for (const auto& input : job.inputs) {
    ClassifyOptions one = job.options;
    one.input = input;
    one.output = !job.output.empty()
                     ? job.output
                     : (fs::path(job.working_folder) / (fs::path(input).stem().string() + "_inference.tif")).string();
    one.derived_output = job.output.empty();
    const fs::path out(one.output);
    const std::string stem = (out.parent_path() / out.stem()).string();
    if (one.probabilities.empty() && (job.probabilities || one.probabilities_float)) {
      one.probabilities = stem + (io::isVrtPath(one.output) ? "_probabilities.vrt" : "_probabilities.tif");
      one.derived_probabilities = true;
    }
    if (one.polygons.empty() && job.polygons) {
      one.polygons = stem + "_polygons.gpkg";
      one.derived_polygons = true;
    }
    runs.push_back(one);
  }
  checkRuns(runs);
  return runs;
}

std::vector<JobOutput> classifyOutputs(const ClassifyOptions& run, const std::string& of) {
  const auto derived = [&](JobOutput out, bool is_derived) {
    out.derived = is_derived;
    out.overwrite = run.run.overwrite;
    out.written_by_geodl = writtenByGeoDLCheck(out.kind);
    return out;
  };
  return {derived({"the class raster" + of, run.output, io::rasterOutputKind(run.output)}, run.derived_output),
          derived({"the probability raster" + of, run.probabilities, io::rasterOutputKind(run.probabilities)},
                  run.derived_probabilities),
          derived({"the polygon file" + of, run.polygons, FileKind::GeoPackage}, run.derived_polygons)};
}

void checkRuns(const std::vector<ClassifyOptions>& runs) {
  if (runs.size() < 2) return;  // classify() checks a single run itself
  std::vector<JobFile> outputs, inputs;
  std::vector<JobOutput> typed;
  for (const auto& run : runs) {
    const std::string of = " of '" + run.input + "'";
    for (const JobOutput& out : classifyOutputs(run, of)) {
      outputs.push_back({out.role, out.path});
      typed.push_back(out);
    }
    inputs.push_back({"the input raster '" + run.input + "'", run.input});
  }
  inputs.push_back({"the model file", runs.front().model_path});
  inputs.push_back({"the mask", runs.front().mask});
  checkOutputsSpareInputs(outputs, inputs);
  checkReplaceableOutputs(typed);
  if (skipsFailures(runs.front())) return;  // classifyAll names those it cannot open
  const auto advice = [](const Error& e) {
    return std::string(e.what()) + " (or set " + classifyOptionNamed("on_error") +
           " to skip, and name, the rasters that fail)";
  };
  for (const auto& run : runs) {
    try {
      io::RasterReader check(run.input);
    } catch (const InputError& e) {
      throw InputError(advice(e));
    } catch (const IoError& e) {
      throw IoError(advice(e));
    }
  }
}

// A run's result as the ranks exchange it.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ModelClass, id, name, colour)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClassifyResult, output, probabilities, width, height, windows, windows_computed,
                                   batch_size, window, overlap, computed_ratio, precision, classes, class_pixels,
                                   nodata_pixels, polygons, polygons_dropped, warnings, skipped)

namespace {

// The pixels of each raster (the shares of the job's work and progress); with on_error skip,
// why each one that cannot be opened is left out (its pixels 0).
struct JobRasters {
  std::vector<int64_t> pixels;
  std::vector<std::string> unopened;
};

JobRasters openRasters(const std::vector<ClassifyOptions>& runs) {
  JobRasters job{std::vector<int64_t>(runs.size(), 0), std::vector<std::string>(runs.size())};
  for (size_t i = 0; i < runs.size(); ++i) {
    try {
      const io::RasterReader r(runs[i].input);
      job.pixels[i] = int64_t(r.info().width) * r.info().height;
    } catch (const InputError& e) {
      if (!skipsFailures(runs[i])) throw;
      job.unopened[i] = e.what();
    } catch (const IoError& e) {
      if (!skipsFailures(runs[i])) throw;
      job.unopened[i] = e.what();
    }
  }
  return job;
}

// Whole rasters to ranks: the largest first, each to the rank with the fewest pixels so far
// (-1: a raster left out).
std::vector<int> rasterOwners(const JobRasters& job, int ranks) {
  std::vector<size_t> order(job.pixels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return job.pixels[a] > job.pixels[b]; });
  std::vector<int64_t> load(size_t(ranks), 0);
  std::vector<int> owner(order.size(), -1);
  for (size_t i : order) {
    if (!job.unopened[i].empty()) continue;
    const int r = int(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = r;
    load[size_t(r)] += job.pixels[i];
  }
  return owner;
}

// The rasters of a job of many that are finished (classify's resume): a record of each one's
// result, written once its outputs are in place, in a folder beside the first output
// (".classify-job.partial"), named after the raster's output (each output is one job's at a
// time: OutputLocks), so that two jobs writing into one folder keep their own records. A job
// resumed finds the rasters whose files and options are those of their record
// (finishedRunKey) and keeps them; a job that is not resumed, or that ends well, removes its
// own records, and the folder once it is empty.
class JobJournal {
 public:
  explicit JobJournal(const std::vector<ClassifyOptions>& runs)
      : folder_(runs.size() > 1 ? partialPathFor((fs::path(runs.front().output).parent_path() / "classify-job").string())
                                : "") {}

  // Rank 0, before any raster: the results of the finished rasters (resume), by index, as
  // JSON; without resume the records of a stopped job go.
  nlohmann::json open(const std::vector<ClassifyOptions>& runs, Progress& progress) const {
    nlohmann::json finished = nlohmann::json::object();
    if (folder_.empty()) return finished;
    if (!runs.front().resume) {
      remove(runs);
      return finished;
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      std::ifstream in(record(runs[i]));
      if (!in) continue;
      try {
        const auto r = nlohmann::json::parse(in);
        if (r.at("key").get<std::string>() == finishedRunKey(runs[i])) finished[std::to_string(i)] = r.at("result");
      } catch (const std::exception&) {  // a record cut short: the raster is classified again
      }
    }
    if (!finished.empty())
      progress.log("resuming the job: " + std::to_string(finished.size()) + " of " + std::to_string(runs.size()) +
                   " rasters were classified before the stop");
    return finished;
  }

  // The rank that classified a raster, once its outputs are in place.
  void record(const ClassifyOptions& run, const ClassifyResult& result) const {
    if (folder_.empty() || !result.skipped.empty()) return;
    std::error_code ec;
    fs::create_directories(folder_, ec);
    writeTextAtomically(record(run), nlohmann::json{{"key", finishedRunKey(run)}, {"result", result}}.dump());
  }

  // Rank 0: the job's records removed (the job done, or started again), and the folder when
  // no other job's are left in it.
  void remove(const std::vector<ClassifyOptions>& runs) const {
    if (folder_.empty()) return;
    std::error_code ec;
    for (const auto& run : runs) fs::remove(record(run), ec);
    fs::remove(folder_, ec);  // only when empty
  }

 private:
  // "raster-DIGEST.json": the digest of the output's absolute path.
  std::string record(const ClassifyOptions& run) const {
    const std::string output = fs::absolute(run.output).lexically_normal().string();
    uint64_t hash = kDigestStart;
    addToDigest(hash, output.data(), output.size());
    return (fs::path(folder_) / ("raster-" + digestText(hash) + ".json")).string();
  }
  std::string folder_;
};

ClassifyResult skippedRun(const ClassifyOptions& run, const std::string& why, Progress& progress) {
  progress.log("warning: skipped '" + run.input + "' (on_error: skip): " + why);
  ClassifyResult r;
  r.skipped = why;
  return r;
}

// One raster, or with on_error skip its result saying why it was skipped when it is refused
// (InputError) or cannot be read (RasterReadError): classify() wrote nothing of it.
template <class Classify>
ClassifyResult classifyOrSkip(const ClassifyOptions& run, Progress& progress, const Classify& classify_it) {
  if (!skipsFailures(run)) return classify_it();
  try {
    return classify_it();
  } catch (const InputError& e) {
    return skippedRun(run, e.what(), progress);
  } catch (const RasterReadError& e) {
    return skippedRun(run, e.what(), progress);
  }
}

}  // namespace

void classifyAll(const std::vector<ClassifyOptions>& given, Progress& progress,
                 const std::function<void(size_t, const ClassifyResult&)>& done) {
  const RunOptions shared_run = given.empty() ? RunOptions{} : given.front().run;
  const WorldInfo& world = shared_run.world;
  DataParallel ranks(world, shared_run.collective_timeout, [] {
    return std::string("nothing of the raster at hand was written (the rasters before it are complete): start the "
                       "job again");
  });
  // Each rank takes its share of the cores unless threads says otherwise, and local rank r
  // the GPU r.
  std::vector<ClassifyOptions> runs = given;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  for (auto& run : runs) {
    RunOptions& r = run.run;
    if (r.threads == 0 && world.local_size > 1) r.threads = std::max(1, cores / world.local_size);
    if (world.local_size > 1 && resolveDevice(r.device) != "cpu") r.device = rankDevice(r);
  }
  const JobRasters rasters = runs.size() > 1 ? openRasters(runs) : JobRasters{{1}, {""}};
  const std::vector<int64_t>& pixels = rasters.pixels;
  // Resume: the rasters a stopped job finished, known to every rank.
  const JobJournal journal(runs);
  const nlohmann::json finished = nlohmann::json::parse(
      ranks.gatherText((ranks.writes() ? journal.open(runs, progress) : nlohmann::json::object()).dump()).front());
  const auto finishedResult = [&](size_t i) -> std::optional<ClassifyResult> {
    if (!finished.contains(std::to_string(i))) return std::nullopt;
    return finished.at(std::to_string(i)).get<ClassifyResult>();
  };
  if (!ranks.active() || runs.size() < size_t(ranks.size())) {
    // Each raster in turn, shared in bands; the progress by pixels, for the whole job's ETA.
    int64_t total = 0, at = 0;
    for (int64_t p : pixels) total += p;
    for (size_t i = 0; i < runs.size(); ++i) {
      SubProgress part(progress, double(at) / double(std::max<int64_t>(1, total)),
                       double(at + pixels[i]) / double(std::max<int64_t>(1, total)));
      at += pixels[i];
      ClassifyResult result;
      if (const auto kept = finishedResult(i)) {
        result = *kept;
        if (ranks.writes()) progress.log("'" + runs[i].input + "' was classified before the stop: kept");
      } else {
        if (!rasters.unopened[i].empty())
          result = skippedRun(runs[i], rasters.unopened[i], progress);
        else if (!ranks.active())
          result = classifyOrSkip(runs[i], part, [&] { return classifyShared(runs[i], ranks, part); });
        else
          ranks.guarded([&] { result = classifyShared(runs[i], ranks, part); });
        if (ranks.writes()) journal.record(runs[i], result);
      }
      if (ranks.writes() && done) done(i, result);
    }
    ranks.barrier();
    if (ranks.writes()) journal.remove(runs);
    return;
  }
  // More rasters than ranks: whole rasters each (those finished before a stop left out).
  JobRasters left = rasters;
  for (size_t i = 0; i < runs.size(); ++i)
    if (finishedResult(i)) left.unopened[i] = "finished";
  const std::vector<int> owner = rasterOwners(left, ranks.size());
  int64_t total = 0, mine = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (owner[i] >= 0) total += pixels[i];
    if (owner[i] == ranks.rank()) mine += pixels[i];
  }
  RankProgress shared(progress, ranks, "pixels:rasters", total, mine);
  nlohmann::json results = nlohmann::json::object();
  ranks.guarded([&] {
    int64_t at = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (owner[i] != ranks.rank()) continue;
      SubProgress part(shared, double(at) / double(std::max<int64_t>(1, mine)),
                       double(at + pixels[i]) / double(std::max<int64_t>(1, mine)));
      const ClassifyResult r = classifyOrSkip(runs[i], part, [&] { return classify(runs[i], part); });
      journal.record(runs[i], r);
      at += pixels[i];
      results[std::to_string(i)] = r;
    }
  });
  ranks.awaitAll("rasters", [&] { shared.showJob(); });
  const std::vector<std::string> all = ranks.gatherText(results.dump());
  ranks.barrier();
  if (ranks.writes()) journal.remove(runs);
  if (!ranks.writes() || !done) return;
  nlohmann::json merged = nlohmann::json::object();
  for (const auto& text : all) merged.update(nlohmann::json::parse(text));
  for (size_t i = 0; i < runs.size(); ++i) {
    if (const auto kept = finishedResult(i)) {
      progress.log("'" + runs[i].input + "' was classified before the stop: kept");
      done(i, *kept);
    } else if (!rasters.unopened[i].empty()) {
      done(i, skippedRun(runs[i], rasters.unopened[i], progress));
    } else {
      done(i, merged.at(std::to_string(i)).get<ClassifyResult>());
    }
  }
}

}  // namespace geodl
