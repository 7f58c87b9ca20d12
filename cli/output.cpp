#include "output.hpp"

#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.hpp"
#include "posenc/error.hpp"

namespace posenc::cli {

std::string_view to_string(Format f) {
  switch (f) {
    case Format::npy: return "npy";
    case Format::json: return "json";
    case Format::csv: return "csv";
  }
  return "?";
}

Format choose_format(std::string_view format_flag, std::string_view out_path, std::vector<Format> allowed) {
  if (allowed.empty()) allowed = {Format::npy, Format::json, Format::csv};
  std::string names;
  for (Format f : allowed) names += (names.empty() ? "" : " | ") + std::string(to_string(f));
  auto pick = [&](std::string_view name, bool from_extension) -> Format {
    for (Format f : allowed)
      if (to_string(f) == name) return f;
    if (from_extension)
      throw UsageError("--out: cannot tell the format from the extension of '" + std::string(out_path) +
                       "'; use --format " + names + " or a .npy/.json/.csv file name");
    throw UsageError("--format: '" + std::string(name) + "' is not a format of this command; accepted: " + names);
  };
  if (!format_flag.empty()) return pick(format_flag, false);
  if (out_path.empty() || out_path == "-") return pick("json", false);
  const std::size_t slash = out_path.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? out_path : out_path.substr(slash + 1);
  const std::size_t dot = base.find_last_of('.');
  if (dot == std::string_view::npos) return pick("", true);
  std::string ext(base.substr(dot + 1));
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return pick(ext, true);
}

// ---- Output --------------------------------------------------------------------------------------

Output::Output(std::string path, bool binary) {
  if (path.empty() || path == "-") {
    if (binary && isatty(STDOUT_FILENO))
      throw UsageError("refusing to write binary .npy data to a terminal; use --out FILE.npy or redirect stdout");
    file_ = stdout;
    return;
  }
  path_ = std::move(path);
  tmp_ = path_ + ".tmp-XXXXXX";
  const int fd = mkstemp(tmp_.data());
  if (fd < 0) throw IoError("cannot create a temporary file next to '" + path_ + "': " + std::strerror(errno));
  file_ = fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    close(fd);
    unlink(tmp_.c_str());
    throw IoError("cannot open '" + tmp_ + "': " + std::strerror(err));
  }
  std::setvbuf(file_, nullptr, _IOFBF, std::size_t{1} << 20);
}

Output::~Output() {
  if (is_stdout() || committed_) return;
  if (file_) std::fclose(file_);
  unlink(tmp_.c_str());
}

void Output::commit() {
  if (is_stdout()) {
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw IoError(std::string("cannot write to stdout: ") + std::strerror(errno));
    committed_ = true;
    return;
  }
  const std::string what = "cannot write '" + path_ + "': ";
  if (std::fflush(file_) != 0 || std::ferror(file_)) throw IoError(what + std::strerror(errno));
  // mkstemp creates the file 0600; give it the permissions an ordinary create would.
  const mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fileno(file_), 0666 & ~mask) != 0) throw IoError(what + std::strerror(errno));
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw IoError(what + std::strerror(errno));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) throw IoError(what + std::strerror(errno));
  committed_ = true;
}

// ---- numbers -------------------------------------------------------------------------------------
namespace {

template <class T>
void put_number(std::FILE* f, T v, bool json) {
  char buf[64];
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) {
      std::fputs(json ? "null" : (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")), f);
      return;
    }
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form for float/double
  std::fwrite(buf, 1, static_cast<std::size_t>(r.ptr - buf), f);
}

template <class T>
void put_json_array(std::FILE* f, std::span<const T> v, std::size_t cols) {
  if (cols == 0) {
    std::fputc('[', f);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) std::fputs(", ", f);
      put_number(f, v[i], true);
    }
    std::fputc(']', f);
    return;
  }
  std::fputs("[", f);
  const std::size_t rows = v.size() / cols;
  for (std::size_t r = 0; r < rows; ++r) {
    std::fputs(r ? ",\n    [" : "\n    [", f);
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) std::fputs(", ", f);
      put_number(f, v[r * cols + c], true);
    }
    std::fputc(']', f);
  }
  std::fputs(rows ? "\n  ]" : "]", f);
}

}  // namespace

void write_json(std::FILE* f, const nlohmann::ordered_json& head, std::span<const JsonArray> arrays) {
  std::fputs("{", f);
  bool first = true;
  auto key = [&](const std::string& name) {
    std::fputs(first ? "\n  " : ",\n  ", f);
    first = false;
    const std::string k = nlohmann::ordered_json(name).dump();
    std::fwrite(k.data(), 1, k.size(), f);
    std::fputs(": ", f);
  };
  for (const auto& [name, value] : head.items()) {
    key(name);
    const std::string v = value.dump();
    std::fwrite(v.data(), 1, v.size(), f);
  }
  for (const auto& a : arrays) {
    key(a.name);
    std::visit([&](auto span) { put_json_array(f, span, a.cols); }, a.values);
  }
  std::fputs("\n}\n", f);
}

// ---- npy -----------------------------------------------------------------------------------------

std::string npy_header(std::string_view descr, const std::vector<std::size_t>& shape) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dict += ",";
  dict += "), }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64.
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xFFFF) throw IoError("npy: header too long for format version 1.0");
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

namespace {

template <class T>
void write_npy_impl(std::FILE* f, std::span<const T> values, const std::vector<std::size_t>& shape, std::string_view descr) {
  std::size_t n = 1;
  for (auto s : shape) n *= s;
  if (n != values.size()) throw IoError("npy: shape does not match the number of values (internal error)");
  const std::string h = npy_header(descr, shape);
  std::fwrite(h.data(), 1, h.size(), f);
  if constexpr (std::endian::native == std::endian::little) {
    std::fwrite(values.data(), sizeof(T), values.size(), f);
  } else {
    for (T v : values) {
      unsigned char b[sizeof(T)];
      std::memcpy(b, &v, sizeof(T));
      for (std::size_t i = sizeof(T); i-- > 0;) std::fputc(b[i], f);
    }
  }
}

}  // namespace

void write_npy(std::FILE* f, std::span<const float> values, std::vector<std::size_t> shape) {
  write_npy_impl(f, values, shape, "<f4");
}
void write_npy(std::FILE* f, std::span<const double> values, std::vector<std::size_t> shape) {
  write_npy_impl(f, values, shape, "<f8");
}

// ---- CSV -----------------------------------------------------------------------------------------

void write_csv(std::FILE* f, const std::vector<CsvColumn>& labels, const std::vector<std::string>& value_names,
               NumberSpan values, std::size_t rows) {
  bool first = true;
  for (const auto& c : labels) {
    if (!first) std::fputc(',', f);
    first = false;
    std::fputs(c.name.c_str(), f);
  }
  for (const auto& n : value_names) {
    if (!first) std::fputc(',', f);
    first = false;
    std::fputs(n.c_str(), f);
  }
  std::fputc('\n', f);
  const std::size_t cols = value_names.size();
  std::visit(
      [&](auto span) {
        for (std::size_t r = 0; r < rows; ++r) {
          bool first_in_row = true;
          for (const auto& c : labels) {
            if (!first_in_row) std::fputc(',', f);
            first_in_row = false;
            put_number(f, c.values[r], false);
          }
          for (std::size_t j = 0; j < cols; ++j) {
            if (!first_in_row) std::fputc(',', f);
            first_in_row = false;
            put_number(f, span[r * cols + j], false);
          }
          std::fputc('\n', f);
        }
      },
      values);
}

std::vector<std::string> numbered_names(std::string_view prefix, std::size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::string(prefix) + std::to_string(i));
  return out;
}

}  // namespace posenc::cli
