// schemes/rope/cli.cpp — rotary position embedding on the command line: its registration (description, presets
// and flags come from SpecTraits<RopeSpec>, cli/spec_options.hpp) and what is truly its own:
//   posenc table rope   the cos/sin cache for --positions in an engine's form (--form pairs | hf | gptj | ggml)
//   posenc freqs rope   theta_k as the regime computes them, and the two channels of each pair
//   posenc apply rope   R(p) x (R(-p) x with --inverse) for a [tokens, (heads,) head_dim] tensor read from a .npy
//   posenc check rope   a user's cache against the oracle: budget row (exact) and emulation envelope (hf, ggml)
// Dimensions: rotary_dim follows head_dim unless given: full rotary stays full, a preset's partial rotary keeps
// its fraction as rope_preset() computes it (GPT-J, GPT-NeoX). apply takes head_dim from the input's last
// dimension and check takes rotary_dim from the cache's width unless a dimension flag or --spec says otherwise.
// Alias of HF's parameter name: --partial-rotary-factor F (rotary_dim = int(head_dim * F), after --head-dim).
// --config FILE starts from a Hugging Face config.json (posenc/rope_config.hpp: rope_theta, head_dim, partial rotary,
// rope_scaling / rope_parameters, layout by model_type), like --preset / --spec and exclusive with them; field flags
// override it (--regime hf, --seq-len 5000); --hf-version NAME picks the transformers version whose YaRN / LongRoPE
// reading of the original context and factor to reproduce (default v5).
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "args.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/rope.hpp"
#include "posenc/rope_config.hpp"
#include "posenc/rope_spec.hpp"
#include "identify_verb.hpp"
#include "registry.hpp"
#include "schemes/rope/check.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_rope {
namespace {

using Spec = RopeSpec;
constexpr const char* kScheme = "rope";

// The spec flags with this scheme's dimension rules and alias.
struct RopeOptions : SpecOptions<Spec> {
  // apply: the input's last dimension, the head_dim unless --head-dim or --spec says it.
  std::optional<std::size_t> input_head_dim;
  // check: the cache's rotary width, the rotary_dim unless a dimension flag or --spec says it.
  std::optional<std::size_t> cache_rotary_dim;

  void add(CLI::App* a) {
    command_ = a;
    add_to(a);
    add_start("--config", "FILE",
              "Start from a Hugging Face config.json: rope_theta, head_dim, partial rotary, rope_scaling / "
              "rope_parameters, layout by model_type (field flags override it; --layout for an unknown model_type)",
              [this](const std::string& path) { return read_config(path); });
    a->add_option("--hf-version", hf_version_,
                  "With --config: the transformers version whose YaRN / LongRoPE original context and factor to "
                  "reproduce: " + enum_names<HfVersion>() + " (default v5; posenc/rope_config.hpp)")
        ->type_name("NAME")
        ->group("Spec");
    add_adjustment([this](Spec&, const Spec&) { (void)hf_version(); });
    add_adjustment([this](Spec& s, const Spec& start) { follow_dimensions(s, start); });
    add_alias("--partial-rotary-factor", "F",
              "HF's partial_rotary_factor: rotary_dim = int(head_dim * F), after --head-dim (not with --rotary-dim)",
              [this](Spec& s, const std::string& text) {
                if (given("--rotary-dim"))
                  throw UsageError(
                      "--rotary-dim and --partial-rotary-factor both set rotary_dim (rotary_dim = int(head_dim * "
                      "factor)); give one");
                const double factor = parse_double("--partial-rotary-factor", text);
                try {
                  s.rotary_dim = rotary_dim_from_factor(s.head_dim, factor);
                } catch (const Error& e) {
                  if (e.parameter() == "partial_rotary_factor") throw e.renamed("--partial-rotary-factor");
                  throw;
                }
              });
  }

 private:
  bool rotary_given() const { return given("--rotary-dim") || given("--partial-rotary-factor"); }

  // --hf-version's value (checked whether or not --config is given, so a wrong name is never silently unused).
  HfVersion hf_version() const {
    if (!given("--hf-version")) return HfVersion::v5;
    const auto v = enum_from_string<HfVersion>(hf_version_);
    if (!v)
      throw UsageError("--hf-version: '" + hf_version_ +
                       "' is not a transformers version posenc distinguishes; accepted: " + enum_names<HfVersion>());
    if (!given("--config"))
      throw UsageError("--hf-version: '" + hf_version_ +
                       "' applies to --config (an HF config.json); give --config FILE");
    return *v;
  }

  Spec read_config(const std::string& path) const {
    // Bounded: an endless input (/dev/zero) stops at the cap, naming --config.
    const std::string text =
        read_text_file("--config", path, kMaxJsonFileBytes, "a Hugging Face config.json of at most 64 MiB");
    HfConfigOptions o;
    o.hf_version = hf_version();
    o.file = "--config '" + text_excerpt(path) + "'";
    // --layout decides the layout (also for a model_type posenc does not know); a malformed name is refused later
    // by the field flag itself.
    if (given("--layout")) o.layout = enum_from_string<Layout>(command_->get_option("--layout")->as<std::string>());
    try {
      return rope_spec_from_hf_config(text, o);
    } catch (const Error& e) {
      if (e.parameter() == "config")  // not JSON, or not an object: the file, not a value in it
        throw IoError("--config: '" + text_excerpt(path) + "' " + e.problem() + " " + e.value() + "; accepted: " +
                      e.accepted());
      // Named by the config's key ("--config 'f.json': head_dim = 7 ..."), which must not be renamed to the flag of
      // the spec field of the same name, as SpecOptions::build does for posenc::Error.
      throw UsageError(e.what());
    }
  }

  void follow_dimensions(Spec& s, const Spec& start) const {
    const bool file = started_from_file(), head = given("--head-dim");
    if (cache_rotary_dim && !file && !head && !rotary_given()) {
      // A cache holds nothing of the channels beyond rotary_dim: head_dim stays the preset's when that is a
      // partial-rotary head wide enough, else it is the rotary width.
      const std::size_t r = *cache_rotary_dim;
      s.rotary_dim = r;
      s.head_dim = (start.rotary_dim < start.head_dim && start.head_dim >= r) ? start.head_dim : r;
      return;
    }
    if (input_head_dim && !file && !head) s.head_dim = *input_head_dim;
    if (rotary_given() || s.head_dim == start.head_dim) return;
    if (start.rotary_dim == start.head_dim) {
      // Full rotary stays full. An odd head_dim cannot be fully rotated: say so about the dimension the user
      // gave, not about the rotary_dim it implied.
      if (s.head_dim % 2 != 0)
        throw Error(kScheme, head || !input_head_dim ? "--head-dim" : "head_dim (the last dimension of --in)",
                    std::to_string(s.head_dim),
                    "an even head_dim (full rotary: rotary_dim = head_dim, and channels rotate in pairs), or an "
                    "even --rotary-dim / --partial-rotary-factor below it",
                    "is odd");
      s.rotary_dim = s.head_dim;
      return;
    }
    if (!given("--preset")) return;  // a --spec / --config file's partial rotary_dim is kept (validation judges it)
    const std::string name = command_->get_option("--preset")->as<std::string>();
    try {
      s.rotary_dim = rope_preset(name, s.head_dim).rotary_dim;
    } catch (const Error& e) {
      if (e.parameter() != "partial_rotary_factor") throw;
      throw Error(kScheme, head || !input_head_dim ? "--head-dim" : "head_dim (the last dimension of --in)",
                  std::to_string(s.head_dim),
                  "a head_dim for which the rotary fraction of --preset " + name + " (" +
                      format_real(static_cast<double>(start.rotary_dim) / static_cast<double>(start.head_dim)) +
                      ") gives an even int(head_dim * fraction) >= 2, or --rotary-dim / --partial-rotary-factor",
                  "does not fit the preset");
    }
  }

  CLI::App* command_ = nullptr;
  std::string hf_version_;
};

RopeCacheForm parse_form(const std::string& text) {
  if (const auto f = enum_from_string<RopeCacheForm>(text)) return *f;
  throw UsageError("--form: '" + text + "' is not a cache form; accepted: " + enum_names<RopeCacheForm>());
}

// The positions of `flag` (one per `unit` of `what`), or 0 .. n-1 when not given; each checked against the spec.
// M-RoPE (--mrope sections | interleaved): three rows t, h, w of n positions each, as the library takes them (HF
// position_ids[0], [1], [2]); when not given, 0 .. n-1 in every row (text tokens: t = h = w).
std::vector<std::int64_t> positions_for(const Spec& s, const std::string& flag, const std::string& text, bool given,
                                        std::size_t n, const std::string& what, const std::string& unit) {
  const auto check = [&](std::int64_t p) { check_position(s, p); };
  if (!given && n) check_position_of(flag + " (default 0 .. " + std::to_string(n - 1) + ")", "", static_cast<std::int64_t>(n - 1), check);
  if (given) (void)parse_checked_positions(flag, text, check);
  const std::size_t axes = position_axes(s);
  if (axes == 1) return one_position_each(flag, text, given, n, what, unit);
  if (!given) {
    const std::vector<std::int64_t> row = one_position_each(flag, text, false, n, what, unit);
    std::vector<std::int64_t> v;
    for (std::size_t a = 0; a < axes; ++a) v.insert(v.end(), row.begin(), row.end());
    return v;
  }
  return one_position_each(flag, text, true, axes * n, what + " with --mrope " + std::string(to_string(s.mrope)),
                           unit + " in each of the rows t, h, w (" + std::to_string(axes) + " x " + std::to_string(n) +
                               " positions: the t row, then h, then w)");
}

// Column names of one row of a cache form (the hf form: of one row of either block).
std::vector<std::string> cache_columns(const Spec& s, RopeCacheForm form) {
  const std::size_t h = pair_count(s);
  std::vector<std::string> names;
  const auto add = [&](const char* prefix) {
    for (std::size_t k = 0; k < h; ++k) names.push_back(prefix + std::to_string(k));
  };
  switch (form) {
    case RopeCacheForm::pairs:
      add("cos");
      add("sin");
      break;
    case RopeCacheForm::gptj:
      add("sin");
      add("cos");
      break;
    case RopeCacheForm::ggml:
      for (std::size_t k = 0; k < h; ++k) {
        names.push_back("cos" + std::to_string(k));
        names.push_back("sin" + std::to_string(k));
      }
      break;
    case RopeCacheForm::hf: names = numbered_names("c", s.rotary_dim); break;
  }
  return names;
}

// ---- table -------------------------------------------------------------------------------------------

struct TableFlags {
  RopeOptions spec;
  OutFlags out;
  std::string positions = "0:16", form = "pairs", dtype = "f32", threads;
};

// M-RoPE: --positions holds the rows t, h, w (3 x rows entries); not given, the default rows repeated (t = h = w).
template <class T>
void run_table_typed(const TableFlags& f, const Spec& s, const PositionList& positions, bool given, RopeCacheForm form,
                     Format format, Output& out) {
  const TableOptions opts = parse_threads(f.threads);
  const std::size_t axes = position_axes(s);
  if (given && positions.size() % axes != 0)
    throw UsageError("--positions: '" + f.positions + "' has " + std::to_string(positions.size()) +
                     " positions; with --mrope " + std::string(to_string(s.mrope)) +
                     " give the rows t, h, w of one position per cache row each (3 x rows positions)");
  const std::uint64_t count64 = given ? positions.size() / axes : positions.size();
  const std::size_t per = cache_values_per_position(s, form);
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  if (count64 > max / sizeof(std::int64_t) || count64 > max / sizeof(T) / per)
    throw IoError("a cache of " + std::to_string(count64) + " positions x " + std::to_string(per) +
                  " values does not fit in this machine's address space");
  const auto count = static_cast<std::size_t>(count64);
  check_memory(count * sizeof(std::int64_t), "the list of " + std::to_string(count) + " positions");
  const std::size_t elems = count * per;
  auto data =
      allocate<T>(elems, "a cache of " + std::to_string(count) + " positions x " + std::to_string(per) + " values");
  std::vector<std::int64_t> list = positions.materialize();
  if (!given && axes > 1) {
    const std::vector<std::int64_t> row = list;
    for (std::size_t a = 1; a < axes; ++a) list.insert(list.end(), row.begin(), row.end());
  }
  const std::span<T> cache(data.get(), elems);
  make_plan(s).cache(form, list, cache, opts);

  const std::size_t r = s.rotary_dim;
  const bool hf = form == RopeCacheForm::hf;
  const std::span<const T> values(cache);
  switch (format) {
    case Format::npy:
      if (hf)
        write_npy(out.file(), values, {2, count, r});
      else
        write_npy(out.file(), values, {count, per});
      break;
    case Format::json: {
      Json head = result_head(s);
      head["form"] = std::string(to_string(form));
      head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
      head["note"] = std::string(EnumTraits<RopeCacheForm>::values[*enum_index(form)].meaning) +
                     "; h = rotary_dim / 2 pairs, pair k at angle p * theta_k (posenc freqs rope)";
      if (s.scaling != RopeScaling::none) head["attention_factor"] = make_plan(s).attention_factor();
      std::vector<JsonArray> arrays;
      // M-RoPE: a 3 x rows matrix (t, h, w)
      arrays.push_back({"positions", std::span<const std::int64_t>(list), axes > 1 ? count : 0});
      if (hf) {
        arrays.push_back({"cos", values.first(count * r), r});
        arrays.push_back({"sin", values.subspan(count * r), r});
      } else {
        arrays.push_back({"rows", values, per});
      }
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv:
      if (hf) {
        std::vector<std::int64_t> block(2 * count), pos(2 * count);
        for (std::size_t b = 0; b < 2; ++b)
          for (std::size_t i = 0; i < count; ++i) {
            block[b * count + i] = static_cast<std::int64_t>(b);
            pos[b * count + i] = list[i];
          }
        if (axes > 1)
          throw UsageError("--format csv: the hf form of an M-RoPE cache has no one position per row; use npy or json");
        write_csv(out.file(), {{"block", std::move(block)}, {"position", std::move(pos)}}, cache_columns(s, form),
                  values, 2 * count);
      } else if (axes > 1) {  // columns t, h, w
        auto row = [&](std::size_t a) { return std::vector<std::int64_t>(list.begin() + static_cast<std::ptrdiff_t>(a * count), list.begin() + static_cast<std::ptrdiff_t>((a + 1) * count)); };
        write_csv(out.file(), {{"t", row(0)}, {"h", row(1)}, {"w", row(2)}}, cache_columns(s, form), values, count);
      } else {
        write_csv(out.file(), {{"position", list}}, cache_columns(s, form), values, count);
      }
      break;
  }
  out.commit();
}

void run_table(const TableFlags& f, bool positions_given) {
  const Spec s = f.spec.build();
  const RopeCacheForm form = parse_form(f.form);
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  const PositionList positions =
      parse_checked_positions("--positions", f.positions, [&](std::int64_t p) { check_position(s, p); });
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  if (f64)
    run_table_typed<double>(f, s, positions, positions_given, form, format, out);
  else
    run_table_typed<float>(f, s, positions, positions_given, form, format, out);
}

// ---- freqs -------------------------------------------------------------------------------------------

struct FreqFlags {
  RopeOptions spec;
  OutFlags out;
  std::string dynamic_calls;  // --dynamic-calls: the lengths L of successive forward calls
  std::string what = "theta";
};

// --what corr-dims: ggml_rope_yarn_corr_dims of the spec, the two float32 values before floor / ceil and the dims
// the ramp uses after them (rope_ggml_yarn_corr_dims).
void run_corr_dims(const FreqFlags& f, const Spec& s, Format format) {
  if (s.scaling != RopeScaling::yarn || s.regime != RopeRegime::ggml)
    throw UsageError("--what: corr-dims is ggml's YaRN correction range; it needs --scaling yarn --regime ggml (the "
                     "spec has scaling " + std::string(to_string(s.scaling)) + ", regime " +
                     std::string(to_string(s.regime)) + ")");
  if (format == Format::csv) throw UsageError("--format: csv is not an output of --what corr-dims; accepted: npy | json");
  const std::array<float, 2> raw = rope_ggml_yarn_corr_dims(s);
  const auto n_dims = static_cast<float>(s.rotary_dim);
  // ggml_rope_yarn_corr_dims: dims[0] = MAX(0, floorf(start)), dims[1] = MIN(n_dims - 1, ceilf(end))
  const float lo = std::floor(raw[0]), hi = std::ceil(raw[1]);
  const std::array<float, 2> dims{0.0f > lo ? 0.0f : lo, n_dims - 1.0f < hi ? n_dims - 1.0f : hi};
  Output out(f.out.out, format == Format::npy);
  if (format == Format::npy) {
    write_npy(out.file(), std::span<const float>(raw), {2});
  } else {
    Json head = result_head(s);
    head["what"] = "corr-dims";
    head["dtype"] = "f32";
    head["note"] = "corr_dims: ggml_rope_yarn_corr_dim(n_dims = rotary_dim, n_ctx_orig = original_context, beta, "
                   "base) for beta_fast, beta_slow before floor / ceil: n_dims * logf(n_ctx_orig / (beta * 2 * "
                   "(float)M_PI)) / (2 * logf(base)) in float32 (ggml-org/ggml@d99724f2 src/ggml.c); dims: what "
                   "ggml_rope_yarn_corr_dims returns, MAX(0, floorf(corr_dims[0])), MIN(n_dims - 1, "
                   "ceilf(corr_dims[1]))";
    write_json(out.file(), head,
               std::vector<JsonArray>{{"corr_dims", std::span<const float>(raw), 0}, {"dims", std::span<const float>(dims), 0}});
  }
  out.commit();
}

// --dynamic-calls L1,L2,...: HF's stateful dynamic-NTK module replayed over successive forward calls
// (RopeDynamicState): per call, what the module did (grow / reset / keep), its cached length afterwards, the
// length its inv_freq was computed for (0: the original) and the frequencies the call used, in the spec's regime.
void run_dynamic_calls(const FreqFlags& f, const Spec& s, Format format) {
  const auto check = [](std::int64_t L) {
    if (L < 1 || L > kRopeMaxContext)
      throw Error(kScheme, "seq_len", std::to_string(L), "an integer in [1, 2^40] (a call's max(position_ids) + 1)");
  };
  const PositionList list = parse_checked_positions("--dynamic-calls", f.dynamic_calls, check);
  if (s.scaling != RopeScaling::dynamic)
    throw UsageError("--dynamic-calls: replays HF's stateful dynamic-NTK module; it needs --scaling dynamic (the "
                     "spec's scaling is " + std::string(to_string(s.scaling)) + ")");
  if (s.seq_len != 0)
    throw UsageError("--seq-len: " + std::to_string(s.seq_len) + " is not used with --dynamic-calls (each call's "
                     "length is given there, and the state starts from the original frequencies); accepted: 0 or "
                     "not given");
  if (list.size() > 100000)
    throw UsageError("--dynamic-calls: '" + f.dynamic_calls + "' holds " + std::to_string(list.size()) +
                     " calls; accepted: at most 100000");
  const std::vector<std::int64_t> calls = list.materialize();
  RopeDynamicState state(s);
  const std::size_t h = pair_count(s), n = calls.size();
  std::vector<std::int64_t> index(n), cached(n), used(n);
  std::vector<std::string> action(n);
  std::vector<double> theta(n * h);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t before = state.cached_length(), used_before = state.current().seq_len;
    const RopeSpec& now = state.step(calls[i]);
    index[i] = static_cast<std::int64_t>(i);
    cached[i] = state.cached_length();
    used[i] = now.seq_len;
    action[i] = state.cached_length() > before ? "grow"
                : (now.seq_len == 0 && used_before != 0) ? "reset"
                                                         : "keep";
    const RopePlan plan = make_plan(now);
    std::copy(plan.frequencies().begin(), plan.frequencies().end(), theta.begin() + static_cast<std::ptrdiff_t>(i * h));
  }
  Output out(f.out.out, format == Format::npy);
  switch (format) {
    case Format::npy: write_npy(out.file(), std::span<const double>(theta), {n, h}); break;
    case Format::json: {
      Json head = result_head(s);
      head["note"] =
          "HF's dynamic-NTK module (transformers v5 dynamic_rope_update) replayed over the calls in order: each call "
          "with length seq_len grows the cached length (inv_freq recomputed for seq_len) when seq_len exceeds it, "
          "resets to the original inv_freq when seq_len < max_context after a growth, else keeps the last inv_freq; "
          "seq_len_used is the length the call's frequencies were computed for (0: the original ones), frequencies "
          "are that call's, in the spec's regime";
      head["calls"] = Json::array();
      for (std::size_t i = 0; i < n; ++i)
        head["calls"].push_back({{"call", i}, {"seq_len", calls[i]}, {"action", action[i]},
                                 {"cached_length", cached[i]}, {"seq_len_used", used[i]}});
      const std::vector<JsonArray> arrays{{"frequencies", std::span<const double>(theta), h}};
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv: {  // one row per call and pair
      std::vector<std::int64_t> call(n * h), L(n * h), c(n * h), u(n * h), pair(n * h);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < h; ++k) {
          const std::size_t r = i * h + k;
          call[r] = index[i], L[r] = calls[i], c[r] = cached[i], u[r] = used[i], pair[r] = static_cast<std::int64_t>(k);
        }
      write_csv(out.file(), {{"call", call}, {"seq_len", L}, {"cached_length", c}, {"seq_len_used", u}, {"pair", pair}},
                {"theta"}, std::span<const double>(theta), n * h);
      break;
    }
  }
  out.commit();
}

void run_freqs(const FreqFlags& f) {
  const Spec s = f.spec.build();
  const Format format = choose_format(f.out.format, f.out.out);
  if (f.what == "corr-dims") {
    if (!f.dynamic_calls.empty())
      throw UsageError("--dynamic-calls: '" + f.dynamic_calls + "' given, but --what corr-dims replays no calls");
    return run_corr_dims(f, s, format);
  }
  if (f.what != "theta")
    throw UsageError("--what: '" + f.what + "'; accepted: theta (the frequencies) | corr-dims (ggml's YaRN correction "
                     "dims as floats, --scaling yarn --regime ggml)");
  if (!f.dynamic_calls.empty()) return run_dynamic_calls(f, s, format);
  const RopePlan plan = make_plan(s);
  const std::span<const double> theta = plan.frequencies();
  const std::size_t h = theta.size();
  // Under a scaling: the unscaled frequencies of the same regime and the weight of the interpolated frequency
  // each pair took (1: theta / factor; 0: kept; between: blended by YaRN's ramp or Llama 3's smoothing).
  const RopePlan plain = make_plan(without_scaling(s));
  const std::span<const double> theta0 = plain.frequencies(), weight = plan.interpolation();
  std::vector<std::int64_t> pair(h), first(h), second(h);
  for (std::size_t k = 0; k < h; ++k) {
    pair[k] = static_cast<std::int64_t>(k);
    first[k] = static_cast<std::int64_t>(first_channel(s, k));
    second[k] = static_cast<std::int64_t>(second_channel(s, k));
  }
  Output out(f.out.out, format == Format::npy);
  switch (format) {
    case Format::npy: write_npy(out.file(), theta, {h}); break;
    case Format::json: {
      Json head = result_head(s);
      head["pairs"] = h;
      switch (s.regime) {
        case RopeRegime::exact:
          head["note"] =
              "theta_k = base^(-2k/r) (theta'_k under a scaling) rounded to double; pair k rotates (x[first_channels[k]], "
              "x[second_channels[k]]) by p * theta_k";
          break;
        case RopeRegime::hf:
          head["note"] = "the float32 inv_freq of the HF steps (exact in double); angle = RN32(RN32(p) * inv_freq)";
          break;
        case RopeRegime::ggml:
          head["note"] = "the float32 theta_k of ggml (scale^k by repeated float32 multiplication, exact in double)";
          break;
        case RopeRegime::roformer:
          head["note"] = "the float64 angle of position 1 of HF RoFormer's numpy table, RN64(1 / w_k), w_k = "
                         "RN64(base^RN64(2k/r)); angle = RN64(p / w_k), cos/sin rounded to float64 then float32";
          break;
      }
      std::vector<JsonArray> arrays{{"first_channels", std::span<const std::int64_t>(first), 0},
                                    {"second_channels", std::span<const std::int64_t>(second), 0},
                                    {"frequencies", theta, 0}};
      std::vector<std::int64_t> axis;
      if (s.mrope != RopeMrope::none) {  // the position row each pair takes (0 t, 1 h, 2 w)
        for (const std::uint8_t a : plan.pair_axes()) axis.push_back(a);
        head["mrope_note"] = "M-RoPE: pair k rotates by the position of row position_axis[k] (0 t, 1 h, 2 w)";
        arrays.push_back({"position_axis", std::span<const std::int64_t>(axis), 0});
      }
      if (s.scaling == RopeScaling::longrope) {
        head["attention_factor"] = plan.attention_factor();
        head["scaling_note"] =
            "frequencies are theta_k / e_k with e the factors named by longrope_factors (the long ones when seq_len > "
            "original_context); unscaled_frequencies the same regime without it; cos and sin are multiplied by "
            "attention_factor";
        head["longrope_factors"] = s.seq_len > s.original_context ? "long_factor" : "short_factor";
        arrays.push_back({"unscaled_frequencies", theta0, 0});
      } else if (s.scaling != RopeScaling::none) {
        head["attention_factor"] = plan.attention_factor();
        head["scaling_note"] =
            "frequencies are theta'_k of the scaling; unscaled_frequencies the same regime without it; "
            "interpolation_weight w_k in theta'_k = (1 - w_k) theta_k + w_k theta_k / factor (exact mathematics: 1 "
            "interpolated, 0 kept, between blended; ntk and dynamic change the base instead, w = 0); cos and sin are "
            "multiplied by attention_factor";
        std::size_t kept = 0, interpolated = 0;
        for (double w : weight) kept += w == 0.0, interpolated += w == 1.0;
        head["pairs_kept"] = kept;
        head["pairs_interpolated"] = interpolated;
        head["pairs_blended"] = h - kept - interpolated;
        arrays.push_back({"unscaled_frequencies", theta0, 0});
        arrays.push_back({"interpolation_weight", weight, 0});
      }
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv: {
      std::vector<double> cols(3 * h);
      for (std::size_t k = 0; k < h; ++k) cols[3 * k] = theta[k], cols[3 * k + 1] = theta0[k], cols[3 * k + 2] = weight[k];
      write_csv(out.file(), {{"pair", pair}, {"first_channel", first}, {"second_channel", second}},
                {"theta", "theta_unscaled", "interpolation_weight"}, std::span<const double>(cols), h);
      break;
    }
  }
  out.commit();
}

// ---- apply -------------------------------------------------------------------------------------------

struct ApplyFlags {
  RopeOptions spec;
  InputFlags in;
  OutFlags out;
  std::string positions, threads, dtype;
  bool inverse = false, heads_first = false;
};

// The element types apply writes: their names, the exact conversion from the reader's doubles, and a span JSON
// output can print (16-bit values as the float32 numbers they are, through `buffer`).
template <class T>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, f16>) return "f16";
  else if constexpr (std::is_same_v<T, bf16>) return "bf16";
  else if constexpr (std::is_same_v<T, float>) return "f32";
  else return "f64";
}
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, f16>) return to_f16(v);
  else if constexpr (std::is_same_v<T, bf16>) return to_bf16(v);
  else return static_cast<T>(v);
}
template <class T>
NumberSpan values_span(std::span<const T> v, std::vector<float>& buffer) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return v;
  } else {
    buffer.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) buffer[i] = static_cast<float>(to_double(v[i]));
    return std::span<const float>(buffer);
  }
}

template <class T>
void run_apply_typed(const ApplyFlags& f, const Spec& s, NpyArray& a, std::size_t tokens, std::size_t heads,
                     std::size_t token_stride, std::size_t head_stride, const std::vector<std::int64_t>& positions,
                     Format format, Output& out) {
  const TableOptions opts = parse_threads(f.threads);
  std::vector<T> converted;
  std::span<T> data;
  if constexpr (std::is_same_v<T, double>) {
    data = std::span<double>(a.values);  // rotated where it lies
  } else {
    check_memory(a.values.size() * sizeof(T), std::string("a ") + dtype_name<T>() + " copy of --in");
    converted.resize(a.values.size());
    for (std::size_t i = 0; i < converted.size(); ++i) converted[i] = from_double<T>(a.values[i]);  // exact
    a.values = {};
    data = std::span<T>(converted);
  }
  const RopeTensor<T> view{data, tokens, heads, token_stride, head_stride};
  make_plan(s).apply(view, positions, f.inverse ? RopeDirection::inverse : RopeDirection::forward, opts);

  const std::span<const T> values(data);
  if (format == Format::npy) {
    write_npy(out.file(), values, a.shape);
  } else {
    Json head = result_head(s);
    head["direction"] = f.inverse ? "inverse" : "forward";
    head["layout"] = f.heads_first ? "[heads, tokens, head_dim]"
                                   : (a.shape.size() == 3 ? "[tokens, heads, head_dim]" : "[tokens, head_dim]");
    head["shape"] = a.shape;
    head["dtype"] = dtype_name<T>();
    std::vector<float> floats;
    NumberSpan numbers = values_span(values, floats);
    const std::vector<JsonArray> arrays{{"positions", std::span<const std::int64_t>(positions), 0},
                                        {"values", numbers, s.head_dim}};
    write_json(out.file(), head, arrays);
  }
  out.commit();
}

void run_apply(ApplyFlags& f, CLI::App* app) {
  NpyArray a = f.in.read();
  const std::vector<std::size_t>& sh = a.shape;
  if (sh.size() != 2 && sh.size() != 3)
    throw UsageError("--in: '" + f.in.path + "' holds an array of shape " + shape_text(sh) +
                     "; accepted: [tokens, head_dim] or [tokens, heads, head_dim] ([heads, tokens, head_dim] with "
                     "--heads-first)");
  if (f.heads_first && sh.size() != 3)
    throw UsageError("--heads-first: '" + f.in.path + "' holds an array of shape " + shape_text(sh) +
                     "; accepted: a 3-dimensional [heads, tokens, head_dim] array");
  // The output type: the input's own unless --dtype f32 asks a 16-bit input to be rotated and written as float32.
  const NpyType stored = a.stored;
  const std::string in_type(to_string(stored));
  const std::string out_type = f.dtype.empty() ? in_type : f.dtype;
  const bool half_in = stored == NpyType::f16 || stored == NpyType::bf16;
  if (out_type != in_type && !(half_in && out_type == "f32"))
    throw UsageError("--dtype: '" + f.dtype + "' for an input of type " + in_type + " ('" + f.in.path +
                     "'); accepted: " + in_type + " (the default: the input's type)" +
                     (half_in ? " | f32 (rotated as float32, written as f32)" : ""));
  const std::size_t d = sh.back();
  f.spec.input_head_dim = d;
  const Spec s = f.spec.build();
  if (s.head_dim != d)
    throw Error(kScheme, f.spec.given("--head-dim") ? "--head-dim" : "head_dim (from " + f.spec.start_flag() + ")",
                std::to_string(s.head_dim), "the last dimension of --in, " + std::to_string(d),
                "differs from the input");
  std::size_t tokens, heads, token_stride, head_stride;
  if (sh.size() == 2) {
    tokens = sh[0], heads = 1, token_stride = d, head_stride = d;
  } else if (!f.heads_first) {
    tokens = sh[0], heads = sh[1], token_stride = sh[1] * d, head_stride = d;
  } else {
    heads = sh[0], tokens = sh[1], token_stride = d, head_stride = sh[1] * d;  // HF's transposed layout, in place
  }
  const std::vector<std::int64_t> positions =
      positions_for(s, "--positions", f.positions, app->count("--positions") > 0, tokens,
                    "an input of " + std::to_string(tokens) + " tokens (shape " + shape_text(sh) + ")", "token");
  const Format format = choose_format(f.out.format, f.out.out, {Format::npy, Format::json});
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  if (out_type == "f64")
    run_apply_typed<double>(f, s, a, tokens, heads, token_stride, head_stride, positions, format, out);
  else if (out_type == "f16")
    run_apply_typed<f16>(f, s, a, tokens, heads, token_stride, head_stride, positions, format, out);
  else if (out_type == "bf16")
    run_apply_typed<bf16>(f, s, a, tokens, heads, token_stride, head_stride, positions, format, out);
  else
    run_apply_typed<float>(f, s, a, tokens, heads, token_stride, head_stride, positions, format, out);
}

// ---- check -------------------------------------------------------------------------------------------

struct CheckFlags {
  RopeOptions spec;
  InputFlags in;
  ReportFlags report;
  std::string positions, form = "pairs", threads, x_path;
  double ulp_pow = 2.0, ulp_trig = 2.0;
  bool inverse = false;
};

// Runs a check (cache or rotated tensor) with the --ulp-* allowances and --threads, writes its report and sets the
// exit status: 0 pass, 1 fail. Spec errors are renamed to the flags the user typed.
template <class Check>
void report_check(CheckFlags& f, CLI::App* app, Check&& check) {
  const TableOptions opts = parse_threads(f.threads);
  verify::CheckReport rep;
  try {
    check_ulp_allowance(app, "--ulp-pow", f.ulp_pow);
    check_ulp_allowance(app, "--ulp-trig", f.ulp_trig);
    rep = check(verify::rope::EnvelopeAllowance{f.ulp_pow, f.ulp_trig}, opts.threads);
  } catch (const Error& e) {
    if (e.parameter() == "positions")  // a position the check does not cover (xPos: beyond 55 scale_base)
      throw UsageError("--positions: '" + (f.positions.empty() ? std::string("(default)") : f.positions) + "' holds " +
                       e.value() + "; accepted: " + e.accepted());
    throw SpecOptions<Spec>::renamed(e);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

// The dimensions of a [tokens, head_dim] or [tokens, heads, head_dim] tensor named by `flag`.
std::pair<std::size_t, std::size_t> tokens_and_heads(const std::string& flag, const std::string& path,
                                                     const std::vector<std::size_t>& sh) {
  if (sh.size() != 2 && sh.size() != 3)
    throw UsageError(flag + ": '" + path + "' holds an array of shape " + shape_text(sh) +
                     "; accepted: [tokens, head_dim] or [tokens, heads, head_dim]");
  return {sh[0], sh.size() == 3 ? sh[1] : 1};
}

// check --x: the user's rotated tensor (--in) against the rotation of --x.
void run_check_rotated(CheckFlags& f, CLI::App* app) {
  const NpyArray x = read_input("--x", f.x_path);
  if (app->count("--form") > 0)
    throw UsageError("--form: '" + f.form + "' describes a cos/sin cache; with --x '" + f.x_path +
                     "', --in is a rotated tensor (give one or the other)");
  const NpyArray y = f.in.read();
  const auto [tokens, heads] = tokens_and_heads("--in", f.in.path, y.shape);
  (void)tokens_and_heads("--x", f.x_path, x.shape);
  if (x.shape != y.shape)
    throw UsageError("--x: '" + f.x_path + "' holds an array of shape " + shape_text(x.shape) + "; accepted: the shape of --in, " +
                     shape_text(y.shape));
  f.spec.input_head_dim = y.shape.back();
  const Spec s = f.spec.build();
  if (s.head_dim != y.shape.back())
    throw Error(kScheme, f.spec.given("--head-dim") ? "--head-dim" : "head_dim (from " + f.spec.start_flag() + ")",
                std::to_string(s.head_dim), "the last dimension of --in, " + std::to_string(y.shape.back()),
                "differs from the input");
  verify::rope::RotatedInput input;
  input.x = x.values;
  input.y = y.values;
  input.tokens = tokens;
  input.heads = heads;
  input.stored = dtype_of(y.stored);
  input.inverse = f.inverse;
  input.positions = positions_for(s, "--positions", f.positions, app->count("--positions") > 0, tokens,
                                  "a tensor of " + std::to_string(tokens) + " tokens (shape " + shape_text(y.shape) + ")",
                                  "token");
  input.describe = {{"file", f.in.path}, {"stored", std::string(to_string(y.stored))}, {"shape", shape_text(y.shape)},
                    {"x", f.x_path}, {"x_stored", std::string(to_string(x.stored))}};
  report_check(f, app, [&](const verify::rope::EnvelopeAllowance& allowance, int threads) {
    try {
      return verify::rope::check_rotated(s, input, allowance, threads);
    } catch (const Error& e) {
      if (e.parameter() != "x") throw;
      throw UsageError("--x: '" + f.x_path + "' " + e.problem() + " " + e.value() + "; accepted: " + e.accepted());
    }
  });
}

void run_check(CheckFlags& f, CLI::App* app) {
  if (!f.x_path.empty()) return run_check_rotated(f, app);
  if (f.inverse) throw UsageError("--inverse: a cos/sin cache has no direction; it goes with --x (a rotated tensor)");
  const NpyArray a = f.in.read();
  const RopeCacheForm form = parse_form(f.form);
  const bool hf = form == RopeCacheForm::hf;
  const std::vector<std::size_t>& sh = a.shape;
  const std::string file = "--in: '" + f.in.path + "' holds an array of shape " + shape_text(sh);
  if (sh.empty() || a.cols() < 2 || a.cols() % 2 != 0)
    throw UsageError(file + "; a cache's rows hold 2 * (rotary_dim / 2) values (an even number >= 2)");
  if (hf && !((sh.size() == 3 && sh[0] == 2) || (sh.size() == 2 && sh[0] % 2 == 0)))
    throw UsageError(file +
                     "; accepted for --form hf: (2, positions, rotary_dim), cos block then sin block "
                     "(or the two blocks stacked as (2 * positions, rotary_dim))");
  f.spec.cache_rotary_dim = a.cols();
  const Spec s = f.spec.build();
  const std::size_t n = hf ? a.rows() / 2 : a.rows();
  verify::rope::CacheInput input;
  input.values = a.values;
  input.rows = a.rows();
  input.cols = a.cols();
  input.stored = dtype_of(a.stored);
  input.form = form;
  input.positions = positions_for(
      s, "--positions", f.positions, app->count("--positions") > 0, n,
      "a cache of " + std::to_string(n) + " positions (shape " + shape_text(sh) + ", form " + f.form + ")",
      hf ? "row of each block" : "row");
  input.describe = {{"file", f.in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(sh)}};
  report_check(f, app, [&](const verify::rope::EnvelopeAllowance& allowance, int threads) {
    return verify::rope::check_cache(s, input, allowance, threads);
  });
}

}  // namespace

// ---- scores ------------------------------------------------------------------------------------------

namespace {  // (internal linkage: cli/bias_verbs.hpp has a posenc::cli::ScoresFlags of its own)

struct RopeScoresFlags {
  RopeOptions spec;
  std::string q_path, k_path, q_positions, k_positions, threads;
  OutFlags out;
};

void run_scores(RopeScoresFlags& f, CLI::App* app) {
  NpyArray q = read_input("--q", f.q_path), k = read_input("--k", f.k_path);
  for (const auto& [name, a] : {std::pair<const char*, NpyArray*>{"--q", &q}, {"--k", &k}})
    if (a->shape.size() != 2)
      throw UsageError(std::string(name) + ": holds an array of shape " + shape_text(a->shape) +
                       "; accepted: [tokens, head_dim] (one head)");
  if (q.shape[1] != k.shape[1])
    throw UsageError("--k: head_dim " + std::to_string(k.shape[1]) + " differs from --q's " + std::to_string(q.shape[1]));
  f.spec.input_head_dim = q.shape[1];
  const Spec s = f.spec.build();
  if (s.head_dim != q.shape[1])
    throw Error(kScheme, f.spec.given("--head-dim") ? "--head-dim" : "head_dim (from " + f.spec.start_flag() + ")",
                std::to_string(s.head_dim), "the last dimension of --q and --k, " + std::to_string(q.shape[1]),
                "differs from the input");
  const std::size_t lq = q.shape[0], lk = k.shape[0];
  const auto qp = positions_for(s, "--q-positions", f.q_positions, app->count("--q-positions") > 0, lq,
                                "--q's " + std::to_string(lq) + " tokens", "token");
  const auto kp = positions_for(s, "--k-positions", f.k_positions, app->count("--k-positions") > 0, lk,
                                "--k's " + std::to_string(lk) + " tokens", "token");
  const TableOptions opts = parse_threads(f.threads);
  const bool f64 = q.stored == NpyType::f64 && k.stored == NpyType::f64;
  check_memory(lq * lk * (f64 ? 8 : 4), "the scores matrix");
  const Format format = choose_format(f.out.format, f.out.out, {Format::npy, Format::json});
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  auto emit = [&](auto values) {
    if (format == Format::npy) {
      write_npy(out.file(), values, std::vector<std::size_t>{lq, lk});
    } else {
      Json head = result_head(s);
      head["shape"] = {lq, lk};
      head["note"] = "scores[i][j] = <R(q_positions[i]) q_i, R(k_positions[j]) k_j>: no 1/sqrt(d) scaling, no mask";
      const std::vector<JsonArray> arrays{{"q_positions", std::span<const std::int64_t>(qp), 0},
                                          {"k_positions", std::span<const std::int64_t>(kp), 0},
                                          {"scores", values, lk}};
      write_json(out.file(), head, arrays);
    }
    out.commit();
  };
  const RopePlan plan = make_plan(s);
  if (f64) {
    std::vector<double> sc(lq * lk);
    plan.scores(std::span<const double>(q.values), qp, std::span<const double>(k.values), kp, std::span<double>(sc), opts);
    emit(std::span<const double>(sc));
  } else {
    const std::vector<float> q32(q.values.begin(), q.values.end()), k32(k.values.begin(), k.values.end());
    std::vector<float> sc(lq * lk);
    plan.scores(std::span<const float>(q32), qp, std::span<const float>(k32), kp, std::span<float>(sc), opts);
    emit(std::span<const float>(sc));
  }
}

}  // namespace

namespace {

// The help of --positions and --form, shared by the verbs.
std::string positions_help() {
  return "Positions: a:b, a:b:step, p, comma-separated, e.g. 0:4,1000 (|p| <= 2^40; negative: inverse rotations)";
}
std::string form_help() {
  return "Cache form: " + enum_names<RopeCacheForm>() +
         " (pairs [cos | sin], hf (2, P, r) cos then sin blocks [c | c], gptj [sin | cos], ggml [cos_0, sin_0, cos_1, ...])";
}

void add_table_verb(Registry& registry) {
  auto f = std::make_shared<TableFlags>();
  CLI::App* c = registry.command(
      "table", kScheme, "The cos/sin cache for the given positions, in an engine's form: pairs, hf, gptj, ggml");
  f->spec.add(c);
  c->add_option("--positions", f->positions,
                positions_help() + " (default 0:16; --mrope: the rows t, h, w one after another, default t = h = w)")
      ->type_name("SPEC")
      ->group("Rows");
  c->add_option("--form", f->form, form_help() + " (default pairs)")->type_name("FORM")->group("Rows");
  c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
  c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
  f->out.add_to(c, "npy | json | csv");
  c->footer(
      "Example: posenc table rope --preset hf-llama --head-dim 64 --positions 0:4096 --form hf --out cache.npy");
  c->callback([f, c] { run_table(*f, c->count("--positions") > 0); });
}

void add_freqs_verb(Registry& registry) {
  auto f = std::make_shared<FreqFlags>();
  CLI::App* c = registry.command(
      "freqs", kScheme, "theta_k (k = 0..r/2-1) as the regime computes them, and the two channels of each pair");
  f->spec.add(c);
  f->out.add_to(c, "json | csv | npy");
  c->add_option("--dynamic-calls", f->dynamic_calls,
                "with --scaling dynamic: replay HF's stateful module over forward calls of these lengths "
                "(max(position_ids) + 1 each, in order; --positions syntax): per call grow / reset / keep, the "
                "cached length, the length its frequencies were computed for, and the frequencies")
      ->type_name("L,...");
  c->add_option("--what", f->what,
                "theta (default): the frequencies; corr-dims: ggml_rope_yarn_corr_dims' two float32 values before "
                "floorf / ceilf and its clamps (corr_dim of beta_fast and beta_slow; --scaling yarn --regime ggml), "
                "JSON adds the clamped dims; npy | json")
      ->type_name("theta|corr-dims");
  c->footer("Example: posenc freqs rope --preset hf-llama --head-dim 64 --scaling dynamic --factor 2 "
            "--max-context 2048 --dynamic-calls 100,3000,2500,100 --format json\n"
            "Example: posenc freqs rope --preset ggml-neox --head-dim 128 --scaling yarn --factor 4 "
            "--original-context 4096 --what corr-dims --format json\n"
            "Example: posenc freqs rope --preset hf-llama --head-dim 64 --regime hf --format csv");
  c->callback([f] { run_freqs(*f); });
}

void add_apply_verb(Registry& registry) {
  auto f = std::make_shared<ApplyFlags>();
  CLI::App* c = registry.command("apply", kScheme,
                                 "Rotate a [tokens, head_dim] or [tokens, heads, head_dim] tensor (.npy) by R(p) per "
                                 "token, R(-p) with --inverse");
  f->spec.add(c);
  f->in.add_to(c);
  c->add_option("--positions", f->positions, positions_help() + "; one per token (default 0 .. tokens-1)")
      ->type_name("SPEC")
      ->group("Input");
  c->add_flag("--inverse", f->inverse, "Apply R(-p) = R(p)^T (undo the rotation)");
  c->add_flag("--heads-first", f->heads_first, "--in is [heads, tokens, head_dim] (HF's transposed layout)")
      ->group("Input");
  c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
  c->add_option("--dtype", f->dtype,
                "Output type: the input's (default; f16 and bf16 are rotated with float32 arithmetic and rounded "
                "once back) | f32 for a 16-bit input (rotated as float32, written as f32)")
      ->type_name("T")
      ->group("Output");
  f->out.add_to(c, "npy | json");
  c->footer(
      "The output has the input's type (f16, bf16 as uint16 bit patterns, f32, f64) unless --dtype f32.\n"
      "head_dim is the input's last dimension unless --head-dim or --spec says it.\n"
      "Example: posenc apply rope --preset hf-llama --in q.npy --positions 5:13 --out q_rot.npy");
  c->callback([f, c] { run_apply(*f, c); });
}

void add_scores_verb(Registry& registry) {
  auto f = std::make_shared<RopeScoresFlags>();
  CLI::App* c = registry.command("scores", kScheme,
                                 "Pre-softmax scores <R(m) q_i, R(n) k_j> of one head: rotate, then one BLAS gemm "
                                 "(no 1/sqrt(d), no mask)");
  f->spec.add(c);
  c->add_option("--q", f->q_path, "Queries: .npy [Lq, head_dim] (f16, f32, f64)")->type_name("FILE")->required()->group("Input");
  c->add_option("--k", f->k_path, "Keys: .npy [Lk, head_dim]")->type_name("FILE")->required()->group("Input");
  c->add_option("--q-positions", f->q_positions, positions_help() + "; one per query (default 0 .. Lq-1)")
      ->type_name("SPEC")->group("Input");
  c->add_option("--k-positions", f->k_positions, positions_help() + "; one per key (default 0 .. Lk-1)")
      ->type_name("SPEC")->group("Input");
  c->add_option("--threads", f->threads, "threads for the rotations (0: OpenMP's default count)")->type_name("N");
  f->out.add_to(c, "npy | json");
  c->footer("f64 when both inputs are f64, else f32 (f16 inputs are converted exactly).\n"
            "Example: posenc scores rope --preset hf-llama --q q.npy --k k.npy --q-positions 100:108 --out s.npy");
  c->callback([f, c] { run_scores(*f, c); });
}

void add_check_verb(Registry& registry) {
  auto f = std::make_shared<CheckFlags>();
  CLI::App* c = registry.command(
      "check", kScheme,
      "Your cos/sin cache (.npy), or with --x your rotated tensor, against the exact value (budget rows "
      "rope.check.exact.<dtype>, rope.check.rotated.exact.<dtype>) and, for the hf and ggml regimes, their float32 "
      "steps (emulation envelope); exit 0 pass, 1 fail");
  f->spec.add(c);
  f->in.add_to(c);
  c->add_option("--x", f->x_path,
                "The unrotated tensor (.npy [tokens, head_dim] or [tokens, heads, head_dim]): --in is then your "
                "rotated tensor R(p) x of the same shape, one position per token")
      ->type_name("FILE")
      ->group("Input");
  c->add_flag("--inverse", f->inverse, "With --x: --in is R(-p) x (the inverse rotation)")->group("Input");
  c->add_option("--form", f->form, form_help() + " (default pairs)")->type_name("FORM")->group("Input");
  c->add_option("--positions", f->positions,
                positions_help() + "; one per cache row, or per token with --x (default 0 .. rows-1)")
      ->type_name("SPEC")
      ->group("Input");
  c->add_option("--ulp-pow", f->ulp_pow, "Envelope: ulps a float32 pow may be off correctly rounded (default 2; --regime roformer: "
                "numpy's float64 pow, ulps of float64)")
      ->type_name("A")
      ->check(CLI::Range(0.0, 1.0e6))
      ->group("Envelope");
  c->add_option("--ulp-trig", f->ulp_trig,
                "Envelope: ulps a float32 cos/sin may be off correctly rounded (default 2; --regime roformer: "
                "numpy's float64 cos/sin, ulps of float64)")
      ->type_name("A")
      ->check(CLI::Range(0.0, 1.0e6))
      ->group("Envelope");
  c->add_option("--threads", f->threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
  f->report.add_to(c);
  c->footer(
      "rotary_dim is the cache's width unless --rotary-dim, --head-dim, --partial-rotary-factor or --spec says it;\n"
      "with --x, head_dim is the tensors' last dimension.\n"
      "Example: posenc check rope --preset hf-llama --in cache.npy --form hf --positions 0:4096 --format json\n"
      "Example: posenc check rope --preset hf-llama --x q.npy --in q_rot.npy --positions 7:39");
  c->callback([f, c] { run_check(*f, c); });
}

// ---- identify ----------------------------------------------------------------------------------------

void add_identify_verb(Registry& registry) {
  add_identify_command(
      registry, kScheme,
      "Which RoPE convention a cos/sin cache follows: form, preset, regime, base, rotary_dim, scaling and factor, or "
      "the nearest one and where it differs",
      positions_help() + "; one per position row (default 0 .. rows-1)",
      "The shape gives the forms tried: (2, positions, rotary_dim) hf; (positions, rotary_dim) pairs, gptj, ggml.\n"
      "The base and a linear factor are fitted to the high-frequency pairs between the two closest position rows\n"
      "(at most 4 apart); low frequencies turning slower suggest llama3 / yarn. Exit status 0 when a convention\n"
      "passes its check.\n"
      "Example: posenc identify rope --in cos_sin.npy --positions 0:4096 --format json",
      [](const NpyArray& a, const IdentifyFlags& f, bool positions_given) {
        std::size_t n = 0;
        try {
          n = verify::rope::identify_position_rows(a.shape);
        } catch (const Error& e) {
          throw UsageError("--in: '" + f.in.path + "' holds an array of shape " + shape_text(a.shape) +
                           "; accepted: " + e.accepted());
        }
        verify::rope::IdentifyInput input{a.values, a.shape, dtype_of(a.stored), {}, {}};
        input.positions = one_position_each("--positions", f.positions, positions_given, n,
                                            "a cache of " + std::to_string(n) + " positions (shape " +
                                                shape_text(a.shape) + ")",
                                            "position row");
        return verify::rope::identify_cache(input);
      });
}
}  // namespace

POSENC_CLI_SCHEME(rope) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  add_table_verb(registry);
  add_freqs_verb(registry);
  add_apply_verb(registry);
  add_scores_verb(registry);
  add_check_verb(registry);
  add_identify_verb(registry);
}

}  // namespace posenc::cli::scheme_rope
