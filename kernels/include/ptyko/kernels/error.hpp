#pragma once
// Error handling for the whole of ptyko (the bottom layer, so every layer can
// use it). Two kinds, kept apart as in Kokkos Kernels:
//  * UserError: bad input or options. One line saying what is wrong with which
//    file/dataset/option and how to fix it. Drivers print it and exit with 2.
//  * InternalError: a broken invariant (a bug). Thrown by PTYKO_ASSERT.
// Exceptions are thrown on the host only; kernels use KOKKOS_ASSERT.

#include <sstream>
#include <stdexcept>
#include <string>

namespace ptyko {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace impl {
// Builds a message from stream-able pieces: make_message("got ", n, " frames").
template <class... Args>
std::string make_message(Args const&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace impl

}  // namespace ptyko

/// Throws ptyko::UserError with the streamed message when `cond` is false.
#define PTYKO_REQUIRE(cond, ...)                                      \
  do {                                                                \
    if (!(cond)) {                                                    \
      throw ::ptyko::UserError(::ptyko::impl::make_message(__VA_ARGS__)); \
    }                                                                 \
  } while (false)

/// Unconditionally throws ptyko::UserError with the streamed message.
#define PTYKO_FAIL(...) throw ::ptyko::UserError(::ptyko::impl::make_message(__VA_ARGS__))

/// Internal invariant; always checked (cheap, host only), names the place.
#define PTYKO_ASSERT(cond, ...)                                                  \
  do {                                                                           \
    if (!(cond)) {                                                               \
      throw ::ptyko::InternalError(::ptyko::impl::make_message(                  \
          __FILE__, ":", __LINE__, ": internal error: ", #cond, ": ", __VA_ARGS__)); \
    }                                                                            \
  } while (false)
