// schemes/learned/cli.cpp — learned absolute positions on the command line: its registration (description, presets
// and flags come from SpecTraits<LearnedSpec>, cli/spec_options.hpp) and what is its own:
//   posenc ids learned     the position ids of a token sequence (or a batch) under the spec's id map: arange
//                          (BERT, GPT-2), make_positions (RoBERTa, fairseq), cumsum_mask (OPT); no table needed
//   posenc table learned   the rows of a trained table (--weights .npy [rows, dim]) at those ids
//   posenc check learned   a user's position ids (--in .npy) against the map, id by id (learned/check.hpp)
// Every command takes the same inputs (IdFlags): the length L (--length, or the count of the tokens or of the mask),
// the token ids (--tokens IDS for one sequence, --tokens-file .npy [L] or [batch, L]), the attention mask (--mask
// BITS for one sequence, --mask-file .npy [M] or [batch, M]; for cumsum_mask M = past + L: the mask covers the cached
// tokens too) and --past. A [batch, ...] file gives one id row per batch row (the library maps one sequence per
// call); outputs then keep the batch dimension. Integer files are read exactly (npy_reader.hpp, NpyKinds::integers).
// The ids are written as int64 (.npy '<i8', JSON and CSV integers); `check` also reads float files of ids.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "args.hpp"
#include "bias_verbs.hpp"
#include "schemes/learned/check.hpp"
#include "npy_reader.hpp"
#include "output.hpp"
#include "posenc/error.hpp"
#include "posenc/learned.hpp"
#include "posenc/learned_spec.hpp"
#include "registry.hpp"
#include "spec_options.hpp"
#include "verbs.hpp"

// (A namespace of its own: the scheme files are compiled together, cmake/posenc_build.cmake posenc_unity.)
namespace posenc::cli::scheme_learned {
namespace {

using Spec = LearnedSpec;
constexpr const char* kScheme = "learned";
const std::string kMaxTokenText = std::to_string(kLearnedMaxIndex - 1);  // token ids and past < 2^40
constexpr std::uint64_t kMaxListTokens = 2147483647;                      // --tokens: as many as --length takes

// "'text'" shortened for a message: at most 40 characters of it.
std::string quoted_short(const std::string& text) {
  return "'" + (text.size() > 40 ? text.substr(0, 37) + "..." : text) + "'";
}

// An int64 array as .npy '<i8' (output.hpp writes the float types; npy_header is its header for streamed data).
void write_npy_i64(std::FILE* f, std::span<const std::int64_t> values, const std::vector<std::size_t>& shape) {
  const std::string h = npy_header("<i8", shape);
  std::fwrite(h.data(), 1, h.size(), f);
  if constexpr (std::endian::native == std::endian::little) {
    std::fwrite(values.data(), sizeof(std::int64_t), values.size(), f);
  } else {
    for (const std::int64_t v : values)
      for (int i = 0; i < 8; ++i) std::fputc(static_cast<int>(static_cast<std::uint64_t>(v) >> (8 * i) & 0xff), f);
  }
}

// ---- the id inputs -------------------------------------------------------------------------------------

// What the id map reads, checked and shaped: `batch` sequences of `length` tokens after `past` cached ones.
struct IdInputs {
  std::size_t batch = 1, length = 0, mask_cols = 0;
  bool batched = false;                // a [batch, ...] file: outputs keep the batch dimension
  std::int64_t past = 0;
  std::vector<std::int64_t> tokens;    // empty or batch * length
  std::vector<std::uint8_t> mask;      // empty or batch * mask_cols
  std::string tokens_flag, mask_flag;  // "--tokens" or "--tokens-file" (empty: not given); the same for the mask
  std::string length_flag = "--length";  // what set L ("--length", "--tokens", "--in", ...)
  std::string source;                  // the inputs as typed: "--tokens '0,5,1,1', --past 2"

  LearnedInput row(std::size_t b) const {
    LearnedInput in{.length = length, .past = past};
    if (!tokens.empty()) in.tokens = std::span<const std::int64_t>(tokens).subspan(b * length, length);
    if (!mask.empty()) in.attention_mask = std::span<const std::uint8_t>(mask).subspan(b * mask_cols, mask_cols);
    return in;
  }

  static constexpr std::size_t kNoRow = static_cast<std::size_t>(-1);
  std::string row_text(std::size_t b) const {
    return batched && b != kNoRow ? " (batch row " + std::to_string(b) + ")" : "";
  }

  // A library error about the input of batch row b (kNoRow: the whole input) under the flag that gave it (spec
  // fields under theirs).
  Error renamed(const Error& e, std::size_t b) const {
    const std::string& p = e.parameter();
    const std::string value = e.value() + row_text(b);
    if (p == "length") return Error(e.where(), length_flag, value, e.accepted(), e.problem());
    if (p == "past") return Error(e.where(), "--past", value, e.accepted(), e.problem());
    if (p == "tokens")
      return Error(e.where(), tokens_flag.empty() ? "--tokens" : tokens_flag, value, e.accepted(), e.problem());
    if (p == "attention_mask")
      return Error(e.where(), mask_flag.empty() ? "--mask" : mask_flag, value, e.accepted(), e.problem());
    if (p == "id")
      return Error(e.where(), "position id", value + " (ids made from " + source + ")",
                   e.accepted() + " (a smaller --past or --offset)", e.problem());
    return SpecOptions<Spec>::renamed(e);
  }

  // Every row's ids, [batch][length] (Errors renamed to the flags).
  std::vector<std::int64_t> ids(const Spec& s) const {
    check_memory(batch * length * sizeof(std::int64_t), "the position ids");
    std::vector<std::int64_t> out;
    out.reserve(batch * length);
    for (std::size_t b = 0; b < batch; ++b) {
      try {
        const std::vector<std::int64_t> r = position_ids(s, row(b));
        out.insert(out.end(), r.begin(), r.end());
      } catch (const Error& e) {
        throw renamed(e, b);
      }
    }
    return out;
  }

  std::vector<std::size_t> shape() const {
    return batched ? std::vector<std::size_t>{batch, length} : std::vector<std::size_t>{length};
  }

  // The JSON arrays of the inputs: tokens and attention_mask as given (rows of a batch), then the ids.
  void add_json(std::vector<JsonArray>& arrays, std::vector<std::int64_t>& mask64,
                std::span<const std::int64_t> ids) const {
    if (!tokens.empty()) arrays.push_back({"tokens", std::span<const std::int64_t>(tokens), batched ? length : 0});
    if (!mask.empty()) {
      mask64.assign(mask.begin(), mask.end());
      arrays.push_back({"attention_mask", std::span<const std::int64_t>(mask64), batched ? mask_cols : 0});
    }
    arrays.push_back({"ids", ids, batched ? length : 0});
  }

  void add_head(Json& head) const {
    head["past"] = past;
    head["batch"] = batched ? Json(batch) : Json(nullptr);
    head["length"] = length;
  }
};

// The shape of what gives the ids (check: --in), when it fixes batch and L.
struct IdsShape {
  std::size_t batch = 1, length = 0;
  bool batched = false;
  std::string flag;  // "--in"
};

// --length, --tokens, --tokens-file, --mask, --mask-file, --past (group "Tokens").
struct IdFlags {
  std::string length, tokens, tokens_file, mask, mask_file, past;
  const CLI::App* app = nullptr;

  void add_to(CLI::App* c) {
    app = c;
    c->add_option("--length", length,
                  "Tokens L in this call: an integer in [1, 2147483647] (default: the count of the tokens, else the "
                  "mask's entries minus --past)")
        ->type_name("N")
        ->group("Tokens");
    auto* tok = c->add_option("--tokens", tokens,
                              "Token ids of one sequence, comma-separated (ranges a:b as in --positions), each in "
                              "[0, " + kMaxTokenText + "]; make_positions compares them with --padding-idx")
                    ->type_name("IDS")
                    ->group("Tokens");
    auto* tokf = c->add_option("--tokens-file", tokens_file,
                               "Token ids as .npy integers (int8 .. int64, uint8 .. uint64): [L] one sequence, "
                               "[batch, L] one id row per batch row")
                     ->type_name("FILE")
                     ->group("Tokens");
    tok->excludes(tokf);
    auto* m = c->add_option("--mask", mask,
                            "Attention mask of one sequence, 0/1 per token (1 token, 0 padding), e.g. 0011111; "
                            "cumsum_mask reads past + L entries (the cache too)")
                  ->type_name("BITS")
                  ->group("Tokens");
    auto* mf = c->add_option("--mask-file", mask_file,
                             "Attention mask as .npy 0/1 (bool or integers): [past + L] or [batch, past + L]")
                   ->type_name("FILE")
                   ->group("Tokens");
    m->excludes(mf);
    c->add_option("--past", past,
                  "Tokens already in the cache before these (a KV cache): an integer in [0, " + kMaxTokenText +
                      "] (default 0)")
        ->type_name("N")
        ->group("Tokens");
  }

  bool given(const char* flag) const { return app->count(flag) > 0; }

  // The rows and columns one source (tokens or mask) gave, and whether it was [batch, ...].
  struct Rows {
    std::size_t rows = 0, cols = 0;
    bool batched = false;
  };

  // The inputs, checked against the spec's map (what it reads must be given) and, for check, the --in shape.
  IdInputs read(const Spec& s, const std::optional<IdsShape>& fixed = std::nullopt) const {
    IdInputs in;
    std::vector<std::string> source;
    read_past(in);
    const Rows tok = read_tokens(in, source);
    const Rows msk = read_mask(in, source);
    resolve_batch(in, tok, msk, fixed);
    const bool has_length = given("--length");
    resolve_length(in, tok, fixed);
    if (has_length) source.push_back("--length " + length);
    if (given("--past")) source.push_back("--past " + past);
    if (fixed) source.insert(source.begin(), fixed->flag);
    require_map_inputs(s, in);
    in.source.clear();
    for (const auto& p : source) in.source += (in.source.empty() ? "" : ", ") + p;
    return in;
  }

 private:
  void read_past(IdInputs& in) const {
    if (!given("--past")) return;
    in.past = parse_int64("--past", past);
    if (in.past < 0 || in.past >= kLearnedMaxIndex)
      throw UsageError("--past: " + past + " is out of range; accepted: an integer in [0, " + kMaxTokenText +
                       "] (tokens already in the cache)");
  }

  // --tokens (one sequence) or --tokens-file ([L] or [batch, L]).
  Rows read_tokens(IdInputs& in, std::vector<std::string>& source) const {
    Rows r;
    if (given("--tokens")) {
      const PositionList pl = PositionList::parse("--tokens", tokens);
      if (pl.size() > kMaxListTokens)
        throw UsageError("--tokens: '" + tokens + "' has " + std::to_string(pl.size()) +
                         " token ids; accepted: at most " + std::to_string(kMaxListTokens));
      for (const auto& run : pl.runs())
        for (const std::int64_t t : {run.start, run.last()})  // runs are arithmetic: their ends bound them
          if (t < 0 || t >= kLearnedMaxIndex)
            throw UsageError("--tokens: token id " + std::to_string(t) + " (of '" + tokens +
                             "') is out of range; accepted: token ids in [0, " + kMaxTokenText + "]");
      in.tokens = pl.materialize();
      in.tokens_flag = "--tokens";
      r.rows = 1;
      r.cols = in.tokens.size();
      source.push_back("--tokens " + quoted_short(tokens));
    } else if (given("--tokens-file")) {
      const NpyArray a = read_input("--tokens-file", tokens_file, std::nullopt, NpyKinds::integers);
      const auto& sh = a.shape;
      if ((sh.size() != 1 && sh.size() != 2) || a.values.empty())
        throw UsageError("--tokens-file: '" + tokens_file + "' holds an array of shape " + shape_text(sh) +
                         "; accepted: token ids [L] or [batch, L], L >= 1");
      r.batched = sh.size() == 2;
      r.rows = r.batched ? sh[0] : 1;
      r.cols = sh.back();
      in.tokens.resize(a.values.size());
      for (std::size_t i = 0; i < a.values.size(); ++i) {
        const double v = a.values[i];
        if (v < 0 || v >= static_cast<double>(kLearnedMaxIndex))
          throw UsageError("--tokens-file: '" + tokens_file + "' holds the token id " +
                           std::to_string(static_cast<std::int64_t>(v)) + " at index " +
                           (r.batched ? "[" + std::to_string(i / r.cols) + ", " + std::to_string(i % r.cols) + "]"
                                      : "[" + std::to_string(i) + "]") +
                           "; accepted: token ids in [0, " + kMaxTokenText + "]");
        in.tokens[i] = static_cast<std::int64_t>(v);
      }
      in.tokens_flag = "--tokens-file";
      source.push_back("--tokens-file " + quoted_short(tokens_file));
    }
    return r;
  }

  // --mask (one sequence) or --mask-file ([past + L] or [batch, past + L]).
  Rows read_mask(IdInputs& in, std::vector<std::string>& source) const {
    Rows r;
    if (given("--mask")) {
      in.mask = parse_bits("--mask", mask, "an attention mask", "token");
      in.mask_flag = "--mask";
      r.rows = 1;
      in.mask_cols = in.mask.size();
      source.push_back("--mask " + quoted_short(mask));
    } else if (given("--mask-file")) {
      const NpyArray a = read_input("--mask-file", mask_file, std::nullopt, NpyKinds::integers);
      const auto& sh = a.shape;
      if ((sh.size() != 1 && sh.size() != 2) || a.values.empty())
        throw UsageError("--mask-file: '" + mask_file + "' holds an array of shape " + shape_text(sh) +
                         "; accepted: 0/1 entries [past + L] or [batch, past + L]");
      r.batched = sh.size() == 2;
      r.rows = r.batched ? sh[0] : 1;
      in.mask_cols = sh.back();
      in.mask.resize(a.values.size());
      for (std::size_t i = 0; i < a.values.size(); ++i) {
        const double v = a.values[i];
        if (v != 0 && v != 1)
          throw UsageError("--mask-file: '" + mask_file + "' holds " + format_real(v) + " at index " +
                           (r.batched ? "[" + std::to_string(i / in.mask_cols) + ", " +
                                               std::to_string(i % in.mask_cols) + "]"
                                         : "[" + std::to_string(i) + "]") +
                           "; accepted: 0 (padding) or 1 (token) per entry");
        in.mask[i] = static_cast<std::uint8_t>(v);
      }
      in.mask_flag = "--mask-file";
      source.push_back("--mask-file " + quoted_short(mask_file));
    }
    r.cols = in.mask_cols;
    return r;
  }

  // The batch: from the fixed shape (check's --in), else from the files; every source must agree.
  static void resolve_batch(IdInputs& in, const Rows& tok, const Rows& msk, const std::optional<IdsShape>& fixed) {
    const auto seqs = [](std::size_t rows, bool b) {
      return b ? std::to_string(rows) + (rows == 1 ? " sequence" : " sequences") + " ([batch, ...])"
               : std::string("one sequence");
    };
    if (fixed) {
      in.batch = fixed->batch;
      in.batched = fixed->batched;
    } else {
      in.batched = tok.batched || msk.batched;
      in.batch = tok.batched ? tok.rows : msk.batched ? msk.rows : 1;
    }
    const std::string batch_from = fixed ? fixed->flag : tok.batched ? in.tokens_flag : in.mask_flag;
    if (!in.tokens_flag.empty() && tok.rows != in.batch)
      throw UsageError(in.tokens_flag + ": " + seqs(tok.rows, tok.batched) + ", but " + batch_from + " gives " +
                       seqs(in.batch, in.batched) + "; accepted: the same batch (one row of tokens per sequence)");
    if (!in.mask_flag.empty() && msk.rows != in.batch)
      throw UsageError(in.mask_flag + ": " + seqs(msk.rows, msk.batched) + ", but " + batch_from + " gives " +
                       seqs(in.batch, in.batched) + "; accepted: the same batch (one mask row per sequence)");
  }

  // L: fixed (check), else the tokens, else --length, else the mask minus the cache.
  void resolve_length(IdInputs& in, const Rows& tok, const std::optional<IdsShape>& fixed) const {
    const bool has_length = given("--length");
    const std::size_t typed_length = has_length ? parse_length("--length", length) : 0;
    if (fixed) {
      in.length = fixed->length;
      in.length_flag = fixed->flag;
    } else if (!in.tokens_flag.empty()) {
      in.length = tok.cols;
      in.length_flag = in.tokens_flag;
    } else if (has_length) {
      in.length = typed_length;
    } else if (!in.mask_flag.empty()) {
      if (in.mask_cols <= static_cast<std::uint64_t>(in.past))
        throw UsageError(in.mask_flag + ": " + std::to_string(in.mask_cols) + " entries with --past " +
                         std::to_string(in.past) +
                         " leave no token; accepted: past + L entries with L >= 1 (the mask covers the cache too), "
                         "or give --length");
      in.length = in.mask_cols - static_cast<std::size_t>(in.past);
      in.length_flag = in.mask_flag;
    } else {
      throw UsageError("--length: not given, and no --tokens, --tokens-file, --mask or --mask-file to count; "
                       "accepted: one of them (--length N for arange)");
    }
    // check's ids file fixes L: a mask of another length is reported under the file's flag, whose L disagrees.
    if (fixed && !in.mask_flag.empty() && in.mask_cols != static_cast<std::uint64_t>(in.past) + in.length)
      throw UsageError(fixed->flag + ": " + std::to_string(in.length) + " position ids per sequence, but " +
                       in.mask_flag + " gives " + std::to_string(in.mask_cols) + " entries with --past " +
                       std::to_string(in.past) + "; accepted: one id per token: the mask's entries minus --past");
    if (!in.tokens_flag.empty() && tok.cols != in.length)
      throw UsageError(in.tokens_flag + ": " + std::to_string(tok.cols) + " token ids per sequence, but " +
                       in.length_flag + " gives L = " + std::to_string(in.length) +
                       "; accepted: one token id per token");
    if (has_length && typed_length != in.length)
      throw UsageError("--length: " + length + " disagrees with L = " + std::to_string(in.length) + " of " +
                       in.length_flag + "; accepted: --length equal to it, or no --length");
  }

  // What the map reads must be given (position_ids would refuse it too, less clearly).
  static void require_map_inputs(const Spec& s, const IdInputs& in) {
    if (s.id_map == IdMap::make_positions && in.tokens.empty())
      throw UsageError("--tokens: not given; accepted: the token ids (--tokens IDS or --tokens-file FILE): the id map "
                       "make_positions counts the tokens that are not --padding-idx " + std::to_string(s.padding_idx));
    if (s.id_map == IdMap::cumsum_mask && in.mask.empty())
      throw UsageError("--mask: not given; accepted: the attention mask over past + L tokens (--mask BITS or "
                       "--mask-file FILE): the id map cumsum_mask counts its ones");
  }
};

std::string map_meaning(const Spec& s) { return std::string(EnumTraits<IdMap>::values[*enum_index(s.id_map)].meaning); }

// ---- ids -----------------------------------------------------------------------------------------------

struct IdsFlags {
  SpecOptions<Spec> spec;
  IdFlags in;
  OutFlags out;
};

void run_ids(IdsFlags& f) {
  const Spec s = f.spec.build();
  const IdInputs in = f.in.read(s);
  const std::vector<std::int64_t> ids = in.ids(s);
  const Format format = choose_format(f.out.format, f.out.out);
  Output out(f.out.out, format == Format::npy);
  const std::span<const std::int64_t> v(ids);
  switch (format) {
    case Format::npy: write_npy_i64(out.file(), v, in.shape()); break;
    case Format::json: {
      Json head = result_head(s);
      in.add_head(head);
      head["shape"] = in.shape();
      head["note"] = "ids[t]: the row of the table token t looks up, " + map_meaning(s) +
                     "; t counts the tokens of this call (after past cached ones)";
      std::vector<JsonArray> arrays;
      std::vector<std::int64_t> mask64;
      in.add_json(arrays, mask64, v);
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv: {
      const std::size_t n = ids.size(), L = in.length;
      std::vector<CsvColumn> labels;
      std::vector<std::int64_t> bb(n), tt(n);
      for (std::size_t i = 0; i < n; ++i) {
        bb[i] = static_cast<std::int64_t>(i / L);
        tt[i] = static_cast<std::int64_t>(i % L);
      }
      if (in.batched) labels.push_back({"batch", std::move(bb)});
      labels.push_back({"t", std::move(tt)});
      if (!in.tokens.empty()) labels.push_back({"token", in.tokens});
      if (!in.mask.empty()) {  // the entry of token t: the last L of each row (the first past are the cache)
        std::vector<std::int64_t> mm(n);
        for (std::size_t i = 0; i < n; ++i) mm[i] = in.mask[(i / L) * in.mask_cols + in.mask_cols - L + i % L];
        labels.push_back({"mask", std::move(mm)});
      }
      write_csv(out.file(), labels, {"id"}, v, n);
      break;
    }
  }
  out.commit();
}

// ---- table ---------------------------------------------------------------------------------------------

struct TableFlags {
  SpecOptions<Spec> spec;
  IdFlags in;
  OutFlags out;
  std::string weights, weights_dtype, dtype = "f32";
};

// The table of --weights: a 2-D .npy [rows, dim] of finite values (check_learned_table's Error under --weights).
LearnedTable read_table(const TableFlags& f, NpyType* stored) {
  const std::optional<NpyType> declared = parse_declared_dtype("--weights-dtype", f.weights_dtype);
  NpyArray a;
  try {
    a = read_input("--weights", f.weights, declared);
  } catch (const IoError& e) {  // the reader's accepted text names --in-dtype, the flag of check's --in
    std::string what = e.what();
    if (const auto at = what.find("--in-dtype"); at != std::string::npos) what.replace(at, 10, "--weights-dtype");
    throw IoError(what);
  }
  if (a.shape.size() != 2 || a.values.empty())
    throw UsageError("--weights: '" + f.weights + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: a table [rows, dim] with rows, dim >= 1");
  *stored = a.stored;
  LearnedTable t{a.shape[0], a.shape[1], std::move(a.values)};
  try {
    check_learned_table(t);
  } catch (const Error& e) {
    throw Error(e.where(), "--weights", "'" + f.weights + "': " + e.value(), e.accepted(), e.problem());
  }
  return t;
}

template <class T>
void run_table_typed(const TableFlags& f, const LearnedPlan& plan, const IdInputs& in,
                     const std::vector<std::int64_t>& ids, NpyType stored, Format format, Output& out) {
  const LearnedTable& tab = plan.table();
  const std::size_t d = tab.dim, L = in.length, n = ids.size() * d;
  auto data = allocate<T>(n, "rows of " + std::to_string(ids.size()) + " ids x " + std::to_string(d) + " columns");
  const std::span<T> rows(data.get(), n);
  for (std::size_t b = 0; b < in.batch; ++b) {
    try {
      plan.rows(std::span<const std::int64_t>(ids).subspan(b * L, L), rows.subspan(b * L * d, L * d));
    } catch (const Error& e) {
      if (e.parameter() != "position id") throw;
      throw Error(e.where(), "position id",
                  e.value() + " (" + (in.batched ? "batch row " + std::to_string(b) + "; " : "") + "ids made from " +
                      in.source + ")",
                  "a row of --weights " + quoted_short(f.weights) + " (shape (" + std::to_string(tab.rows) + ", " +
                      std::to_string(d) + ")): 0 <= id < " + std::to_string(tab.rows) +
                      "; a lookup beyond the table is refused, never wrapped (fewer tokens, a smaller --past, or "
                      "a larger table)",
                  e.problem());
    }
  }
  const std::span<const T> values(rows);
  std::vector<std::size_t> shape = in.shape();
  shape.push_back(d);
  switch (format) {
    case Format::npy: write_npy(out.file(), values, shape); break;
    case Format::json: {
      Json head = result_head(plan.spec());
      head["weights"] = f.weights;
      head["weights_shape"] = {tab.rows, d};
      head["weights_stored"] = std::string(to_string(stored));
      head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
      in.add_head(head);
      head["shape"] = shape;
      head["note"] = std::string("rows[t] = the table's row ids[t], ") + map_meaning(plan.spec()) +
                     (sizeof(T) == 4 ? "; each value rounded once to float32" : "; each value as stored");
      std::vector<JsonArray> arrays;
      std::vector<std::int64_t> mask64;
      in.add_json(arrays, mask64, std::span<const std::int64_t>(ids));
      arrays.push_back({"rows", values, d});
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv: {
      const std::size_t m = ids.size();
      std::vector<CsvColumn> labels;
      std::vector<std::int64_t> bb(m), tt(m);
      for (std::size_t i = 0; i < m; ++i) {
        bb[i] = static_cast<std::int64_t>(i / L);
        tt[i] = static_cast<std::int64_t>(i % L);
      }
      if (in.batched) labels.push_back({"batch", std::move(bb)});
      labels.push_back({"t", std::move(tt)});
      labels.push_back({"id", ids});
      write_csv(out.file(), labels, numbered_names("c", d), values, m);
      break;
    }
  }
  out.commit();
}

void run_table(TableFlags& f) {
  const Spec s = f.spec.build();
  const bool f64 = parse_output_dtype(f.dtype) == DType::f64;
  NpyType stored = NpyType::f64;
  const LearnedTable table = read_table(f, &stored);
  const IdInputs in = f.in.read(s);
  const std::vector<std::int64_t> ids = in.ids(s);
  const LearnedPlan plan = make_plan(s, table);
  const Format format = choose_format(f.out.format, f.out.out);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(ids.size(), table.dim * (f64 ? 8 : 4), &bytes))
    throw IoError("the rows of " + std::to_string(ids.size()) + " ids x " + std::to_string(table.dim) +
                  " columns need more bytes than a size_t holds");
  check_memory(bytes, "the rows of " + std::to_string(ids.size()) + " ids x " + std::to_string(table.dim) + " columns");
  Output out(f.out.out, format == Format::npy);  // the destination is checked before the rows are gathered
  if (f64) run_table_typed<double>(f, plan, in, ids, stored, format, out);
  else run_table_typed<float>(f, plan, in, ids, stored, format, out);
}

// ---- check ---------------------------------------------------------------------------------------------

struct CheckFlags {
  SpecOptions<Spec> spec;
  IdFlags ids;
  std::string in_path;
  ReportFlags report;
};

void run_check(CheckFlags& f) {
  const NpyArray a = read_input("--in", f.in_path, std::nullopt, NpyKinds::numbers);
  const std::vector<std::size_t>& sh = a.shape;
  if ((sh.size() != 1 && sh.size() != 2) || a.values.empty())
    throw UsageError("--in: '" + f.in_path + "' holds an array of shape " + shape_text(sh) +
                     "; accepted: position ids [L] or [batch, L], L >= 1");
  verify::CheckReport rep;
  IdInputs in;
  try {
    const Spec s = f.spec.build();
    in = f.ids.read(s, IdsShape{sh.size() == 2 ? sh[0] : 1, sh.back(), sh.size() == 2, "--in"});
    verify::learned::IdsInput input;
    input.ids = a.values;
    input.batch = in.batch;
    input.length = in.length;
    input.past = in.past;
    input.tokens = in.tokens;
    input.attention_mask = in.mask;
    input.describe = {{"file", f.in_path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(sh)}};
    if (!in.tokens_flag.empty())
      input.describe["tokens"] = in.tokens_flag == "--tokens" ? f.ids.tokens : f.ids.tokens_file;
    if (!in.mask_flag.empty()) input.describe["attention_mask"] = in.mask_flag == "--mask" ? f.ids.mask : f.ids.mask_file;
    rep = verify::learned::check_ids(s, input);
  } catch (const Error& e) {
    if (e.parameter() == "ids") throw Error(e.where(), "--in", e.value(), e.accepted(), e.problem());
    throw in.renamed(e, IdInputs::kNoRow);
  }
  f.report.write(rep.to_json(), rep.to_markdown());
  exit_status() = rep.passed() ? 0 : 1;
}

}  // namespace

POSENC_CLI_SCHEME(learned) {
  registry.add_scheme({kScheme, describe_scheme<Spec>()});
  const std::string inputs_note =
      "Tokens: arange reads only L (and --past); make_positions the token ids; cumsum_mask the attention mask over "
      "past + L tokens. A [batch, ...] .npy gives one row of ids per batch row.";
  {
    auto f = std::make_shared<IdsFlags>();
    CLI::App* c = registry.command("ids", kScheme,
                                   "The position ids of the tokens under the id map (no table needed): arange "
                                   "(BERT, GPT-2), make_positions (RoBERTa, fairseq) or cumsum_mask (OPT)",
                                   "Position ids: the rows a learned position embedding looks up");
    f->spec.add_to(c);
    f->in.add_to(c);
    f->out.add_to(c, "json | csv | npy (int64)");
    c->footer(inputs_note +
              "\nExample: posenc ids learned --preset roberta --tokens 0,31414,232,2,1,1 --format json\n"
              "Example: posenc ids learned --preset opt --mask-file attention_mask.npy --out ids.npy\n"
              "Example: posenc ids learned --preset gpt2 --length 4 --past 10 --format csv\n"
              "Example: posenc ids learned --preset opt --mask 0011011 --format json");
    c->callback([f] { run_ids(*f); });
  }
  {
    auto f = std::make_shared<TableFlags>();
    CLI::App* c = registry.command("table", kScheme,
                                   "The rows of your trained table (--weights .npy [rows, dim]) at the position ids of "
                                   "the tokens: [L, dim] (or [batch, L, dim]); the JSON gives the ids too");
    f->spec.add_to(c);
    c->add_option("--weights", f->weights,
                  "The trained table: .npy [rows, dim] of f16, f32 or f64 (bf16 stored as uint16 with "
                  "--weights-dtype bf16)")
        ->type_name("FILE")
        ->required()
        ->group("Table");
    c->add_option("--weights-dtype", f->weights_dtype,
                  "Element type of --weights: f16 | bf16 | f32 | f64 (default: the file's own; bf16 must be declared)")
        ->type_name("T")
        ->group("Table");
    f->in.add_to(c);
    c->add_option("--dtype", f->dtype, "f32 (default: each value rounded once) | f64 (the values as stored)")
        ->type_name("T")
        ->group("Output");
    f->out.add_to(c, "npy | json | csv");
    c->footer(inputs_note +
              " An id outside [0, rows) of the table is an error, never a wrap.\n"
              "Example: posenc table learned --preset roberta --weights roberta_positions.npy --tokens-file "
              "input_ids.npy --out rows.npy\n"
              "Example: posenc table learned --preset opt --weights opt_positions.npy --mask 0011111 --dtype f64 "
              "--format json");
    c->callback([f] { run_table(*f); });
  }
  {
    auto f = std::make_shared<CheckFlags>();
    CLI::App* c = registry.command("check", kScheme,
                                   "Your position ids (--in .npy [L] or [batch, L]) against the id map of the spec "
                                   "for the same tokens / attention mask, id by id, bitwise; exit 0 pass, 1 fail");
    f->spec.add_to(c);
    c->add_option("--in", f->in_path,
                  "Your position ids: .npy [L] or [batch, L] of integers (int8 .. int64, uint8 .. uint64) or floats")
        ->type_name("FILE")
        ->required()
        ->group("Input");
    f->ids.add_to(c);
    f->report.add_to(c);
    c->footer("L and the batch come from --in; give the tokens (make_positions) or the attention mask (cumsum_mask) "
              "your ids were made from, with the same batch.\n"
              "Example: posenc check learned --preset roberta --in position_ids.npy --tokens-file input_ids.npy\n"
              "Example: posenc check learned --preset opt --in position_ids.npy --mask-file attention_mask.npy "
              "--format json");
    c->callback([f] { run_check(*f); });
  }
}

}  // namespace posenc::cli::scheme_learned
