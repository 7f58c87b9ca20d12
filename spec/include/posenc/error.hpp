// posenc/error.hpp — the one error type of posenc.
//
// Contract: every invalid input raises posenc::Error, whose message names the parameter, the value
// given and the accepted range, e.g.
//   "sinusoidal: dim = 0 is out of range; accepted: 1 <= dim <= 1048576"
// Error derives from std::invalid_argument so callers that already catch standard exceptions keep
// working. Problems that are not the caller's arguments (an unreadable file, a malformed .npy) raise
// posenc::IoError, derived from std::runtime_error, with the same one-line style.
#pragma once

#include <stdexcept>
#include <string>

namespace posenc {

class Error : public std::invalid_argument {
 public:
  Error(std::string where, std::string parameter, std::string value, std::string accepted)
      : std::invalid_argument(where + ": " + parameter + " = " + value + " is out of range; accepted: " + accepted),
        parameter_(std::move(parameter)),
        value_(std::move(value)),
        accepted_(std::move(accepted)) {}

  const std::string& parameter() const noexcept { return parameter_; }
  const std::string& value() const noexcept { return value_; }
  const std::string& accepted() const noexcept { return accepted_; }

 private:
  std::string parameter_, value_, accepted_;
};

class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace posenc
