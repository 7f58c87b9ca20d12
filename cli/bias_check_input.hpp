// cli/bias_check_input.hpp — what every `posenc check <bias scheme>` reads the same way: the user's bias tensor
// (--in, --key-mask) and the error for a tensor whose heads differ from the spec's. Header-only and included by the
// scheme files alone: it uses the checkers' input type (verify/bias_check.hpp, in posenc_verify, which
// the program links and posenc_cli_core does not).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bias_verbs.hpp"
#include "npy_reader.hpp"
#include "posenc/error.hpp"
#include "verify/bias_check.hpp"
#include "verbs.hpp"

namespace posenc::cli {

// The bias tensor: --in (`path`, already read into `a`) of shape [heads, Lq, Lk] (or [Lq, Lk]: one head) with
// --key-mask; UsageError naming --in for another shape or Lq > Lk, and --key-mask for a mask of another length than
// Lk. describe: file, stored type and shape. The caller checks the heads against its spec.
inline verify::BiasTensorInput read_bias_tensor(const NpyArray& a, const std::string& path,
                                       const std::optional<std::string>& key_mask) {
  const std::vector<std::size_t>& sh = a.shape;
  const std::string file = "--in: '" + path + "' holds an array of shape " + shape_text(sh);
  if (sh.size() != 3 && sh.size() != 2)
    throw UsageError(file + "; accepted: [heads, query_length, key_length] (or [query_length, key_length]: one head)");
  verify::BiasTensorInput in;
  in.values = a.values;
  in.heads = sh.size() == 3 ? sh[0] : 1;
  in.query_length = sh[sh.size() - 2];
  in.key_length = sh.back();
  in.key_mask = parse_key_mask(key_mask);
  in.stored = dtype_of(a.stored);
  in.describe = {{"file", path}, {"stored", std::string(to_string(a.stored))}, {"shape", shape_text(sh)}};
  if (in.query_length > in.key_length)
    throw UsageError(file + "; the queries are the last query_length keys, so query_length <= key_length");
  if (!in.key_mask.empty() && in.key_mask.size() != in.key_length)
    throw UsageError("--key-mask: " + std::to_string(in.key_mask.size()) + " entries; accepted: one per key, " +
                     std::to_string(in.key_length) + " (the last dimension of --in)");
  return in;
}

// The error of a tensor whose heads differ from the spec's (heads_flag_given: --heads was typed).
inline Error heads_mismatch(const char* scheme, bool heads_flag_given, std::size_t spec_heads, std::size_t tensor_heads) {
  return Error(scheme, heads_flag_given ? "--heads" : "heads (from the preset or --spec)", std::to_string(spec_heads),
               "the first dimension of --in, " + std::to_string(tensor_heads), "differs from the input");
}

}  // namespace posenc::cli
