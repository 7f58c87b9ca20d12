#include "args.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace posenc::cli {
namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

bool read_int64(std::string_view text, std::int64_t* out) {
  std::string_view t = text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  if (t.empty() || t.front() == '+') return false;
  const char* end = t.data() + t.size();
  auto [ptr, ec] = std::from_chars(t.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// Upper bound on the number of positions in one list, far above anything that fits in memory; it
// keeps the run arithmetic free of overflow.
constexpr std::uint64_t kMaxListSize = std::uint64_t{1} << 62;

}  // namespace

std::int64_t parse_int64(std::string_view flag, std::string_view text) {
  std::int64_t v = 0;
  if (!read_int64(text, &v))
    throw UsageError(std::string(flag) + ": " + quoted(text) + " is not an integer; accepted: a decimal integer in [-2^63, 2^63)");
  return v;
}

double parse_double(std::string_view flag, std::string_view text) {
  const std::string s(text);
  if (!s.empty() && s.find_first_of(" \t\n") == std::string::npos) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && errno != ERANGE) return v;
    if (end == s.c_str() + s.size())
      throw UsageError(std::string(flag) + ": " + quoted(text) + " is out of the range of a double");
  }
  throw UsageError(std::string(flag) + ": " + quoted(text) + " is not a number; accepted: a decimal real, e.g. 10000 or 1e4");
}

PositionList::PositionList(std::vector<PositionRun> runs) : runs_(std::move(runs)) {
  for (const auto& r : runs_) size_ += r.count;
}

PositionList PositionList::parse(std::string_view flag, std::string_view text) {
  const std::string f(flag);
  auto bad = [&](const std::string& why) {
    return UsageError(f + ": " + why + " in " + quoted(text) + "; accepted syntax: " + std::string(kSyntax));
  };
  std::vector<PositionRun> runs;
  std::uint64_t total = 0;
  if (text.empty()) throw bad("empty list");
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (item.empty()) throw bad("empty item");
    // Split into 1..3 colon-separated integers.
    std::int64_t parts[3] = {0, 0, 1};
    int n = 0;
    std::size_t p = 0;
    while (true) {
      const std::size_t colon = item.find(':', p);
      const std::string_view tok = item.substr(p, colon == std::string_view::npos ? std::string_view::npos : colon - p);
      if (n == 3) throw bad("item " + quoted(item) + " has more than two ':'");
      if (!read_int64(tok, &parts[n]))
        throw bad((tok.empty() ? std::string("empty number") : "cannot read " + quoted(tok) + " as an integer") +
                            (item == tok ? std::string() : " (item " + quoted(item) + ")"));
      ++n;
      if (colon == std::string_view::npos) break;
      p = colon + 1;
    }
    PositionRun run;
    run.start = parts[0];
    if (n == 1) {
      run.count = 1;
    } else {
      const std::int64_t a = parts[0], b = parts[1], step = parts[2];
      if (step == 0) throw bad("item " + quoted(item) + " has step 0");
      if ((step > 0 && !(a < b)) || (step < 0 && !(a > b)))
        throw bad("item " + quoted(item) + " is an empty range (a:b is a, a+1, ..., b-1 and needs a < b; a:b:-1 counts down)");
      // Unsigned differences are exact here (the ends are ordered), so nothing overflows.
      const std::uint64_t dist = step > 0 ? static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)
                                          : static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b);
      const std::uint64_t stride = step > 0 ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
      const std::uint64_t count = (dist - 1) / stride + 1;
      if (count > kMaxListSize) throw bad("item " + quoted(item) + " has too many positions");
      run.step = step;
      run.count = count;
    }
    total += run.count;
    if (total > kMaxListSize) throw bad("the list has too many positions");
    runs.push_back(run);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return PositionList(std::move(runs));
}

bool PositionList::contiguous(std::int64_t* first) const {
  if (runs_.empty()) return false;
  *first = runs_.front().start;
  // Unsigned so that the arithmetic cannot overflow; callers check the positions' range first.
  std::uint64_t next = static_cast<std::uint64_t>(runs_.front().start);
  for (const auto& r : runs_) {
    if (static_cast<std::uint64_t>(r.start) != next || (r.count > 1 && r.step != 1)) return false;
    next += r.count;
  }
  return true;
}

std::vector<std::int64_t> PositionList::materialize() const {
  std::vector<std::int64_t> out;
  out.reserve(size_);
  for (const auto& r : runs_)
    for (std::uint64_t i = 0; i < r.count; ++i) out.push_back(r.at(i));
  return out;
}

}  // namespace posenc::cli
