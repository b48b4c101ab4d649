# cmake -P script behind the package tests (see CMakeLists.txt):
#   either -Dptyko_DIR=PTYKO_DIR (a build tree's package), or install
#   INSTALL_FROM into INSTALL_PREFIX and use -Dptyko_ROOT=INSTALL_PREFIX;
#   then configure CONSUMER_SOURCE in WORK_DIR, build it and run it.
cmake_minimum_required(VERSION 3.20)

function(step what)
  message(STATUS "ptyko package test: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

if(INSTALL_FROM)
  file(REMOVE_RECURSE "${INSTALL_PREFIX}")
  step("install into ${INSTALL_PREFIX}"
    ${CMAKE_COMMAND} --install "${INSTALL_FROM}" --prefix "${INSTALL_PREFIX}" --config ${BUILD_TYPE})
  set(_find_ptyko -Dptyko_ROOT=${INSTALL_PREFIX})
  set(_where "${INSTALL_PREFIX}")
else()
  set(_find_ptyko -Dptyko_DIR=${PTYKO_DIR})
  set(_where "${PTYKO_DIR}")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
step("configure the consumer against ${_where}"
  ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE}" -B "${WORK_DIR}" -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_C_COMPILER=${C_COMPILER}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} ${_find_ptyko})
step("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}" --config ${BUILD_TYPE})

find_program(consumer_exe consumer PATHS "${WORK_DIR}" "${WORK_DIR}/${BUILD_TYPE}" NO_DEFAULT_PATH)
if(NOT consumer_exe)
  message(FATAL_ERROR "no consumer executable in ${WORK_DIR}")
endif()
step("run the consumer" ${consumer_exe})
message(STATUS "${step_output}")
if(NOT step_output MATCHES "ptyko consumer OK")
  message(FATAL_ERROR "consumer did not report OK:\n${step_output}")
endif()
