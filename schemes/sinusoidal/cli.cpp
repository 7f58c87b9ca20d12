// schemes/sinusoidal/cli.cpp — the sinusoidal scheme on the command line: its registration (description, presets
// and flags come from SpecTraits<SinusoidalSpec>, cli/spec_options.hpp) and what is truly its own:
//   posenc table sinusoidal      rows for --positions or --tokens (token t -> position first_position + t)
//   posenc freqs sinusoidal      omega_k and the columns of each pair
//   posenc shift sinusoidal      T(k) with PE(p + k) = T(k) PE(p), block or dense (this scheme's own verb)
//   posenc check sinusoidal      a user's table against the oracle: budget rows and emulation envelope
//   posenc identify sinusoidal   which convention a user's table follows
// Aliases the real implementations' parameter names: --padding-idx N (fairseq: row N zero, first token at N + 1;
// none removes both) and --max-timescale Y (tensor2tensor: base = Y / min_timescale).
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "args.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/sinusoidal_spec.hpp"
#include "registry.hpp"
#include "schemes/sinusoidal/check.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_sinusoidal {
namespace {

using Spec = SinusoidalSpec;
constexpr const char* kScheme = "sinusoidal";
constexpr std::uint64_t kDefaultTokens = 16;

// The spec flags with this scheme's aliases.
struct SinusoidalOptions : SpecOptions<Spec> {
  void add(CLI::App* a) {
    add_to(a);
    add_alias("--padding-idx", "N|none",
              "fairseq's padding_idx: row N is zero and the first token is at N + 1; none: no padding row, tokens from 0",
              [](Spec& s, const std::string& text) {
                if (text == "none") {
                  s.padding_row.reset();
                  s.first_position = 0;
                  return;
                }
                const std::int64_t n = parse_int64("--padding-idx", text);
                if (n < 0 || n >= kMaxPosition)
                  throw Error(kScheme, "--padding-idx", text, "an integer in [0, " + std::to_string(kMaxPosition - 1) + "], or none");
                s.padding_row = n;
                s.first_position = n + 1;
              });
    add_alias("--max-timescale", "Y", "tensor2tensor's max_timescale: base = Y / min_timescale (not with --base)",
              [this](Spec& s, const std::string& text) {
                if (given("--base"))
                  throw UsageError("--base and --max-timescale both set the base (base = max_timescale / min_timescale); give one");
                const double y = parse_double("--max-timescale", text);
                const double b = y / s.min_timescale;  // float(max) / float(min), as t2t computes it
                if (!(std::isfinite(y) && std::isfinite(b) && b > 1.0))
                  throw Error(kScheme, "--max-timescale", text,
                              "a finite real > min_timescale = " + format_real(s.min_timescale) + " with a finite ratio");
                s.base = b;
              });
  }
};

// ---- table -------------------------------------------------------------------------------------------

struct TableFlags {
  SinusoidalOptions spec;
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
                     const std::optional<PositionList>& tokens, Format format, Output& out) {
  const TableOptions opts = parse_threads(f.threads);
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
  const SinusoidalPlan plan = make_plan(s);
  if (contiguous) {
    plan.table(first, count, table, opts);
  } else {
    list = positions.materialize();
    plan.rows(list, table, opts);
  }
  if (format != Format::npy && list.empty()) list = positions.materialize();

  const std::span<const T> values(table);
  switch (format) {
    case Format::npy:
      write_npy(out.file(), values, {count, s.dim});
      break;
    case Format::json: {
      Json head = result_head(s);
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
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  std::optional<PositionList> tokens;
  PositionList positions;
  const auto check = [&](std::int64_t p) { check_position(s, p); };
  if (app->count("--tokens")) {
    tokens = PositionList::parse("--tokens", f.tokens);
  } else if (app->count("--positions")) {
    positions = parse_checked_positions("--positions", f.positions, check);
  } else {
    tokens = PositionList({PositionRun{0, 1, kDefaultTokens}});
  }
  if (tokens) {
    try {
      positions = tokens_to_positions(s, *tokens);
    } catch (const Error& e) {  // a token index beyond the spec's range, named as typed
      throw Error(e.where(), "--tokens", e.value() + " (of '" + f.tokens + "')", e.accepted(), e.problem());
    }
    const std::string flag = app->count("--tokens") ? "--tokens" : "the default --tokens 0:" + std::to_string(kDefaultTokens);
    for (const auto& r : positions.runs()) {  // a token's position (first_position + t) within the spec's range
      check_position_of(flag, f.tokens, r.start, check);
      check_position_of(flag, f.tokens, r.last(), check);
    }
  }
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  if (f64)
    run_table_typed<double>(f, s, positions, tokens, format, out);
  else
    run_table_typed<float>(f, s, positions, tokens, format, out);
}

// ---- freqs -------------------------------------------------------------------------------------------

struct FreqFlags {
  SinusoidalOptions spec;
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
      Json head = result_head(s);
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
  SinusoidalOptions spec;
  OutFlags out;
  std::string k, dtype = "f64";
  bool dense = false;
};

template <class T>
void run_shift_typed(const ShiftFlags& f, const ShiftOperator& op, Format format, Output& out) {
  const SinusoidalSpec& s = op.spec();
  const std::size_t h = op.cos_k().size();
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  Json head = result_head(s);
  head["k"] = op.k();
  head["dtype"] = dtype;
  if (f.dense) {
    const std::size_t d = s.dim;  // <= 2^20, so d*d*sizeof(T) cannot overflow
    auto data = allocate<T>(d * d, "a " + std::to_string(d) + " x " + std::to_string(d) + " matrix");
    const std::span<T> m(data.get(), d * d);
    dense_shift_matrix(op, m);
    const std::span<const T> values(m);
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
    cs[i] = static_cast<T>(op.cos_k()[i]);
    sn[i] = static_cast<T>(op.sin_k()[i]);
    both[2 * i] = cs[i];
    both[2 * i + 1] = sn[i];
    pair[i] = static_cast<std::int64_t>(i);
    ss[i] = static_cast<std::int64_t>(sin_slot(s, i));
    cslot[i] = static_cast<std::int64_t>(cos_slot(s, i));
  }
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
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  const std::int64_t k = parse_int64("--k", f.k);
  const Format format = choose_format(f.out.format, f.out.out);
  const ShiftOperator op = shift_operator(s, k);
  Output out(f.out.out, format == Format::npy);  // the destination is checked before anything is computed
  if (f64)
    run_shift_typed<double>(f, op, format, out);
  else
    run_shift_typed<float>(f, op, format, out);
}

// ---- check and identify ------------------------------------------------------------------------------

// The user's table as rows x cols with one position per row (--positions, default 0 .. rows-1).
verify::sinusoidal::TableInput table_input(const NpyArray& a, const InputFlags& in, const std::string& positions_text,
                                         bool positions_given) {
  verify::sinusoidal::TableInput t;
  t.values = a.values;
  t.rows = a.rows();
  t.cols = a.cols();
  t.stored = dtype_of(a.stored);
  if (a.shape.empty() || t.cols < 2)
    throw UsageError("--in: '" + in.path + "' holds an array of shape with a last dimension < 2; a table has rows of d >= 2 columns");
  t.describe = {{"file", in.path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(a.shape)}};
  t.positions = one_position_each("--positions", positions_text, positions_given, t.rows,
                                  "a table of " + std::to_string(t.rows) +
                                      " rows (the product of all but the last dimension)",
                                  "row");
  return t;
}

struct CheckFlags {
  SinusoidalOptions spec;
  InputFlags in;
  ReportFlags report;
  std::string positions, threads;
  double ulp_exp = 2.0, ulp_trig = 2.0;
};

void run_check(const CheckFlags& f, CLI::App* app) {
  const NpyArray a = f.in.read();
  Spec s = f.spec.build();
  // The table's width is the dim unless --dim says otherwise (then the shapes must agree).
  if (!f.spec.given("--dim") && !f.spec.given("--spec")) {
    s.dim = a.cols();
    try {
      validate(s);
    } catch (const Error& e) {
      throw SpecOptions<Spec>::renamed(e);
    }
  }
  const auto input = table_input(a, f.in, f.positions, app->count("--positions") > 0);
  const TableOptions opts = parse_threads(f.threads);
  check_ulp_allowance(app, "--ulp-exp", f.ulp_exp);
  check_ulp_allowance(app, "--ulp-trig", f.ulp_trig);
  const verify::CheckReport rep =
      verify::sinusoidal::check_table(s, input, reference::EnvelopeAllowance{f.ulp_exp, f.ulp_trig}, opts.threads);
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

struct IdentifyFlags {
  InputFlags in;
  ReportFlags report;
  std::string positions, dim;
};

void run_identify(const IdentifyFlags& f, CLI::App* app) {
  const NpyArray a = f.in.read();
  if (!f.dim.empty()) {
    const std::int64_t d = parse_int64("--dim", f.dim);
    if (d != static_cast<std::int64_t>(a.cols()))
      throw Error(kScheme, "--dim", f.dim, "the table's last dimension, " + std::to_string(a.cols()), "differs from the table");
  }
  const auto input = table_input(a, f.in, f.positions, app->count("--positions") > 0);
  const auto id = verify::sinusoidal::identify_table(input);
  f.report.write(id.to_json(), id.to_markdown());
  exit_status() = id.matched ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(sinusoidal) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  {
    auto f = std::make_shared<TableFlags>();
    CLI::App* c = registry.command("table", kScheme, "Rows of the sinusoidal encoding for the given positions or tokens");
    f->spec.add(c);
    auto* pos = c->add_option("--positions", f->positions,
                              "Positions (the spec's row numbers): a:b, a:b:step, p, comma-separated, e.g. 0:4,1000")
                    ->type_name("SPEC")
                    ->group("Rows");
    auto* tok = c->add_option("--tokens", f->tokens, "Token indices, mapped to positions by the spec's offset (default 0:16)")
                    ->type_name("SPEC")
                    ->group("Rows");
    pos->excludes(tok);
    c->add_option("--dtype", f->dtype, "f32 (default) | f64")->type_name("T")->group("Output");
    c->add_option("--threads", f->threads, "threads (0: OpenMP's default count; capped at the processors)")->type_name("N");
    f->out.add_to(c, "npy | json | csv");
    c->footer("Example: posenc table sinusoidal --preset fairseq --dim 64 --positions 0,1,1000,100000 --dtype f64 --out t.npy");
    c->callback([f, c] { run_table(*f, c); });
  }
  {
    auto f = std::make_shared<FreqFlags>();
    CLI::App* c = registry.command("freqs", kScheme, "omega_k (k = 0..h-1) and the sin/cos columns of each pair");
    f->spec.add(c);
    f->out.add_to(c, "json | csv | npy");
    c->footer("Example: posenc freqs sinusoidal --preset tensor2tensor --regime emulated --dim 64 --format csv");
    c->callback([f] { run_freqs(*f); });
  }
  {
    auto f = std::make_shared<ShiftFlags>();
    CLI::App* c = registry.command("shift", kScheme, "T(k) in block form (cos, sin per pair) or as the dense d x d matrix",
                                   "Shift operators T(k) with PE(p + k) = T(k) PE(p)");
    f->spec.add(c);
    c->add_option("--k", f->k, "Offset k (integer)")->type_name("K")->required();
    c->add_flag("--dense", f->dense, "Write the dense d x d matrix instead of the block form");
    c->add_option("--dtype", f->dtype, "f64 (default) | f32")->type_name("T")->group("Output");
    f->out.add_to(c, "json | csv | npy");
    c->footer("Example: posenc shift sinusoidal --preset vaswani --dim 16 --k 5 --dense --out t5.npy");
    c->callback([f] { run_shift(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command(
        "check", kScheme,
        "Your table (.npy, rows = positions) against the exact value (budget row sinusoidal.check.exact.<dtype>) and "
        "the rule's emulated float32 steps (emulation envelope); exit 0 pass, 1 fail");
    f->spec.add(c);
    f->in.add_to(c);
    c->add_option("--positions", f->positions, "Position of each row (default 0 .. rows-1), same syntax as table")
        ->type_name("SPEC")
        ->group("Input");
    c->add_option("--ulp-exp", f->ulp_exp, "Envelope: ulps a float32 exp (or the paper rule's pow form's pow) may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_option("--ulp-trig", f->ulp_trig, "Envelope: ulps a float32 sin/cos may be off correctly rounded (default 2)")
        ->type_name("A")
        ->check(CLI::Range(0.0, 1.0e6))
        ->group("Envelope");
    c->add_option("--threads", f->threads, "OpenMP threads for the oracle (0: default)")->type_name("N");
    f->report.add_to(c);
    c->footer("Example: posenc check sinusoidal --preset fairseq --regime emulated --in mine.npy --format json");
    c->callback([f, c] { run_check(*f, c); });
  }
  {
    auto f = std::make_shared<IdentifyFlags>();
    CLI::App* c = registry.command("identify", kScheme,
                                   "Which preset, layout, frequency rule, row offset and regime your table (.npy) is; "
                                   "exit 0 when one matches within its budget, 1 otherwise (the nearest is reported)");
    f->in.add_to(c);
    c->add_option("--dim", f->dim, "Expected columns (checked against the table)")->type_name("D");
    c->add_option("--positions", f->positions, "Position of each row (default 0 .. rows-1)")->type_name("SPEC")->group("Input");
    f->report.add_to(c);
    c->callback([f, c] { run_identify(*f, c); });
  }
}

}  // namespace posenc::cli::scheme_sinusoidal
