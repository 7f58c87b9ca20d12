// schemes/fire/cli.cpp — FIRE on the command line: its registration (description, presets and flags come from
// SpecTraits<FireSpec>, cli/spec_options.hpp) and what is its own:
//   posenc bias fire     the bias matrix [heads, query_length, key_length] of the trained MLP read from --weights
//                        (--mask causal: -inf where a key is not visible); --what x: the MLP's input, the
//                        normalized distances [query_length, key_length]
//   posenc scores fire   scale <q_i, k_j> + bias for q [heads, Lq, d], k [heads, Lk, d] (bias rows + BLAS gemm)
//   posenc check fire    a user's bias tensor against the exact bias of the user's weights (budget rows) and, for the
//                        cramming regime, the emulation envelope of the reference's float32 steps
// No `freqs`: FIRE has no frequencies or slopes; its trained parameters (c, L_multiplier, init_L and the MLP) are a
// state_dict, which every command reads from --weights FILE (WeightsFile below).
//
// --weights FILE: the JSON that `json.dump({k: v.tolist() for k, v in fire.state_dict().items()}, f)` writes for
// mcleish7/arithmetic's FIRE module (include/spec/posenc/fire_spec.hpp):
//   "c", "L_multiplier", "init_L"   a number (a 0-d tensor's tolist()) or a list of one number
//   "mlp.0.weight"                  [w][1] (Linear(1, w).weight), or [w]
//   "mlp.0.bias"                    [w]
//   "mlp.2.weight"                  [heads][w]
//   "mlp.2.bias"                    [heads]
// Integers are read as reals (init_L is an integer tensor when the module is built with init_L=512). Keys may carry
// one common prefix ending in "." ("fire.", "model.encoder.fire.": a whole model's state_dict), and nested objects
// are read as their dotted paths ({"fire": {"c": ...}} is "fire.c"); other keys are ignored. Exactly one prefix must
// hold all seven names. NaN / Infinity (what Python's json.dump writes for non-finite floats) are read so that the
// error can name them. The spec's heads and mlp_width follow the file's shapes unless --heads / --mlp-width (or a
// --spec file) are given, which must then agree with it.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "bias_verbs.hpp"
#include "schemes/fire/check.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/fire.hpp"
#include "posenc/fire_spec.hpp"
#include "posenc/json_text.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_fire {
namespace {

using Spec = FireSpec;
constexpr const char* kScheme = "fire";
constexpr const char* kFlag = "--weights";

// The geometry, checked as the library checks it (errors renamed to the flags).
std::function<void(const BiasGeometry&)> size_check(const Spec& s) {
  return [s](const BiasGeometry& g) { (void)fire_bias_size(s, g); };
}

// ---- --weights FILE -------------------------------------------------------------------------------------------

// The state_dict names, in the order the module registers them.
constexpr const char* kW1 = "mlp.0.weight";
constexpr const char* kB1 = "mlp.0.bias";
constexpr const char* kW2 = "mlp.2.weight";
constexpr const char* kB2 = "mlp.2.bias";
constexpr const char* kNames[] = {kW1, kB1, kW2, kB2, "c", "init_L", "L_multiplier"};

constexpr const char* kAcceptedFile =
    "a JSON object holding FIRE's state_dict as json.dump({k: v.tolist() for k, v in fire.state_dict().items()}) "
    "writes it: \"c\", \"L_multiplier\", \"init_L\" (numbers), \"mlp.0.weight\" [w][1], \"mlp.0.bias\" [w], "
    "\"mlp.2.weight\" [heads][w], \"mlp.2.bias\" [heads], under one common key prefix such as \"fire.\" or none";

// A bare NaN / Infinity / -Infinity (Python's json.dump of a non-finite float; not JSON) is turned into a string
// holding this marker and the token, so that the parser accepts the file and the value's error can name it. The
// marker starts with U+0001 (written as the JSON escape \u0001), which no key or value of a state_dict holds.
constexpr const char* kNonFinite = "\x01posenc-non-finite:";
constexpr const char* kNonFiniteJson = "\\u0001posenc-non-finite:";

std::string short_text(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (out.size() >= 40) return out + "...";
    if (c >= 0x20 && c < 0x7f) out += ch;
    else out += '?';
  }
  return out;
}

std::string with_non_finite_marked(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) out += text[++i];
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') {
      in_string = true;
      out += ch;
      continue;
    }
    bool marked = false;
    for (const char* token : {"NaN", "Infinity", "-Infinity"}) {
      const std::size_t n = std::strlen(token);
      if (text.compare(i, n, token) != 0) continue;
      const char after = i + n < text.size() ? text[i + n] : ' ';
      if (std::isalnum(static_cast<unsigned char>(after)) || after == '_') continue;
      out += std::string("\"") + kNonFiniteJson + token + "\"";
      i += n - 1;
      marked = true;
      break;
    }
    if (!marked) out += ch;
  }
  return out;
}

// One tensor of the state_dict: its shape (as torch's tolist() nests it) and its values, row-major.
struct Tensor {
  std::vector<std::size_t> shape;
  std::vector<double> values;
};

class WeightsFile {
 public:
  std::string path, prefix;
  std::size_t heads = 0, width = 0;
  FireWeights weights;

  explicit WeightsFile(const std::string& file) : path(file) {
    const nlohmann::json doc = parse(read_text());
    if (!doc.is_object())
      throw Error(kScheme, kFlag, quoted() + " (a JSON " + std::string(doc.type_name()) + ")", kAcceptedFile,
                  "is not a JSON object");
    flatten(doc, "", 0);
    find_prefix();

    const Tensor w1 = tensor(kW1), b1 = tensor(kB1), w2 = tensor(kW2), b2 = tensor(kB2);
    if (!(w1.shape.size() == 2 && w1.shape[1] == 1) && w1.shape.size() != 1)
      throw shape_error(kW1, w1, "[w][1] (Linear(1, w).weight) or [w]");
    width = w1.shape[0];
    if (width < 1 || width > kFireMaxWidth)
      throw shape_error(kW1, w1, "w in [1, " + std::to_string(kFireMaxWidth) + "] rows (mlp_width)");
    if (b1.shape != std::vector<std::size_t>{width})
      throw shape_error(kB1, b1, "[w] with the w = " + std::to_string(width) + " rows of " + at(key(kW1)));
    if (w2.shape.size() != 2 || w2.shape[1] != width)
      throw shape_error(kW2, w2, "[heads][w] with the w = " + std::to_string(width) + " rows of " + at(key(kW1)));
    heads = w2.shape[0];
    if (heads < 1 || heads > kFireMaxHeads)
      throw shape_error(kW2, w2, "heads in [1, " + std::to_string(kFireMaxHeads) + "] rows");
    if (b2.shape != std::vector<std::size_t>{heads})
      throw shape_error(kB2, b2, "[heads] with the heads = " + std::to_string(heads) + " rows of " + at(key(kW2)));

    weights.c = scalar("c");
    weights.L_multiplier = scalar("L_multiplier");
    weights.init_L = scalar("init_L", kFireMaxInitL, "a finite real with |v| <= 2^24 (a position)");
    weights.w1 = checked(kW1, w1);
    weights.b1 = checked(kB1, b1);
    weights.w2 = checked(kW2, w2);
    weights.b2 = checked(kB2, b2);
    leaves_.clear();  // they point into doc
  }

  std::string quoted() const { return "'" + text_excerpt(path) + "'"; }
  // The key in the file ("fire.mlp.0.weight" under the prefix "fire.").
  std::string key(const char* name) const { return prefix + name; }

  // The weights as the state_dict names them (what `bias fire --format json` writes back: a result file is itself a
  // --weights file, under the prefix "state_dict.").
  Json state_dict() const {
    Json j;
    Json w1 = Json::array();
    for (double v : weights.w1) w1.push_back(Json::array({v}));
    j[kW1] = std::move(w1);
    j[kB1] = weights.b1;
    Json w2 = Json::array();
    for (std::size_t h = 0; h < heads; ++h)
      w2.push_back(std::vector<double>(weights.w2.begin() + static_cast<std::ptrdiff_t>(h * width),
                                       weights.w2.begin() + static_cast<std::ptrdiff_t>((h + 1) * width)));
    j[kW2] = std::move(w2);
    j[kB2] = weights.b2;
    j["c"] = weights.c;
    j["init_L"] = weights.init_L;
    j["L_multiplier"] = weights.L_multiplier;
    return j;
  }

 private:
  std::map<std::string, const nlohmann::json*> leaves_;

  [[noreturn]] void io_fail(const std::string& problem) const {
    throw IoError(std::string(kFlag) + ": " + quoted() + " " + problem + "; accepted: " + kAcceptedFile);
  }

  // Bounded (an endless /dev/zero stops at the cap) and nesting checked before parsing (posenc/json_text.hpp).
  std::string read_text() const {
    return read_text_file(kFlag, path, kMaxJsonFileBytes, std::string(kAcceptedFile) + ", at most 64 MiB");
  }

  nlohmann::json parse(const std::string& text) const {
    try {
      return parse_json_text(with_non_finite_marked(text), std::string(kFlag) + ": " + quoted());
    } catch (const nlohmann::json::exception& e) {
      std::string why = e.what();
      if (const auto at = why.find("] "); at != std::string::npos) why = why.substr(at + 2);  // drop nlohmann's id
      io_fail("is not JSON (" + text_excerpt(why, 200) + ")");
    }
  }

  // Every non-object value under its dotted path.
  void flatten(const nlohmann::json& j, const std::string& at, int depth) {
    if (depth > 32)
      throw Error(kScheme, kFlag, quoted() + " (key \"" + short_text(at) + "\")", kAcceptedFile,
                  "nests objects more than 32 deep");
    for (const auto& [k, v] : j.items()) {
      const std::string path_k = at.empty() ? k : at + "." + k;
      if (v.is_object()) flatten(v, path_k, depth + 1);
      else leaves_[path_k] = &v;
    }
  }

  // The one prefix under which all seven names are present.
  void find_prefix() {
    std::map<std::string, std::set<std::string>> found;  // prefix -> names present under it
    for (const auto& [k, v] : leaves_) {
      (void)v;
      for (const char* name : kNames) {
        const std::size_t n = std::strlen(name);
        if (k.size() < n || k.compare(k.size() - n, n, name) != 0) continue;
        if (k.size() > n && k[k.size() - n - 1] != '.') continue;
        found[k.substr(0, k.size() - n)].insert(name);
      }
    }
    std::vector<std::string> complete;
    for (const auto& [p, names] : found)
      if (names.size() == std::size(kNames)) complete.push_back(p);
    auto listed = [](const std::vector<std::string>& ps) {
      std::string out;
      for (std::size_t i = 0; i < ps.size() && i < 4; ++i) out += (i ? ", " : "") + ("'" + short_text(ps[i]) + "'");
      return out + (ps.size() > 4 ? ", ..." : "");
    };
    if (complete.size() == 1) {
      prefix = complete[0];
      return;
    }
    if (complete.size() > 1)
      throw Error(kScheme, kFlag, quoted() + " (FIRE state_dicts under the prefixes " + listed(complete) + ")",
                  std::string(kAcceptedFile) + "; a file with one FIRE module", "holds more than one FIRE state_dict");
    if (found.empty())
      throw Error(kScheme, kFlag, quoted(), kAcceptedFile,
                  "holds none of the keys \"c\", \"L_multiplier\", \"init_L\", \"mlp.0.weight\", \"mlp.0.bias\", "
                  "\"mlp.2.weight\", \"mlp.2.bias\"");
    // The prefix with the most names: the first name it lacks.
    auto best = found.begin();
    for (auto it = found.begin(); it != found.end(); ++it)
      if (it->second.size() > best->second.size()) best = it;
    for (const char* name : kNames)
      if (!best->second.count(name))
        throw Error(kScheme, kFlag, quoted() + " (no key " + at(best->first + name) + ")", kAcceptedFile,
                    "lacks a key of the state_dict");
  }

  const nlohmann::json& leaf(const char* name) const { return *leaves_.at(prefix + name); }

  // "mlp.2.weight"[1][3]: a key of the file and an index into its value.
  static std::string at(const std::string& key, const std::string& index = {}) {
    return "\"" + short_text(key) + "\"" + index;
  }
  static std::string index_text(std::size_t i) { return "[" + std::to_string(i) + "]"; }

  // "fire: --weights = 'w.json': <where> <what> <problem>; accepted: <accepted>"
  Error value_error(const std::string& where, const std::string& what, const std::string& accepted,
                    const std::string& problem = "is out of range") const {
    return Error(kScheme, kFlag, quoted() + ": " + where + (what.empty() ? "" : " " + what), accepted, problem);
  }

  // One number of a tensor at `where`.
  double number(const nlohmann::json& v, const std::string& where) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s.rfind(kNonFinite, 0) == 0)
        throw value_error(where, "= " + s.substr(std::strlen(kNonFinite)),
                          "a finite real (Python's json.dump writes a non-finite float as NaN or Infinity)",
                          "is not finite");
      throw value_error(where, "= \"" + short_text(s) + "\" (a string)", "a number", "is not a number");
    }
    throw value_error(where, "(a JSON " + std::string(v.type_name()) + ")", "a number", "is not a number");
  }

  // A tensor of at most two dimensions, rectangular, of numbers.
  Tensor tensor(const char* name) const {
    const std::string k = key(name);
    const nlohmann::json& v = leaf(name);
    Tensor t;
    if (!v.is_array()) {
      t.values.push_back(number(v, at(k)));
      return t;
    }
    t.shape.push_back(v.size());
    const bool nested = !v.empty() && v[0].is_array();
    if (nested) t.shape.push_back(v[0].size());
    check_memory(v.size() * (nested ? v[0].size() : 1) * sizeof(double), "the values of " + at(k));
    const std::string rect = "a tensor of one or two dimensions: numbers, or lists of numbers of equal length";
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string ai = at(k, index_text(i));
      if (!nested) {
        if (v[i].is_array()) throw value_error(ai, "(a list; entry 0 is not)", rect, "is not rectangular");
        t.values.push_back(number(v[i], ai));
        continue;
      }
      if (!v[i].is_array())
        throw value_error(ai, "(a JSON " + std::string(v[i].type_name()) + "; entry 0 is a list)", rect,
                          "is not rectangular");
      if (v[i].size() != t.shape[1])
        throw value_error(ai, "(" + std::to_string(v[i].size()) + " entries; entry 0 has " +
                                  std::to_string(t.shape[1]) + ")",
                          rect, "is not rectangular");
      for (std::size_t j = 0; j < v[i].size(); ++j) {
        const std::string aij = at(k, index_text(i) + index_text(j));
        if (v[i][j].is_array()) throw value_error(aij, "(a list)", rect, "nests too deep");
        t.values.push_back(number(v[i][j], aij));
      }
    }
    return t;
  }

  Error shape_error(const char* name, const Tensor& t, const std::string& accepted) const {
    return value_error(at(key(name)), "of shape " + shape_text(t.shape), accepted, "does not fit");
  }

  std::string index(const char* name, const Tensor& t, std::size_t i) const {
    if (t.shape.size() == 2) return at(key(name), index_text(i / t.shape[1]) + index_text(i % t.shape[1]));
    if (t.shape.size() == 1) return at(key(name), index_text(i));
    return at(key(name));
  }

  // The values of a tensor, each finite with |v| <= max (fire_spec.hpp's limits).
  std::vector<double> checked(const char* name, const Tensor& t, double max = kFireMaxWeight,
                              const char* accepted = "a finite real with |v| <= 1e6") const {
    for (std::size_t i = 0; i < t.values.size(); ++i) {
      const double v = t.values[i];
      if (!std::isfinite(v) || std::fabs(v) > max) throw value_error(index(name, t, i), "= " + format_real(v), accepted);
    }
    return t.values;
  }

  double scalar(const char* name, double max = kFireMaxWeight,
                const char* accepted = "a finite real with |v| <= 1e6") const {
    const Tensor t = tensor(name);
    if (t.values.size() != 1 || t.shape.size() > 1)
      throw shape_error(name, t, "a number (a 0-d tensor's tolist()) or a list of one number");
    return checked(name, t, max, accepted)[0];
  }
};

// The spec of the generic flags with heads and mlp_width taken from the weights unless given (by the flag or a
// --spec file: then they must agree), and the weights checked against it.
struct Loaded {
  Spec spec;
  WeightsFile file;
};

Loaded load(const SpecOptions<Spec>& options, const std::string& weights_path, const CLI::App* app) {
  Spec s = options.build();
  WeightsFile wf(weights_path);
  const std::string shapes = "the shapes of --weights " + wf.quoted() + ": \"" + wf.key(kW2) + "\" (" +
                             std::to_string(wf.heads) + ", " + std::to_string(wf.width) + ")";
  auto fit = [&](std::size_t& field, std::size_t from_file, const std::string& flag, const std::string& what) {
    if (field == from_file) return;
    if (options.given(flag))
      throw Error(kScheme, flag, std::to_string(field), what + " = " + std::to_string(from_file) + " (" + shapes +
                  "); or leave " + flag + " out to take it from the file", "differs from the weights");
    if (options.given("--spec"))
      throw Error(kScheme, "--spec", "'" + app->get_option("--spec")->as<std::string>() + "' (" + what + " = " +
                                         std::to_string(field) + ")",
                  what + " = " + std::to_string(from_file) + " (" + shapes + ")", "differs from the weights");
    field = from_file;
  };
  fit(s.heads, wf.heads, "--heads", "heads");
  fit(s.mlp_width, wf.width, "--mlp-width", "mlp_width");
  validate(s);
  try {
    check_fire_weights(s, wf.weights);  // the reader checked each value already; this is the library's own word
  } catch (const Error& e) {
    throw Error(e.where(), kFlag, wf.quoted() + " (" + e.parameter() + ": " + e.value() + ")", e.accepted(),
                e.problem());
  }
  return {s, std::move(wf)};
}

void add_weights_flag(CLI::App* c, std::string& path) {
  c->add_option(kFlag, path,
                "FIRE's trained parameters: a JSON state_dict as json.dump({k: v.tolist() for k, v in "
                "fire.state_dict().items()}) writes it (c, L_multiplier, init_L, mlp.0.weight [w][1], mlp.0.bias "
                "[w], mlp.2.weight [heads][w], mlp.2.bias [heads]; one key prefix such as fire. allowed); heads and "
                "mlp_width follow its shapes")
      ->type_name("FILE")
      ->required()
      ->group("Weights");
}

// The head of a bias / scores JSON: scheme, spec, where the weights came from, the weights themselves (so that the
// result is its own --weights file) and the threshold as the regime uses it.
constexpr std::size_t kMaxWeightsInHead = std::size_t{1} << 16;

Json weights_head(const Spec& s, const FirePlan& plan, const WeightsFile& wf) {
  Json head = result_head(s);
  head["weights"] = wf.path;
  head["weights_prefix"] = wf.prefix;
  head["threshold"] = plan.threshold();
  head["threshold_note"] = std::string("L = |L_multiplier init_L| as the regime uses it (") +
                           (s.regime == FireRegime::cramming ? "cramming: the float32 product of the float32 weights"
                                                             : "exact: the double nearest the exact product") +
                           "); rows with q <= L share the normalizer ln(|c| L + 1) + eps";
  if (s.heads * s.mlp_width <= kMaxWeightsInHead) head["state_dict"] = wf.state_dict();
  else head["state_dict"] = nullptr;
  return head;
}

std::string bias_note(const Spec& s) {
  return std::string("b_h = b2[h] + sum_k W2[h][k] max(0, W1[k] x + b1[k]) with x = ln(|c| d + 1) / (ln(|c| "
                     "max(q_i, L) + 1) + eps), d = |q_i - j| (a key after the query gets the value at its distance), ") +
         (s.regime == FireRegime::cramming ? "in the reference's float32 steps, each correctly rounded"
                                           : "the exact value rounded to the output type");
}

// ---- bias --------------------------------------------------------------------------------------------

struct BiasFlags {
  SpecOptions<Spec> spec;
  std::string weights;
  OutFlags out;
  BiasGeometryFlags geometry;
  std::string dtype = "f32", threads, what = "bias";
};

template <class T>
void run_bias_typed(const BiasFlags& f, const FirePlan& plan, const WeightsFile& wf, const BiasGeometry& g,
                    Format format, Output& out) {
  const Spec& s = plan.spec();
  const TableOptions opts = parse_threads(f.threads);
  const std::size_t n = fire_bias_size(s, g);
  auto data = allocate<T>(n, "a bias of " + std::to_string(s.heads) + " x " + std::to_string(g.query_length) + " x " +
                                 std::to_string(g.key_length) + " values");
  const std::span<T> bias(data.get(), n);
  plan.bias(g, bias, opts);
  write_bias_tensor(out, format, weights_head(s, plan, wf), bias_note(s), std::span<const T>(bias), g, s.heads);
}

// --what x: the MLP's input x(q_i, j) [query_length][key_length], as the regime computes it (FirePlan::
// normalized_distance: cramming, the reference's float32 x; exact, the double evaluation), in the output type.
template <class T>
void run_x_typed(const FirePlan& plan, const WeightsFile& wf, const BiasGeometry& g, Format format, Output& out) {
  const Spec& s = plan.spec();
  const std::size_t Lq = g.query_length, Lk = g.key_length, n = Lq * Lk;
  auto data = allocate<T>(n, "a matrix of " + std::to_string(Lq) + " x " + std::to_string(Lk) + " values");
  const std::span<T> x(data.get(), n);
  for (std::size_t i = 0; i < Lq; ++i) {
    const auto q = static_cast<std::int64_t>(Lk - Lq + i);
    for (std::size_t j = 0; j < Lk; ++j) x[i * Lk + j] = static_cast<T>(plan.normalized_distance(q, static_cast<std::int64_t>(j)));
  }
  const std::span<const T> v(x);
  switch (format) {
    case Format::npy: write_npy(out.file(), v, {Lq, Lk}); break;
    case Format::json: {
      Json head = weights_head(s, plan, wf);
      head["what"] = "x";
      head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
      head["query_length"] = Lq;
      head["key_length"] = Lk;
      head["note"] = std::string("x = ln(|c| d + 1) / (ln(|c| max(q_i, L) + 1) + eps), d = |q_i - j|: the normalized "
                                 "distance the MLP reads (mcleish7/arithmetic@86022a57 cramming/architectures/"
                                 "embeddings.py FIRE), ") +
                     (s.regime == FireRegime::cramming ? "the reference's float32 steps, each correctly rounded"
                                                       : "evaluated in double (relative error < 2^-49)");
      write_json(out.file(), head, std::vector<JsonArray>{{"x", v, Lk}});
      break;
    }
    case Format::csv: {
      std::vector<std::int64_t> row(Lq);
      for (std::size_t i = 0; i < Lq; ++i) row[i] = static_cast<std::int64_t>(i);
      write_csv(out.file(), {{"row", row}}, numbered_names("k", Lk), v, Lq);
      break;
    }
  }
  out.commit();
}

void run_bias(BiasFlags& f, const CLI::App* app) {
  if (f.what != "bias" && f.what != "x")
    throw UsageError("--what: '" + f.what + "'; accepted: bias (the MLP's output per head) | x (its input, the "
                     "normalized distance)");
  const Loaded in = load(f.spec, f.weights, app);
  const FirePlan plan = make_plan(in.spec, in.file.weights);
  const BiasGeometry g = f.geometry.geometry(size_check(in.spec));
  if (f.what == "x" && (g.mask != BiasMask::none || !g.key_mask.empty()))
    throw UsageError("--mask / --key-mask: not with --what x (the MLP's input has no mask)");
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  (void)parse_threads(f.threads);
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  if (f.what == "x") {
    if (f64) run_x_typed<double>(plan, in.file, g, format, out);
    else run_x_typed<float>(plan, in.file, g, format, out);
    return;
  }
  if (f64) run_bias_typed<double>(f, plan, in.file, g, format, out);
  else run_bias_typed<float>(f, plan, in.file, g, format, out);
}

// ---- scores ------------------------------------------------------------------------------------------

struct ScoresCommand {
  SpecOptions<Spec> spec;
  std::string weights;
  ScoresFlags scores;
};

void run_scores(ScoresCommand& f, const CLI::App* app) {
  const ScoresInput in = read_scores_input(f.scores.q_path, f.scores.k_path);
  const Loaded w = load(f.spec, f.weights, app);
  const Spec& s = w.spec;
  if (s.heads != in.heads)
    throw Error(kScheme, "--q", "'" + f.scores.q_path + "' with " + std::to_string(in.heads) + (in.heads == 1 ? " head" : " heads"),
                "q and k with the " + std::to_string(s.heads) + " heads of --weights " + w.file.quoted() +
                    " ([heads, tokens, head_dim])",
                "does not match the weights");
  const FirePlan plan = make_plan(s, w.file.weights);
  run_bias_scores(f.scores, in, plan, weights_head(s, plan, w.file), size_check(s));
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  std::string weights;
  InputFlags in;
  ReportFlags report;
  std::string threads;
  std::optional<std::string> key_mask;
  double ulp = 2.0;
  bool fixed_order = false;
};

void run_check(CheckFlags& f, CLI::App* app) {
  const NpyArray a = f.in.read();
  const std::vector<std::size_t>& sh = a.shape;
  const std::string file = "--in: '" + f.in.path + "' holds an array of shape " + shape_text(sh);
  const TableOptions opts = parse_threads(f.threads);
  check_ulp_allowance(app, "--ulp", f.ulp);
  if (sh.size() != 3 && sh.size() != 2)
    throw UsageError(file + "; accepted: [heads, query_length, key_length] (or [query_length, key_length]: one head)");
  const Loaded w = load(f.spec, f.weights, app);
  const Spec& s = w.spec;
  verify::fire::BiasInput in;
  in.values = a.values;
  in.heads = sh.size() == 3 ? sh[0] : 1;
  in.query_length = sh[sh.size() - 2];
  in.key_length = sh.back();
  in.key_mask = parse_key_mask(f.key_mask);
  in.stored = dtype_of(a.stored);
  in.describe = {{"file", f.in.path},
                 {"stored", std::string(to_string(a.stored))},
                 {"shape", shape_text(sh)},
                 {"weights_file", f.weights},
                 {"weights_prefix", w.file.prefix}};
  if (in.heads != s.heads)
    throw UsageError(file + "; accepted: [heads, query_length, key_length] with the " + std::to_string(s.heads) +
                     " heads of --weights " + w.file.quoted() + (sh.size() == 2 ? " (a 2-D array is one head)" : ""));
  if (in.query_length > in.key_length)
    throw UsageError(file + "; the queries are the last query_length keys, so query_length <= key_length");
  if (in.key_length > kFireMaxKeyLength)
    throw UsageError(file + "; accepted: key_length <= 2^24 = 16777216 (FIRE's reference holds positions as float32 "
                            "numbers)");
  if (!in.key_mask.empty() && in.key_mask.size() != in.key_length)
    throw UsageError("--key-mask: " + std::to_string(in.key_mask.size()) + " entries; accepted: one per key, " +
                     std::to_string(in.key_length) + " (the last dimension of --in)");
  const verify::fire::EnvelopeAllowance allowance{f.ulp, !f.fixed_order};
  verify::CheckReport rep;
  try {
    rep = verify::fire::check_bias(s, w.file.weights, in, allowance, opts.threads);
  } catch (const Error& e) {
    const std::string& p = e.parameter();
    if (p == "key_mask") throw e.renamed("--key-mask");
    if (p == "heads" || p == "values" || p == "query_length" || p == "key_length")
      throw UsageError(file + "; " + p + " = " + e.value() + " " + e.problem() + "; accepted: " + e.accepted());
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(fire) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string mask_help = "0/1 per key (1 token, 0 padding), e.g. 0011111: with --mask causal padding keys get "
                                "-inf (FIRE's distances do not depend on padding)";
  {
    auto f = std::make_shared<BiasFlags>();
    CLI::App* c = registry.command("bias", kScheme,
                                   "The bias matrix [heads, query_length, key_length] of your trained FIRE module "
                                   "(--weights: its state_dict as JSON; queries are the last query_length keys); the "
                                   "JSON output holds the weights too, so it is itself a --weights file");
    f->spec.add_to(c);
    add_weights_flag(c, f->weights);
    f->geometry.add_to(c, mask_help);
    c->add_option("--what", f->what,
                  "bias (default): the bias [heads, query_length, key_length]; x: the MLP's input [query_length, "
                  "key_length], the normalized distance ln(|c| d + 1) / (ln(|c| max(q_i, L) + 1) + eps) as the "
                  "regime computes it (cramming: the reference's float32 x, exactly; exact: the double value)")
        ->type_name("bias|x");
    c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Paths as from the posenc checkout (cli/tests/data/README.md: how the weight files were drawn).\n"
              "Example: posenc bias fire --preset fire --weights cli/tests/data/fire_h12_w32.json --key-length 2048 "
              "--out bias.npy\n"
              "Example: posenc bias fire --preset fire-exact --weights cli/tests/data/fire_h4_w8.json --key-length 8 "
              "--mask causal --format json");
    c->callback([f, c] { run_bias(*f, c); });
  }
  {
    auto f = std::make_shared<ScoresCommand>();
    CLI::App* c = registry.command("scores", kScheme,
                                   "scale * <q_i, k_j> + bias for q [heads, Lq, d] and k [heads, Lk, d]: bias rows, "
                                   "then one BLAS gemm per head accumulating into them");
    f->spec.add_to(c);
    add_weights_flag(c, f->weights);
    f->scores.add_to(c, mask_help);
    c->footer("f64 when both inputs are f64, else f32. q and k have the heads of --weights.\n"
              "Example (q.npy [4, Lq, d], k.npy [4, Lk, d]): posenc scores fire --preset fire --weights "
              "cli/tests/data/fire_h4_w8.json --q q.npy --k k.npy --out s.npy");
    c->callback([f, c] { run_scores(*f, c); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your bias tensor (.npy [heads, Lq, Lk]) made with your FIRE weights against the exact bias of those weights "
        "(budget rows fire.check.exact.<dtype>) and, for the cramming regime, the reference's float32 steps "
        "(emulation envelope fire.check.envelope); exit 0 pass, 1 fail");
    f->spec.add_to(c);
    add_weights_flag(c, f->weights);
    f->in.add_to(c);
    c->add_option("--key-mask", f->key_mask, "0/1 per key (1 token, 0 padding), e.g. 0011111: --in may hold -inf at "
                  "the padding keys")
        ->type_name("BITS")
        ->group("Input");
    c->add_option("--ulp", f->ulp, "Envelope: ulps torch's float32 log may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_flag("--fixed-order", f->fixed_order,
                "Envelope: the MLP's float32 steps exactly in the emulated order (x W1 and + b1 rounded separately, "
                "the second Linear summed over k ascending as --mlp-sum says; default: also allow a fused first "
                "Linear and any summation order, with or without FMA, as BLAS kernels do)")
        ->group("Envelope");
    c->add_option("--threads", f->threads, "OpenMP threads for the references (0: default)")->type_name("N");
    f->report.add_to(c);
    c->footer("-inf entries are accepted where a causal mask puts them (a key after the query, or a padding key).\n"
              "The inputs of the examples: posenc bias fire --preset fire --weights cli/tests/data/fire_h12_w32.json "
              "--key-length 256 --out bias.npy, and posenc bias fire --preset fire-exact --weights "
              "cli/tests/data/fire_h4_w8.json --key-length 600 --mask causal --out exact.npy (each check below takes "
              "seconds; one of a 12 x 2048 x 2048 tensor takes minutes).\n"
              "Example: posenc check fire --preset fire --weights cli/tests/data/fire_h12_w32.json --in bias.npy\n"
              "Example: posenc check fire --preset fire-exact --weights cli/tests/data/fire_h4_w8.json --in exact.npy "
              "--format json");
    c->callback([f, c] { run_check(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_fire
