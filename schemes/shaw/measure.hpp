// schemes/shaw/measure.hpp — the Shaw mechanism's score and output measurements against a Shaw oracle, shared by
// the claims of every scheme built on it (Shaw / BERT relative_key, NEZHA: a Shaw plan over its sinusoid table).
// RapidCheck generators: call from inside a property.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posenc/bias.hpp"
#include "posenc/reference/shaw.hpp"
#include "posenc/shaw_spec.hpp"
#include "support/claims.hpp"

namespace posenc::test::shaw {

// n random float32 numbers in [-1, 1] on a grid of 1/scale (a float32 checkpoint's values).
std::vector<double> random_values(std::size_t n, int scale = 100000);

// q [H][Lq][d], k and v [H][Lk][d] of random values.
struct Inputs {
  std::size_t H, d;
  std::vector<double> q, k, v;
};
Inputs random_inputs(std::size_t head_dim, const BiasGeometry& g, std::size_t H);

// Whether a causal geometry's key mask leaves some query row no visible key (attend refuses it).
bool blind(const BiasGeometry& g);

// Sampled entries of ShawPlan::scores in f32 and f64 (s32, s64: [H][Lq][Lk] for `in`) against the oracle, under the
// rows shaw.scores.{f32,f64} (masked entries: shaw.scores.masked.bitwise). `label` names the spec in failures.
// The largest distance tau of the plan's table entries, as its f32 and f64 entry points multiply them, from the
// table the oracle is given (the drift terms of rows shaw.scores.* and shaw.output.*): zero for a given float32 table.
struct TableDrift {
  double f32 = 0, f64 = 0;
};

void measure_scores(const Claim& claim, const reference::ShawOracle& oracle, const ShawWeights& weights,
                    const std::string& label, const BiasGeometry& g, const Inputs& in, std::optional<double> scale,
                    std::span<const float> s32, std::span<const double> s64, TableDrift tau = {});

// Up to max_rows rows of each head of ShawPlan::attend (z32, z64: [H][Lq][d]) against the oracle, under the rows
// shaw.output.{f32,f64}.
void measure_outputs(const Claim& claim, const reference::ShawOracle& oracle, const ShawWeights& weights,
                     const std::string& label, const BiasGeometry& g, const Inputs& in, std::optional<double> scale,
                     std::span<const float> z32, std::span<const double> z64, std::size_t max_rows,
                     TableDrift tau = {});

}  // namespace posenc::test::shaw
