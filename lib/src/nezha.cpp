// NEZHA: a sinusoidal plan for the table, a Shaw plan for the attention (posenc/nezha.hpp).
#include "posenc/nezha.hpp"

#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/sinusoidal.hpp"

namespace posenc {

namespace {

constexpr const char* kWhere = "nezha";

std::vector<double> table_f64(const NezhaSpec& spec) {
  std::vector<double> t(nezha_table_rows(spec) * spec.depth);
  make_plan(nezha_sinusoidal_spec(spec)).table(0, nezha_table_rows(spec), std::span<double>(t));
  return t;
}

}  // namespace

struct NezhaPlan::Impl {
  NezhaSpec spec;
  SinusoidalPlan table;
  ShawPlan shaw;

  explicit Impl(const NezhaSpec& s)
      : spec(s), table(nezha_sinusoidal_spec(s)), shaw(make_shaw(s)) {}

  static ShawPlan make_shaw(const NezhaSpec& s) {
    std::vector<double> t = table_f64(s);
    ShawWeights w{t, std::move(t)};
    return ShawPlan(nezha_shaw_spec(s), w);
  }

  template <class T>
  void write_table(std::span<T> out, const TableOptions& o) const {
    const std::size_t n = nezha_table_rows(spec) * spec.depth;
    if (out.size() < n)
      throw Error(kWhere, "out.size()", std::to_string(out.size()),
                  ">= (2 max_relative_position + 1) * depth = " + std::to_string(n));
    table.table(0, nezha_table_rows(spec), out.first(n), o);
  }
};

NezhaPlan::NezhaPlan(const NezhaSpec& spec) {
  validate(spec);
  impl_ = std::make_shared<const Impl>(spec);
}
const NezhaSpec& NezhaPlan::spec() const noexcept { return impl_->spec; }
const ShawPlan& NezhaPlan::shaw() const noexcept { return impl_->shaw; }

void NezhaPlan::table(std::span<float> out, const TableOptions& o) const { impl_->write_table(out, o); }
void NezhaPlan::table(std::span<double> out, const TableOptions& o) const { impl_->write_table(out, o); }

std::int32_t NezhaPlan::index(std::int64_t u) const { return impl_->shaw.index(u); }
void NezhaPlan::indices(const BiasGeometry& g, std::span<std::int32_t> out, const TableOptions& o) const {
  impl_->shaw.indices(g, out, o);
}

void NezhaPlan::scores(std::span<const float> q, std::span<const float> k, std::size_t heads, const BiasGeometry& g,
                       std::optional<double> scale, std::span<float> out, const TableOptions& o) const {
  impl_->shaw.scores(q, k, heads, g, scale, out, o);
}
void NezhaPlan::scores(std::span<const double> q, std::span<const double> k, std::size_t heads, const BiasGeometry& g,
                       std::optional<double> scale, std::span<double> out, const TableOptions& o) const {
  impl_->shaw.scores(q, k, heads, g, scale, out, o);
}
void NezhaPlan::attend(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                       std::size_t heads, const BiasGeometry& g, std::optional<double> scale, std::span<float> out,
                       const TableOptions& o) const {
  impl_->shaw.attend(q, k, v, heads, g, scale, out, o);
}
void NezhaPlan::attend(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                       std::size_t heads, const BiasGeometry& g, std::optional<double> scale, std::span<double> out,
                       const TableOptions& o) const {
  impl_->shaw.attend(q, k, v, heads, g, scale, out, o);
}

void nezha_table(const NezhaSpec& s, std::span<float> out, const TableOptions& o) { make_plan(s).table(out, o); }
void nezha_table(const NezhaSpec& s, std::span<double> out, const TableOptions& o) { make_plan(s).table(out, o); }

}  // namespace posenc
