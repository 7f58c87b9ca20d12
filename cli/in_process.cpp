// cli/in_process.cpp — the calling thread's in-memory inputs and outputs (in_process.hpp).
#include "in_process.hpp"

#include "output.hpp"
#include "posenc/error.hpp"

namespace posenc::cli {
InProcessScope::InProcessScope(InProcess& session) {
  if (detail::current_in_process) throw IoError("an in-process command is already running on this thread");
  detail::current_in_process = &session;
}

InProcessScope::~InProcessScope() { detail::current_in_process = nullptr; }

bool read_in_process_npy(const std::string& name, std::optional<NpyType> declared, NpyKinds kinds, NpyArray* out) {
  const InProcess* session = in_process();
  if (!session) return false;
  const auto it = session->arrays.find(name);
  if (it == session->arrays.end()) return false;
  const InProcess::Array& a = it->second;
  *out = parse_npy_parts(npy_header(a.descr, a.shape), a.bytes, name, declared, kinds);
  return true;
}

}  // namespace posenc::cli
