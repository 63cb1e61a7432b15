#pragma once
// function_ref<R(A...)>: a non-owning reference to a callable (the proposed std::function_ref,
// host only). The host batch drivers (thread_pool.hpp, backend/host/batch.hpp) take their
// callbacks through it, so that each is compiled once per value type and measure rather than
// once per caller's lambda: an indirect call per pair or per task, against many copies of the
// planner, the thread pool and the standard sorts in every program (and minutes of a test
// build's compile time).
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace resilin {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
 public:
  /// Refers to f, which must outlive every call (a temporary lambda passed as an argument
  /// lives until the call that takes it returns).
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
  function_ref(F&& f) noexcept  // NOLINT(google-explicit-constructor): stands in for a callable
      : object_(const_cast<void*>(static_cast<void const*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(object), std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace resilin
