// A UNet's training step three ways, side by side in one run on the same weights and batch:
// plain autograd (every intermediate kept: what training did before), the default path
// without checkpointing (each unit's conv output kept, what follows the convolutions
// recomputed in backward) and checkpointed blocks. Prints, per path, the best and median
// step time per sample over interleaved rounds and the peak of LibTorch's CPU allocations
// (GeoDL's caching allocator, as `geodl train` installs it).
// Usage: bench_training_paths [--model unetsmall|unet] [--batch N] [--size PX] [--rounds N]
//                             [--threads N]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/memory.h"
#include "core/models.h"
#include "core/unet.h"

int main(int argc, char** argv) {
  std::string model_name = "unetsmall";
  int batch = 8, size = 256, rounds = 5, threads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc || arg == "--help") {
      std::fprintf(stderr, "usage: bench_training_paths [--model unetsmall|unet] [--batch N] [--size PX] "
                           "[--rounds N] [--threads N]\n");
      return arg == "--help" ? 0 : 2;
    }
    const std::string value = argv[++i];
    if (arg == "--model") model_name = value;
    else if (arg == "--batch") batch = std::stoi(value);
    else if (arg == "--size") size = std::stoi(value);
    else if (arg == "--rounds") rounds = std::stoi(value);
    else if (arg == "--threads") threads = std::stoi(value);
    else {
      std::fprintf(stderr, "bench_training_paths: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  threads = geodl::configureThreads(threads);
  geodl::CpuMemoryScope memory(geodl::kTrainingCacheSlack);  // as geodl train
  geodl::MemoryMeter meter("cpu");
  geodl::ModelSpec spec = geodl::modelSpecFromName(model_name);
  spec.bands = 3;
  spec.classes = 5;
  torch::manual_seed(1);
  auto model = geodl::makeModel(spec);
  auto unet = std::dynamic_pointer_cast<geodl::UNetImpl>(model);
  if (!unet) {
    std::fprintf(stderr, "bench_training_paths: %s is not a UNet (unet, unetsmall)\n", model_name.c_str());
    return 2;
  }
  model->train();
  const auto x = torch::randn({batch, 3, size, size});
  const auto y = torch::randint(0, 5, {batch, size, size}, torch::kLong);
  std::printf("%s; %d threads; %s, batch %d at %dx%d, %d interleaved rounds (one warm-up step each)\n",
              geodl::cpuModelName().c_str(), threads, model_name.c_str(), batch, size, size, rounds);
  const std::vector<std::pair<std::string, char>> paths = {
      {"plain autograd", 'p'}, {"conv outputs kept (default)", 'k'}, {"checkpointed", 'c'}};
  std::map<char, std::vector<double>> seconds;
  std::map<char, double> peak;
  for (int round = 0; round < rounds; ++round)
    for (const auto& [name, path] : paths) {
      model->setCheckpointing(path == 'c');
      unet->options.recompute_activations(path == 'k');
      const auto step = [&] {
        model->zero_grad();
        torch::nn::functional::cross_entropy(model->forward(x), y).backward();
      };
      step();  // warm-up: the allocator's cache holds this path's blocks
      meter.start();
      const auto t0 = std::chrono::steady_clock::now();
      step();
      seconds[path].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / batch);
      peak[path] = double(meter.peak()) / 1048576.0;
    }
  std::printf("| path | best s/sample | median s/sample | median vs plain | peak MiB | MiB/sample |\n"
              "|---|---|---|---|---|---|\n");
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double plain = median(seconds['p']);
  for (const auto& [name, path] : paths) {
    const auto& s = seconds[path];
    std::printf("| %s | %.3f | %.3f | %.3f | %.0f | %.1f |\n", name.c_str(), *std::min_element(s.begin(), s.end()),
                median(s), median(s) / plain, peak[path], peak[path] / batch);
  }
}
