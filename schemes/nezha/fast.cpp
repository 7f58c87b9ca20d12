// NEZHA: a sinusoidal plan for the table, a Shaw plan for the attention (posenc/nezha.hpp).
#include "posenc/nezha.hpp"

#include <string>
#include <vector>

#include "posenc/error.hpp"
#include "posenc/sinusoidal.hpp"

namespace posenc {

namespace {

constexpr const char* kWhere = "nezha";

// Rows 0..2K of the sinusoidal plan p (NEZHA's table of spec s) into out (Error naming "out.size()" if short).
template <class T>
void write_rows(const SinusoidalPlan& p, const NezhaSpec& s, std::span<T> out, const TableOptions& o) {
  const std::size_t rows = nezha_table_rows(s), n = rows * s.depth;
  if (out.size() < n)
    throw Error(kWhere, "out.size()", std::to_string(out.size()),
                ">= (2 max_relative_position + 1) * depth = " + std::to_string(n));
  p.table(0, rows, out.first(n), o);
}

}  // namespace

struct NezhaPlan::Impl {
  NezhaSpec spec;
  SinusoidalPlan table;
  ShawPlan shaw;

  explicit Impl(const NezhaSpec& s) : spec(s), table(nezha_sinusoidal_spec(s)), shaw(attention(s, table)) {}

  // The Shaw plan over the f64 table (as both the key and the value table).
  static ShawPlan attention(const NezhaSpec& s, const SinusoidalPlan& p) {
    std::vector<double> t(nezha_table_rows(s) * s.depth);
    write_rows(p, s, std::span<double>(t), {});
    ShawWeights w{t, std::move(t)};
    return ShawPlan(nezha_shaw_spec(s), w);
  }
};

NezhaPlan::NezhaPlan(const NezhaSpec& spec) {
  validate(spec);
  impl_ = std::make_shared<const Impl>(spec);
}
const NezhaSpec& NezhaPlan::spec() const noexcept { return impl_->spec; }
const ShawPlan& NezhaPlan::shaw() const noexcept { return impl_->shaw; }

void NezhaPlan::table(std::span<float> out, const TableOptions& o) const { write_rows(impl_->table, impl_->spec, out, o); }
void NezhaPlan::table(std::span<double> out, const TableOptions& o) const { write_rows(impl_->table, impl_->spec, out, o); }

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

// The one-shot table needs only the sinusoidal plan (a NezhaPlan would also build the attention's f64 copy of the
// table and its Shaw plan).
void nezha_table(const NezhaSpec& s, std::span<float> out, const TableOptions& o) {
  write_rows(make_plan(nezha_sinusoidal_spec(s)), s, out, o);
}
void nezha_table(const NezhaSpec& s, std::span<double> out, const TableOptions& o) {
  write_rows(make_plan(nezha_sinusoidal_spec(s)), s, out, o);
}

}  // namespace posenc
