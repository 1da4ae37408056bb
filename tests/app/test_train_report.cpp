// report.html and metrics.csv from a hand-made run: the HTML is well formed, has both loss
// curves with one point per epoch, the IoU curve and the best epoch's class table.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "app/train_report.h"

namespace geodl {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TrainResult threeEpochs() {
  TrainResult r;
  r.model = "unetsmall";
  r.epochs_planned = 3;
  r.best_metric = "loss";
  r.class_names = {"background", "building"};
  r.class_colours = {"#b2df8a", "#e31a1c"};
  r.batch_size = 4;
  r.best_epoch = 2;
  r.device = "cpu";
  for (int e = 1; e <= 3; ++e) {
    EpochRecord rec;
    rec.epoch = e;
    rec.learning_rate = 1e-3;
    rec.train_loss = 1.0 / e;
    rec.val_loss = 1.2 / e + (e == 3 ? 0.5 : 0);
    rec.val.mean_iou = 0.3 * e;
    rec.val.pixel_accuracy = 0.8;
    rec.val.per_class = {{0.9, 0.95, 0.94, 0.945, 1000, true}, {0.25 * e, 0.5, 0.4, 0.44, 100, true}};
    rec.seconds = 2;
    r.epochs.push_back(rec);
  }
  return r;
}

TEST(TrainReport, TheHtmlHasBothLossCurvesTheIouCurveAndTheClassTable) {
  const TrainResult r = threeEpochs();
  const std::string html = trainingReportHtml(r);
  // Well formed enough for a browser: every element opened is closed.
  for (const char* tag : {"html", "body", "table", "svg", "h2"})
    EXPECT_EQ(count(html, std::string("<") + tag), count(html, std::string("</") + tag + ">")) << tag;
  EXPECT_EQ(count(html, "<svg"), 3u);          // loss, IoU and learning rate
  // Training and validation loss; mean IoU and one curve per class; the learning rate.
  EXPECT_EQ(count(html, "<polyline"), 2u + 1u + r.class_names.size() + 1u);
  // Per-class curves in the model's class colours.
  EXPECT_NE(html.find("<polyline fill='none' stroke='#e31a1c'"), std::string::npos);
  EXPECT_NE(html.find("<polyline fill='none' stroke='#b2df8a'"), std::string::npos);
  EXPECT_NE(html.find("training loss"), std::string::npos);
  EXPECT_NE(html.find("validation loss"), std::string::npos);
  // Each curve has one point per epoch.
  const std::regex points("points='([^']*)'");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), points); it != std::sregex_iterator(); ++it)
    EXPECT_EQ(count((*it)[1].str(), ","), 3u) << (*it)[1].str();
  EXPECT_NE(html.find("Best epoch: 2"), std::string::npos);
  EXPECT_NE(html.find("<td>building</td>"), std::string::npos) << "no class table row for building";
}

// What a reader sees: value ticks on round numbers, the loss axis from 0, and every
// legend under its plot, where it cannot cover a curve.
TEST(TrainReport, AxesAreRoundFromZeroAndLegendsSitUnderThePlots) {
  TrainResult r = threeEpochs();
  for (auto& e : r.epochs) e.train_loss = 0.303 + 0.111 * e.epoch, e.val_loss = 0.636 - 0.1 * e.epoch;
  const std::string html = trainingReportHtml(r);
  const std::regex svg_re("<svg[^>]*aria-label='([^']*)'>(.*?)</svg>");
  int charts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), svg_re); it != std::sregex_iterator(); ++it) {
    ++charts;
    const std::string title = (*it)[1].str(), svg = (*it)[2].str();
    SCOPED_TRACE(title);
    // Tick labels: right-aligned texts beside the grid lines.
    std::vector<double> ticks;
    const std::regex tick_re("text-anchor='end'>([^<]*)<");
    for (auto t = std::sregex_iterator(svg.begin(), svg.end(), tick_re); t != std::sregex_iterator(); ++t)
      ticks.push_back(std::stod((*t)[1].str()));
    ASSERT_GE(ticks.size(), 3u);
    const double step = ticks[1] - ticks[0];
    for (size_t i = 1; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-6);
    const double power = std::pow(10.0, std::floor(std::log10(step)));
    const double mantissa = step / power;
    EXPECT_TRUE(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 2.5) < 1e-6 ||
                std::abs(mantissa - 5) < 1e-6)
        << "step " << step;
    for (double t : ticks) EXPECT_NEAR(std::round(t / step) * step, t, step * 1e-6) << t;
    if (title != "Validation IoU") EXPECT_EQ(ticks.front(), 0.0);  // loss and learning rate start at 0
    // The lowest grid line is the plot's bottom; every legend swatch lies below it.
    double bottom = 0;
    const std::regex grid_re("<line x1='[^']*' x2='[^']*' y1='([^']*)' y2='[^']*' stroke='#ddd'");
    for (auto g = std::sregex_iterator(svg.begin(), svg.end(), grid_re); g != std::sregex_iterator(); ++g)
      bottom = std::max(bottom, std::stod((*g)[1].str()));
    const std::regex swatch_re("<rect x='[^']*' y='([^']*)'");
    int swatches = 0;
    for (auto w = std::sregex_iterator(svg.begin(), svg.end(), swatch_re); w != std::sregex_iterator(); ++w, ++swatches)
      EXPECT_GT(std::stod((*w)[1].str()), bottom + 20);
    EXPECT_GE(swatches, 1);
  }
  EXPECT_EQ(charts, 3);
}

TEST(TrainReport, TheCsvHasAHeaderAndOneRowPerEpoch) {
  const std::string csv = metricsCsv(threeEpochs());
  EXPECT_EQ(count(csv, "\n"), 4u);
  EXPECT_EQ(csv.rfind("epoch,", 0), 0u) << csv.substr(0, 80);
  EXPECT_NE(csv.find("building"), std::string::npos);
}

}  // namespace
}  // namespace geodl
