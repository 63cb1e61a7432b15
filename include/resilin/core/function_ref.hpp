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
  /// Refers to f, a function or a callable object, which must outlive every call (a temporary
  /// lambda passed as an argument lives until the call that takes it returns). With R void, a
  /// result of f is discarded.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
  function_ref(F&& f) noexcept {  // NOLINT(google-explicit-constructor): stands in for a callable
    using target = std::remove_reference_t<F>;
    if constexpr (std::is_function_v<target>) {
      target_.function = reinterpret_cast<void (*)()>(&f);
      call_ = [](storage s, Args... args) -> R {
        return invoke_as_r(reinterpret_cast<target*>(s.function), std::forward<Args>(args)...);
      };
    } else {
      target_.object = const_cast<void*>(static_cast<void const*>(std::addressof(f)));
      call_ = [](storage s, Args... args) -> R {
        return invoke_as_r(*static_cast<target*>(s.object), std::forward<Args>(args)...);
      };
    }
  }

  R operator()(Args... args) const { return call_(target_, std::forward<Args>(args)...); }

 private:
  union storage {
    void* object;
    void (*function)();
  };

  /// std::invoke_r (C++23): the result converted to R, or discarded for void.
  template <class G, class... A>
  static R invoke_as_r(G&& g, A&&... a) {
    if constexpr (std::is_void_v<R>) std::invoke(std::forward<G>(g), std::forward<A>(a)...);
    else return std::invoke(std::forward<G>(g), std::forward<A>(a)...);
  }

  storage target_{};
  R (*call_)(storage, Args...) = nullptr;
};

}  // namespace resilin
