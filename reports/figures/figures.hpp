// reports/figures/figures.hpp — the report's figure data, computed once in C++ (the report only renders it).
// Each scheme's schemes/<name>/figures.cpp registers one function with POSENC_FIGURES(<name>); posenc_figures
// (main.cpp) runs them all, or the ones named with --scheme, and writes figures-<name>.json per scheme:
//   {"scheme": name, "meta": {program, commit, run_id, ...}, "figures": {<figure id>: {...}}}
// What a figure holds is the figure's own business (series of points, matrices, table rows, counts that its caption
// quotes); schemes/<name>/report.py reads it and draws, with no maths and no tolerances of its own.
// A producer that throws leaves {"error": message} instead of "figures"; the report says the figures were not drawn.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace posenc::figures {

using Json = nlohmann::json;
using Producer = void (*)(Json& figures);

struct Registration {
  Registration(const char* scheme, Producer produce);
};
const std::vector<std::pair<std::string, Producer>>& registry();

// [[x, y], ...] of two equal-length vectors (a plot series).
template <class X, class Y>
Json points(const std::vector<X>& xs, const std::vector<Y>& ys) {
  Json out = Json::array();
  for (std::size_t i = 0; i < xs.size() && i < ys.size(); ++i) out.push_back(Json::array({xs[i], ys[i]}));
  return out;
}

// [[row 0], [row 1], ...] of a row-major matrix with `cols` columns (index matrices).
template <class T>
Json rows(const std::vector<T>& m, std::size_t cols) {
  Json out = Json::array();
  for (std::size_t i = 0; i + cols <= m.size() && cols > 0; i += cols)
    out.push_back(std::vector<T>(m.begin() + static_cast<std::ptrdiff_t>(i),
                                 m.begin() + static_cast<std::ptrdiff_t>(i + cols)));
  return out;
}

}  // namespace posenc::figures

// POSENC_FIGURES(t5) { figures["buckets"] = ...; }
#define POSENC_FIGURES(name)                                                                                 \
  static void posenc_figures_##name(::posenc::figures::Json& figures);                                      \
  static const ::posenc::figures::Registration posenc_figures_registration_##name(#name, posenc_figures_##name); \
  static void posenc_figures_##name(::posenc::figures::Json& figures)
