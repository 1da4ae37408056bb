// Data for the training and classification tests: generated stores and rasters where class
// 1 is a bright rectangle on a dark, noisy background, and a small model trained on them.
#pragma once

#include <cstdint>
#include <string>

namespace geodl::test {

constexpr int kSize = 32, kBands = 3;

// A store of `count` samples of kSize px, kBands Byte bands (the last class is the bright
// rectangle; other classes are not drawn).
std::string makeStore(const std::string& path, int count, uint64_t seed, int classes = 2,
                      const std::string& split = "trn");

// Pixel value and truth of the generated scene at (x, y): rectangles every 40 px.
int sceneTruth(int x, int y);
double sceneValue(int x, int y, int band);

// A unetsmall trained once per test program on such stores (2 classes: background,
// building); its model file's path.
const std::string& trainedModel();

}  // namespace geodl::test
