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
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.hpp"
#include "in_process.hpp"
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
namespace {

// The temporary file being written, for the signal handler: a fixed buffer (async-signal-safe to read),
// written only while the cleanup signals are blocked.
char g_pending_tmp[4096] = {};
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void remove_pending_and_reraise(int sig) {
  if (g_pending_tmp[0] != '\0') unlink(g_pending_tmp);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Installs the handler for each cleanup signal whose disposition is the default (an ignored signal, e.g. under
// nohup, stays ignored). Once per process.
void install_cleanup_handlers() {
  static const bool done = [] {
    for (int sig : kCleanupSignals) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_pending_and_reraise;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
    // Past a file-size limit (ulimit -f) the default is to kill the process (leaving the temporary file); ignored,
    // the write fails with EFBIG and the command reports it and cleans up.
    struct sigaction old {};
    if (sigaction(SIGXFSZ, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGXFSZ, SIG_IGN);
    return true;
  }();
  (void)done;
}

// Runs f with the cleanup signals blocked (so g_pending_tmp and the file it names change together).
template <class F>
auto with_cleanup_signals_blocked(F&& f) {
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : kCleanupSignals) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  struct Restore {
    sigset_t* old;
    ~Restore() { pthread_sigmask(SIG_SETMASK, old, nullptr); }
  } restore{&old};
  return f();
}

std::string describe_mode(mode_t m) {
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  return "not a regular file";
}

}  // namespace

Output::Output(std::string path, bool binary) {
  if (in_process() && (path.empty() || path == "-" || InProcess::names_memory(path))) {
    path_ = path.empty() ? "-" : std::move(path);
    file_ = open_memstream(&memory_data_, &memory_size_);
    if (!file_) throw IoError("cannot open a memory stream for " + path_ + ": " + std::strerror(errno));
    memory_ = true;
    return;
  }
  if (path.empty() || path == "-") {
    if (binary && isatty(STDOUT_FILENO))
      throw UsageError("refusing to write binary .npy data to a terminal; use --out FILE.npy or redirect stdout");
    file_ = stdout;
    return;
  }
  path_ = std::move(path);
  const std::string what = "--out: cannot write '" + path_ + "': ";
  // A symbolic link stays a link: the file it names is what gets written.
  std::string target = path_;
  struct stat st {};
  if (lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = realpath(path_.c_str(), nullptr);
    if (real == nullptr) throw IoError(what + "it is a symbolic link that does not resolve (" + std::strerror(errno) + ")");
    target = real;
    std::free(real);
  }
  const bool exists = stat(target.c_str(), &st) == 0;
  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    // A device or a pipe (/dev/null, /dev/stdout, a FIFO) cannot be replaced atomically: written in place.
    const int fd = open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw IoError(what + std::strerror(errno));
    file_ = fdopen(fd, "wb");
    if (!file_) {
      const int err = errno;
      close(fd);
      throw IoError(what + std::strerror(err));
    }
    in_place_ = true;
    return;
  }
  if (exists && !S_ISREG(st.st_mode))
    throw IoError(what + "it is " + describe_mode(st.st_mode) +
                  "; accepted: a regular file (replaced atomically), a character device or a FIFO (written in place)");
  if (exists) {
    keep_mode_ = st.st_mode & 07777;
    keep_uid_ = st.st_uid;
    keep_gid_ = st.st_gid;
    replaces_ = true;
  }
  target_ = target;
  install_cleanup_handlers();
  with_cleanup_signals_blocked([&] {
    tmp_ = target_ + ".tmp-XXXXXX";
    if (tmp_.size() >= sizeof g_pending_tmp) throw IoError(what + "the path is too long");
    const int fd = mkstemp(tmp_.data());
    if (fd < 0) throw IoError("--out: cannot create a temporary file next to '" + target_ + "': " + std::strerror(errno));
    std::memcpy(g_pending_tmp, tmp_.c_str(), tmp_.size() + 1);
    file_ = fdopen(fd, "wb");
    if (!file_) {
      const int err = errno;
      close(fd);
      discard_tmp();
      throw IoError("--out: cannot open '" + tmp_ + "': " + std::strerror(err));
    }
  });
  std::setvbuf(file_, nullptr, _IOFBF, std::size_t{1} << 20);
}

void Output::discard_tmp() noexcept {
  with_cleanup_signals_blocked([&] {
    unlink(tmp_.c_str());
    g_pending_tmp[0] = '\0';
  });
}

Output::~Output() {
  if (memory_ && !committed_) {
    std::fclose(file_);
    std::free(memory_data_);
    return;
  }
  if (is_stdout() || committed_) return;
  if (file_) std::fclose(file_);
  if (!in_place_) discard_tmp();
}

void Output::commit() {
  if (memory_) {
    const int rc = std::fclose(file_);  // sets memory_data_ and memory_size_
    file_ = nullptr;
    MemoryBuffer buffer;
    buffer.data.reset(memory_data_);
    buffer.size = memory_size_;
    committed_ = true;
    if (rc != 0) throw IoError("cannot write " + path_ + " to memory: " + std::strerror(errno));
    in_process()->outputs[path_] = std::move(buffer);
    return;
  }
  if (is_stdout()) {
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw IoError(std::string("--out: cannot write to stdout: ") + std::strerror(errno));
    committed_ = true;
    return;
  }
  const std::string what = "--out: cannot write '" + path_ + "': ";
  if (std::fflush(file_) != 0 || std::ferror(file_)) throw IoError(what + std::strerror(errno));
  if (!in_place_) {
    // mkstemp creates the file 0600: a replaced file keeps its mode (and its owner and group where the system
    // lets this process set them), a new one gets the permissions an ordinary create would.
    mode_t mode = keep_mode_;
    if (!replaces_) {
      const mode_t mask = umask(0);
      umask(mask);
      mode = 0666 & ~mask;
    }
    if (replaces_ && (keep_uid_ != geteuid() || keep_gid_ != getegid()))
      (void)!fchown(fileno(file_), keep_uid_, keep_gid_);  // EPERM for another user's file: it becomes ours
    if (fchmod(fileno(file_), mode) != 0) throw IoError(what + std::strerror(errno));
  }
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw IoError(what + std::strerror(errno));
  if (!in_place_) {
    const bool renamed = with_cleanup_signals_blocked([&] {
      if (std::rename(tmp_.c_str(), target_.c_str()) != 0) return false;
      g_pending_tmp[0] = '\0';
      return true;
    });
    if (!renamed) throw IoError(what + std::strerror(errno));
  }
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
void write_npy(std::FILE* f, std::span<const std::int64_t> values, std::vector<std::size_t> shape) {
  write_npy_impl(f, values, shape, "<i8");
}
void write_npy(std::FILE* f, std::span<const f16> values, std::vector<std::size_t> shape) {
  write_npy_impl(f, values, shape, "<f2");
}
void write_npy(std::FILE* f, std::span<const bf16> values, std::vector<std::size_t> shape) {
  write_npy_impl(f, values, shape, "<u2");
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
