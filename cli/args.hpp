// cli/args.hpp — reading flag values: integers, reals and position lists.
//
// Flag values are read here rather than by CLI11's converters so that every malformed value gets the
// same kind of one-line message (the flag, the text given, what is accepted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace posenc::cli {

// A usage mistake that the library cannot name (malformed number or list, conflicting flags).
// main() prints it like posenc::Error and exits with status 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Whole-string decimal integer (optional sign). Throws UsageError naming the flag.
std::int64_t parse_int64(std::string_view flag, std::string_view text);
// Whole-string decimal real number as strtod reads it (nan/inf are read, the spec validation rejects them);
// hexadecimal (0x1p3) is refused, as for integers and spec fields (posenc/describe.hpp): numbers are decimal.
double parse_double(std::string_view flag, std::string_view text);

// The JSON files posenc reads (--spec, rope's --config, FIRE's --weights) are at most this large: a spec or an HF
// config is kilobytes, a FIRE state_dict a few hundred; the cap stops an endless input (/dev/zero) at once.
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{64} << 20;
// The whole text of the file a flag names, read with a bound: more than max_bytes (a larger file, or a device
// that never ends) is refused without reading further. posenc::IoError "<flag>: '<path>' <problem>; accepted:
// <accepted>" for a missing, unreadable or directory path and for one that is too large.
std::string read_text_file(std::string_view flag, const std::string& path, std::size_t max_bytes,
                           std::string_view accepted);

// A list of integer positions written as comma-separated items, each
//   p          one position
//   a:b        a, a+1, ..., b-1            (needs a < b)
//   a:b:step   a, a+step, ... up to b, b excluded (step != 0; step < 0 counts down, needs a > b)
// e.g. "0:4,1000" = 0 1 2 3 1000. Items are kept as arithmetic runs, so a long range costs nothing
// until it is materialised.
struct PositionRun {
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::uint64_t count = 1;
  // start + i*step; the value lies between the run's ends, so the wrapping unsigned arithmetic is exact.
  std::int64_t at(std::uint64_t i) const {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(start) + static_cast<std::uint64_t>(step) * i);
  }
  std::int64_t last() const { return at(count - 1); }
};

class PositionList {
 public:
  static constexpr std::string_view kSyntax =
      "comma-separated items, each an integer p, a range a:b (a, a+1, ..., b-1) or a:b:step, e.g. 0:4,1000";

  PositionList() = default;
  explicit PositionList(std::vector<PositionRun> runs);
  // Throws UsageError naming the flag, the offending item and kSyntax.
  static PositionList parse(std::string_view flag, std::string_view text);

  std::uint64_t size() const noexcept { return size_; }
  const std::vector<PositionRun>& runs() const noexcept { return runs_; }
  // True when the list is first, first+1, ..., first+size-1; sets *first.
  bool contiguous(std::int64_t* first) const;
  std::vector<std::int64_t> materialize() const;

 private:
  std::vector<PositionRun> runs_;
  std::uint64_t size_ = 0;
};

}  // namespace posenc::cli
