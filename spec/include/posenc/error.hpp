// posenc/error.hpp — the one error type of posenc.
//
// Contract: every invalid input raises posenc::Error, whose message names the parameter, the value
// given and the values accepted, e.g.
//   "sinusoidal: dim = 0 is out of range; accepted: an integer in [2, 1048576], even"
// The accepted text of a spec field is generated from its description (posenc/describe.hpp), so the
// message and the check cannot disagree. Error derives from std::invalid_argument so callers that
// already catch standard exceptions keep working. Problems that are not the caller's arguments (an
// unreadable file, a malformed .npy) raise posenc::IoError, derived from std::runtime_error, with the
// same one-line style.
#pragma once

#include <stdexcept>
#include <string>

namespace posenc {

class Error : public std::invalid_argument {
 public:
  // `problem` completes "<parameter> = <value> ...": "is out of range" unless the value could not even be
  // read ("is not an integer", ...).
  Error(std::string where, std::string parameter, std::string value, std::string accepted,
        std::string problem = "is out of range")
      : std::invalid_argument(where + ": " + parameter + " = " + value + " " + problem + "; accepted: " + accepted),
        where_(std::move(where)),
        parameter_(std::move(parameter)),
        value_(std::move(value)),
        accepted_(std::move(accepted)),
        problem_(std::move(problem)) {}

  const std::string& where() const noexcept { return where_; }
  const std::string& parameter() const noexcept { return parameter_; }
  const std::string& value() const noexcept { return value_; }
  const std::string& accepted() const noexcept { return accepted_; }
  const std::string& problem() const noexcept { return problem_; }

  // The same error under another name for the parameter, e.g. the command-line flag the user typed
  // ("--dim") for the spec field ("dim").
  Error renamed(std::string parameter) const { return Error(where_, std::move(parameter), value_, accepted_, problem_); }

 private:
  std::string where_, parameter_, value_, accepted_, problem_;
};

class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace posenc
