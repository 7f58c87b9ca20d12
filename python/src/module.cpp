// python/src/module.cpp — posenc._posenc: the `posenc` program's driver (cli/run.hpp) run in process over the
// caller's arrays (cli/in_process.hpp). The Python package (python/posenc/) maps keyword arguments to the command
// line; everything else — presets, specs, validation, errors, computing, writers — is the command line's own code.
//
//   run(args, arrays, texts) -> dict
//     args    the command line without the program name, e.g. ["table", "rope", "--preset", "hf-llama", ...]
//     arrays  {name: numpy.ndarray}: read in place (C-contiguous only; a strided or Fortran-ordered array is a
//             ValueError, never a silent copy), under the name a file flag carries ("<x>")
//     texts   {name: str}: JSON given as text (a spec, an HF config, FIRE's weights)
//   returns {"status", "failure" (none|usage|io|memory|other), "error", "out", "err", "markdown",
//            "outputs": {name: numpy.uint8 array owning the bytes the command wrote, no copy}}
//   The GIL is released while the command runs.
//   options(verb, scheme) -> [(flag, type, default, takes_value)]
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "in_process.hpp"
#include "posenc/error.hpp"
#include "run.hpp"

namespace py = pybind11;
namespace cli = posenc::cli;

namespace {

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// The host array as the command reads it: its own bytes, type string and shape.
cli::InProcess::Array held(const std::string& name, const py::array& a) {
  if (!(a.flags() & py::array::c_style)) {
    std::string strides;
    for (py::ssize_t i = 0; i < a.ndim(); ++i) strides += (i ? ", " : "") + std::to_string(a.strides(i));
    throw py::value_error(name + ": a non-contiguous array (shape " + shape_text(a) + ", strides (" + strides +
                          ") bytes); accepted: a C-contiguous array (numpy.ascontiguousarray(" + name +
                          ") makes one; posenc does not copy it silently)");
  }
  cli::InProcess::Array h;
  h.descr = py::str(a.dtype().attr("str"));
  for (py::ssize_t i = 0; i < a.ndim(); ++i) h.shape.push_back(static_cast<std::size_t>(a.shape(i)));
  h.bytes = std::string_view(static_cast<const char*>(a.data()), static_cast<std::size_t>(a.nbytes()));
  return h;
}

// A NumPy uint8 array over the bytes, which it owns (freed with the array): no copy.
py::array take(cli::MemoryBuffer&& buffer) {
  auto* owned = new cli::MemoryBuffer(std::move(buffer));
  py::capsule base(owned, [](void* p) { delete static_cast<cli::MemoryBuffer*>(p); });
  static std::uint8_t empty = 0;
  auto* data = owned->data ? reinterpret_cast<std::uint8_t*>(owned->data.get()) : &empty;
  return py::array_t<std::uint8_t>({static_cast<py::ssize_t>(owned->size)}, {py::ssize_t{1}}, data, base);
}

const char* failure_name(cli::RunResult::Failure f) {
  switch (f) {
    case cli::RunResult::Failure::none: return "none";
    case cli::RunResult::Failure::usage: return "usage";
    case cli::RunResult::Failure::io: return "io";
    case cli::RunResult::Failure::memory: return "memory";
    case cli::RunResult::Failure::other: return "other";
  }
  return "other";
}

py::dict run(const std::vector<std::string>& args, const std::map<std::string, py::array>& arrays,
             const std::map<std::string, std::string>& texts) {
  cli::InProcess session;
  for (const auto& [name, a] : arrays) session.arrays[name] = held(name, a);
  session.texts = texts;
  cli::RunResult r;
  {
    py::gil_scoped_release release;  // `arrays` keeps every host array alive until the command returns
    cli::InProcessScope scope(session);
    r = cli::run_command(args);
  }
  py::dict outputs;
  for (auto& [name, buffer] : session.outputs) outputs[py::str(name)] = take(std::move(buffer));
  py::dict result;
  result["status"] = r.status;
  result["failure"] = failure_name(r.failure);
  result["error"] = r.error;
  result["out"] = r.out;
  result["err"] = r.err;
  result["markdown"] = session.report_markdown;
  result["outputs"] = outputs;
  return result;
}

std::vector<py::tuple> options(const std::string& verb, const std::string& scheme) {
  std::vector<py::tuple> out;
  try {
    for (const cli::OptionInfo& o : cli::command_options(verb, scheme))
      out.push_back(py::make_tuple(o.flag, o.type, o.default_value, o.takes_value));
  } catch (const std::exception& e) {
    throw py::value_error(e.what());
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_posenc, m) {
  m.doc() = "posenc's command line run in process over NumPy arrays (use the posenc package, not this module)";
  m.def("run", &run, py::arg("args"), py::arg("arrays"), py::arg("texts"));
  m.def("options", &options, py::arg("verb"), py::arg("scheme"));
}
