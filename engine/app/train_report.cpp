#include "app/train_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "base/markup.h"
#include "base/metadata.h"

namespace geodl {

namespace {

std::string num(double v, int digits = 4) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string csvName(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

struct Series {
  std::string label, colour;
  std::vector<double> values;
};

// Where the value axis runs and its ticks: round values (1, 2, 2.5 or 5 times a power of
// ten) covering the data, from 0 where asked.
struct Axis {
  double lo = 0, hi = 1, step = 0.25;
  int digits = 2;  // enough for the step
};

Axis niceAxis(double lo, double hi, bool from_zero) {
  if (from_zero) lo = std::min(lo, 0.0);
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 4.0;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * power;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * power >= raw * (1 - 1e-9)) {
      step = m * power;
      break;
    }
  Axis axis;
  axis.step = step;
  axis.lo = std::floor(lo / step + 1e-9) * step;
  axis.hi = std::ceil(hi / step - 1e-9) * step;
  if (!(axis.hi > axis.lo)) axis.hi = axis.lo + step;
  axis.digits = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)) + (step / power == 2.5 ? 1 : 0));
  return axis;
}

std::string tickText(double v, int digits, bool scientific) {
  std::ostringstream s;
  if (scientific && std::abs(v) < 1e-300)
    s << 0;
  else if (scientific)
    s << std::scientific << std::setprecision(1) << v;
  else
    s << std::fixed << std::setprecision(digits) << (std::abs(v) < 1e-12 ? 0.0 : v);
  return s.str();
}

struct ChartStyle {
  bool unit_range = false;  // the axis is [0, 1] (IoU)
  bool from_zero = false;   // the axis starts at 0 (losses, learning rates)
  bool scientific = false;  // tick labels as 1.0e-04 (learning rates)
};

// A line chart of per-epoch series, as inline SVG; the legend sits under the plot, so it
// never covers a curve.
std::string chart(const std::string& title, const std::vector<Series>& series, int best_epoch,
                  ChartStyle style) {
  const double w = 560, left = 64, right = 16, top = 28, plot_h = 196;
  // The legend's rows under the epoch axis, wrapped to the chart's width.
  std::vector<std::pair<double, double>> legend_at;  // x, y of each series' swatch
  double lx = left, ly = top + plot_h + 44;
  for (const auto& s : series) {
    const double item = 24 + 7.0 * double(s.label.size());
    if (lx > left && lx + item > w - right) lx = left, ly += 16;
    legend_at.push_back({lx, ly});
    lx += item;
  }
  const double h = ly + 12;
  size_t n = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : series) {
    n = std::max(n, s.values.size());
    for (double v : s.values)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  Axis axis = style.unit_range ? Axis{0, 1, 0.25, 2} : niceAxis(lo, hi, style.from_zero);
  const auto x = [&](size_t i) {
    return left + (n > 1 ? double(i) / double(n - 1) : 0.5) * (w - left - right);
  };
  const auto y = [&](double v) { return top + (axis.hi - v) / (axis.hi - axis.lo) * plot_h; };
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h
      << "' viewBox='0 0 " << w << ' ' << h << "' role='img' aria-label='" << escapeMarkup(title) << "'>"
      << "<text x='" << left << "' y='18' font-size='14' font-weight='bold'>" << escapeMarkup(title)
      << "</text>";
  const int ticks = int(std::lround((axis.hi - axis.lo) / axis.step));
  for (int t = 0; t <= ticks; ++t) {
    const double v = axis.lo + axis.step * t;
    svg << "<line x1='" << left << "' x2='" << w - right << "' y1='" << y(v) << "' y2='" << y(v)
        << "' stroke='#ddd'/><text x='" << left - 6 << "' y='" << y(v) + 4
        << "' font-size='11' text-anchor='end'>" << tickText(v, axis.digits, style.scientific) << "</text>";
  }
  const double axis_y = top + plot_h;
  for (size_t i = 0; i < n; ++i)
    if (n <= 12 || i % ((n + 11) / 12) == 0 || i + 1 == n)
      svg << "<text x='" << x(i) << "' y='" << axis_y + 16
          << "' font-size='11' text-anchor='middle'>" << i + 1 << "</text>";
  svg << "<text x='" << (left + w - right) / 2 << "' y='" << axis_y + 30
      << "' font-size='11' text-anchor='middle'>epoch</text>";
  if (best_epoch > 0 && size_t(best_epoch) <= n)
    svg << "<line x1='" << x(size_t(best_epoch - 1)) << "' x2='" << x(size_t(best_epoch - 1))
        << "' y1='" << top << "' y2='" << axis_y
        << "' stroke='#999' stroke-dasharray='4 3'><title>best epoch</title></line>";
  for (size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    svg << "<polyline fill='none' stroke='" << s.colour << "' stroke-width='2' points='";
    for (size_t i = 0; i < s.values.size(); ++i)
      if (std::isfinite(s.values[i])) svg << x(i) << ',' << y(s.values[i]) << ' ';
    svg << "'/>";
    for (size_t i = 0; i < s.values.size(); ++i)
      if (std::isfinite(s.values[i]))
        svg << "<circle cx='" << x(i) << "' cy='" << y(s.values[i]) << "' r='2.5' fill='"
            << s.colour << "'><title>" << escapeMarkup(s.label) << ", epoch " << i + 1 << ": "
            << num(s.values[i], style.scientific ? 8 : 4) << "</title></circle>";
    const auto [sx, sy] = legend_at[k];
    svg << "<rect x='" << sx << "' y='" << sy - 9 << "' width='10' height='10' fill='" << s.colour
        << "'/><text x='" << sx + 14 << "' y='" << sy << "' font-size='11'>" << escapeMarkup(s.label) << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

}  // namespace

std::string metricsCsv(const TrainResult& result) {
  std::ostringstream csv;
  csv << "epoch,learning_rate,train_loss,val_loss,val_mean_iou,val_pixel_accuracy";
  for (const auto& name : result.class_names) csv << ",iou_" << csvName(name);
  for (const auto& name : result.class_names) csv << ",f1_" << csvName(name);
  csv << ",seconds,train_samples_per_second,data_wait_seconds,forward_seconds,"
         "backward_seconds,optimizer_seconds,validation_seconds\n";
  csv << std::setprecision(6);
  for (const auto& r : result.epochs) {
    csv << r.epoch << ',' << r.learning_rate << ',' << r.train_loss << ',' << r.val_loss << ','
        << r.val.mean_iou << ',' << r.val.pixel_accuracy;
    for (const auto& c : r.val.per_class) csv << ',' << c.iou;
    for (const auto& c : r.val.per_class) csv << ',' << c.f1;
    csv << ',' << r.seconds << ',' << r.samples_per_second << ',' << r.data_wait << ','
        << r.forward << ',' << r.backward << ',' << r.optimizer << ',' << r.validation << '\n';
  }
  return csv.str();
}

std::string trainingReportHtml(const TrainResult& result) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::vector<Series> losses = {{"training loss", "#1f77b4", {}}, {"validation loss", "#d62728", {}}};
  std::vector<Series> ious = {{"mean IoU", "#000000", {}}};
  for (size_t c = 0; c < result.class_names.size(); ++c)
    ious.push_back({result.class_names[c],
                    c < result.class_colours.size() && !result.class_colours[c].empty() ? result.class_colours[c]
                                                                                          : palette[c % 10],
                    {}});
  std::vector<Series> rates = {{"learning rate (at the epoch's first step)", "#555555", {}}};
  double total_seconds = 0, wait = 0, forward = 0, backward = 0, optimizer = 0, validation = 0;
  for (const auto& r : result.epochs) {
    losses[0].values.push_back(r.train_loss);
    losses[1].values.push_back(r.val_loss);
    rates[0].values.push_back(r.learning_rate);
    ious[0].values.push_back(r.val.mean_iou);
    for (size_t c = 0; c < r.val.per_class.size() && c + 1 < ious.size(); ++c)
      ious[c + 1].values.push_back(r.val.per_class[c].iou);
    total_seconds += r.seconds;
    wait += r.data_wait;
    forward += r.forward;
    backward += r.backward;
    optimizer += r.optimizer;
    validation += r.validation;
  }
  const EpochRecord* best = result.best();

  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>GeoDL training "
          "report</title><style>body{font-family:sans-serif;margin:1.5em;max-width:60em}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:"
          "3px 8px;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-"
          "align:left}</style></head><body>\n";
  html << "<h1>GeoDL training report</h1>\n<p>" << escapeMarkup(result.model) << ", "
       << result.epochs.size() << " epoch" << (result.epochs.size() == 1 ? "" : "s") << " of "
       << result.epochs_planned << (result.stopped_early ? " (stopped early)" : "") << ", batch "
       << result.batch_size << (result.batch_size_probed ? " (automatic)" : "")
       << (result.world_size > 1 ? " per rank x " + std::to_string(result.world_size) + " ranks = " +
                                       std::to_string(result.batch_size * result.world_size)
                                 : std::string())
       << ", "
       << result.train_samples << " training and " << result.val_samples
       << " validation samples, " << escapeMarkup(result.device)
       << (result.device == "cpu" ? " with " + std::to_string(result.threads) + " threads" : "")
       << ", seed " << result.seed << ". Loss " << escapeMarkup(result.loss) << ", optimizer "
       << escapeMarkup(result.optimizer) << ", learning-rate schedule " << escapeMarkup(result.scheduler)
       << ". GeoDL " << metadata::kVersion << ".</p>\n";
  html << "<p>Model file: <code>" << escapeMarkup(result.model_path) << "</code> (best epoch "
       << result.best_epoch << " by validation " << (result.best_metric == "loss" ? "loss" : "mean IoU")
       << ")<br>Last checkpoint: <code>" << escapeMarkup(result.checkpoint_path)
       << "</code><br>Metrics: <code>" << escapeMarkup(result.csv_path) << "</code></p>\n";
  html << chart("Loss", losses, result.best_epoch, {false, true, false}) << "\n"
       << chart("Validation IoU", ious, result.best_epoch, {true, false, false}) << "\n"
       << chart("Learning rate", rates, result.best_epoch, {false, true, true}) << "\n";
  if (best) {
    html << "<h2>Best epoch: " << best->epoch << "</h2>\n<p>Validation loss " << num(best->val_loss)
         << ", mean IoU " << num(best->val.mean_iou) << ", pixel accuracy "
         << num(best->val.pixel_accuracy) << ".</p>\n<table><tr><th>class</th><th>IoU</th>"
            "<th>precision</th><th>recall</th><th>F1</th><th>pixels</th></tr>\n";
    for (size_t c = 0; c < best->val.per_class.size(); ++c) {
      const auto& m = best->val.per_class[c];
      html << "<tr><td>" << escapeMarkup(c < result.class_names.size() ? result.class_names[c] : "")
           << "</td>";
      if (m.present)
        html << "<td>" << num(m.iou) << "</td><td>" << num(m.precision) << "</td><td>"
             << num(m.recall) << "</td><td>" << num(m.f1) << "</td>";
      else
        html << "<td colspan='4'>absent from the validation data</td>";
      html << "<td>" << m.support << "</td></tr>\n";
    }
    html << "</table>\n";
  }
  html << "<h2>Where the time went</h2>\n<table><tr><th>phase</th><th>seconds</th><th>share"
          "</th></tr>\n";
  const auto row = [&](const char* name, double s) {
    html << "<tr><td>" << name << "</td><td>" << num(s, 1) << "</td><td>"
         << num(total_seconds > 0 ? 100 * s / total_seconds : 0, 1) << "%</td></tr>\n";
  };
  row("waiting for data", wait);
  row("forward", forward);
  row("backward", backward);
  row("optimizer", optimizer);
  row("validation", validation);
  row("total", total_seconds);
  html << "</table>\n<h2>Epochs</h2>\n<table><tr><th>epoch</th><th>learning rate</th><th>train "
          "loss</th><th>val loss</th><th>mean IoU</th><th>pixel accuracy</th><th>samples/s</th>"
          "<th>seconds</th></tr>\n";
  for (const auto& r : result.epochs)
    html << "<tr><td>" << r.epoch << (r.epoch == result.best_epoch ? " (best)" : "") << "</td><td>"
         << std::setprecision(3) << std::scientific << r.learning_rate << std::fixed << "</td><td>"
         << num(r.train_loss) << "</td><td>" << num(r.val_loss) << "</td><td>"
         << num(r.val.mean_iou) << "</td><td>" << num(r.val.pixel_accuracy) << "</td><td>"
         << num(r.samples_per_second, 2) << "</td><td>" << num(r.seconds, 1) << "</td></tr>\n";
  html << "</table>\n</body></html>\n";
  return html.str();
}

}  // namespace geodl
