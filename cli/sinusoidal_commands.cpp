// `posenc table|freqs|shift sinusoidal`: sinusoidal absolute encodings (CONVENTIONS.md §2.1).
//
// Every subcommand takes the same spec flags. A --preset fills the whole SinusoidalSpec (the
// tensor2tensor preset also takes --min-timescale/--max-timescale, the fairseq preset --padding-idx, as
// their factory functions do); any other explicit flag then overrides one field; the result is
// validated by posenc::validate, whose message names the field, the value and the accepted range.
#include <cmath>
#include <stdexcept>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "args.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "registry.hpp"

namespace posenc::cli {
namespace {

constexpr const char* kScheme = "sinusoidal";
constexpr std::size_t kDefaultDim = 512;
constexpr std::uint64_t kDefaultTokens = 16;

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

Json spec_json(const SinusoidalSpec& s) {
  Json j;
  j["dim"] = s.dim;
  j["base"] = s.base;
  j["min_timescale"] = s.min_timescale;
  j["layout"] = to_string(s.layout);
  j["rule"] = to_string(s.rule);
  j["odd_dim"] = to_string(s.odd_dim);
  j["first_position"] = s.first_position;
  j["padding_row"] = s.padding_row ? Json(*s.padding_row) : Json(nullptr);
  j["signed_positions"] = s.signed_positions;
  j["regime"] = to_string(s.regime);
  return j;
}

// ---- spec flags ------------------------------------------------------------------------------------

struct SpecFlags {
  CLI::App* app = nullptr;
  std::string preset, dim, base, min_ts, max_ts, layout, rule, odd_dim, regime, padding_idx, first_position;
  bool signed_positions = false;

  bool given(const std::string& flag) const { return app->count(flag) > 0; }

  void add_to(CLI::App* a) {
    app = a;
    a->add_option("--preset", preset, "Convention to start from: vaswani | marian | tensor2tensor | fairseq (see `posenc list`)")
        ->type_name("NAME")->group("Spec");
    a->add_option("--dim", dim, "Columns per row d (default 512): 2..1048576, even unless --odd-dim zero_pad")
        ->type_name("D")->group("Spec");
    a->add_option("--base", base, "Base of the frequency rule (default 10000): finite, > 1")->type_name("B")->group("Spec");
    a->add_option("--min-timescale", min_ts, "omega_0: every omega_k is scaled by X, as t2t does (default 1): 0 < X <= 1e6")
        ->type_name("X")->group("Spec");
    a->add_option("--max-timescale", max_ts, "t2t max_timescale, sets base = max/min (default 1e4): > min_timescale")
        ->type_name("Y")->group("Spec");
    a->add_option("--layout", layout, "interleaved (sin 2k, cos 2k+1) | halves ([sin | cos])")->type_name("L")->group("Spec");
    a->add_option("--rule", rule, "Frequency rule: paper (base^(-2k/d)) | tensor2tensor | fairseq (base^(-k/(h-1)))")
        ->type_name("R")->group("Spec");
    a->add_option("--odd-dim", odd_dim, "Odd d: reject | zero_pad (one zero column, as t2t/fairseq)")
        ->type_name("P")->group("Spec");
    a->add_option("--regime", regime, "exact (default) | emulated (float32 steps of t2t/fairseq; those rules only)")
        ->type_name("exact|emulated")->group("Spec");
    a->add_option("--padding-idx", padding_idx,
                  "Zero row at N and first token at N+1 (fairseq; default 1 for that preset); 'none' removes it")
        ->type_name("N|none")->group("Spec");
    a->add_option("--first-position", first_position, "Position of token 0 (default 0; fairseq padding_idx+1)")
        ->type_name("P")->group("Spec");
    a->add_flag("--signed-positions", signed_positions, "Accept negative positions (|p| <= 2^40)")->group("Spec");
  }

  SinusoidalSpec build() const {
    const std::string where(kScheme);
    std::size_t d = kDefaultDim;
    if (given("--dim")) {
      const std::int64_t v = parse_int64("--dim", dim);
      if (v < 0) throw Error(where, "dim", dim, "2 <= dim <= 1048576");
      d = static_cast<std::size_t>(v);
    }
    std::optional<double> min_t, max_t;
    if (given("--min-timescale")) min_t = parse_double("--min-timescale", min_ts);
    if (given("--max-timescale")) max_t = parse_double("--max-timescale", max_ts);
    if (given("--base") && max_t)
      throw UsageError("--base and --max-timescale both set the base (base = max_timescale / min_timescale); give one of them");
    std::optional<std::int64_t> pad;
    const bool pad_none = given("--padding-idx") && padding_idx == "none";
    if (given("--padding-idx") && !pad_none) {
      pad = parse_int64("--padding-idx", padding_idx);
      if (*pad < 0 || *pad > kMaxPosition - 1) throw Error(where, "padding_idx", padding_idx, "0 <= padding_idx < 2^40, or none");
    }

    SinusoidalSpec s;
    s.dim = d;
    bool timescales_done = false, padding_done = false;
    if (given("--preset")) {
      const SinusoidalPreset p = parse_sinusoidal_preset(preset);
      if (p == SinusoidalPreset::tensor2tensor && (min_t || max_t)) {
        s = tensor2tensor_spec(d, min_t.value_or(1.0), max_t.value_or(1.0e4));
        timescales_done = true;
      } else if (p == SinusoidalPreset::fairseq && pad) {
        s = fairseq_spec(d, *pad);
        padding_done = true;
      } else {
        s = preset_spec(p, d);
      }
    }
    if (given("--base")) s.base = parse_double("--base", base);
    if (!timescales_done) {
      if (min_t) {
        if (!(std::isfinite(*min_t) && *min_t > 0.0 && *min_t <= 1.0e6))
          throw Error(where, "min_timescale", num(*min_t), "finite, 0 < min_timescale <= 1e6");
        s.min_timescale = *min_t;
      }
      if (max_t) {
        if (!(std::isfinite(*max_t) && *max_t > s.min_timescale))
          throw Error(where, "max_timescale", num(*max_t), "finite, > min_timescale = " + num(s.min_timescale));
        s.base = *max_t / s.min_timescale;
      }
    }
    if (given("--layout")) s.layout = parse_layout(layout);
    if (given("--rule")) s.rule = parse_frequency_rule(rule);
    if (given("--odd-dim")) s.odd_dim = parse_odd_dim(odd_dim);
    if (given("--regime")) s.regime = parse_regime(regime);
    if (pad_none) {
      s.padding_row.reset();
      s.first_position = 0;
    } else if (pad && !padding_done) {
      s.padding_row = *pad;
      s.first_position = *pad + 1;
    }
    if (given("--first-position")) s.first_position = parse_int64("--first-position", first_position);
    if (signed_positions) s.signed_positions = true;
    validate(s);
    return s;
  }
};

// ---- output plumbing -------------------------------------------------------------------------------

struct OutFlags {
  std::string format, out = "-";
  void add_to(CLI::App* a, const std::string& formats) {
    a->add_option("--format", format, formats + " (default: from the --out extension, else json)")
        ->type_name("FMT")->group("Output");
    a->add_option("--out", out, "Output file, written atomically, or - for stdout (default -)")
        ->type_name("FILE")->group("Output");
  }
};

// Refuses sizes beyond the machine's physical memory up front: with overcommit, a huge allocation
// succeeds and the process is killed later, mid-computation, instead of failing with a message.
template <class T>
std::unique_ptr<T[]> allocate(std::size_t n, const std::string& what) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    const double bytes = static_cast<double>(n) * sizeof(T);
    const double phys = static_cast<double>(pages) * static_cast<double>(page);
    if (bytes > phys)
      throw std::runtime_error(what + " needs " + std::to_string(n) + " x " + std::to_string(sizeof(T)) +
                               " bytes, more than this machine's memory (" + num(phys) + " bytes)");
  }
  std::unique_ptr<T[]> p(new (std::nothrow) T[n]);
  if (!p)
    throw std::runtime_error("cannot allocate " + std::to_string(n * sizeof(T)) + " bytes for " + what);
  return p;
}

bool parse_dtype_is_f64(const std::string& dtype) {
  if (dtype == "f32") return false;
  if (dtype == "f64") return true;
  throw UsageError("--dtype: '" + dtype + "' is not an output type; accepted: f32 | f64");
}

Json head_for(const SinusoidalSpec& s) {
  Json head;
  head["scheme"] = kScheme;
  head["spec"] = spec_json(s);
  return head;
}

// ---- table -------------------------------------------------------------------------------------------

struct TableFlags {
  SpecFlags spec;
  OutFlags out;
  std::string positions, tokens, dtype = "f32", threads;
};

// Token indices -> positions: position_of_token is first_position + t, so runs map to runs.
PositionList tokens_to_positions(const SinusoidalSpec& s, const PositionList& tokens) {
  std::vector<PositionRun> runs;
  for (const auto& r : tokens.runs()) {
    const std::int64_t a = position_of_token(s, r.start);
    position_of_token(s, r.last());
    runs.push_back({a, r.step, r.count});
  }
  return PositionList(std::move(runs));
}

template <class T>
void run_table_typed(const TableFlags& f, const SinusoidalSpec& s, const PositionList& positions,
                     const std::optional<PositionList>& tokens, Format format) {
  TableOptions opts;
  if (!f.threads.empty()) {
    const std::int64_t t = parse_int64("--threads", f.threads);
    if (t < 0 || t > 4096) throw UsageError("--threads: '" + f.threads + "' is out of range; accepted: 0 (OpenMP default) .. 4096");
    opts.threads = static_cast<int>(t);
  }
  const std::size_t count = static_cast<std::size_t>(positions.size());
  std::int64_t first = 0;
  const bool contiguous = positions.contiguous(&first);
  std::size_t elems;
  if (contiguous) {
    elems = checked_table_elements(s, first, count, sizeof(T));
  } else {
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T) / s.dim)
      throw Error(kScheme, "count", std::to_string(count),
                  "count * dim * " + std::to_string(sizeof(T)) + " bytes must fit in size_t (dim = " + std::to_string(s.dim) + ")");
    elems = count * s.dim;
  }
  auto data = allocate<T>(elems, "a " + std::to_string(count) + " x " + std::to_string(s.dim) + " table");
  const std::span<T> table(data.get(), elems);
  std::vector<std::int64_t> list;
  if (contiguous) {
    sinusoidal_table(s, first, count, table, opts);
  } else {
    list = positions.materialize();
    sinusoidal_rows(s, list, table, opts);
  }
  if (format != Format::npy && list.empty()) list = positions.materialize();

  Output out(f.out.out, format == Format::npy);
  const std::span<const T> values(table);
  switch (format) {
    case Format::npy:
      write_npy(out.file(), values, {count, s.dim});
      break;
    case Format::json: {
      Json head = head_for(s);
      head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
      std::vector<std::int64_t> tok;
      std::vector<JsonArray> arrays;
      arrays.push_back({"positions", std::span<const std::int64_t>(list), 0});
      if (tokens) {
        tok = tokens->materialize();
        arrays.push_back({"tokens", std::span<const std::int64_t>(tok), 0});
      }
      arrays.push_back({"rows", values, s.dim});
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv:
      write_csv(out.file(), {{"position", std::move(list)}}, numbered_names("c", s.dim), values, count);
      break;
  }
  out.commit();
}

void run_table(const TableFlags& f, CLI::App* app) {
  const SinusoidalSpec s = f.spec.build();
  const bool f64 = parse_dtype_is_f64(f.dtype);
  std::optional<PositionList> tokens;
  PositionList positions;
  if (app->count("--tokens")) {
    tokens = PositionList::parse("--tokens", f.tokens);
  } else if (app->count("--positions")) {
    positions = PositionList::parse("--positions", f.positions);
  } else {
    tokens = PositionList({PositionRun{0, 1, kDefaultTokens}});
  }
  if (tokens) positions = tokens_to_positions(s, *tokens);
  for (const auto& r : positions.runs()) {
    check_position(s, r.start);
    check_position(s, r.last());
  }
  const Format format = choose_format(f.out.format, f.out.out);
  if (f64)
    run_table_typed<double>(f, s, positions, tokens, format);
  else
    run_table_typed<float>(f, s, positions, tokens, format);
}

// ---- freqs -------------------------------------------------------------------------------------------

struct FreqFlags {
  SpecFlags spec;
  OutFlags out;
};

void run_freqs(const FreqFlags& f) {
  const SinusoidalSpec s = f.spec.build();
  const Format format = choose_format(f.out.format, f.out.out);
  const std::vector<double> w = sinusoidal_frequencies(s);
  const std::size_t h = w.size();
  std::vector<std::int64_t> pair(h), ss(h), cs(h);
  for (std::size_t k = 0; k < h; ++k) {
    pair[k] = static_cast<std::int64_t>(k);
    ss[k] = static_cast<std::int64_t>(sin_slot(s, k));
    cs[k] = static_cast<std::int64_t>(cos_slot(s, k));
  }
  Output out(f.out.out, format == Format::npy);
  const std::span<const double> values(w);
  switch (format) {
    case Format::npy:
      write_npy(out.file(), values, {h});
      break;
    case Format::json: {
      Json head = head_for(s);
      head["pairs"] = h;
      head["note"] = s.regime == Regime::exact
                         ? "omega_k rounded to double; entry = sin/cos(p * omega_k) at sin_slots[k] / cos_slots[k]"
                         : "omega_k as the emulated float32 code computes it (exact in double)";
      const std::vector<JsonArray> arrays{{"sin_slots", std::span<const std::int64_t>(ss), 0},
                                          {"cos_slots", std::span<const std::int64_t>(cs), 0},
                                          {"frequencies", values, 0}};
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv:
      write_csv(out.file(), {{"pair", pair}, {"sin_slot", ss}, {"cos_slot", cs}}, {"omega"}, values, h);
      break;
  }
  out.commit();
}

// ---- shift -------------------------------------------------------------------------------------------

struct ShiftFlags {
  SpecFlags spec;
  OutFlags out;
  std::string k, dtype = "f64";
  bool dense = false;
};

template <class T>
void run_shift_typed(const ShiftFlags& f, const ShiftOperator& op, Format format) {
  const SinusoidalSpec& s = op.spec;
  const std::size_t h = op.cos_k.size();
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  Json head = head_for(s);
  head["k"] = op.k;
  head["dtype"] = dtype;
  if (f.dense) {
    const std::size_t d = s.dim;  // <= 2^20, so d*d*sizeof(T) cannot overflow
    auto data = allocate<T>(d * d, "a " + std::to_string(d) + " x " + std::to_string(d) + " matrix");
    const std::span<T> m(data.get(), d * d);
    dense_shift_matrix(op, m);
    const std::span<const T> values(m);
    Output out(f.out.out, format == Format::npy);
    switch (format) {
      case Format::npy:
        write_npy(out.file(), values, {d, d});
        break;
      case Format::json: {
        head["form"] = "dense";
        head["note"] = "PE(p + k) = T(k) PE(p): (T x)_r = sum_c matrix[r][c] x_c";
        const std::vector<JsonArray> arrays{{"matrix", values, d}};
        write_json(out.file(), head, arrays);
        break;
      }
      case Format::csv: {
        std::vector<std::int64_t> rows(d);
        for (std::size_t r = 0; r < d; ++r) rows[r] = static_cast<std::int64_t>(r);
        write_csv(out.file(), {{"row", std::move(rows)}}, numbered_names("c", d), values, d);
        break;
      }
    }
    out.commit();
    return;
  }
  // Block form: per pair i, (cos(k w_i), sin(k w_i)).
  std::vector<T> cs(h), sn(h), both(2 * h);
  std::vector<std::int64_t> pair(h), ss(h), cslot(h);
  for (std::size_t i = 0; i < h; ++i) {
    cs[i] = static_cast<T>(op.cos_k[i]);
    sn[i] = static_cast<T>(op.sin_k[i]);
    both[2 * i] = cs[i];
    both[2 * i + 1] = sn[i];
    pair[i] = static_cast<std::int64_t>(i);
    ss[i] = static_cast<std::int64_t>(sin_slot(s, i));
    cslot[i] = static_cast<std::int64_t>(cos_slot(s, i));
  }
  Output out(f.out.out, format == Format::npy);
  switch (format) {
    case Format::npy:
      write_npy(out.file(), std::span<const T>(both), {h, 2});
      break;
    case Format::json: {
      head["form"] = "block";
      head["note"] =
          "pair i rotates (x[sin_slots[i]], x[cos_slots[i]]) by [[cos[i], sin[i]], [-sin[i], cos[i]]]; "
          "a zero-pad column is left as is";
      const std::vector<JsonArray> arrays{{"sin_slots", std::span<const std::int64_t>(ss), 0},
                                          {"cos_slots", std::span<const std::int64_t>(cslot), 0},
                                          {"cos", std::span<const T>(cs), 0},
                                          {"sin", std::span<const T>(sn), 0}};
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv:
      write_csv(out.file(), {{"pair", pair}, {"sin_slot", ss}, {"cos_slot", cslot}}, {"cos", "sin"},
                std::span<const T>(both), h);
      break;
  }
  out.commit();
}

void run_shift(const ShiftFlags& f) {
  const SinusoidalSpec s = f.spec.build();
  const bool f64 = parse_dtype_is_f64(f.dtype);
  const std::int64_t k = parse_int64("--k", f.k);
  const Format format = choose_format(f.out.format, f.out.out);
  const ShiftOperator op = shift_operator(s, k);
  if (f64)
    run_shift_typed<double>(f, op, format);
  else
    run_shift_typed<float>(f, op, format);
}

// ---- posenc list ---------------------------------------------------------------------------------------

Json describe() {
  Json j;
  j["presets"] = Json::array();
  for (const auto& p : sinusoidal_presets()) {
    Json e;
    e["name"] = p.name;
    e["summary"] = p.summary;
    e["source"] = p.source;
    e["spec_at_dim_512"] = spec_json(preset_spec(p.preset, kDefaultDim));
    j["presets"].push_back(std::move(e));
  }
  const SinusoidalSpec d;
  auto param = [](std::string name, std::string flag, Json def, std::string accepted) {
    Json e;
    e["name"] = std::move(name);
    e["flag"] = std::move(flag);
    e["default"] = std::move(def);
    e["accepted"] = std::move(accepted);
    return e;
  };
  j["parameters"] = Json::array({
      param("preset", "--preset NAME", nullptr, "vaswani | marian | tensor2tensor | fairseq; explicit flags override its fields"),
      param("dim", "--dim D", d.dim,
            "2 <= dim <= 1048576; even unless odd_dim = zero_pad; >= 4 for the fairseq rule"),
      param("base", "--base B", d.base, "finite, > 1"),
      param("min_timescale", "--min-timescale X", d.min_timescale, "finite, 0 < X <= 1e6; omega_0 = X (t2t multiplies its frequencies by min_timescale)"),
      param("max_timescale", "--max-timescale Y", "base * min_timescale",
            "finite, > min_timescale; sets base = Y / min_timescale (tensor2tensor); not with --base"),
      param("layout", "--layout L", to_string(d.layout), "interleaved | halves"),
      param("rule", "--rule R", to_string(d.rule), "paper | tensor2tensor | fairseq"),
      param("odd_dim", "--odd-dim P", to_string(d.odd_dim), "reject | zero_pad"),
      param("regime", "--regime M", to_string(d.regime), "exact | emulated (emulated only with the tensor2tensor or fairseq rule)"),
      param("padding_idx", "--padding-idx N", nullptr,
            "none or 0 <= N < 2^40: row N is zero and the first token is at N + 1 (fairseq preset: 1)"),
      param("first_position", "--first-position P", d.first_position,
            "position of token 0; |P| <= max |position|, negative only with --signed-positions"),
      param("signed_positions", "--signed-positions", d.signed_positions, "flag: negative positions are accepted"),
      param("positions", "--positions SPEC", nullptr,
            "table rows by position: " + std::string(PositionList::kSyntax) +
                "; |p| <= 2^40 and |p| * min_timescale <= 2^44; p < 0 only with --signed-positions"),
      param("tokens", "--tokens SPEC", "0:16",
            "table rows by token index (position = first_position + t, fairseq: token 0 -> row 2), same syntax, t >= 0"),
      param("dtype", "--dtype T", "f32 (table), f64 (shift)", "f32 | f64"),
      param("k", "--k K", nullptr, "shift: integer offset, |K| <= 2^41, exact regime only"),
      param("format", "--format F", "from --out extension, else json", "npy | json | csv"),
  });
  return j;
}

}  // namespace

void register_sinusoidal_commands(Registry& reg) {
  reg.add_scheme({kScheme, "sinusoidal absolute encodings PE[p] = sin/cos(p * omega_k) (Vaswani et al. 2017 and variants)",
                  {"table", "freqs", "shift"}, describe});
  {
    auto f = std::make_shared<TableFlags>();
    CLI::App* verb = reg.verb("table", "Encoding tables: rows of PE for chosen positions");
    CLI::App* c = verb->add_subcommand(kScheme, "Rows of the sinusoidal encoding for the given positions or tokens");
    f->spec.add_to(c);
    auto* pos = c->add_option("--positions", f->positions,
                              "Positions (spec's row numbers): a:b, a:b:step, p, comma-separated, e.g. 0:4,1000")
                    ->type_name("SPEC")->group("Rows");
    auto* tok = c->add_option("--tokens", f->tokens,
                              "Token indices, mapped to positions by the spec's offset (default 0:16)")
                    ->type_name("SPEC")->group("Rows");
    pos->excludes(tok);
    c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
    c->add_option("--threads", f->threads, "OpenMP threads (0: default)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc table sinusoidal --preset fairseq --dim 64 --positions 0,1,1000,100000 --dtype f64 --out t.npy");
    c->callback([f, c] { run_table(*f, c); });
  }
  {
    auto f = std::make_shared<FreqFlags>();
    CLI::App* verb = reg.verb("freqs", "Frequencies omega_k and their slots, for porting");
    CLI::App* c = verb->add_subcommand(kScheme, "omega_k (k = 0..h-1) and the sin/cos columns of each pair");
    f->spec.add_to(c);
    f->out.add_to(c, "json | csv | npy");
    c->callback([f] { run_freqs(*f); });
  }
  {
    auto f = std::make_shared<ShiftFlags>();
    CLI::App* verb = reg.verb("shift", "Shift operators T(k) with PE(p + k) = T(k) PE(p)");
    CLI::App* c = verb->add_subcommand(kScheme, "T(k) in block form (cos, sin per pair) or as the dense d x d matrix");
    f->spec.add_to(c);
    c->add_option("--k", f->k, "Offset k (integer)")->type_name("K")->required();
    c->add_flag("--dense", f->dense, "Write the dense d x d matrix instead of the block form");
    c->add_option("--dtype", f->dtype, "f64 (default) | f32")->type_name("T")->group("Output");
    f->out.add_to(c, "json | csv | npy");
    c->callback([f] { run_shift(*f); });
  }
}

}  // namespace posenc::cli
