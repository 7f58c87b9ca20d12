// cli/identify_verb.hpp — the frame of `posenc identify <scheme>` (verify/identify.hpp does the search): --in and
// --in-dtype, --positions where the scheme's numbers have positions, the report flags; exit status 0 when a
// convention matched. The scheme gives what it does with the array: identify(array, positions text, given) returns
// its verify::Identification.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "registry.hpp"
#include "verbs.hpp"

namespace posenc::cli {

struct IdentifyFlags {
  InputFlags in;
  ReportFlags report;
  std::string positions;
};

// An index matrix's [query_length, key_length] from --in's shape (a UsageError for any other shape).
inline std::pair<std::size_t, std::size_t> index_matrix_shape(const NpyArray& a, const IdentifyFlags& f) {
  if (a.shape.size() != 2)
    throw UsageError("--in: '" + f.in.path + "' holds an array of shape " + shape_text(a.shape) +
                     "; accepted: an index matrix [query_length, key_length]");
  return {a.shape[0], a.shape[1]};
}

// positions_help: the --positions option's help (empty: the scheme's numbers have no positions, no option); kinds:
// the element types --in takes (numbers for integer matrices).
template <class Identify>
void add_identify_command(Registry& registry, const std::string& scheme, const std::string& description,
                          const std::string& positions_help, const std::string& footer, Identify identify,
                          NpyKinds kinds = NpyKinds::floats) {
  auto f = std::make_shared<IdentifyFlags>();
  CLI::App* c = registry.command("identify", scheme, description);
  f->in.add_to(c);
  if (!positions_help.empty())
    c->add_option("--positions", f->positions, positions_help)->type_name("SPEC")->group("Input");
  f->report.add_to(c);
  c->footer(footer);
  const bool has_positions = !positions_help.empty();
  c->callback([f, c, identify, has_positions, kinds] {
    const NpyArray a = f->in.read(kinds);
    const auto id = identify(a, *f, has_positions && c->count("--positions") > 0);
    f->report.write(id.to_json(), id.to_markdown());
    exit_status() = id.matched ? 0 : 1;
  });
}

}  // namespace posenc::cli
