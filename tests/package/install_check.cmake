# Configures resilin alone (no tests), installs it into a prefix, then builds and runs the
# consumer against that prefix with find_package(resilin CONFIG REQUIRED).
file(REMOVE_RECURSE "${BUILD_DIR}")
set(prefix "${BUILD_DIR}/prefix")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BUILD_DIR}/lib" -G "${GENERATOR}"
                  -DRESILIN_BUILD_TESTS=OFF -DRESILIN_BUILD_EXAMPLES=OFF -DRESILIN_BUILD_BENCH=OFF
                  -DRESILIN_INSTALL=ON "-DCMAKE_INSTALL_PREFIX=${prefix}"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configure failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}/lib" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER}" -B "${BUILD_DIR}/consumer" -G "${GENERATOR}"
                  "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}/consumer" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed")
endif()
execute_process(COMMAND "${BUILD_DIR}/consumer/consumer" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer run failed")
endif()
