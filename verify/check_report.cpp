#include "verify/check_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <tuple>

namespace posenc::verify {
namespace {

std::string fmt4(double x) {
  if (!std::isfinite(x)) return x > 0 ? "inf" : "nan";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

nlohmann::ordered_json num(double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); }

std::string band_name(std::size_t i) {
  const auto& t = CheckAccumulator::kBandTops;
  const std::string lo = i == 0 ? "0" : "2^" + std::to_string(t[i - 1]);
  return lo + " <= |p| < 2^" + std::to_string(t[i]);
}

}  // namespace

CheckAccumulator::CheckAccumulator(std::string name, const BudgetRow& row, DType unit, std::size_t columns)
    : name_(std::move(name)), row_(&row), unit_(unit), columns_(columns) {}

std::size_t CheckAccumulator::band_of(std::int64_t p) {
  const std::uint64_t a = p < 0 ? static_cast<std::uint64_t>(-(p + 1)) + 1 : static_cast<std::uint64_t>(p);
  for (std::size_t i = 0; i < kBandTops.size(); ++i)
    if (a < (std::uint64_t{1} << kBandTops[i])) return i;
  return kBandTops.size() - 1;
}

void ExactSum::add(double x) {
  std::size_t kept = 0;
  for (double y : partials_) {
    if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
    const double hi = x + y, lo = y - (hi - x);
    if (lo != 0.0) partials_[kept++] = lo;
    x = hi;
  }
  partials_.resize(kept);
  partials_.push_back(x);
}

double ExactSum::value() const {
  if (partials_.empty()) return 0.0;
  std::size_t i = partials_.size() - 1;
  double hi = partials_[i], lo = 0.0;
  while (i > 0) {  // from the largest partial down, until the sum stops being exact
    const double x = hi, y = partials_[--i];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  // Half-way case: the rest of the partials decides the direction (math.fsum's correction).
  if (i > 0 && ((lo < 0 && partials_[i - 1] < 0) || (lo > 0 && partials_[i - 1] > 0))) {
    const double y = lo * 2, x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

namespace {
// A total order on entries, worst first: the metric, then where the entry is and what it holds, so the kept worst
// entries and their order do not depend on the order entries arrive in (threads take rows in any order).
bool worse(const CheckEntryError& a, const CheckEntryError& b) {
  return std::tie(b.metric, a.position, a.column, a.value, a.kernel, a.scaled, a.reference) <
         std::tie(a.metric, b.position, b.column, b.value, b.kernel, b.scaled, b.reference);
}
}  // namespace

void CheckAccumulator::keep_worst(CheckEntryError e) {
  if (worst_.size() == kWorst && !worse(e, worst_.back())) return;
  worst_.insert(std::upper_bound(worst_.begin(), worst_.end(), e, worse), std::move(e));
  if (worst_.size() > kWorst) worst_.pop_back();
}

void CheckAccumulator::add(std::int64_t p, std::size_t col, double y, const Real& r, double scale) {
  ++entries_;
  Measure m;
  if (row_->metric.kind == MetricKind::ratio && scale == 0.0) {
    // A stored entry (zero column, padding row): only the identical number is right.
    m = std::isnan(y) ? Measure{Class::nan, 0} : Measure{Class::ok, y == static_cast<double>(r) ? 0.0 : INFINITY};
  } else {
    m = measure(*row_, y, r, scale);
  }
  // kernel and scaled in ULPs of the input's type (class mismatches of the kernel metric are counted separately).
  const Measure k = kernel_error(y, r, unit_), s = scaled_error(y, r, 1.0, unit_);
  // NaN / inf fail the entry; a zero or a sign flip is counted (reported) when it is also more than half an ulp(1)
  // off, and fails only through the row's metric (within an envelope a sign flip near zero can be legitimate).
  Class cls = m.cls;
  if (cls == Class::ok && (k.cls == Class::zero_vs_nonzero || k.cls == Class::sign_mismatch) && s.ok() && s.err > 0.5)
    cls = k.cls;
  ++classes_[static_cast<std::size_t>(cls)];
  const bool ok = m.ok();
  const double metric = ok ? m.err : INFINITY;
  const double kern = k.ok() ? k.err : 0.0, scal = s.ok() ? s.err : INFINITY;
  if (!ok) ++mismatches_;
  const bool over = ok && !(metric <= row_->bound);
  if (over) ++over_;
  if (ok && metric == 0.0 && y == static_cast<double>(r)) ++identical_;
  for (Stats* st : {&all_, &bands_[band_of(p)], col < columns_.size() ? &columns_[col] : nullptr}) {
    if (!st) continue;
    ++st->n;
    st->over += over || !ok;
    st->max_metric = std::max(st->max_metric, metric);
    st->max_kernel = std::max(st->max_kernel, kern);
    st->max_scaled = std::max(st->max_scaled, scal);
    if (std::isfinite(scal)) st->sum_scaled.add(scal);
    st->sum_kernel.add(kern);
  }
  // The 40-digit reference is formatted only for an entry that enters the worst list (formatting every entry was
  // most of the time of a large check).
  // (An entry tying the last kept one may still enter: worse() decides ties.)
  if ((!ok || metric > 0.0) && (worst_.size() < kWorst || metric >= worst_.back().metric))
    keep_worst({p, col, y, ref40(r), cls, metric, kern, scal});
}

void CheckAccumulator::merge(const CheckAccumulator& o) {
  auto add_stats = [](Stats& a, const Stats& b) {
    a.n += b.n;
    a.over += b.over;
    a.max_metric = std::max(a.max_metric, b.max_metric);
    a.max_kernel = std::max(a.max_kernel, b.max_kernel);
    a.max_scaled = std::max(a.max_scaled, b.max_scaled);
    a.sum_scaled.add(b.sum_scaled);
    a.sum_kernel.add(b.sum_kernel);
  };
  entries_ += o.entries_;
  over_ += o.over_;
  mismatches_ += o.mismatches_;
  identical_ += o.identical_;
  for (std::size_t i = 0; i < classes_.size(); ++i) classes_[i] += o.classes_[i];
  add_stats(all_, o.all_);
  for (std::size_t i = 0; i < bands_.size(); ++i) add_stats(bands_[i], o.bands_[i]);
  for (std::size_t i = 0; i < columns_.size() && i < o.columns_.size(); ++i) add_stats(columns_[i], o.columns_[i]);
  for (const auto& w : o.worst_) keep_worst(w);
}

nlohmann::ordered_json CheckAccumulator::to_json() const {
  using J = nlohmann::ordered_json;
  auto stats = [](const Stats& s) {
    const double n = s.n ? static_cast<double>(s.n) : 1.0;
    return J{{"entries", s.n},          {"over_bound", s.over},         {"max_metric", num(s.max_metric)},
             {"max_kernel_ulp", num(s.max_kernel)}, {"mean_kernel_ulp", num(s.sum_kernel.value() / n)},
             {"max_scaled_ulp", num(s.max_scaled)}, {"mean_scaled_ulp", num(s.sum_scaled.value() / n)}};
  };
  J j;
  j["reference"] = name_;
  j["budget_row"] = row_->id;
  j["metric"] = metric_text(row_->metric);
  j["bound"] = row_->bound;
  j["ulp_of"] = std::string(posenc::to_string(unit_));
  j["verdict"] = passed() ? "pass" : "fail";
  j["entries"] = entries_;
  j["bit_identical"] = identical_;
  j["over_bound"] = over_;
  j["overall"] = stats(all_);
  J cls;
  for (std::size_t i = 1; i < classes_.size(); ++i) cls[std::string(to_string(static_cast<Class>(i)))] = classes_[i];
  j["class_mismatches"] = cls;
  J bands = J::array();
  for (std::size_t i = 0; i < bands_.size(); ++i)
    if (bands_[i].n) {
      J b = stats(bands_[i]);
      b["band"] = band_name(i);
      bands.push_back(b);
    }
  j["bands"] = bands;
  J cols = J::array();
  for (const auto& c : columns_) cols.push_back(J{{"max_metric", num(c.max_metric)}, {"max_scaled_ulp", num(c.max_scaled)}, {"over_bound", c.over}});
  j["columns"] = cols;
  J worst = J::array();
  for (const auto& w : worst_)
    worst.push_back(J{{"position", w.position}, {"column", w.column}, {"value", dec_hex(w.value)}, {"reference", w.reference},
                      {"class", std::string(to_string(w.cls))}, {"metric", num(w.metric)}, {"kernel_ulp", num(w.kernel)},
                      {"scaled_ulp", num(w.scaled)}});
  j["worst"] = worst;
  j["row_why"] = row_->why;
  return j;
}

nlohmann::ordered_json CheckReport::to_json() const {
  nlohmann::ordered_json j;
  j["scheme"] = scheme;
  j["verdict"] = passed() ? "pass" : "fail";
  j["held_to"] = references.at(held_to).name();
  j["budget_row"] = references.at(held_to).row().id;
  j["note"] = note;
  j["spec"] = spec;
  j["input"] = input;
  j["references"] = nlohmann::ordered_json::array();
  for (const auto& r : references) j["references"].push_back(r.to_json());
  return j;
}

std::string CheckReport::to_markdown() const {
  const auto j = to_json();
  std::ostringstream o;
  o << "# posenc check " << scheme << ": **" << (passed() ? "PASS" : "FAIL") << "**\n\n";
  o << "Held to **" << j["held_to"].get<std::string>() << "**, budget row `" << j["budget_row"].get<std::string>() << "`. "
    << note << "\n\n";
  o << "- spec: `" << spec.dump() << "` (replay with `--spec` on the JSON report)\n";
  o << "- input: `" << input.dump() << "`\n\n";
  o << "| reference | verdict | budget row | bound | max (row metric) | max kernel ulp | mean kernel ulp | max scaled ulp "
       "| mean scaled ulp | bit-identical | over bound | NaN/inf/zero/sign |\n";
  o << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : j["references"]) {
    const auto& a = r["overall"];
    const auto& c = r["class_mismatches"];
    auto v = [](const nlohmann::ordered_json& x) { return x.is_null() ? std::string("inf") : fmt4(x.get<double>()); };
    o << "| " << r["reference"].get<std::string>() << " | " << r["verdict"].get<std::string>() << " | `"
      << r["budget_row"].get<std::string>() << "` | " << fmt4(r["bound"].get<double>()) << " | " << v(a["max_metric"]) << " | "
      << v(a["max_kernel_ulp"]) << " | " << v(a["mean_kernel_ulp"]) << " | " << v(a["max_scaled_ulp"]) << " | "
      << v(a["mean_scaled_ulp"]) << " | " << r["bit_identical"].get<std::uint64_t>() << "/" << r["entries"].get<std::uint64_t>()
      << " | " << r["over_bound"].get<std::uint64_t>() << " | ";
    std::string classes;
    for (const auto& [name, count] : c.items()) {
      if (!classes.empty()) classes += '/';
      classes += std::to_string(count.get<std::uint64_t>());
    }
    o << classes << " |\n";
  }
  for (const auto& r : j["references"]) {
    auto v = [](const nlohmann::ordered_json& x) { return x.is_null() ? std::string("inf") : fmt4(x.get<double>()); };
    o << "\n## against the " << r["reference"].get<std::string>() << " value (`" << r["budget_row"].get<std::string>()
      << "`, " << r["metric"].get<std::string>() << " <= " << fmt4(r["bound"].get<double>()) << ")\n\n";
    o << "| position band | entries | max (row metric) | max scaled ulp | mean scaled ulp | max kernel ulp | over bound |\n";
    o << "|---|---|---|---|---|---|---|\n";
    for (const auto& b : r["bands"])
      o << "| " << b["band"].get<std::string>() << " | " << b["entries"].get<std::uint64_t>() << " | " << v(b["max_metric"])
        << " | " << v(b["max_scaled_ulp"]) << " | " << v(b["mean_scaled_ulp"]) << " | " << v(b["max_kernel_ulp"]) << " | "
        << b["over_bound"].get<std::uint64_t>() << " |\n";
    // Columns: the worst few.
    std::vector<std::pair<double, std::size_t>> cols;
    for (std::size_t i = 0; i < r["columns"].size(); ++i) {
      const auto& c = r["columns"][i];
      cols.emplace_back(c["max_metric"].is_null() ? INFINITY : c["max_metric"].get<double>(), i);
    }
    std::sort(cols.begin(), cols.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    o << "\nColumns with the largest error: ";
    for (std::size_t i = 0; i < std::min<std::size_t>(8, cols.size()); ++i)
      o << (i ? ", " : "") << "col " << cols[i].second << " " << fmt4(cols[i].first);
    o << "\n\n| worst: position | column | value | reference | class | row metric | scaled ulp |\n|---|---|---|---|---|---|---|\n";
    for (const auto& w : r["worst"])
      o << "| " << w["position"].get<std::int64_t>() << " | " << w["column"].get<std::size_t>() << " | `"
        << w["value"].get<std::string>() << "` | `" << w["reference"].get<std::string>() << "` | "
        << w["class"].get<std::string>() << " | " << v(w["metric"]) << " | " << v(w["scaled_ulp"]) << " |\n";
  }
  return o.str();
}

void CheckReport::merge_threads(const std::vector<std::vector<CheckAccumulator>>& per_thread) {
  for (const auto& accs : per_thread)
    for (std::size_t i = 0; i < references.size(); ++i) references[i].merge(accs.at(i));
}

}  // namespace posenc::verify
