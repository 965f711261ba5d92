// Status and Result: how the op layer reports a rule violation. Nothing in qdq throws; the
// bindings turn a Status into their own error (QdqError in Python, OrtStatus in ONNX Runtime,
// a code plus message in the C ABI).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace qdq {

enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,  // an input, attribute or buffer breaks a rule of the operator
  kInternal = 2,         // a bug in qdq (a broken invariant); never expected
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status invalid_argument(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status internal(std::string message) { return Status(StatusCode::kInternal, std::move(message)); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}   // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace qdq
