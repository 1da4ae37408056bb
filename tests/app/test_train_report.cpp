// report.html and metrics.csv from a hand-made run: the HTML is well formed, has both loss
// curves with one point per epoch, the IoU curve and the best epoch's class table.
#include <gtest/gtest.h>

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
  EXPECT_EQ(count(html, "<svg"), 2u);          // loss and IoU
  // Training and validation loss; mean IoU and one curve per class.
  EXPECT_EQ(count(html, "<polyline"), 2u + 1u + r.class_names.size());
  EXPECT_NE(html.find("training loss"), std::string::npos);
  EXPECT_NE(html.find("validation loss"), std::string::npos);
  // Each curve has one point per epoch.
  const std::regex points("points='([^']*)'");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), points); it != std::sregex_iterator(); ++it)
    EXPECT_EQ(count((*it)[1].str(), ","), 3u) << (*it)[1].str();
  EXPECT_NE(html.find("Best epoch: 2"), std::string::npos);
  EXPECT_NE(html.find("<td>building</td>"), std::string::npos) << "no class table row for building";
}

TEST(TrainReport, TheCsvHasAHeaderAndOneRowPerEpoch) {
  const std::string csv = metricsCsv(threeEpochs());
  EXPECT_EQ(count(csv, "\n"), 4u);
  EXPECT_EQ(csv.rfind("epoch,", 0), 0u) << csv.substr(0, 80);
  EXPECT_NE(csv.find("building"), std::string::npos);
}

}  // namespace
}  // namespace geodl
