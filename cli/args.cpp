#include "args.hpp"

#include "in_process.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "posenc/error.hpp"
#include "posenc/json_text.hpp"

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
    throw UsageError(std::string(flag) + ": " + quoted(text) + " is not a decimal integer; accepted: a decimal integer in [-2^63, 2^63) (hexadecimal is not read)");
  return v;
}

double parse_double(std::string_view flag, std::string_view text) {
  const std::string s(text);
  if (s.find_first_of("xX") != std::string::npos)
    throw UsageError(std::string(flag) + ": " + quoted(text) +
                     " is not a decimal number; accepted: a decimal real, e.g. 10000 or 1e4 (hexadecimal is not read)");
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

std::string read_text_file(std::string_view flag, const std::string& path, std::size_t max_bytes,
                           std::string_view accepted) {
  const auto fail = [&](const std::string& problem) {
    throw IoError(std::string(flag) + ": '" + text_excerpt(path) + "' " + problem + "; accepted: " + std::string(accepted));
  };
  if (const InProcess* session = in_process()) {
    const auto it = session->texts.find(path);
    if (it != session->texts.end()) {
      if (it->second.size() > max_bytes) fail("is larger than " + std::to_string(max_bytes >> 20) + " MiB");
      return it->second;
    }
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(std::string("cannot be opened: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(std::string("cannot be read: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail("cannot be read: it is a directory");
  const auto too_large = [&] {
    fail("is larger than " + std::to_string(max_bytes >> 20) + " MiB (reading stopped there)");
  };
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) too_large();
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) too_large();
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
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
