# Configures resilin without the learn layer (Eigen3 not looked for), installs it into a prefix,
# and checks that every installed header's #include <resilin/...> is installed too: a header
# shipped without what it includes fails in the consumer's build (learn/cuda.cuh was installed
# with resilin::cuda while the learn headers it includes were not).
file(REMOVE_RECURSE "${BUILD_DIR}")
set(prefix "${BUILD_DIR}/prefix")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BUILD_DIR}/lib" -G "${GENERATOR}"
                  -DRESILIN_BUILD_TESTS=OFF -DRESILIN_BUILD_EXAMPLES=OFF -DRESILIN_BUILD_BENCH=OFF
                  -DRESILIN_INSTALL=ON -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON "-DCMAKE_INSTALL_PREFIX=${prefix}"
                OUTPUT_QUIET RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configure failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}/lib" OUTPUT_QUIET RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
file(GLOB_RECURSE headers "${prefix}/include/resilin/*")
list(LENGTH headers count)
if(count EQUAL 0)
  message(FATAL_ERROR "no headers installed under ${prefix}/include/resilin")
endif()
set(missing "")
foreach(header IN LISTS headers)
  file(STRINGS "${header}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*<resilin/[^>]+>")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<(resilin/[^>]+)>.*" "\\1" included "${line}")
    if(NOT EXISTS "${prefix}/include/${included}")
      list(APPEND missing "${header} includes ${included}")
    endif()
  endforeach()
endforeach()
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "installed headers include files that are not installed:\n  ${text}")
endif()
message(STATUS "${count} installed headers, every <resilin/...> include installed")
