# Small helpers shared by tests, examples and benchmarks.

# Warnings for our own translation units (never exported to consumers).
function(resilin_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
  endif()
endfunction()

# resilin_add_test(NAME SOURCES s... [LIBS l...] [LABELS x...] [CUDA] [ARGS a...])
# CUDA tests link resilin_gpu_test_main: they return 77 when no device is present, which CTest
# reports as skipped.
function(resilin_add_test name)
  cmake_parse_arguments(T "CUDA" "" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  resilin_warnings(${name})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  set(labels ${T_LABELS})
  if(T_CUDA)
    # the GPU test entry point (exit 77 without a device), compiled once in tests/
    target_link_libraries(${name} PRIVATE resilin_gpu_test_main)
    list(APPEND labels cuda)
    set_target_properties(${name} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  if(labels)
    set_tests_properties(${name} PROPERTIES LABELS "${labels}")
  endif()
endfunction()

# resilin_add_tests(PREFIX GLOB pattern LIBS l... [LABELS x...] [CUDA]): one test per file
# matching pattern (relative to the calling directory), named PREFIX_<file name>.
function(resilin_add_tests prefix)
  cmake_parse_arguments(T "CUDA" "GLOB" "LIBS;LABELS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${T_GLOB}")
  set(extra)
  if(T_CUDA)
    set(extra CUDA)
  endif()
  foreach(src IN LISTS sources)
    get_filename_component(name "${src}" NAME_WE)
    resilin_add_test(${prefix}_${name} ${extra} SOURCES "${src}"
                     LIBS ${T_LIBS} LABELS ${T_LABELS})
  endforeach()
endfunction()

# resilin_add_fuzzer(NAME SOURCE LIB): a libFuzzer target (ASan, UBSan), only with clang;
# tests/fuzz/run_fuzz.sh builds and runs the same sources standalone, as CI does.
function(resilin_add_fuzzer name source lib)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    add_executable(${name} ${source})
    target_link_libraries(${name} PRIVATE ${lib})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  endif()
endfunction()

# Our own programs (the tool, benchmarks) are built for the machine they run on: the host
# recursion uses every SIMD lane the target enables. Consumers of the headers choose for
# themselves. Off: -DRESILIN_NATIVE_ARCH=OFF (portable binaries).
option(RESILIN_NATIVE_ARCH "Build resilin's tool and benchmarks with -march=native" ON)
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-march=native RESILIN_HAS_MARCH_NATIVE)
function(resilin_native_arch target)
  if(RESILIN_NATIVE_ARCH AND RESILIN_HAS_MARCH_NATIVE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
    # g++ before 13 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (their
    # `undefined` operands) wherever Eigen's reductions inline them: dozens of
    # warnings about system headers in an AVX-512 build of the tool. Our code keeps the warning
    # in every other build (the tests are not built for the native target).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
    endif()
  endif()
endfunction()
