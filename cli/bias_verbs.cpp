#include "bias_verbs.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "args.hpp"
#include "posenc/alibi_spec.hpp"  // kAlibiMaxLength: key positions < 2^31 in every bias scheme
#include "posenc/error.hpp"

namespace posenc::cli {

std::vector<std::uint8_t> parse_bits(const std::string& flag, const std::string& text, const std::string& what,
                                     const std::string& unit) {
  std::vector<std::uint8_t> m;
  for (char c : text) {
    if (c == '0' || c == '1') m.push_back(static_cast<std::uint8_t>(c - '0'));
    else if (c != ',' && c != ' ')
      throw UsageError(flag + ": '" + text + "' is not " + what + "; accepted: one 0 (padding) or 1 (token) per " +
                       unit + ", e.g. 0011111 or 0,0,1,1,1");
  }
  if (m.empty())
    throw UsageError(flag + ": '" + text + "' holds no 0/1 entries; accepted: one 0 or 1 per " + unit);
  return m;
}

std::vector<std::uint8_t> parse_key_mask(const std::optional<std::string>& given) {
  if (!given) return {};
  return parse_bits("--key-mask", *given, "a key mask", "key");
}

BiasMask parse_mask(const std::string& text) {
  if (const auto m = enum_from_string<BiasMask>(text)) return *m;
  throw UsageError("--mask: '" + text + "' is not a mask; accepted: " + enum_names<BiasMask>());
}

std::size_t parse_length(const std::string& flag, const std::string& text) {
  const std::int64_t v = parse_int64(flag, text);
  if (v < 1 || v >= kAlibiMaxLength)
    throw UsageError(flag + ": " + text + " is out of range; accepted: an integer in [1, " +
                     std::to_string(kAlibiMaxLength - 1) + "]");
  return static_cast<std::size_t>(v);
}

std::vector<double> parse_per_head_list(const std::string& flag, const std::string& text, std::size_t heads) {
  const std::string accepted = "comma-separated reals, one per head (" + std::to_string(heads) +
                               "), or one real for every head, e.g. 0.5 or 0.5,1,2";
  auto bad = [&](const std::string& problem) {
    return UsageError(flag + ": '" + text + "' " + problem + "; accepted: " + accepted);
  };
  std::vector<double> v;
  const bool one = text.find(',') == std::string::npos;
  std::size_t start = 0;
  for (std::size_t item = 1;; ++item) {
    const std::size_t comma = text.find(',', start);
    std::string s = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t first = s.find_first_not_of(' '), last = s.find_last_not_of(' ');
    s = first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
    if (s.empty()) throw bad(one ? "is empty" : "has an empty item (item " + std::to_string(item) + ")");
    const std::string which = one ? std::string() : "(item " + std::to_string(item) + ", '" + s + "') ";
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || s.find_first_of(" \t\n") != std::string::npos)
      throw bad(which + "is not a real");
    if (errno == ERANGE) throw bad(which + "is out of the range of a double");
    v.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() == 1) return std::vector<double>(heads, v[0]);
  if (v.size() != heads)
    throw bad("has " + std::to_string(v.size()) + " values for " + std::to_string(heads) +
              (heads == 1 ? " head" : " heads"));
  return v;
}

BiasGeometry checked_geometry(std::size_t lq, std::size_t lk, const std::vector<std::uint8_t>& key_mask, BiasMask m,
                              const std::function<void(const BiasGeometry&)>& check) {
  BiasGeometry g{.query_length = lq, .key_length = lk, .key_mask = key_mask, .mask = m};
  try {
    check(g);
  } catch (const Error& e) {
    const std::string p = e.parameter();
    const std::string flag = p == "query_length" ? "--query-length" : p == "key_length" ? "--key-length"
                             : p == "key_mask"   ? "--key-mask"
                                                 : p;
    throw UsageError(flag + ": " + e.value() + " is out of range; accepted: " + e.accepted());
  }
  return g;
}

void BiasGeometryFlags::add_to(CLI::App* c, const std::string& key_mask_help) {
  c->add_option("--key-length", key_length, "Keys Lk at positions 0 .. Lk-1: an integer in [1, 2147483647] (default 8)")
      ->type_name("N")->group("Geometry");
  c->add_option("--query-length", query_length,
                "Queries Lq <= Lk, the last Lq keys: an integer in [1, 2147483647] (default Lk; 1: a decoder step)")
      ->type_name("N")->group("Geometry");
  c->add_option("--key-mask", key_mask, key_mask_help)->type_name("BITS")->group("Geometry");
  c->add_option("--mask", mask, "none (default): the bias only; causal: -inf where a key is not visible")
      ->type_name(enum_names<BiasMask>())->group("Geometry");
}

BiasGeometry BiasGeometryFlags::geometry(const std::function<void(const BiasGeometry&)>& check) {
  const std::size_t lk = parse_length("--key-length", key_length);
  const std::size_t lq = query_length.empty() ? lk : parse_length("--query-length", query_length);
  key_mask_values = parse_key_mask(key_mask);
  return checked_geometry(lq, lk, key_mask_values, parse_mask(mask), check);
}

void run_index_command(BiasGeometryFlags& geometry, const std::string& threads, const OutFlags& out,
                       const std::function<void(const BiasGeometry&)>& check, const std::string& name,
                       const IndexFill& fill, const std::string& no_mask) {
  const BiasGeometry g = geometry.geometry(check);
  if (g.mask != BiasMask::none || !g.key_mask.empty()) throw UsageError(no_mask);
  const TableOptions opts = parse_threads(threads);
  const Format format = choose_format(out.format, out.out);
  Output o(out.out, format == Format::npy);
  const std::size_t Lq = g.query_length, Lk = g.key_length, n = Lq * Lk;
  auto i32 = allocate<std::int32_t>(n, "an index matrix of " + std::to_string(Lq) + " x " + std::to_string(Lk) + " entries");
  const std::span<std::int32_t> idx(i32.get(), n);
  const Json head = fill(g, idx, opts);
  write_index_matrix(o, format, head, name, idx, Lq, Lk);
}

void write_index_matrix(Output& out, Format format, Json head, const std::string& name,
                        std::span<const std::int32_t> index, std::size_t Lq, std::size_t Lk) {
  const std::size_t n = Lq * Lk;
  auto b = allocate<std::int64_t>(n, "an index matrix of " + std::to_string(Lq) + " x " + std::to_string(Lk) + " entries");
  for (std::size_t i = 0; i < n; ++i) b[i] = index[i];
  const std::span<const std::int64_t> v(b.get(), n);
  switch (format) {
    case Format::npy: write_npy(out.file(), v, {Lq, Lk}); break;
    case Format::json: {
      head["query_length"] = Lq;
      head["key_length"] = Lk;
      write_json(out.file(), head, std::vector<JsonArray>{{name, v, Lk}});
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

namespace {

template <class T>
void write_bias_impl(Output& out, Format format, Json head, const std::string& note, std::span<const T> values,
                     const BiasGeometry& g, std::size_t H) {
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  switch (format) {
    case Format::npy: write_npy(out.file(), values, {H, Lq, Lk}); break;
    case Format::json: {
      head["shape"] = {H, Lq, Lk};
      head["mask"] = std::string(to_string(g.mask));
      head["dtype"] = sizeof(T) == 4 ? "f32" : "f64";
      head["note"] = "bias[h][i][j]: query row i at key position key_length - query_length + i, key j at position j; " +
                     note;
      std::vector<JsonArray> arrays;
      std::vector<std::int64_t> km(g.key_mask.begin(), g.key_mask.end());
      if (!km.empty()) arrays.push_back({"key_mask", std::span<const std::int64_t>(km), 0});
      arrays.push_back({"bias", values, Lk});
      write_json(out.file(), head, arrays);
      break;
    }
    case Format::csv: {
      std::vector<std::int64_t> hh(H * Lq), ii(H * Lq);
      for (std::size_t r = 0; r < H * Lq; ++r) {
        hh[r] = static_cast<std::int64_t>(r / Lq);
        ii[r] = static_cast<std::int64_t>(r % Lq);
      }
      write_csv(out.file(), {{"head", std::move(hh)}, {"query", std::move(ii)}}, numbered_names("k", Lk), values, H * Lq);
      break;
    }
  }
  out.commit();
}

template <class T>
void write_scores_impl(Output& out, Format format, Json head, double scale, const BiasGeometry& g, std::size_t H,
                       std::span<const T> values) {
  const std::size_t lq = g.query_length, lk = g.key_length;
  if (format == Format::npy) {
    write_npy(out.file(), values, std::vector<std::size_t>{H, lq, lk});
  } else {
    head["shape"] = {H, lq, lk};
    head["scale"] = scale;
    head["mask"] = std::string(to_string(g.mask));
    head["note"] = "scores[h][i][j] = scale * <q[h][i], k[h][j]> + bias[h][i][j] (-inf where masked)";
    const std::vector<JsonArray> arrays{{"scores", values, lk}};
    write_json(out.file(), head, arrays);
  }
  out.commit();
}

}  // namespace

void write_bias_tensor(Output& out, Format format, Json head, const std::string& note, std::span<const float> values,
                       const BiasGeometry& g, std::size_t heads) {
  write_bias_impl(out, format, std::move(head), note, values, g, heads);
}
void write_bias_tensor(Output& out, Format format, Json head, const std::string& note, std::span<const double> values,
                       const BiasGeometry& g, std::size_t heads) {
  write_bias_impl(out, format, std::move(head), note, values, g, heads);
}
void write_scores(Output& out, Format format, Json head, double scale, const BiasGeometry& g, std::size_t heads,
                  std::span<const float> values) {
  write_scores_impl(out, format, std::move(head), scale, g, heads, values);
}
void write_scores(Output& out, Format format, Json head, double scale, const BiasGeometry& g, std::size_t heads,
                  std::span<const double> values) {
  write_scores_impl(out, format, std::move(head), scale, g, heads, values);
}

ScoresInput read_scores_input(const std::string& q_path, const std::string& k_path, bool queries_are_last_keys) {
  ScoresInput in;
  in.q = read_input("--q", q_path);
  in.k = read_input("--k", k_path);
  for (const auto& [name, a] : {std::pair<const char*, NpyArray*>{"--q", &in.q}, {"--k", &in.k}})
    if (a->shape.size() != 2 && a->shape.size() != 3)
      throw UsageError(std::string(name) + ": holds an array of shape " + shape_text(a->shape) +
                       "; accepted: [heads, tokens, head_dim] or [tokens, head_dim] (one head)");
  const std::size_t hq = in.q.shape.size() == 3 ? in.q.shape[0] : 1, hk = in.k.shape.size() == 3 ? in.k.shape[0] : 1;
  const std::size_t d = in.q.shape.back();
  if (in.k.shape.back() != d)
    throw UsageError("--k: head_dim " + std::to_string(in.k.shape.back()) + " differs from --q's " + std::to_string(d));
  if (hq != hk) throw UsageError("--k: " + std::to_string(hk) + " heads differ from --q's " + std::to_string(hq));
  in.heads = hq;
  in.head_dim = d;
  in.query_length = in.q.shape[in.q.shape.size() - 2];
  in.key_length = in.k.shape[in.k.shape.size() - 2];
  if (queries_are_last_keys && in.query_length > in.key_length)
    throw UsageError("--q: " + std::to_string(in.query_length) + " queries but --k has " +
                     std::to_string(in.key_length) + " keys; the queries are the last query_length keys (Lq <= Lk)");
  in.f64 = in.q.stored == NpyType::f64 && in.k.stored == NpyType::f64;
  return in;
}

double scores_scale(const std::optional<std::string>& given, std::size_t head_dim) {
  const double scale = given ? parse_double("--scale", *given) : 1.0 / std::sqrt(static_cast<double>(head_dim));
  if (!std::isfinite(scale)) throw UsageError("--scale: " + *given + " is out of range; accepted: a finite real");
  return scale;
}

void ScoresFlags::add_to(CLI::App* c, const std::string& key_mask_help, const std::string& scale_help,
                         const std::string& default_mask) {
  mask = default_mask;
  c->add_option("--q", q_path, "Queries: .npy [heads, Lq, head_dim] or [Lq, head_dim]")->type_name("FILE")->required()->group("Input");
  c->add_option("--k", k_path, "Keys: .npy [heads, Lk, head_dim] or [Lk, head_dim]")->type_name("FILE")->required()->group("Input");
  c->add_option("--scale", scale, "Score scale: a finite real (" + scale_help + ")")->type_name("X")->group("Input");
  c->add_option("--key-mask", key_mask, key_mask_help)->type_name("BITS")->group("Input");
  c->add_option("--mask", mask,
                default_mask == "causal" ? "causal (default): -inf where a key is not visible; none: the bias only"
                                         : "none (default): the bias only; causal: -inf where a key is not visible")
      ->type_name(enum_names<BiasMask>())
      ->group("Input");
  c->add_option("--threads", threads, "threads for the bias rows (0: OpenMP's default count)")->type_name("N");
  out.add_to(c, "npy | json");
}

NpyArray read_values_input(const std::string& v_path, const ScoresInput& in) {
  NpyArray v = read_input("--v", v_path);
  const std::vector<std::size_t> want{in.heads, in.key_length, in.head_dim}, want2{in.key_length, in.head_dim};
  if (!(v.shape == want || (in.heads == 1 && v.shape == want2)))
    throw UsageError("--v: '" + v_path + "' holds an array of shape " + shape_text(v.shape) +
                     "; accepted: [heads, key_length, head_dim] = " + shape_text(want) + " (as --k)");
  return v;
}

namespace {

template <class T>
void write_output_impl(Output& out, Format format, Json head, double scale, const std::string& note,
                       const ScoresInput& in, std::span<const T> z) {
  if (format == Format::npy) {
    write_npy(out.file(), z, std::vector<std::size_t>{in.heads, in.query_length, in.head_dim});
  } else {
    head["scale"] = scale;
    head["note"] = note;
    write_json(out.file(), head, std::vector<JsonArray>{{"output", z, in.head_dim}});
  }
  out.commit();
}

}  // namespace

void write_attention_output(Output& out, Format format, Json head, double scale, const std::string& note,
                            const ScoresInput& in, std::span<const float> z) {
  write_output_impl(out, format, std::move(head), scale, note, in, z);
}
void write_attention_output(Output& out, Format format, Json head, double scale, const std::string& note,
                            const ScoresInput& in, std::span<const double> z) {
  write_output_impl(out, format, std::move(head), scale, note, in, z);
}

}  // namespace posenc::cli
